"""Adjudication of capped evaluation games: material counts and the arena's use of them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from pgx import gardner_chess

from azdb_jax import adjudication, arena, games
from azdb_jax.policies import uniform_random_policy


def _gardner(fen):
    return jax.tree.map(lambda x: x[None], gardner_chess.State._from_fen(fen))  # pylint: disable=protected-access


def test_material_balance_by_hand():
    env = games.make("gardner_chess")
    start = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 2))
    np.testing.assert_array_equal(adjudication.material_balance(env, start), [0.0, 0.0])
    # White: K + Q; Black: K. From White's side +9, from Black's side -9.
    np.testing.assert_array_equal(adjudication.material_balance(env, _gardner("k4/4Q/1K3/5/5 w - - 0 1")), [9.0])
    np.testing.assert_array_equal(adjudication.material_balance(env, _gardner("k4/4Q/1K3/5/5 b - - 0 1")), [-9.0])
    # White: K, R, 2 P (7); Black: K, N, B (6).
    fen = "knb2/5/5/1PP2/K3R w - - 0 1"
    np.testing.assert_array_equal(adjudication.material_balance(env, _gardner(fen)), [1.0])
    verdict = adjudication.adjudicator(env, "material", margin=1.0)(_gardner(fen))
    np.testing.assert_array_equal(verdict, [1.0])
    np.testing.assert_array_equal(adjudication.adjudicator(env, "material")(_gardner(fen)), [0.0])  # margin 3


def test_bad_rules_are_refused():
    with pytest.raises(ValueError, match="unknown adjudication rule"):
        adjudication.adjudicator(games.make("gardner_chess"), "engine")
    with pytest.raises(ValueError, match="material"):
        adjudication.adjudicator(games.make("connect_four"), "material")
    assert adjudication.adjudicator(games.make("connect_four"), "none") is None


@pytest.mark.slow
def test_arena_scores_capped_games_with_the_adjudicator():
    # Random against random on Gardner chess, 4 plies: nothing ends by the rules, so every
    # game is adjudicated: all draws by "draw"; by "material" A's result is the material
    # verdict from A's side, which the arena derives from the side to move.
    env = games.make("gardner_chess")
    rand = uniform_random_policy()
    play = lambda rule: jax.jit(lambda key: arena.play_games(  # noqa: E731
        env, rand, None, rand, None, key, num_games=16, max_plies=4,
        adjudicate=adjudication.adjudicator(env, rule, margin=1.0)))(jax.random.PRNGKey(3))
    drawn = arena.summarize(jax.device_get(play("draw")))
    assert drawn["adjudicated"] == 16 and drawn["draws"] == 16 and drawn["unfinished"] == 0
    unscored = arena.summarize(jax.device_get(play("none")))
    assert unscored["adjudicated"] == 0 and unscored["unfinished"] == 16
    results = jax.device_get(play("material"))
    # Replay every game to its last position and recompute the verdict for A (jitted:
    # Gardner's step run op by op took most of this test's time).
    init, step = jax.jit(env.init), jax.jit(env.step)
    balance_of = jax.jit(lambda s: adjudication.material_balance(env, jax.tree.map(lambda x: x[None], s))[0])
    keys = jax.vmap(lambda p: jax.random.fold_in(jax.random.PRNGKey(3), p))(jnp.arange(8))
    init_keys = jax.vmap(lambda k: jax.random.split(k, 3)[0])(keys)
    for g in range(16):
        moves = np.asarray(results.actions[g])
        state = init(init_keys[g % 8])
        a_seat = int(state.current_player) if g < 8 else 1 - int(state.current_player)
        for m in moves[moves >= 0]:
            state = step(state, jnp.int32(m))
        balance = float(balance_of(state))
        verdict = np.sign(balance) * (abs(balance) >= 1.0)
        expected = verdict if int(state.current_player) == a_seat else -verdict
        assert float(results.result[g]) == expected
