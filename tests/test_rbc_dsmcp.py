"""DSMCPPlayer (azdb_jax/rbc/player.py), the gauntlet's replays and the script's planner options.

- games against RandomBot with both colours: the true board stays tracked, decisions are
  searched, the belief's particles stay among the possible boards (slow: whole games
  against RandomBot and AttackerBot, checked after every observation);
- a request that captures the king on every possible board is played at once; a clock
  too short for a search falls back to TrackingPlayer's choice; the safety filter keeps the
  requests that leave the king capturable on the fewest boards (hand-counted);
- the ``network`` variant plays the evaluator's policy (a hand-made evaluator that
  prefers one move gets it);
- options out of range end in one line naming them (the player and the script);
- an opponent whose engine dies mid-game (TroutBot with its Stockfish process killed) is
  the opponent's error: the game is replayed with a fresh opponent, and the report says so;
  so is an opponent's request outside move_actions (with no replay left the game is left
  out), while the player's own such request propagates.
"""

import os
import pathlib
import random
import signal
import subprocess
import sys

import chess
import numpy as np
import pytest
from reconchess.bots.attacker_bot import AttackerBot
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import actions, gauntlet, infostate, rules, tracking
from azdb_jax.rbc.player import DSMCPPlayer, TrackingPlayer, safest_moves

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("color", [chess.WHITE, chess.BLACK])
def test_dsmcp_plays_tracked_games(color):
    # The 25 playouts bound every decision, not the clock: with 0.5 s a decision, one decision
    # on a loaded 2-core machine stopped at 22 playouts (mean 24.625).
    player = DSMCPPlayer(seconds_per_decision=60.0, simulations=25, particles=16, seed=4)
    random.seed(4)
    record, _ = gauntlet.play_game(player, RandomBot(), color, max_turns=4)
    assert record.truth_misses == 0 and record.truth_checks > 0 and player.tracker.exact
    summary = player.planner_summary()
    assert summary["searched"] >= 2 and summary["mean_simulations"] == 25
    assert record.planner == summary
    possible = {rules.board_key(b) for b in player.tracker.boards}
    assert all(rules.board_key(p.board) in possible for p in player.belief.particles)


@pytest.mark.slow
@pytest.mark.parametrize("opponent_class", [RandomBot, AttackerBot])
def test_dsmcp_plays_whole_games_with_its_particles_among_the_possible_boards(opponent_class):
    # A fixed number of playouts per decision (the time budget never binds): the games, and
    # so the sizes of the possible-board sets the checks enumerate, are the same on every run
    # (with a time budget they varied with the machine's load, from seconds to minutes).
    for seed in range(2):
        player = DSMCPPlayer(seconds_per_decision=30.0, simulations=16, particles=32,
                             evaluator=infostate.HeuristicEvaluator(seed=seed), seed=seed)
        checked = []

        def check(player=player, checked=checked):
            # Reading the boards first: making a pending opponent move's children may hit the cap.
            possible = {rules.board_key(b) for b in player.tracker.boards}
            if player.tracker.exact:  # a capped set may have dropped a particle's board
                assert all(rules.board_key(p.board) in possible for p in player.belief.particles)
                checked.append(len(player.belief.particles))

        for name in ("handle_opponent_move_result", "handle_sense_result", "handle_move_result"):
            method = getattr(player, name)
            setattr(player, name, lambda *a, method=method: (method(*a), check()))
        random.seed(seed)
        record, _ = gauntlet.play_game(player, opponent_class(), seed % 2 == 0, max_turns=25)
        assert record.truth_misses == 0 or not player.tracker.exact
        assert len(checked) >= 3


def _player_on(boards, **kwargs):
    player = DSMCPPlayer(seed=0, **kwargs)
    player.handle_game_start(chess.WHITE, chess.Board(), "opponent")
    player.tracker = tracking.PossibleStates.from_boards(boards, chess.WHITE, max_boards=None)
    player.belief.particles = [player.belief.particles[0].__class__(b, (b,), i) for i, b in enumerate(boards)]
    return player


