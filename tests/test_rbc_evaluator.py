"""azdb_jax/rbc/evaluator.py's NetworkEvaluator: a synopsis network as the search's evaluator.

- in games against RandomBot (both colours; the network variant and the mixture), the
  synopsis of each of DSMCPPlayer's decisions, the one its network is asked at the root,
  equals the synopsis that ``data.game_examples`` makes of that decision from the game's
  history (every plane: the context of the last moves and the previous synopsis included);
- a batch that mixes our states and the opponent's is answered with one call per headset,
  each row as the network answers its synopsis alone, with the shapes and dtypes of the
  protocol; the opponent's headset is picked from its name when a game starts;
- the network reaches the search: a value that prefers one destination makes the search
  play the move there, a policy that prefers a move makes it the prior (an illegal request's
  logit does not count) and with m = 0 the most visited;
- unknown headsets end with one line naming those the network has (the class and the
  script); the script refuses a network without ``--checkpoint`` and plays with one.
"""

import pathlib
import random
import subprocess
import sys

import chess
import jax
import numpy as np
import pytest
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import (
    actions,
    belief,
    data,
    evaluator,
    gauntlet,
    infostate,
    network,
    rules,
    synopsis,
    training,
    uct,
)
from azdb_jax.rbc.player import DSMCPPlayer

REPO = pathlib.Path(__file__).resolve().parents[1]
TINY = network.RbcNetConfig(headsets=("all", "TroutBot", "RandomBot"), channels=8, num_blocks=1, policy_channels=1,
                            value_channels=1, value_hidden=8)


@pytest.fixture(scope="module")
def tiny():
    net = network.make_rbc_network(TINY)
    params = net.init(jax.random.PRNGKey(0))
    return net, params, evaluator.Evaluator.from_params(net, params)


class _Recorder:
    """A network that keeps what it is asked (synopses, headset)."""

    def __init__(self, model):
        self.model, self.headsets, self.calls = model, model.headsets, []

    def __call__(self, synopses, headset):
        self.calls.append((np.array(synopses), headset))
        return self.model(synopses, headset)


@pytest.mark.parametrize("color, variant", [(chess.BLACK, "network"), (chess.WHITE, "mixture")])
def test_decision_synopses_equal_the_training_examples(tiny, color, variant):
    recorder = _Recorder(tiny[2])
    player = DSMCPPlayer(variant=variant, simulations=4, particles=8, synopsis_boards=10 ** 6, max_boards=None,
                         seed=3, evaluator=evaluator.NetworkEvaluator(recorder))
    random.seed(3)
    record, history = gauntlet.play_game(player, RandomBot(), color, max_turns=4)
    assert record.truth_misses == 0 and player.tracker.exact
    rows, counts = data.game_examples(history, color, data.ExampleConfig(synopsis_boards=10 ** 6, max_boards=10 ** 6))
    assert counts["cap_hits"] == 0 and len(rows) == len(player.synopses) >= 6
    for row, planes in zip(rows, player.synopses):
        np.testing.assert_array_equal(row["synopses"], planes)
    assert any(planes[86:].any() for planes in player.synopses[1:])  # the previous planes are used
    asked = [c for c in recorder.calls if c[1] == "all"]
    roots = [planes for planes, d in zip(player.synopses, player.decisions) if not d.get("forced_win")]
    if variant == "network":  # one call per decision, at the root
        assert len(recorder.calls) == len(roots) and all(c[0].shape == (1, synopsis.NUM_PLANES) for c in asked)
        for (synopses, _), planes in zip(recorder.calls, roots):
            np.testing.assert_array_equal(synopses[0], planes)
    else:  # each search asks its root first; the opponent's states go to its headset
        firsts = iter(asked)
        for planes in roots:
            assert any(np.array_equal(synopses[0], planes) for synopses, _ in firsts)
        assert {c[1] for c in recorder.calls} == {"all", "RandomBot"}


