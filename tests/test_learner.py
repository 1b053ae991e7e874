"""Tests for azdb_jax/learner.py: loss terms, gradients, history dropout, optimisation."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from azdb_jax import games
from azdb_jax import learner
from azdb_jax import networks

TINY = networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8)


@pytest.fixture(scope="module")
def tiny():
    """(network, params): [3, 3, 2] boards, 9 actions, 2 players; initialised once."""
    net = networks.make_network(TINY, num_actions=9, num_players=2)
    return net, net.init(jax.random.PRNGKey(1), jnp.zeros((3, 3, 2)))


def _fake_apply(outputs: networks.NetOutput):
    return lambda params, obs, player: outputs


def _tiny_batch(key, size=8, num_actions=9) -> learner.Batch:
    k1, k2, k3, k4 = jax.random.split(key, 4)
    actions = jax.random.randint(k2, (size,), 0, num_actions)
    return learner.Batch(
        observation=jax.random.bernoulli(k1, 0.4, (size, 3, 3, 2)).astype(jnp.float32),
        player=jnp.arange(size, dtype=jnp.int32) % 2,
        search_policy=jax.nn.one_hot(actions, num_actions),
        z=jax.random.choice(k3, jnp.array([-1.0, 0.0, 1.0]), (size,)),
        z_d=jax.random.normal(k4, (size,)) * 2,
        weight=jnp.ones(size),
    )


def test_loss_terms_match_hand_computed_values():
    outputs = networks.NetOutput(
        policy_logits=jnp.array([[0.0, 0.0], [5.0, -5.0], [math.log(3.0), 0.0]]),
        value=jnp.array([0.5, -1.0, 0.0]),
        value_d=jnp.array([2.0, 9.0, 1.0]),
    )
    batch = learner.Batch(
        observation=jnp.zeros((3, 1, 1, 1)),
        player=jnp.zeros(3, jnp.int32),
        search_policy=jnp.array([[0.25, 0.75], [0.0, 1.0], [1.0, 0.0]]),
        z=jnp.array([1.0, 1.0, -1.0]),
        z_d=jnp.array([0.0, 0.0, 3.0]),
        weight=jnp.array([1.0, 0.0, 3.0]),  # the second transition does not count
    )
    config = learner.LearnerConfig(value_d_weight=0.5, value_weight=2.0)
    loss, metrics = learner.loss_fn(None, batch, apply_fn=_fake_apply(outputs), config=config)
    # Example 0: CE = ln 2; (1 - 0.5)^2 = 0.25; (0 - 2)^2 = 4.
    # Example 2: softmax = (3/4, 1/4), CE = -ln(3/4); (-1 - 0)^2 = 1; (3 - 1)^2 = 4.
    policy = (math.log(2.0) + 3 * -math.log(0.75)) / 4
    value = (0.25 + 3 * 1.0) / 4
    value_d = (4.0 + 3 * 4.0) / 4
    np.testing.assert_allclose(metrics["policy_loss"], policy, rtol=1e-6)
    np.testing.assert_allclose(metrics["value_loss"], value, rtol=1e-6)
    np.testing.assert_allclose(metrics["value_d_loss"], value_d, rtol=1e-6)
    np.testing.assert_allclose(loss, policy + 2.0 * value + 0.5 * value_d, rtol=1e-6)
    assert float(metrics["weight_sum"]) == 4.0


def test_all_zero_weights_give_zero_loss_and_zero_gradient(tiny):
    net, params = tiny
    batch = _tiny_batch(jax.random.PRNGKey(0))._replace(weight=jnp.zeros(8))
    config = learner.LearnerConfig()
    grad_fn = jax.jit(jax.value_and_grad(lambda p: learner.loss_fn(p, batch, apply_fn=net.apply, config=config)[0]))
    loss, grads = grad_fn(params)
    assert float(loss) == 0.0
    assert float(learner.global_norm(grads)) == 0.0


def test_gradient_matches_an_independent_reimplementation_and_finite_differences(tiny):
    net, params = tiny
    batch = _tiny_batch(jax.random.PRNGKey(0))._replace(weight=jnp.array([1.0, 0, 2, 1, 0, 1, 1, 0.5]))
    config = learner.LearnerConfig(value_d_weight=0.3)

    def direct(params):
        out = net.apply(params, batch.observation, batch.player)
        per_example = (
            optax.softmax_cross_entropy(out.policy_logits, batch.search_policy)
            + (batch.z - out.value) ** 2
            + 0.3 * (batch.z_d - out.value_d) ** 2
        )
        return jnp.dot(batch.weight, per_example) / jnp.sum(batch.weight)

    ours = jax.jit(lambda p: learner.loss_fn(p, batch, apply_fn=net.apply, config=config)[0])
    direct = jax.jit(direct)
    np.testing.assert_allclose(ours(params), direct(params), rtol=1e-5)
    g_ours, g_direct = jax.grad(ours)(params), jax.grad(direct)(params)
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), g_ours, g_direct)

    # Directional derivative along a random direction, by central differences.
    rng = np.random.default_rng(2)
    direction = jax.tree_util.tree_map(lambda x: rng.standard_normal(x.shape).astype(np.float32), params)
    direction = jax.tree_util.tree_map(lambda d: d / learner.global_norm(direction), direction)
    eps = 1e-2
    shifted = jax.jit(lambda s: jax.tree_util.tree_map(lambda p, d: p + s * eps * d, params, direction))
    numeric = (ours(shifted(1.0)) - ours(shifted(-1.0))) / (2 * eps)
    analytic = sum(jax.tree_util.tree_leaves(jax.tree_util.tree_map(jnp.vdot, g_ours, direction)))
    np.testing.assert_allclose(numeric, analytic, rtol=2e-2)


def _history_planes_changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.any(before != after, axis=(0, 1)))


def test_history_dropout_drops_exactly_the_history_planes_at_the_rate():
    n = 4000
    obs = jnp.full((n, 8, 8, 119), 0.5)  # 0.5 so that every changed plane is visible
    out = np.asarray(jax.jit(learner.history_dropout, static_argnames="rate")(obs, jax.random.PRNGKey(0), rate=0.2))
    dropped = np.any(out != 0.5, axis=(1, 2, 3))
    assert abs(dropped.mean() - 0.2) < 5 * math.sqrt(0.2 * 0.8 / n)
    np.testing.assert_array_equal(out[~dropped], 0.5)
    example = out[np.flatnonzero(dropped)[0]]
    assert _history_planes_changed(np.full((8, 8, 119), 0.5), example).tolist() == list(range(14, 112))
    seen_once = [14 * k + 12 for k in range(1, 8)]
    np.testing.assert_array_equal(example[..., seen_once], 1.0)
    other_history = sorted(set(range(14, 112)) - set(seen_once))
    np.testing.assert_array_equal(example[..., other_history], 0.0)


def test_history_dropout_matches_pgx_history_free_observation():
    """A game's first observation has no history: dropping it changes nothing."""
    env = games.make("chess")
    obs = env.init(jax.random.PRNGKey(0)).observation[None]
    out = learner.history_dropout(obs, jax.random.PRNGKey(1), rate=1.0)
    np.testing.assert_array_equal(out, obs)
    with pytest.raises(ValueError, match="chess observations"):
        learner.history_dropout(jnp.zeros((1, 5, 5, 115)), jax.random.PRNGKey(1), rate=1.0)


