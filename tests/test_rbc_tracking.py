"""azdb_jax/rbc/tracking.py: the possible boards of one player, against the game's true board.

- in games against RandomBot and AttackerBot (both colours, no cap), the true board
  (``LocalGame``'s own) is in the tracked set after every observation, and every tracked
  board has the player's pieces where the game has them;
- hand-built cases with counts worked out by hand: Black's first move leaves 21 boards
  (python-chess's 20 legal moves and the pass); a sense of the untouched d7 window keeps
  the 14 replies that leave it alone; a sense showing Nf6 keeps one; own-move results
  (a slide stopped by a capture, a blocked push) keep the boards that explain them;
- the opponent's move is played lazily (only the boards a sense can keep are made): the
  set after the sense, membership and sizes are those of playing it on every board first;
- a cap samples the set down and a contradiction rebuilds it, both counted, never empty.
"""

import copy
import random

import chess
import numpy as np
import pytest
from reconchess.bots.attacker_bot import AttackerBot
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import gauntlet, rules, sensing, tracking
from azdb_jax.rbc.player import TrackingPlayer


def _same_own_pieces(tracker, board):
    own = board.occupied_co[tracker.color]
    return all(b.occupied_co[tracker.color] == own and all(
        b.pieces_mask(k, tracker.color) == board.pieces_mask(k, tracker.color) for k in chess.PIECE_TYPES)
        for b in tracker.boards)


def _play_checked_games(opponent_class, seeds, **player_kwargs):
    records = []
    for seed in seeds:
        player = TrackingPlayer(seconds_per_move=0.02, max_boards=None, seed=seed, **player_kwargs)
        random.seed(seed)
        record, history = gauntlet.play_game(player, opponent_class(), seed % 2 == 0)
        final = history.truth_board_after_move(history.last_turn()) if history.has_move(history.last_turn()) else None
        records.append(record)
        assert record.truth_checks > 0
        assert record.truth_misses == 0, (seed, record)
        assert player.tracker.exact and not player.tracker.stats.rebuilds and player.tracker.stats.cap_hits == 0
        if final is not None and history.last_turn().color == player.color:
            assert _same_own_pieces(player.tracker, final)
    return records


@pytest.mark.parametrize("opponent_class", [RandomBot, AttackerBot])
def test_the_true_board_is_always_tracked(opponent_class):
    records = _play_checked_games(opponent_class, range(4))
    assert {r.player_color for r in records} == {"white", "black"}


@pytest.mark.slow
@pytest.mark.parametrize("opponent_class, games", [(RandomBot, 20), (AttackerBot, 10)])
def test_the_true_board_is_always_tracked_in_more_games(opponent_class, games):
    _play_checked_games(opponent_class, range(100, 100 + games))


def _after_black_reply(**options):
    """White's tracker after 1. e4 (taken as asked, no capture) and Black's unseen reply
    (``options`` for ``PossibleStates``; default: no cap)."""
    tracker = tracking.PossibleStates(chess.Board(), chess.WHITE, **{"max_boards": None, **options})
    tracker.opponent_moved(None)  # White's first turn: no opponent move yet
    assert len(tracker) == 1
    tracker.sensed([])
    e4 = chess.Move.from_uci("e2e4")
    tracker.moved(e4, e4, None)
    tracker.opponent_moved(None)
    return tracker


def test_first_replies_are_the_legal_moves_and_a_pass():
    tracker = _after_black_reply()
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")
    assert len(tracker) == after_e4.legal_moves.count() + 1 == 21
    assert tracker.stats.sizes_after_opponent_move == [21]


def _window(board, square):
    return [(s, board.piece_at(s)) for s in rules.sense_window(square)]


def test_a_sense_prunes_to_the_hand_counted_boards():
    truth = chess.Board()
    truth.push_uci("e2e4")
    truth.push_uci("g8f6")
    tracker = _after_black_reply()
    # The d7 window (c6..e8) is untouched by 14 of the 21: all but c6, c5, d6, d5, e6, e5 and Nc6.
    tracker.sensed(_window(truth, chess.D7))
    assert len(tracker) == 14 and truth in tracker
    # The g7 window shows g8 empty and a knight on f6: only Nf6 does that.
    tracker.sensed(_window(truth, chess.G7))
    assert len(tracker) == 1 and truth in tracker
    # Sensing our own side tells nothing new.
    tracker = _after_black_reply()
    tracker.sensed(_window(truth, chess.E2))
    assert len(tracker) == 21


def test_own_move_results_keep_the_boards_that_explain_them():
    base = "4k3/8/8/8/8/8/8/4R2K w - - 0 1"
    boards = []
    for square in (None, chess.E5, chess.E6):
        board = chess.Board(base)
        if square is not None:
            board.set_piece_at(square, chess.Piece(chess.KNIGHT, chess.BLACK))
        boards.append(board)
    request = chess.Move.from_uci("e1e7")
    for truth in boards:
        tracker = tracking.PossibleStates.from_boards(boards, chess.WHITE, max_boards=None)
        taken = rules.taken_move(truth, request)
        tracker.moved(request, taken, rules.capture_square(truth, taken))
        assert len(tracker) == 1 and rules.play(truth, taken) in tracker
    # A blocked single push is a pass: only boards with a piece in front of the pawn remain.
    free = chess.Board("4k3/8/8/8/8/8/4P3/7K w - - 0 1")
    blocked = free.copy()
    blocked.set_piece_at(chess.E3, chess.Piece(chess.BISHOP, chess.BLACK))
    tracker = tracking.PossibleStates.from_boards([free, blocked], chess.WHITE, max_boards=None)
    tracker.moved(chess.Move.from_uci("e2e3"), None, None)
    assert len(tracker) == 1 and rules.play(blocked, None) in tracker


