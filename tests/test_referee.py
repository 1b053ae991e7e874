"""The host game loop (``azdb_jax.referee``): endings by the rules, the ply limit, faults;
a host player inside the arena (``referee.host_policy``); and the UCI gauntlet's faults
through the host loop, against scripted UCI engines in real processes."""

import sys
import textwrap

import chess
import pytest

from azdb_jax import referee
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.uci import gauntlet


def scripted(*ucis):
    """A player that plays ``ucis`` in order (its own moves only)."""
    moves = iter(ucis)
    return lambda board: chess.Move.from_uci(next(moves))


def test_fools_mate_is_blacks_checkmate_in_four_plies():
    board = chess.Board()
    seen = []
    game = referee.play_host_game(board, {chess.WHITE: scripted("f2f3", "g2g4"), chess.BLACK: scripted("e7e5", "d8h4")},
                                  max_plies=100, on_move=lambda b, m: seen.append((len(b.move_stack), m.uci())))
    assert (game.result, game.termination, game.faulty, game.finished) == ("0-1", "checkmate", None, True)
    assert game.white_score == -1.0
    assert seen == [(0, "f2f3"), (1, "e7e5"), (2, "g2g4"), (3, "d8h4")]  # each move seen before it is pushed
    assert [m.uci() for m in board.move_stack] == ["f2f3", "e7e5", "g2g4", "d8h4"]


def test_threefold_repetition_is_an_automatic_draw():
    # Knights out and back twice: the start position would stand for the third time after
    # ply 8; the draw is claimed (python-chess's claim rule) once Black can make it so, after ply 7.
    white = scripted("g1f3", "f3g1", "g1f3", "f3g1")
    black = scripted("g8f6", "f6g8", "g8f6", "f6g8")
    game = referee.play_host_game(chess.Board(), {chess.WHITE: white, chess.BLACK: black}, max_plies=100)
    assert (game.result, game.termination, game.white_score) == ("1/2-1/2", "threefold_repetition", 0.0)
    assert len(game.board.move_stack) == 7


def test_the_ply_limit_leaves_the_game_unfinished():
    first_legal = lambda board: next(iter(board.legal_moves))  # noqa: E731
    game = referee.play_host_game(chess.Board(), {chess.WHITE: first_legal, chess.BLACK: first_legal}, max_plies=5)
    assert (game.result, game.termination, game.finished, game.white_score) == ("*", referee.UNFINISHED, False, 0.0)
    assert len(game.board.move_stack) == 5
    # Moves already on the board do not count against the limit.
    more = referee.play_host_game(game.board, {chess.WHITE: first_legal, chess.BLACK: first_legal}, max_plies=3)
    assert len(more.board.move_stack) == 8
    with pytest.raises(ValueError, match="max_plies"):
        referee.play_host_game(chess.Board(), {chess.WHITE: first_legal, chess.BLACK: first_legal}, max_plies=-1)


@pytest.mark.parametrize("move, kind", [("e2e5", "illegal"), (None, "illegal"), ("raise", "time")])
def test_a_fault_loses_for_the_side_that_made_it(move, kind):
    def black(board):
        if move == "raise":
            raise referee.Fault("time", "flag fell")
        return None if move is None else chess.Move.from_uci(move)

    game = referee.play_host_game(chess.Board(), {chess.WHITE: scripted("e2e4"), chess.BLACK: black}, max_plies=10)
    assert (game.result, game.termination, game.faulty, game.finished) == ("1-0", kind, chess.BLACK, True)
    assert len(game.board.move_stack) == 1  # the faulty move is not played
    if move == "raise":
        assert game.message == "flag fell"


def test_gardner_games_end_by_the_envs_rules():
    # First-legal-move players to the end: the ending is the board's (the env's rules), and
    # the recorded moves replay to the same position.
    first_legal = lambda board: board.legal_moves[0]  # noqa: E731
    game = referee.play_host_game(GardnerBoard(), {chess.WHITE: first_legal, chess.BLACK: first_legal}, max_plies=300)
    assert game.finished and game.board.is_game_over()
    assert (game.result, game.termination) == (game.board.result(), game.board.termination())
    replay = GardnerBoard()
    for move in game.board.move_stack:
        replay.push(move)
    assert replay.fen() == game.board.fen()


# ------------------------------------------------------------------ a host player in the arena


class _Watched:
    """The first legal move, noting the board each call is handed: (start FEN, moves so far)."""

    name = "watched"

    def __init__(self, fail_at=None):
        self.calls, self.fail_at = [], fail_at

    def __call__(self, board):
        self.calls.append((board.root().fen(), tuple(move.uci() for move in board.move_stack)))
        if len(self.calls) == self.fail_at:
            raise RuntimeError("engine went away")
        return board.legal_moves[0]


