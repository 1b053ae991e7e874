"""azdb_jax/rbc/infostate.py: information states, their synopses and the network-free evaluators.

- the heuristic priors on hand-made sets (senses that split the set, king captures,
  captures, king attacks), the evaluator as an opponent model (a softmax over the choices);
- the classical value (±1 when the mover attacks the king) and the synopses of a batch;
- a state's previous synopsis given as planes, as carried planes or as the state of the
  decision before gives the same synopsis, and ``synopsis.carried`` equals planes 18-35 of
  the full synopsis on the boards of a played game.
"""

import math
import random

import chess
import numpy as np
import pytest
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import actions, gauntlet, infostate, rules, synopsis
from azdb_jax.rbc.player import TrackingPlayer


def test_the_heuristic_priors():
    evaluator = infostate.HeuristicEvaluator(sense_weight=4.0, king=6.0, capture=1.5, attack=1.0)
    # Two boards that differ only by a black knight on c3 or c4: a window holding c3 or c4 splits
    # them (E|S'| / |S| = 1 / 2, logit -2), any other keeps both (logit -4).
    boards = tuple(chess.Board(f"4k3/8/8/8/{a}/{b}/8/4K3 w - - 0 1") for a, b in (("8", "2n5"), ("2n5", "8")))
    senses, _, _ = evaluator(infostate.InfoBatch([infostate.InfoState(boards, chess.WHITE, False)]))
    for index, square in enumerate(rules.INTERIOR_SQUARES):
        splits = {chess.C3, chess.C4} & set(rules.sense_window(square))
        assert senses[0, index] == (-2.0 if splits else -4.0), chess.square_name(square)
    board = chess.Board("1k6/8/8/4p3/8/5N2/8/1R1QK3 w - - 0 1")
    _, moves, _ = evaluator(infostate.InfoBatch([infostate.InfoState((board,), chess.WHITE, True)]))
    logit = {m: moves[0, actions.move_index(chess.Move.from_uci(m))] for m in ("b1b8", "f3e5", "d1d6", "d1d2")}
    assert logit == {"b1b8": 6.0, "f3e5": 1.5, "d1d6": 1.0, "d1d2": 0.0}
    assert moves[0, actions.PASS] == 0.0


def test_an_evaluator_policy_models_the_opponent():
    board = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")

    class _Likes:
        def __call__(self, batch):
            moves = np.zeros((len(batch), actions.NUM_MOVES))
            moves[:, actions.move_index(chess.Move.from_uci("a1a5"))] = math.log(3.0)
            return np.zeros((len(batch), actions.NUM_SENSES)), moves, np.zeros(len(batch))

    choices = [chess.Move.from_uci("a1a5"), chess.Move.from_uci("a1a2"), None]
    probs = infostate.EvaluatorPolicy(_Likes())([board], chess.WHITE, True, choices, np.random.default_rng(0))
    np.testing.assert_allclose(probs, [0.6, 0.2, 0.2])  # weights 3 : 1 : 1


def test_the_classical_value_and_the_synopses_of_a_batch():
    evaluator = infostate.ClassicalEvaluator(boards=2)
    up_a_queen = chess.Board("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    value = evaluator.board_value(up_a_queen, chess.WHITE)
    assert 0.8 < value < 1.0 and evaluator.board_value(up_a_queen, chess.BLACK) == pytest.approx(-value)
    attacked = chess.Board("k7/8/8/8/8/8/8/R3K3 w - - 0 1")  # White to move takes the king on a8 next
    assert evaluator.board_value(attacked, chess.WHITE) == 1.0 and evaluator.board_value(attacked, chess.BLACK) == -1
    waiting = chess.Board("k7/8/8/8/8/8/8/R3K3 b - - 0 1")  # Black moves first: no capture yet
    assert -1.0 < evaluator.board_value(waiting, chess.WHITE) < 1.0
    assert evaluator.board_value(chess.Board("k7/8/8/8/8/8/8/r3K3 b - - 0 1"), chess.WHITE) == -1.0
    state = infostate.InfoState((up_a_queen, attacked), chess.WHITE, True)
    batch = infostate.InfoBatch([state, infostate.InfoState((up_a_queen,), chess.BLACK, False)])
    senses, moves, values = evaluator(batch)
    assert senses.shape == (2, actions.NUM_SENSES) and moves.shape == (2, actions.NUM_MOVES) and values.shape == (2,)
    assert values[0] == pytest.approx((value + 1.0) / 2)
    assert batch.synopses.shape == (2, synopsis.NUM_PLANES) and batch.synopses.dtype == np.uint64
    np.testing.assert_array_equal(batch.synopses[0], synopsis.synopsis([up_a_queen, attacked], chess.WHITE,
                                                                       synopsis.Context(True)))


def test_the_previous_synopsis_as_planes_carried_planes_or_a_state():
    player = TrackingPlayer(seconds_per_move=0.02, seed=1)
    random.seed(1)
    states = []
    sensed = player.handle_sense_result

    def record(result):  # the set after each sense, with the context the examples would use
        states.append(tuple(player.tracker.sample(16, np.random.default_rng(len(states)))))
        sensed(result)

    player.handle_sense_result = record
    gauntlet.play_game(player, RandomBot(), chess.WHITE, max_turns=6)
    assert len(states) >= 4
    rng = np.random.default_rng(0)
    for before, after in zip(states, states[1:]):
        squares = rng.choice(64, size=4)
        context = synopsis.Context(bool(rng.integers(2)), *(None if rng.random() < 0.3 else int(s) for s in squares))
        first = infostate.InfoState(before, chess.WHITE, context.move_stage, context)
        full = first.synopsis()
        np.testing.assert_array_equal(synopsis.carried(before, chess.WHITE, context), full[synopsis.CARRIED])
        np.testing.assert_array_equal(infostate.InfoState(before, chess.WHITE, context.move_stage, context).carried(),
                                      full[synopsis.CARRIED])
        expected = synopsis.synopsis(after, chess.WHITE, synopsis.Context(True), full)
        for previous in (full, full[synopsis.CARRIED], first,
                         infostate.InfoState(before, chess.WHITE, context.move_stage, context)):
            second = infostate.InfoState(after, chess.WHITE, True, previous=previous)
            np.testing.assert_array_equal(second.synopsis(), expected)
    with pytest.raises(ValueError, match="previous synopsis has 104 planes"):
        synopsis.synopsis(states[0], chess.WHITE, synopsis.Context(True), np.zeros(5, np.uint64))