def test_an_opponent_capture_keeps_the_moves_that_capture_there():
    # Our knight on d4 is taken: by the pawn from e5 or c5, or the bishop from a1 (not the rook on a2).
    board = chess.Board("4k3/8/8/2p1p3/3N4/8/r7/b6K b - - 0 1")
    tracker = tracking.PossibleStates.from_boards([board], chess.WHITE, max_boards=None)
    tracker.opponent_moved(chess.D4)
    assert len(tracker) == 3
    assert all(b.piece_at(chess.D4).color == chess.BLACK for b in tracker.boards)


def test_the_cap_samples_down_and_counts():
    exact = _after_black_reply()
    # Before the sense the set may hold 5 x 5 boards: the 21 replies stay, the sense caps them.
    small = _after_black_reply(seed=1, max_boards=5)
    assert len(small) == 21 and small.stats.cap_hits == 0 and small.exact
    small.sensed([])
    assert len(small) == 5 and small.stats.cap_hits == 1 and small.stats.boards_dropped == 16
    assert not small.exact and all(b in exact for b in small.boards)
    tight = _after_black_reply(seed=1, max_boards=5, max_boards_before_sense=4)
    assert len(tight) == 4 and tight.stats.cap_hits == 1 and tight.stats.boards_dropped == 17


def test_a_contradiction_rebuilds_the_set_leniently():
    tracker = tracking.PossibleStates(chess.Board(), chess.BLACK, max_boards=None)
    tracker.opponent_moved(None)  # 21 boards after White's first move
    queen = chess.Piece(chess.QUEEN, chess.WHITE)
    impossible = [(chess.E5, queen)] + [(s, None) for s in rules.sense_window(chess.E5) if s != chess.E5]
    tracker.sensed(impossible)
    assert len(tracker) >= 1 and tracker.stats.rebuilds == {"sense": 1} and not tracker.exact
    assert all(rules.sense_matches(b, impossible) for b in tracker.boards)
    # The rebuilt set goes on with the next observations without failing.
    tracker.moved(chess.Move.from_uci("e7e5"), None, None)
    tracker.opponent_moved(chess.E7)
    assert len(tracker) >= 1


@pytest.mark.parametrize("max_boards", [1, 3])
def test_tiny_caps_play_whole_games_without_failing(max_boards):
    for seed in range(2):
        random.seed(seed)
        player = TrackingPlayer(seconds_per_move=0.02, max_boards=max_boards, seed=seed)
        record, _ = gauntlet.play_game(player, RandomBot(), seed == 0)
        stats = player.tracker.stats
        assert record.truth_checks > 0 and stats.cap_hits > 0
        assert min(stats.sizes_after_sense + stats.sizes_after_own_move) >= 1
        assert record.tracker["rebuilds"] == sum(stats.rebuilds.values())


def _keys(tracker):
    return {rules.board_key(b) for b in tracker.boards}


def test_the_lazy_opponent_move_gives_the_eager_sets():
    rng = random.Random(7)
    choice_rng = np.random.default_rng(7)
    truth = chess.Board()
    tracker = tracking.PossibleStates(chess.Board(), chess.WHITE, max_boards=None)
    tracker.opponent_moved(None)  # White's first turn: nothing to play
    compared = 0
    for _ in range(8):
        square = sensing.choose_sense(tracker.sample(2000, choice_rng), choice_rng)
        tracker.sensed([(s, truth.piece_at(s)) for s in rules.sense_window(square)])
        requested = rng.choice(rules.move_actions(truth))
        taken = rules.taken_move(truth, requested)
        tracker.moved(requested, taken, rules.capture_square(truth, taken))
        truth = rules.play(truth, taken)
        if truth.king(chess.BLACK) is None:
            break
        reply = rng.choice(rules.taken_moves(truth))
        capture = rules.capture_square(truth, reply)
        others = [rules.play(truth, m) for m in rules.taken_moves(truth)]  # other replies: possible or not
        truth = rules.play(truth, reply)
        if truth.king(chess.WHITE) is None:
            break
        tracker.opponent_moved(capture)
        eager = copy.deepcopy(tracker)
        assert len(eager) == len(_keys(eager))  # plays the pending move on every board
        assert [b in tracker for b in [truth] + others] == [b in eager for b in [truth] + others]
        assert truth in tracker
        for square in rng.sample(range(64), 4):
            result = [(s, truth.piece_at(s)) for s in rules.sense_window(square)]
            lazy, full = copy.deepcopy(tracker), copy.deepcopy(eager)
            lazy.sensed(result)
            full.sensed(result)
            assert _keys(lazy) == _keys(full) and truth in lazy
            assert lazy.stats.sizes_after_opponent_move == full.stats.sizes_after_opponent_move
            compared += 1
    assert compared >= 12
