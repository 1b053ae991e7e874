"""azdb_jax/rbc/belief.py: the particle filter over the opponent's information states.

- in games against RandomBot and AttackerBot (both colours), after every observation every
  particle's board is one of the tracked possible boards (checked against the whole tracked
  set), the particle's board is in the opponent's set J, and every board of J has the
  opponent's pieces where the particle's board has them (the opponent knows its own pieces);
- an opponent model that cannot explain an observation falls back to singleton particles
  after k rejections in a row (counted exactly), drawn from the possible boards;
- a belief state whose particles are all inconsistent is refilled from the older one, and
  the accepted candidates replace the inconsistent belief state's oldest particles;
- the aggressive opponent model's weights on a hand-made board;
- the opponent's set after our unseen move holds only children of its boards under a
  request reconchess allows with the reported capture square (brute force over
  ``move_actions`` and ``revise_move``), the truth first, at most ℓ distinct boards.
"""

import random

import chess
import numpy as np
import pytest
from reconchess import utilities
from reconchess.bots.attacker_bot import AttackerBot
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import belief, gauntlet, rules, tracking
from azdb_jax.rbc.player import TrackingPlayer


def _check(player):
    possible = {rules.board_key(b) for b in player.tracker.boards}
    them = not player.color
    for particle in player.belief.particles:
        assert rules.board_key(particle.board) in possible
        keys = [rules.board_key(b) for b in particle.opponent_boards]
        assert rules.board_key(particle.board) in keys and len(set(keys)) == len(keys) <= player.belief.set_size
        for board in particle.opponent_boards:
            assert board.occupied_co[them] == particle.board.occupied_co[them]
            assert all(board.pieces_mask(k, them) == particle.board.pieces_mask(k, them) for k in chess.PIECE_TYPES)
            assert board.turn == particle.board.turn
    player.checks += 1


class _CheckedPlayer(TrackingPlayer):
    """A tracking player that also keeps a belief and checks it after every observation."""

    def handle_game_start(self, color, board, opponent_name):
        super().handle_game_start(color, board, opponent_name)
        self.belief = belief.Belief(board, color, num_particles=24, set_size=6, persistence=16, seed=3)
        self.checks = 0

    def handle_opponent_move_result(self, captured_my_piece, capture_square):
        super().handle_opponent_move_result(captured_my_piece, capture_square)
        self.belief.opponent_moved(capture_square if captured_my_piece else None, self.tracker)
        _check(self)

    def handle_sense_result(self, sense_result):
        super().handle_sense_result(sense_result)
        self.belief.sensed(sense_result, self.tracker)
        _check(self)

    def handle_move_result(self, requested_move, taken_move, captured_opponent_piece, capture_square):
        super().handle_move_result(requested_move, taken_move, captured_opponent_piece, capture_square)
        self.belief.moved(requested_move, taken_move, capture_square if captured_opponent_piece else None,
                          self.tracker)
        _check(self)


@pytest.mark.parametrize("opponent_class, seed", [(RandomBot, 0), (RandomBot, 1), (AttackerBot, 2)])
def test_every_particle_is_a_possible_board(opponent_class, seed):
    player = _CheckedPlayer(seconds_per_move=0.01, max_boards=None, seed=seed)
    random.seed(seed)
    record, _ = gauntlet.play_game(player, opponent_class(), seed % 2 == 0, max_turns=12)
    assert record.truth_misses == 0 and player.tracker.exact
    assert player.checks >= 6
    stats = player.belief.stats
    assert stats.candidates >= stats.rejections > 0 and stats.refills >= 0
    assert sum(stats.accepted_by_depth.values()) + stats.fallbacks >= player.belief.num_particles


class _AlwaysPass:
    def __call__(self, boards, color, move_stage, choices, rng):
        probs = np.zeros(len(choices))
        probs[choices.index(None) if move_stage else 0] = 1.0
        return probs


def test_an_opponent_model_that_cannot_explain_falls_back_to_singletons():
    start = chess.Board()
    tracker = tracking.PossibleStates(start, chess.WHITE, max_boards=None)
    model = belief.Belief(start, chess.WHITE, num_particles=10, persistence=5, turns_back=1, policy=_AlwaysPass(),
                          seed=0)
    e4 = chess.Move.from_uci("e2e4")
    tracker.moved(e4, e4, None)
    model.moved(e4, e4, None, tracker)
    tracker.opponent_moved(None)
    model.opponent_moved(None, tracker)  # the pass explains "no capture": every particle passes
    assert model.stats.fallbacks == 0 and model.stats.candidates == 10 and model.stats.rejections == 0
    assert all(p.board.piece_at(chess.E7) for p in model.particles)
    after_e5 = rules.play(rules.play(start, e4), chess.Move.from_uci("e7e5"))
    seen = [(s, after_e5.piece_at(s)) for s in rules.sense_window(chess.E6)]
    tracker.sensed(seen)
    model.sensed(seen, tracker)  # a pawn left e7: no passing opponent shows that
    assert model.stats.rejections == 10 * 5 and model.stats.candidates == 10 + 10 * 5
    assert model.stats.fallbacks == 10 and model.stats.refills == 10 and model.stats.removed == 10
    possible = {rules.board_key(b) for b in tracker.boards}
    for particle in model.particles:
        assert particle.singleton and particle.opponent_boards == (particle.board,)
        assert rules.board_key(particle.board) in possible and particle.board.piece_at(chess.E7) is None