def test_one_step_decreases_the_loss_on_a_fixed_batch(tiny):
    net, params = tiny
    config = learner.LearnerConfig(optimizer="adam", learning_rate=1e-3)
    optimizer = learner.make_optimizer(config)
    batch = _tiny_batch(jax.random.PRNGKey(0))
    state = learner.init_train_state(net, optimizer, jax.random.PRNGKey(1), batch.observation[0])
    jax.tree_util.tree_map(np.testing.assert_array_equal, state.params, params)  # same key, same params
    step = jax.jit(lambda s, b, k: learner.learner_step(net, optimizer, s, b, k, config=config))
    new_state, metrics = step(state, batch, jax.random.PRNGKey(2))
    after, _ = jax.jit(lambda p: learner.loss_fn(p, batch, apply_fn=net.apply, config=config))(new_state.params)
    assert float(after) < float(metrics["loss"])
    assert int(new_state.step) == 1
    assert float(metrics["learning_rate"]) == pytest.approx(1e-3)


@pytest.mark.parametrize("optimizer_name, learning_rate", [("adamw", 1e-2), ("sgd", 0.05)])
def test_a_few_hundred_steps_fit_a_tiny_batch(tiny, optimizer_name, learning_rate):
    net, params = tiny
    config = learner.LearnerConfig(optimizer=optimizer_name, learning_rate=learning_rate, max_grad_norm=10.0)
    optimizer = learner.make_optimizer(config)
    batch = _tiny_batch(jax.random.PRNGKey(3))
    state = learner.TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))

    @jax.jit
    def train(state, key):
        def body(state, key):
            return learner.learner_step(net, optimizer, state, batch, key, config=config)

        return jax.lax.scan(body, state, jax.random.split(key, 300))

    state, metrics = train(state, jax.random.PRNGKey(5))
    _, final = learner.loss_fn(state.params, batch, apply_fn=net.apply, config=config)
    assert float(metrics["loss"][0]) > 1.0
    assert float(final["policy_loss"]) < 0.1
    assert float(final["value_loss"]) < 0.05
    assert float(final["value_d_loss"]) < 0.1