@pytest.mark.slow
def test_a_host_player_in_the_arena_sees_each_game_on_a_board_with_its_moves():
    # Gardner chess, 3 starts in chunks of 2 pairs (one padding pair): the host player is asked
    # once per move it makes in the real games, in order, on the game's start with the game's
    # moves pushed; its exception stops the match and is raised as itself.
    from azdb_jax import games  # pylint: disable=g-import-not-at-top
    from azdb_jax.policies import uniform_random_policy  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import matches  # pylint: disable=g-import-not-at-top

    env = games.make("gardner_chess")
    fens = [None, "4k/5/5/1p3/R3K b - - 0 1", "k1K2/5/5/5/1R3 w - - 0 1"]
    watched = _Watched()
    match = matches.play_engine_match(uniform_random_policy(), None, watched, fens, env=env, seeds=(2,),
                                      max_plies=16, batch_pairs=2, agent_name="random")
    assert match.names == ("random", "watched") and match.finished.any()
    expected = []
    for g in range(match.num_games):
        board = GardnerBoard(fens[match.start_index[g]])
        start, moves = board.fen(), []
        for ply, action in enumerate(match.actions[g, :match.length[g]]):
            if (ply % 2 == 0) != bool(match.a_first[g]):  # the host player's move
                expected.append((g, ply, (start, tuple(moves))))
            moves.append(games.board_game(env).action_to_uci(int(action), board))
            board.push(chess.Move.from_uci(moves[-1]))
    # Calls go chunk after chunk (2 pairs, 4 games each), ply by ply, the games in pair order;
    # none for the padding pair.
    order = sorted(expected, key=lambda item: (item[0] // 4, item[1], item[0] // 2))
    assert watched.calls == [call for _, _, call in order]

    failing = _Watched(fail_at=3)
    with pytest.raises(RuntimeError, match="engine went away"):
        matches.play_engine_match(uniform_random_policy(), None, failing, fens[:1], env=env, seeds=(2,),
                                  max_plies=16, batch_pairs=2)
    assert len(failing.calls) == 3


# ------------------------------------------------------------------ the UCI gauntlet's faults

_FAKE_ENGINE = textwrap.dedent("""
    import sys, time
    import chess
    mode, board, gos = sys.argv[1], chess.Board(), 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            print("id name fake-" + mode); print("uciok")
        elif words[0] == "isready":
            print("readyok")
        elif words[0] == "position":
            board = chess.Board()
            if "moves" in words:
                for uci in words[words.index("moves") + 1:]:
                    board.push_uci(uci)
        elif words[0] == "go":
            gos += 1
            move = next(iter(board.legal_moves))
            if mode == "illegal" and gos == 2:
                print("bestmove a1a8")
            elif mode == "crash" and gos == 2:
                sys.exit(3)
            else:
                if mode == "slow" and gos == 2:
                    time.sleep(1.5)
                print("bestmove " + move.uci())
        elif words[0] == "quit":
            break
        sys.stdout.flush()
""")


@pytest.fixture(scope="module")
def fake_engine(tmp_path_factory):
    path = tmp_path_factory.mktemp("fake") / "fake_uci.py"
    path.write_text(_FAKE_ENGINE)
    return lambda mode: [sys.executable, str(path), mode]


@pytest.mark.parametrize("mode, termination", [("illegal", "illegal"), ("crash", "crash"), ("slow", "time")])
def test_gauntlet_faults_lose_the_game_for_the_faulty_engine(fake_engine, mode, termination):
    # The faulty engine plays White (game 0) and faults on its second move; 1 s + 0 s clocks.
    records = gauntlet.play_match(fake_engine(mode), fake_engine("first"), games=1, clock=(1.0, 0.0),
                                  openings={"start": ()})
    (record,) = records
    assert (record.result, record.termination, record.faulty) == ("0-1", termination, "engine")
    assert record.engine_score == 0.0
    assert len(record.engine_moves) == (2 if mode == "slow" else 1)  # a lost clock's move was timed
    assert record.plies == 2
    summary = gauntlet.tally(records)
    assert summary[f"engine_{termination}"] == 1 and summary["losses"] == 1


def test_gauntlet_adjudicates_at_the_ply_limit(fake_engine):
    records = gauntlet.play_match(fake_engine("first"), fake_engine("first"), games=2, clock=None,
                                  engine_limit={"time": 0.01}, opponent_limit={"time": 0.01},
                                  openings={"Ruy Lopez": gauntlet.OPENINGS["Ruy Lopez"]}, max_plies=11)
    for record in records:
        # max_plies counts the opening's 5 plies: 6 more are played, then a draw by adjudication.
        assert (record.plies, record.termination, record.result, record.faulty) == (11, "adjudication", "1/2-1/2", None)
        assert len(record.engine_moves) == 3
