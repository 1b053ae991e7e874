"""The presets: AlphaZero's L2 regularisation on the chess setups, puzzle presets of Table 1."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import learner, presets  # noqa: E402

CHESS_SETUPS = ("az_fast", "azdb_fast", "az_full", "azdb_full", "az_puzzles", "az_puzzles_random_split",
                "az_puzzles_ood", "az_puzzles_intermediate")


@pytest.mark.parametrize("name", CHESS_SETUPS)
def test_chess_presets_regularise_like_alphazero(name):
    # AlphaZero's loss has c‖θ‖² with c = 1e-4 (Silver et al. 2018). With zero loss gradient the
    # first SGD step must be −lr · ∇(c‖θ‖²) on the weights (kernels) and 0 on biases.
    config = presets.get_preset(name).learner
    assert config.optimizer == "sgd"
    optimizer = learner.make_optimizer(config)
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"conv": {"kernel": jax.random.normal(keys[0], (3, 3, 2, 4)), "bias": jax.random.normal(keys[1], (4,))},
              "dense": {"kernel": jax.random.normal(keys[2], (5, 3))}}
    updates, _ = optimizer.update(jax.tree.map(jnp.zeros_like, params), optimizer.init(params), params)

    def l2(p):
        return 1e-4 * sum(jnp.sum(jnp.square(x)) for x in (p["conv"]["kernel"], p["dense"]["kernel"]))

    expected = jax.tree.map(lambda g: -learner.make_schedule(config)(0) * g, jax.grad(l2)(params))
    for path in (("conv", "kernel"), ("dense", "kernel"), ("conv", "bias")):
        got, want = updates[path[0]][path[1]], expected[path[0]][path[1]]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)
    assert not np.any(np.asarray(updates["conv"]["bias"]))


def test_puzzle_presets_follow_table_1():
    row2 = presets.get_preset("az_puzzles")
    assert row2.team.num_players == 1 and row2.run.batch_size == 1024  # AZ, fast configuration
    assert row2.start_positions.sources == ("paper",) and row2.start_positions.initial_prob == 0.5
    assert row2.start_positions.halfmove_clocks == (0,) and row2.env.max_pieces == 32
    row3 = presets.get_preset("az_puzzles_random_split").start_positions
    assert (row3.sources, row3.split, row3.test_count) == (("paper:penrose",), "random", 17)
    row4 = presets.get_preset("az_puzzles_ood").start_positions
    assert (row4.split, row4.heldout_group) == ("group", "penrose_variation_2")
    assert presets.get_preset("az_puzzles_intermediate").start_positions.intermediate
    row6 = presets.get_preset("az_puzzles_exploration")
    assert row6.start_positions.intermediate and row6.search.algorithm == "puct"
    assert (row6.selfplay.sample_plies, row6.selfplay.sample_temperature) == (15, 10.0)
    row7 = presets.get_preset("az_puzzles_halfmove")
    assert row7.start_positions.halfmove_clocks == (0, 20, 40, 60, 80)
    assert (row7.selfplay.sample_plies, row7.selfplay.sample_temperature) == (15, 10.0)


@pytest.mark.slow
def test_gardner_puzzle_presets_hold_out_what_they_say(tmp_path):
    from azdb_jax import runs  # pylint: disable=g-import-not-at-top

    for name in ("gardner_puzzles", "gardner_puzzles_random_split", "gardner_puzzles_ood"):
        config = presets.get_preset(name)
        assert config.env.name == "gardner_chess" and config.team.num_players == 1 and config.team.lam == 1.0
        assert config.start_positions.initial_prob == 0.5
        runs.build_components(config, tmp_path / name)  # loads the packaged sets, writes the split
    assert presets.get_preset("gardner_puzzles_random_split").start_positions.test_count == 100
    row5, row6, row7 = (presets.get_preset(f"gardner_puzzles_{n}") for n in ("intermediate", "exploration", "halfmove"))
    assert row5.start_positions.intermediate and row5.start_positions.halfmove_clocks == (0,)
    assert row6.start_positions == row5.start_positions
    assert (row6.selfplay.sample_plies, row6.selfplay.sample_temperature) == (15, 10.0) == \
        (row7.selfplay.sample_plies, row7.selfplay.sample_temperature)
    assert row7.start_positions.halfmove_clocks == (0, 20, 40, 60, 80) and row7.start_positions.intermediate
    runs.build_components(row7, tmp_path / "row7")  # the solution lines' positions load, the clocks apply
    written = sorted(p.name for p in (tmp_path / "gardner_puzzles_ood" / "start_positions").glob("*.csv"))
    # Out of distribution: every mate in 3 held out, the other sets trained on.
    assert written == ["heldout_0_mate_in_3.csv", "train_0_mate_in_1.csv", "train_1_mate_in_2.csv",
                       "train_2_only_move.csv"]
