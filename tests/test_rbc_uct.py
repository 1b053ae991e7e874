"""azdb_jax/rbc/uct.py: the bandit, paranoia, caution and the search on hand-built positions.

- the bandit's scores equal UCB1 with priors and aVoP computed by hand on a constructed
  node (numbers written out), unvisited actions come first by prior, the mixing
  probability is 1 / (1 + m sqrt(n)) and m = 0 draws from the prior;
- paranoia picks the action with the better worst case on a constructed node;
- the search finds the one request that captures the king on every possible board
  (the king stands on a different square of the a-file on each), though no single
  (from, to) pair does;
- caution: a king capture of a knight defended by a pawn looks good to a search (100
  playouts) whose opponent does not know where our king went (our bishop could have made
  the capture) and is refuted when every playout gives the opponent the true board;
- the playouts' states carry each side's synopsis context (hand-checked on a one-move search);
- the options' one-line errors.
"""

import math

import chess
import numpy as np
import pytest

from azdb_jax.rbc import actions, belief, infostate, synopsis, uct


def _node(visits, totals, prior, least=None):
    node = uct.Node(list(range(len(visits))), np.asarray(prior, dtype=float))
    node.visits[:] = visits
    node.total[:] = totals
    node.least[:] = least if least is not None else [0.0] * len(visits)
    return node


def test_ucb1_with_priors_equals_the_hand_computed_scores():
    node = _node([3, 1, 2], [1.5, 0.9, -0.4], [0.5, 0.3, 0.2])
    config = uct.SearchConfig(exploration=2.0, bandit="ucb1")
    # n = 6; score = Q + c * prior * sqrt(ln 6 / n_a)
    expected = [0.5 + 2 * 0.5 * math.sqrt(math.log(6) / 3), 0.9 + 2 * 0.3 * math.sqrt(math.log(6) / 1),
                -0.2 + 2 * 0.2 * math.sqrt(math.log(6) / 2)]
    np.testing.assert_allclose(uct.bandit_scores(node, config), expected)
    assert expected == pytest.approx([1.2728, 1.7031, 0.1786], abs=1e-4)
    assert uct.select(node, uct.SearchConfig(exploration=2.0, mixing=math.inf), np.random.default_rng(0)) == 1


def test_avop_equals_the_hand_computed_scores():
    node = _node([3, 1, 0], [1.5, 0.9, 0.0], [0.5, 0.3, 0.2])
    config = uct.SearchConfig(exploration=2.0, bandit="avop")
    # n = 4; score = Q + c * prior * sqrt(n) / (1 + n_a), an unvisited action's Q = 0
    expected = [0.5 + 2 * 0.5 * 2 / 4, 0.9 + 2 * 0.3 * 2 / 2, 0.0 + 2 * 0.2 * 2 / 1]
    np.testing.assert_allclose(uct.bandit_scores(node, config), expected)
    assert uct.select(node, uct.SearchConfig(exploration=2.0, bandit="avop", mixing=math.inf),
                      np.random.default_rng(0)) == 1  # 1.5 > 1.0, 0.8


def test_ucb1_tries_unvisited_actions_first_by_prior():
    node = _node([5, 0, 0], [5.0, 0.0, 0.0], [0.2, 0.3, 0.5])
    config = uct.SearchConfig(mixing=math.inf)
    assert uct.select(node, config, np.random.default_rng(0)) == 2
    node.visits[2], node.total[2] = 1, -1.0
    assert uct.select(node, config, np.random.default_rng(0)) == 1


def test_the_policy_is_mixed_in_during_early_visits():
    assert uct.mixing_probability(0, 1.0) == 1.0
    assert uct.mixing_probability(4, 1.0) == pytest.approx(1 / 3)
    assert uct.mixing_probability(100, 0.5) == pytest.approx(1 / 6)
    assert uct.mixing_probability(9, 0.0) == 1.0 and uct.mixing_probability(0, math.inf) == 0.0
    # m = 0: every choice is drawn from the prior, whatever the values say.
    node = _node([50, 1, 1], [50.0, -1.0, -1.0], [0.2, 0.3, 0.5])
    rng = np.random.default_rng(1)
    counts = np.bincount([uct.select(node, uct.SearchConfig(mixing=0.0), rng) for _ in range(3000)], minlength=3)
    np.testing.assert_allclose(counts / 3000, [0.2, 0.3, 0.5], atol=0.03)


def test_paranoia_prefers_the_better_worst_case():
    # Action 0: mean 0.5 but a playout through it returned -1; action 1: mean 0.3, never below 0.2.
    node = _node([4, 4], [2.0, 1.2], [0.5, 0.5], least=[-1.0, 0.2])
    rng = np.random.default_rng(0)
    assert uct.select(node, uct.SearchConfig(exploration=0.0, mixing=math.inf), rng) == 0
    paranoid = uct.SearchConfig(exploration=0.0, mixing=math.inf, paranoia=0.5)
    # (1 - p) Q + p M: 0.5 * 0.5 + 0.5 * -1 = -0.25 against 0.5 * 0.3 + 0.5 * 0.2 = 0.25
    np.testing.assert_allclose(uct.bandit_scores(node, paranoid), [-0.25, 0.25])
    assert uct.select(node, paranoid, rng) == 1


def _particles(boards):
    return [belief.Particle(b, (b,), i) for i, b in enumerate(boards)]