def test_a_forced_king_capture_is_played_and_a_short_clock_falls_back():
    boards = [chess.Board("k7/8/8/8/8/8/8/R3K3 w - - 0 1"), chess.Board("k7/8/8/8/8/2n5/8/R3K3 w - - 0 1")]
    player = _player_on(boards, seconds_per_decision=0.2)
    assert player.choose_move(rules.move_actions(boards[0]), 900) == chess.Move.from_uci("a1a8")
    assert player.decisions[-1]["forced_win"]
    quiet = [chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")]
    player = _player_on(quiet, seconds_per_decision=0.2)
    move = player.choose_move(rules.move_actions(quiet[0]), 0.3)  # 0.3 / 30 s < min_search_seconds
    assert player.decisions[-1] == {"stage": "move", "fallback": True, "simulations": 0}
    assert move in rules.move_actions(quiet[0]) + [None]
    player.choose_move(rules.move_actions(quiet[0]), 900)
    assert not player.decisions[-1]["fallback"] and player.decisions[-1]["simulations"] > 0


def test_the_safety_filter_keeps_the_moves_that_leave_the_king_safe_most_often():
    # Black's rook on e8 attacks our king on e1 on every board, its bishop on b4 on the first only.
    boards = [chess.Board("4r2k/8/8/8/1b6/8/8/4K3 w - - 0 1"), chess.Board("4r2k/8/8/8/8/8/8/4K3 w - - 0 1")]
    moves = [chess.Move.from_uci(m) for m in ("e1d1", "e1d2", "e1f1", "e1f2", "e1e2")] + [None]
    # d1, f1, f2: safe on both; d2: the bishop takes on the first; e2 and the pass: the rook.
    assert safest_moves(boards, moves, chess.WHITE) == [chess.Move.from_uci(m) for m in ("e1d1", "e1f1", "e1f2")]
    # A king capture on a board is safe there.
    capture = [chess.Board("7k/8/8/8/8/8/8/r3K2R w - - 0 1")]
    assert safest_moves(capture, [chess.Move.from_uci("h1h8"), None], chess.WHITE) == [chess.Move.from_uci("h1h8")]


class _Prefers:
    """An evaluator whose policy puts all its weight on one move and one sense."""

    def __init__(self, move, square):
        self.move, self.square = move, square

    def __call__(self, batch):
        senses = np.zeros((len(batch), actions.NUM_SENSES))
        moves = np.zeros((len(batch), actions.NUM_MOVES))
        senses[:, actions.sense_index(self.square)] = 10.0
        moves[:, actions.move_index(self.move)] = 10.0
        return senses, moves, np.zeros(len(batch))


def test_the_network_variant_plays_the_evaluator_policy():
    board = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    evaluator = _Prefers(chess.Move.from_uci("a1a5"), chess.C6)
    player = _player_on([board], variant="network", evaluator=evaluator)
    assert player.choose_move(rules.move_actions(board), 900) == chess.Move.from_uci("a1a5")
    assert player.choose_sense(list(range(64)), rules.move_actions(board), 900) == chess.C6


@pytest.mark.parametrize("kwargs, words", [({"seconds_per_decision": 0}, "seconds_per_decision"),
                                           ({"simulations": 0}, "simulations"), ({"variant": "cache"}, "variant"),
                                           ({"bandit": "exp3"}, "bandit"), ({"caution": 2.0}, "caution"),
                                           ({"paranoia": -0.1}, "paranoia"), ({"particles": 0}, "particles"),
                                           ({"depth": 0}, "depth"), ({"set_size": 0}, "set_size"),
                                           ({"synopsis_boards": 0}, "synopsis_boards")])
def test_player_options_out_of_range_are_named(kwargs, words):
    with pytest.raises(ValueError, match=f"^{words} must be"):
        DSMCPPlayer(**kwargs)


@pytest.mark.parametrize("flag, words", [("--caution=1.5", "--caution must be in [0, 1]"),
                                         ("--variant=cache", "--variant")])
@pytest.mark.slow
def test_the_script_refuses_bad_planner_options_in_one_line(flag, words):
    result = subprocess.run([sys.executable, str(REPO / "experiments" / "rbc_gauntlet.py"), "--player=dsmcp", flag],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and words in lines[0], result.stderr[-2000:]


def test_an_engine_that_dies_is_the_opponents_error_and_the_game_is_replayed(stockfish_path, monkeypatch, tmp_path):
    monkeypatch.setenv(gauntlet.STOCKFISH_ENV, stockfish_path)
    from reconchess.bots.trout_bot import TroutBot  # pylint: disable=g-import-not-at-top
    made = []

    class _Dies(TroutBot):
        """TroutBot whose Stockfish process is killed before its first sense."""

        def handle_opponent_move_result(self, captured_my_piece, capture_square):
            if self.engine.transport.get_returncode() is None:
                os.kill(self.engine.transport.get_pid(), signal.SIGKILL)
            super().handle_opponent_move_result(captured_my_piece, capture_square)

    def make_opponent():
        made.append(_Dies() if not made else TroutBot())
        return made[-1]

    report = gauntlet.run_gauntlet(lambda seed: TrackingPlayer(seconds_per_move=0.02, seed=seed), "trout", 1,
                                   out=tmp_path, max_turns=2, make_opponent_fn=make_opponent)
    assert len(made) == 2 and report["replayed"] == 1 and report["games"] == 1
    assert report["opponent_errors"] == [{"game": 0, "attempt": 0, "turn": 1, "error": "engine died"}]
    assert report["records"][0]["opponent_error"] is None and report["games_with_opponent_error"] == 0
    # Without replays left the game counts, flagged as the opponent's error.
    made.clear()
    report = gauntlet.run_gauntlet(lambda seed: TrackingPlayer(seconds_per_move=0.02, seed=seed), "trout", 1,
                                   max_turns=2, make_opponent_fn=make_opponent, max_replays=0)
    assert len(made) == 1 and report["replayed"] == 0
    assert report["records"][0]["opponent_error"] == "engine died" and report["games_with_opponent_error"] == 1


class _Illegal(RandomBot):
    """RandomBot that asks for a rook move through its own pawn (outside move_actions)."""

    def choose_move(self, move_actions, seconds_left):
        return _through_own_pawn(move_actions)


class _IllegalPlayer(TrackingPlayer):
    def choose_move(self, move_actions, seconds_left):
        return _through_own_pawn(move_actions)


def _through_own_pawn(move_actions):
    white = any(chess.square_rank(m.from_square) < 4 for m in move_actions)
    return chess.Move(chess.A1, chess.A8) if white else chess.Move(chess.A8, chess.A1)


def test_an_illegal_request_of_the_opponent_is_its_error_and_the_game_is_replayed():
    made = []

    def make_opponent():
        made.append(_Illegal() if not made else RandomBot())
        return made[-1]

    def make_player(seed):
        return TrackingPlayer(seconds_per_move=0.02, seed=seed)

    report = gauntlet.run_gauntlet(make_player, "random", 1, max_turns=2, make_opponent_fn=make_opponent)
    assert len(made) == 2 and report["replayed"] == 1 and report["games"] == 1 and report["dropped"] == []
    assert report["opponent_errors"][0]["error"].startswith("illegal request: Requested move a8a1")
    # Without replays left the game cannot be finished: it is left out of the tally.
    report = gauntlet.run_gauntlet(make_player, "random", 2, max_turns=2, make_opponent_fn=_Illegal, max_replays=0)
    assert report["games"] == 0 and report["dropped"] == [0, 1] and len(report["opponent_errors"]) == 2
    # The player's own illegal request is its fault.
    with pytest.raises(ValueError, match="not in move_actions"):
        gauntlet.run_gauntlet(lambda seed: _IllegalPlayer(seed=seed), "random", 1, max_turns=2)
