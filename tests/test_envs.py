"""The env contract, for every supported game: random games single and vmapped."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import envs, games

# Steps per game stream: enough for every game to finish at least once (each game ends
# by its longest game, e.g. chess and Gardner chess by their 512/256-ply caps).
EXTRA_STEPS = 30
BATCH = 3


def _random_stream(env, key, num_steps):
    """Plays uniformly random legal moves with auto-reset; returns per-step records."""
    init_key, key = jax.random.split(key)
    state = env.init(init_key)

    def one_step(state, key):
        act_key, reset_key = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(act_key, logits)
        record = dict(
            legal=state.legal_action_mask[action],
            num_legal=state.legal_action_mask.sum(),
            mover=state.current_player,
            step_count=state._step_count,  # pylint: disable=protected-access
        )
        state = envs.step_autoreset(env, state, action, reset_key)
        record.update(
            terminated=state.terminated,
            truncated=state.truncated,
            rewards=state.rewards,
            obs=state.observation,
            next_step_count=state._step_count,  # pylint: disable=protected-access
        )
        return state, record

    _, records = jax.lax.scan(one_step, state, jax.random.split(key, num_steps))
    return records


@functools.lru_cache(maxsize=None)
def _env(env_id):
    return games.make(env_id)


@pytest.mark.parametrize("env_id", games.IDS)
def test_random_games_single_and_vmapped(env_id):
    env = _env(env_id)
    num_steps = games.max_plies(env) + EXTRA_STEPS
    keys = jax.random.split(jax.random.PRNGKey(7), BATCH)
    stream = jax.jit(lambda k: _random_stream(env, k, num_steps))
    batched = jax.device_get(jax.jit(jax.vmap(lambda k: _random_stream(env, k, num_steps)))(keys))
    single = jax.device_get(stream(keys[1]))
    # Batch independence: game 1 of the batch is the single game with the same key.
    for name in single:
        np.testing.assert_allclose(single[name], batched[name][1], err_msg=name)

    init_obs = np.asarray(env.init(jax.random.PRNGKey(0)).observation)
    for b in range(BATCH):
        r = {name: value[b] for name, value in batched.items()}
        assert r["legal"].all(), "a sampled action was not legal"
        assert (r["num_legal"] > 0).all(), "a live state had no legal action"
        done = r["terminated"] | r["truncated"]
        assert done.any(), f"no {env_id} game finished in {num_steps} steps"
        # Rewards: zero before the end, zero-sum at the end, +-1 or 0 per player.
        assert (r["rewards"][~done] == 0).all()
        np.testing.assert_array_equal(r["rewards"][done].sum(axis=-1), 0.0)
        assert set(np.unique(r["rewards"])) <= {-1.0, 0.0, 1.0}
        # Movers alternate within a game.
        live = ~done[:-1]
        assert (r["mover"][1:][live] != r["mover"][:-1][live]).all()
        # Auto-reset: the state after a finishing step is a fresh start position.
        assert (r["next_step_count"][done] == 0).all()
        assert (r["next_step_count"][~done] == r["step_count"][~done] + 1).all()
        # (Initial observations do not depend on which player id moves first.)
        for t in np.flatnonzero(done):
            np.testing.assert_array_equal(r["obs"][t], init_obs)


def test_unknown_env_and_bad_options():
    with pytest.raises(ValueError, match="unknown env 'go'"):
        games.make("go")
    with pytest.raises(ValueError, match="takes no options"):
        games.make("connect_four", size=5)
    with pytest.raises(ValueError, match="bad options for env 'nim'"):
        games.make("nim", piles=(1, 2))
    assert games.make("nim", heaps=(2, 2)).num_actions == 4