def test_chess_batches_get_history_dropout_inside_the_step():
    calls = []

    def apply(params, obs, player):
        calls.append(obs)
        zeros = jnp.zeros(obs.shape[0])
        return networks.NetOutput(params["w"] * jnp.ones((obs.shape[0], 2)), zeros, zeros)

    net = networks.Network(init=None, apply=apply, num_actions=2, num_players=1, config=TINY)
    config = learner.LearnerConfig(history_dropout=1.0, optimizer="sgd")
    optimizer = learner.make_optimizer(config)
    params = {"w": jnp.zeros(())}
    state = learner.TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))
    batch = {
        "observation": jnp.full((2, 8, 8, 119), 0.5),
        "player": jnp.zeros(2, jnp.int32),
        "search_policy": jnp.full((2, 2), 0.5),
        "z": jnp.zeros(2),
        "z_d": jnp.zeros(2),
        "weight": jnp.ones(2),
        "extra_field": jnp.zeros(2),  # ignored
    }
    learner.learner_step(net, optimizer, state, batch, jax.random.PRNGKey(0), config=config)
    assert float(calls[0][0, 0, 0, 14]) == 0.0 and float(calls[0][0, 0, 0, 0]) == 0.5
    with pytest.raises(ValueError, match=r"batch field z must be \[2\], got \(2, 1\)"):
        learner.learner_step(net, optimizer, state, dict(batch, z=jnp.zeros((2, 1))), None, config=config)
    with pytest.raises(ValueError, match=r"lacks field\(s\) \['z_d'\]"):
        learner.learner_step(net, optimizer, state, {k: v for k, v in batch.items() if k != "z_d"}, None, config=config)


def test_schedules():
    piecewise = learner.make_schedule(
        learner.LearnerConfig(
            learning_rate=0.2, schedule="piecewise", boundaries=(10, 30), boundary_scales=(0.1, 0.5)
        )
    )
    assert [float(piecewise(s)) for s in (0, 9, 10, 29, 30)] == pytest.approx([0.2, 0.2, 0.02, 0.02, 0.01])
    cosine = learner.make_schedule(
        learner.LearnerConfig(learning_rate=1.0, schedule="cosine", decay_steps=100, final_lr_fraction=0.1)
    )
    assert [float(cosine(s)) for s in (0, 50, 100, 200)] == pytest.approx([1.0, 0.55, 0.1, 0.1], rel=1e-5)
    warm = learner.make_schedule(learner.LearnerConfig(learning_rate=1.0, warmup_steps=4))
    assert [float(warm(s)) for s in (0, 1, 3, 10)] == pytest.approx([0.25, 0.5, 1.0, 1.0])