def test_a_depleted_belief_state_is_refilled_from_the_older_one():
    start = chess.Board()
    tracker = tracking.PossibleStates(start, chess.BLACK, max_boards=None)
    model = belief.Belief(start, chess.BLACK, num_particles=8, persistence=40, turns_back=2, seed=1)
    white = [chess.Move.from_uci(m) for m in ("d2d4", "g1f3")]
    black = [chess.Move.from_uci(m) for m in ("g8f6", "b8c6")]
    board = start
    for turn in range(2):
        board = rules.play(board, white[turn])
        tracker.opponent_moved(None)
        model.opponent_moved(None, tracker)
        tracker.sensed([])
        model.sensed([], tracker)
        board_after = rules.play(board, black[turn])
        tracker.moved(black[turn], black[turn], None)
        model.moved(black[turn], black[turn], None, tracker)
        board = board_after
    # Spoil the newest belief state: its particles are boards no observation allows.
    bogus = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    bogus.remove_piece_at(chess.A2)
    bogus.set_piece_at(chess.A6, chess.Piece(chess.PAWN, chess.WHITE))
    model._anchors[-1] = [belief.Particle(bogus, (bogus,), 5, born=-1) for _ in range(4)]
    model._anchors[-1] += [belief.Particle(bogus, (bogus,), 6, born=-2) for _ in range(4)]
    accepted = dict(model.stats.accepted_by_depth)
    seen = [(s, board.piece_at(s)) for s in rules.sense_window(chess.B7)]  # a6 is empty
    tracker.sensed(seen)
    model.particles = [belief.Particle(bogus, (bogus,), 9)] * 8  # every current particle inconsistent too
    model.sensed(seen, tracker)
    from_older = model.stats.accepted_by_depth.get(2, 0) - accepted.get(2, 0)
    from_newest = model.stats.accepted_by_depth.get(1, 0) - accepted.get(1, 0)
    assert from_older >= 1 and from_older + from_newest == 8 and model.stats.fallbacks == 0
    possible = {rules.board_key(b) for b in tracker.boards}
    assert all(rules.board_key(p.board) in possible for p in model.particles)
    # Each candidate accepted from the older belief state went through the newest one and took
    # the place of one of its oldest particles (born -2 before born -1); the newest belief
    # state's refilled particles then gave the other replacements.
    newest = model._anchors[-1]
    assert sum(p.born == -2 for p in newest) == max(0, 4 - from_older)
    assert sum(p.born == -1 for p in newest) == 4 - max(0, from_older - 4)
    assert sum(p.board != bogus for p in newest) == from_older


def test_the_aggressive_model_weights_king_captures_captures_and_attacks():
    # White (the modelled opponent) to move: Rb1xb8 takes the king, Nf3xe5 a pawn, Qd1-d6 then
    # attacks b8 along the diagonal, Qd1-d2 and the pass do none of these.
    board = chess.Board("1k6/8/8/4p3/8/5N2/8/1R1QK3 w - - 0 1")
    requests = [chess.Move.from_uci(m) for m in ("b1b8", "f3e5", "d1d6", "d1d2")] + [None]
    probs = belief.AggressivePolicy(capture=4.0, attack=2.0, king=100.0)([board], chess.WHITE, True, requests,
                                                                          np.random.default_rng(0))
    # weights: king capture 1 + 100; capture 1 + 4; Qd6 attacks b8 along the diagonal 1 + 2; Qd2 1; pass 1
    np.testing.assert_allclose(probs, np.asarray([101, 5, 3, 1, 1]) / 111)
    senses = belief.AggressivePolicy()([board], chess.WHITE, False, list(rules.INTERIOR_SQUARES),
                                       np.random.default_rng(0))
    np.testing.assert_allclose(senses, 1 / 36)


def _requests(board):
    """Every request of the side to move, by reconchess's own helpers, with the taken move."""
    return [(m, utilities.revise_move(board, m)) for m in utilities.move_actions(board)] + [(None, None)]


@pytest.mark.parametrize("capture", [None, chess.E5])
def test_the_set_after_an_unseen_move_holds_only_explained_children(capture):
    parents = [chess.Board("rnbqkbnr/pppp1ppp/8/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3"),
               chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3")]
    truth_move = chess.Move.from_uci("d4e5") if capture else chess.Move.from_uci("b1c3")
    truth = rules.play(parents[0], truth_move)
    explained = set()
    for parent in parents:
        for _, taken in _requests(parent):
            if utilities.capture_square_of_move(parent, taken) == capture:
                explained.add(rules.board_key(rules.play(parent, taken)))
    for size in (1, 5, 200):
        out = belief.expand_unseen_move(parents, truth, capture, size, np.random.default_rng(size))
        keys = [rules.board_key(b) for b in out]
        assert keys[0] == rules.board_key(truth) and len(set(keys)) == len(keys) <= size
        assert set(keys) <= explained
        if size == 200:
            assert set(keys) == explained  # every child, when ℓ is large enough