def test_the_search_captures_the_king_on_every_possible_board():
    # The black king is on a8, a5 or a3: the request a1a8 is taken as a1a8, a1a5 or a1a3 and
    # captures it on every board; no (from, to) pair attacks the king on all three.
    boards = [chess.Board("k7/8/8/8/8/8/8/R3K3 w - - 0 1"), chess.Board("8/8/8/k7/8/8/8/R3K3 w - - 0 1"),
              chess.Board("8/8/8/8/8/k7/8/R3K3 w - - 0 1")]
    assert uct.forced_win(boards, chess.WHITE) is None
    search = uct.Search(infostate.ClassicalEvaluator(), uct.SearchConfig(depth=4), seed=0)
    result = search.run(chess.WHITE, True, boards, _particles(boards), simulations=300)
    assert result.best == chess.Move.from_uci("a1a8"), result
    index = result.choices.index(chess.Move.from_uci("a1a8"))
    assert result.values[index] == 1.0 and result.visits[index] == result.visits.max()
    # On the a8 board alone the static analysis already sees it.
    assert uct.forced_win(boards[:1], chess.WHITE) == chess.Move.from_uci("a1a8")


class _Material:
    """Material only (no king-attack term), from the player's side."""

    def __call__(self, batch):
        values = []
        for state in batch.states:
            board = state.boards[0]
            score = sum(len(board.pieces(k, state.color)) * v - len(board.pieces(k, not state.color)) * v
                        for k, v in ((chess.PAWN, 1), (chess.KNIGHT, 3), (chess.BISHOP, 3), (chess.ROOK, 5),
                                     (chess.QUEEN, 9)))
            values.append(math.tanh(score / 5))
        return (np.zeros((len(batch), actions.NUM_SENSES)), np.zeros((len(batch), actions.NUM_MOVES)),
                np.asarray(values))


def test_caution_refutes_a_capture_that_only_works_while_the_opponent_is_unsure():
    # White Ke3 takes the knight on e4, which Black's pawn on d5 defends. Black does not know
    # whether our king or our bishop (b1, c2 or d3 on its boards) made the capture, so unless it
    # senses there its set shows no king capture; knowing the true board it takes the king.
    truth = chess.Board("7k/8/8/3p4/4n3/4K3/8/1B6 w - - 0 1")
    unsure = [truth] + [chess.Board(f"7k/8/8/3p4/4n3/{rows} w - - 0 1") for rows in
                        ("8/2B3K1/8", "3B4/6K1/8", "8/2B5/6K1")]
    particles = [belief.Particle(truth, tuple(unsure), 7)]
    risky, safe = chess.Move.from_uci("e3e4"), chess.Move.from_uci("e3d3")

    def search(caution, seed):
        config = uct.SearchConfig(depth=3, caution=caution, mixing=math.inf)
        result = uct.Search(_Material(), config, seed=seed).run(chess.WHITE, True, [truth], particles,
                                                                moves=[risky, safe, None], simulations=100)
        return result, result.values[result.choices.index(risky)]

    for seed in range(3):
        bold, bold_value = search(0.0, seed)
        cautious, cautious_value = search(1.0, seed)
        # Up 2 pawns' worth after the capture: tanh(2 / 5) = 0.38; a pass or Kd3 keeps tanh(-1 / 5).
        assert bold.best == risky and bold_value > -0.197 > cautious_value + 0.4, bold
        assert cautious.best != risky, cautious


class _Recording(infostate.ClassicalEvaluator):
    """The classical evaluator, keeping every state it is asked about."""

    def __init__(self):
        super().__init__()
        self.states = []

    def __call__(self, batch):
        self.states.extend(batch.states)
        return super().__call__(batch)


def test_the_playouts_states_carry_each_sides_context():
    # White's rook takes on a5; then Black senses (a new node: the opponent's state, and ours
    # for the value). Our root context: last move b1c3, no capture, Black last took on d4.
    board = chess.Board("7k/8/8/p7/8/8/8/R3K3 w - - 0 1")
    root = infostate.InfoState((board,), chess.WHITE, True, synopsis.Context(True, chess.B1, chess.C3, None, chess.D4))
    evaluator = _Recording()
    search = uct.Search(evaluator, uct.SearchConfig(depth=2, value_view="self"), seed=0)
    search.run(chess.WHITE, True, [board], [belief.Particle(board, (board,), 0)], moves=[chess.Move.from_uci("a1a5")],
               simulations=1, root=root)
    assert evaluator.states[0] is root and len(evaluator.states) == 3
    theirs, ours = evaluator.states[1:]
    # The opponent was told of our capture on a5 and knows its own on d4; its last move and
    # previous synopsis are not in the particle.
    assert theirs.opponent and theirs.color == chess.BLACK and not theirs.move_stage and theirs.previous is None
    assert theirs.full_context == synopsis.Context(False, None, None, chess.D4, chess.A5)
    assert not ours.opponent and ours.color == chess.WHITE and ours.previous is root
    assert ours.full_context == synopsis.Context(False, chess.A1, chess.A5, chess.A5, chess.D4)
    np.testing.assert_array_equal(ours.synopsis()[86:], root.synopsis()[synopsis.CARRIED])
    with pytest.raises(ValueError, match="root state"):
        search.run(chess.BLACK, True, [board], [belief.Particle(board, (board,), 0)], simulations=1, root=root)


@pytest.mark.parametrize("option, value", [("depth", 0), ("exploration", -1.0), ("mixing", -0.5), ("bandit", "ucb2"),
                                           ("paranoia", 1.5), ("caution", -0.1), ("cautious_size", 0),
                                           ("set_size", 0), ("value_view", "theirs")])
def test_out_of_range_options_are_named(option, value):
    with pytest.raises(ValueError, match=f"^{option} must be"):
        uct.SearchConfig(**{option: value}).validate()