def test_a_mixed_batch_is_answered_per_headset(tiny):
    model = tiny[2]
    adapter = evaluator.NetworkEvaluator(model)
    adapter.start_game(chess.WHITE, "TroutBot")
    assert (adapter.headset, adapter.opponent_headset) == ("all", "TroutBot")
    start, after = chess.Board(), chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    states = [infostate.InfoState((start,), chess.WHITE, False),
              infostate.InfoState((after, start), chess.BLACK, True, opponent=True),
              infostate.InfoState((after,), chess.WHITE, True, synopsis.Context(True, chess.E2, chess.E4))]
    batch = infostate.InfoBatch(states)
    senses, moves, values = adapter(batch)
    assert senses.shape == (3, actions.NUM_SENSES) and moves.shape == (3, actions.NUM_MOVES) and values.shape == (3,)
    assert senses.dtype == moves.dtype == values.dtype == np.float32 and np.all(np.abs(values) <= 1)
    assert adapter.calls == 2
    for i, headset in enumerate(("all", "TroutBot", "all")):
        alone = model(batch.synopses[i], headset)
        np.testing.assert_allclose(moves[i], alone.move_logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(values[i], alone.value, rtol=1e-5, atol=1e-6)
    assert not np.allclose(model(batch.synopses[1], "all").move_logits, moves[1], atol=1e-4)
    adapter.start_game(chess.BLACK, "AttackerBot")  # no such headset: ours
    assert adapter.opponent_headset == "all"
    fixed = evaluator.NetworkEvaluator(model, "RandomBot", opponent_headset=None)
    fixed.start_game(chess.WHITE, "TroutBot")
    assert fixed.opponent_headset == "RandomBot"


class _Fake:
    """A network answering from the synopsis: value ``+0.9`` where our last taken move
    ended on ``square`` (plane 33), ``-0.2`` elsewhere; move logits ``liked`` on ``move``."""

    headsets = ("all",)

    def __init__(self, square=None, move=None, liked=0.0, illegal=None):
        self.square, self.move, self.liked, self.illegal = square, move, liked, illegal

    def __call__(self, synopses, headset):
        count = len(synopses)
        moves = np.zeros((count, actions.NUM_MOVES), np.float32)
        if self.move is not None:
            moves[:, actions.move_index(self.move)] = self.liked
        if self.illegal is not None:
            moves[:, actions.move_index(self.illegal)] = 50.0
        last_to = synopses[:, synopsis.PLANES.index("last_to")]
        hit = (last_to & np.uint64(chess.BB_SQUARES[self.square] if self.square is not None else 0)) != 0
        values = np.where(hit, 0.9, -0.2).astype(np.float32)
        zeros = np.zeros(count, np.float32)
        return evaluator.Evaluation(np.zeros((count, actions.NUM_SENSES), np.float32), moves, values, zeros, zeros,
                                    np.zeros((count, 12), np.float32))


BOARD = chess.Board("7k/8/8/8/8/8/8/R3K3 w - - 0 1")


def _search(net, **config):
    search = uct.Search(evaluator.NetworkEvaluator(net), uct.SearchConfig(value_view="self", depth=2, **config), seed=0)
    result = search.run(chess.WHITE, True, [BOARD], [belief.Particle(BOARD, (BOARD,), 0)], simulations=150)
    return search, result


def test_the_networks_value_and_priors_reach_the_search():
    _, result = _search(_Fake(square=chess.A6), mixing=float("inf"))
    assert result.best == chess.Move.from_uci("a1a6"), result
    liked, illegal = chess.Move.from_uci("a1a3"), chess.Move.from_uci("h1h8")
    assert illegal not in rules.move_actions(BOARD)
    search, result = _search(_Fake(move=liked, liked=8.0, illegal=illegal), mixing=0.0)
    prior = search.table[(chess.WHITE, True, 0)].prior
    index = result.choices.index(liked)
    assert prior.sum() == pytest.approx(1.0) and prior[index] > 0.99
    assert result.best == liked and result.visits[index] > 0.9 * result.visits.sum()
    _, uniform = _search(_Fake(move=liked, liked=8.0), mixing=float("inf"), uniform_priors=True)
    assert uniform.visits[uniform.choices.index(liked)] < 0.2 * uniform.visits.sum()


def test_an_unknown_headset_is_named_with_the_known_ones(tiny):
    for kwargs, what in (({"headset": "Nobody"}, "headset"), ({"opponent_headset": "Nobody"}, "opponent headset")):
        with pytest.raises(ValueError, match=f"^unknown {what} 'Nobody'; this network has all, TroutBot, RandomBot$"):
            evaluator.NetworkEvaluator(tiny[2], **kwargs)


@pytest.fixture(scope="module")
def saved_run(tiny, tmp_path_factory):
    net, params, _ = tiny
    config = training.TrainConfig()
    run = tmp_path_factory.mktemp("run")
    training.save_checkpoint(run / "checkpoints", net, config, params, training.make_optimizer(config).init(params), 3)
    return run


@pytest.mark.parametrize("flags, words", [
    (["--headset=Nobody"], "unknown headset 'Nobody'; this network has all, TroutBot, RandomBot"),
    (["--opponent_headset=Nobody"], "unknown opponent headset 'Nobody'"),
    (["--checkpoint="], "--evaluator=network needs --checkpoint"),
    (["--synopsis_boards=0"], "--synopsis_boards must be >= 1"),
])
@pytest.mark.slow
def test_the_script_refuses_bad_network_options_in_one_line(saved_run, flags, words):
    command = [sys.executable, str(REPO / "experiments" / "rbc_gauntlet.py"), "--player=dsmcp", "--evaluator=network",
               f"--checkpoint={saved_run}", *flags]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=REPO)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and words in lines[0], result.stderr[-2000:]


@pytest.mark.slow
def test_the_script_plays_with_a_network(saved_run, tmp_path):
    command = [sys.executable, str(REPO / "experiments" / "rbc_gauntlet.py"), "--player=dsmcp", "--evaluator=network",
               f"--checkpoint={saved_run}@3", "--variant=mixture", "--games=1", "--max_turns=2", "--simulations=3",
               "--particles=8", f"--out={tmp_path}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "DSMCPPlayer vs random" in result.stdout and (tmp_path / "report.json").is_file()
    assert "--checkpoint" in (tmp_path / "flags.txt").read_text()
