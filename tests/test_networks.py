"""Tests for azdb_jax/networks.py: shapes for every game, bounded value, latent use."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import games
from azdb_jax import networks
from conftest import counted_compiles, in_user_xla_process  # pylint: disable=g-bad-import-order

TINY = networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8)
NUM_PLAYERS = 4


def _constant_params(net: networks.Network, obs_example) -> dict:
    """Parameters with the right shapes and no random draws (cheap to build)."""
    shapes = jax.eval_shape(net.init, jax.random.PRNGKey(0), obs_example)
    return jax.tree_util.tree_map(lambda s: jnp.full(s.shape, 0.05, s.dtype), shapes)


@pytest.fixture(scope="module")
def tiny():
    """{latent: (network, randomly initialised params)} for [3, 3, 2] boards, 9 actions, 4 players."""
    out = {}
    for latent in networks.LATENT_MODES:
        net = networks.make_network(dataclasses.replace(TINY, latent=latent), num_actions=9, num_players=NUM_PLAYERS)
        out[latent] = (net, net.init(jax.random.PRNGKey(7), jnp.zeros((3, 3, 2), bool)))
    return out


@pytest.fixture(scope="module")
def observations():
    """{env_id: (observations [2, H, W, C] from two env.init calls, num_actions)}."""
    out = {}
    for env_id in games.IDS:
        env = games.make(env_id)
        states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 2))
        out[env_id] = (states.observation, env.num_actions)
    return out


@pytest.mark.slow
def test_init_is_flax_init_of_the_module_as_one_program(request):
    """``init`` draws exactly the parameters flax's ``Module.init`` draws called as it is (op by
    op), for a [H, W, C] or a [B, H, W, C] example, and compiles one program per shape (with
    ``RUN_ONCE_COMPILER_OPTIONS``); inside a caller's program it is the module's ``init``.
    Compared with the user's XLA flags (the op-by-op draws are XLA's default build)."""
    if in_user_xla_process(request):
        return
    config = dataclasses.replace(TINY, channels=3)  # a shape no other test initialises
    net = networks.make_network(config, num_actions=9, num_players=2)
    module = networks._AZNet(config=config, num_actions=9, num_players=2, value_d_opponent=False)  # pylint: disable=protected-access
    key = jax.random.PRNGKey(11)
    examples = jnp.zeros((3, 3, 2), bool), jnp.zeros((1, 3, 3, 2), bool)
    with counted_compiles() as compiles:
        single, batched = [net.init(key, example) for example in examples]
    assert len(compiles) <= 1  # [3, 3, 2] is taken as [1, 3, 3, 2]: one program serves both (0: a cache hit)
    # Flax's own init, op by op (after the count: it compiles each primitive of the draws).
    expected = module.init(key, jnp.zeros((1, 3, 3, 2), jnp.float32), jnp.zeros((1,), jnp.int32))
    for params in (single, batched):
        assert jax.tree.structure(params) == jax.tree.structure(expected)
        for ours, flax_own in zip(jax.tree.leaves(params), jax.tree.leaves(expected)):
            np.testing.assert_array_equal(ours, flax_own)
    traced = jax.jit(lambda k: net.init(k, examples[1]))(key)
    jitted = jax.jit(lambda k: module.init(k, jnp.zeros((1, 3, 3, 2), jnp.float32), jnp.zeros((1,), jnp.int32)))(key)
    for ours, flax_own in zip(jax.tree.leaves(traced), jax.tree.leaves(jitted)):
        np.testing.assert_array_equal(ours, flax_own)


@pytest.mark.parametrize(
    "env_id, latent", [(env_id, "planes") for env_id in games.IDS] + [("chess", "film"), ("nim", "film")]
)
def test_output_shapes_for_every_env(observations, env_id, latent):
    obs, num_actions = observations[env_id]
    net = networks.make_network(dataclasses.replace(TINY, latent=latent), num_actions=num_actions, num_players=3)
    params = _constant_params(net, obs[0])
    out = jax.jit(net.apply)(params, obs, jnp.array([0, 2]))
    assert out.policy_logits.shape == (2, num_actions)
    assert out.value.shape == (2,) and out.value_d.shape == (2,) and out.value_d_opponent is None
    for leaf in jax.tree.leaves(out):
        assert leaf.dtype == jnp.float32
        assert np.isfinite(np.asarray(leaf)).all()


def test_value_bounded_and_value_d_unbounded(tiny):
    net, params = tiny["planes"]
    # Blow the heads' output layers up: tanh saturates, the linear head does not.
    params = jax.tree_util.tree_map_with_path(
        lambda path, x: x * 1e4 if "_out" in jax.tree_util.keystr(path) else x, params
    )
    obs = jax.random.normal(jax.random.PRNGKey(1), (16, 3, 3, 2)) * 10
    out = jax.jit(net.apply)(params, obs, jnp.zeros(16, jnp.int32))
    assert np.all(np.abs(np.asarray(out.value)) <= 1.0)
    assert np.max(np.abs(np.asarray(out.value_d))) > 1.0


@pytest.mark.parametrize("latent", networks.LATENT_MODES)
def test_players_get_different_outputs(tiny, latent):
    net, params = tiny[latent]
    obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (1, 3, 3, 2))
    apply = jax.jit(net.apply)
    outs = [apply(params, obs, jnp.array([i])) for i in range(NUM_PLAYERS)]
    for i in range(NUM_PLAYERS):
        for j in range(i + 1, NUM_PLAYERS):
            assert not np.allclose(outs[i].policy_logits, outs[j].policy_logits), (i, j)
            assert not np.allclose(outs[i].value_d, outs[j].value_d), (i, j)


@pytest.mark.parametrize("latent", networks.LATENT_MODES)
def test_batch_independence(tiny, latent):
    net, params = tiny[latent]
    obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (5, 3, 3, 2))
    player = jnp.array([0, 3, 1, 0, 2])
    apply = jax.jit(net.apply)
    batched = apply(params, obs, player)
    for b in range(5):
        single = apply(params, obs[b : b + 1], player[b : b + 1])
        np.testing.assert_allclose(single.policy_logits[0], batched.policy_logits[b], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(single.value_d[0], batched.value_d[b], rtol=1e-5, atol=1e-5)


def test_single_player_is_plain_alphazero():
    net = networks.make_network(TINY, num_actions=15, num_players=1)
    obs = jax.random.bernoulli(jax.random.PRNGKey(1), 0.5, (2, 5, 10, 1))
    params = net.init(jax.random.PRNGKey(0), obs)
    out = jax.jit(net.apply)(params, obs, jnp.zeros(2, jnp.int32))
    assert out.policy_logits.shape == (2, 15)
    assert not np.allclose(out.policy_logits[0], out.policy_logits[1])


def test_abstract_init_matches_concrete(tiny):
    net, concrete = tiny["film"]
    example = jax.ShapeDtypeStruct((3, 3, 2), jnp.bool_)
    abstract = jax.eval_shape(net.init, jax.random.PRNGKey(0), example)
    shapes = lambda t: jax.tree_util.tree_map(lambda x: (x.shape, x.dtype), t)
    assert shapes(abstract) == shapes(concrete)
    assert networks.num_params(concrete) > 0


def test_apply_compiles_once_for_the_same_shapes(tiny):
    net, params = tiny["planes"]
    traces = []

    @jax.jit
    def apply(params, obs, player):
        traces.append(1)
        return net.apply(params, obs, player)

    obs = jnp.zeros((4, 3, 3, 2), bool)
    apply(params, obs, jnp.zeros(4, jnp.int32))
    apply(params, obs.at[0].set(True), jnp.ones(4, jnp.int32))
    assert len(traces) == 1


def test_bfloat16_compute_keeps_float32_outputs(tiny):
    config = dataclasses.replace(TINY, compute_dtype="bfloat16")
    net = networks.make_network(config, num_actions=9, num_players=NUM_PLAYERS)
    params = tiny["planes"][1]  # parameters do not depend on the compute dtype
    abstract = jax.eval_shape(net.init, jax.random.PRNGKey(0), jnp.zeros((3, 3, 2)))
    assert jax.tree_util.tree_structure(abstract) == jax.tree_util.tree_structure(params)
    assert all(x.dtype == jnp.float32 for x in jax.tree_util.tree_leaves(abstract))
    out = jax.jit(net.apply)(params, jnp.ones((2, 3, 3, 2), bool), jnp.array([0, 1]))
    assert out.policy_logits.dtype == jnp.float32 and out.value.dtype == jnp.float32


@pytest.mark.parametrize(
    "field, value",
    [("channels", 0), ("num_blocks", -1), ("value_hidden", 1.5), ("latent", "concat"), ("compute_dtype", "int8")],
)
def test_config_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(TINY, **{field: value})


def test_bad_inputs_get_clear_errors(tiny):
    net, params = tiny["planes"]
    with pytest.raises(ValueError, match="batch of observations"):
        net.apply(params, jnp.zeros((3, 3, 2)), jnp.zeros(1, jnp.int32))
    with pytest.raises(AssertionError, match="one per observation"):
        net.apply(params, jnp.zeros((2, 3, 3, 2)), jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="integers"):
        net.apply(params, jnp.zeros((2, 3, 3, 2)), jnp.zeros(2))
    with pytest.raises(ValueError, match="num_players"):
        networks.make_network(TINY, num_actions=9, num_players=0)


def test_second_intrinsic_head_is_its_own_output(observations):
    obs, num_actions = observations["gardner_chess"]
    net = networks.make_network(TINY, num_actions=num_actions, num_players=3, value_d_opponent=True)
    params = net.init(jax.random.PRNGKey(0), obs[0])
    out = jax.jit(net.apply)(params, obs, jnp.array([0, 2]))
    assert out.value_d_opponent.shape == (2,) and out.value_d_opponent.dtype == jnp.float32
    assert "value_d_opponent_out" in params["params"]
    assert not np.allclose(out.value_d_opponent, out.value_d)


@pytest.mark.parametrize("height, width, channels, num_players", [(3, 3, 2, 4), (5, 5, 7, 10), (8, 8, 3, 1)])
def test_stem_is_a_convolution_over_the_concatenated_latent_planes(height, width, channels, num_players):
    """The stem never builds the latent planes; it must equal flax's nn.Conv over
    concat([obs, one-hot planes]) with the same key (same parameters) on every square,
    edges included, where the zero padding makes the planes' contribution differ."""
    import flax.linen as nn

    class ConcatStem(nn.Module):
        @nn.compact
        def __call__(self, x, player):
            planes = jnp.broadcast_to(jax.nn.one_hot(player, num_players)[:, None, None, :],
                                      x.shape[:3] + (num_players,))
            return nn.Conv(6, (3, 3), name="stem")(jnp.concatenate([x, planes], axis=-1))

    class Stem(nn.Module):
        @nn.compact
        def __call__(self, x, player):
            return networks._Stem(6, num_players, jnp.float32, name="stem")(x, player)

    batch = 2 * num_players
    x = jax.random.normal(jax.random.PRNGKey(0), (batch, height, width, channels))
    player = jnp.arange(batch) % num_players
    reference_params = ConcatStem().init(jax.random.PRNGKey(3), x, player)
    params = Stem().init(jax.random.PRNGKey(3), x, player)
    assert jax.tree.structure(params) == jax.tree.structure(reference_params)
    for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(reference_params)):
        np.testing.assert_array_equal(a, b)
    params = jax.tree.map(lambda p: p + 0.1, params)  # a nonzero bias too
    want = ConcatStem().apply(params, x, player)
    got = Stem().apply(params, x, player)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if num_players > 1:  # the planes matter: another player on the same input gets another output
        other = Stem().apply(params, x[:1], jnp.array([1]))
        assert not np.allclose(got[0], other[0])