def test_sgd_weight_decay_equals_an_l2_term_on_kernels_only():
    params = {"kernel": jnp.array([[1.0, -2.0]]), "bias": jnp.array([3.0])}
    grads = {"kernel": jnp.array([[0.5, 0.5]]), "bias": jnp.array([1.0])}
    config = learner.LearnerConfig(optimizer="sgd", learning_rate=0.1, momentum=0.0, weight_decay=0.2)
    optimizer = learner.make_optimizer(config)
    updates, _ = optimizer.update(grads, optimizer.init(params), params)
    l2 = lambda p: 0.5 * 0.2 * jnp.sum(p["kernel"] ** 2)
    expected = jax.tree_util.tree_map(lambda g, r: -0.1 * (g + r), grads, jax.grad(l2)(params))
    jax.tree_util.tree_map(np.testing.assert_allclose, updates, expected)


def test_gradient_clipping_bounds_the_update():
    params = {"kernel": jnp.zeros((2, 2))}
    config = learner.LearnerConfig(optimizer="sgd", learning_rate=1.0, momentum=0.0, max_grad_norm=1.0)
    optimizer = learner.make_optimizer(config)
    updates, _ = optimizer.update({"kernel": jnp.full((2, 2), 100.0)}, optimizer.init(params), params)
    assert float(learner.global_norm(updates)) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize(
    "field, value",
    [
        ("optimizer", "rmsprop"),
        ("learning_rate", 0.0),
        ("momentum", 1.0),
        ("schedule", "step"),
        ("history_dropout", 1.5),
        ("warmup_steps", -1),
        ("boundaries", (5, 3)),
        ("value_d_weight", float("nan")),
    ],
)
def test_config_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=f"LearnerConfig.{field}"):
        learner.LearnerConfig(**{field: value})


def test_config_validation_of_schedule_requirements():
    with pytest.raises(ValueError, match="boundaries"):
        learner.LearnerConfig(schedule="piecewise")
    with pytest.raises(ValueError, match="boundary_scales"):
        learner.LearnerConfig(schedule="piecewise", boundaries=(5,), boundary_scales=())
    with pytest.raises(ValueError, match="decay_steps"):
        learner.LearnerConfig(schedule="cosine")
    assert dataclasses.asdict(learner.LearnerConfig())["boundaries"] == ()


def test_second_intrinsic_head_learns_the_opponents_return_through_the_opponents_latent():
    # A stub whose heads read a per-latent parameter: value_d = u[player], value_d_opponent
    # = w[player]. The loss adds mean_w (z_d_opponent − w[opponent_player])², so its gradient
    # w.r.t. w is the hand-computed one and u is untouched by the opponent targets.
    def apply(params, obs, player):
        batch = obs.shape[0]
        return networks.NetOutput(jnp.zeros((batch, 2)), jnp.zeros(batch), params["u"][player],
                                  params["w"][player])

    params = {"u": jnp.array([0.5, -1.0]), "w": jnp.array([2.0, 3.0])}
    batch = learner.Batch(
        observation=jnp.zeros((3, 1, 1, 1)), player=jnp.int32([0, 1, 0]),
        search_policy=jnp.full((3, 2), 0.5), z=jnp.zeros(3), z_d=jnp.array([0.5, -1.0, 1.5]),
        weight=jnp.array([1.0, 1.0, 2.0]), opponent_player=jnp.int32([1, 0, 1]),
        z_d_opponent=jnp.array([4.0, 1.0, 3.0]))
    config = learner.LearnerConfig(value_d_weight=1.0)
    loss_of = lambda p: learner.loss_fn(p, batch, apply_fn=apply, config=config)  # noqa: E731
    _, metrics = loss_of(params)
    # own head: (0.5-0.5)², (-1+1)², (1.5-0.5)²·2 -> 2/4; opponent head: w[1]=3, w[0]=2, w[1]=3
    # against 4, 1, 3 -> (1 + 1 + 0·2)/4.
    np.testing.assert_allclose(metrics["value_d_loss"], 2 / 4 + 2 / 4, rtol=1e-6)
    grads = jax.grad(lambda p: loss_of(p)[0])(params)
    np.testing.assert_allclose(grads["w"], [2 * (2 - 1) / 4, 2 * (3 - 4) / 4 + 2 * 2 * (3 - 3) / 4], rtol=1e-6)
    np.testing.assert_allclose(grads["u"], [2 * 2 * (0.5 - 1.5) / 4, 0.0], rtol=1e-6)
