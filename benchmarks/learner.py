"""Our learner step against a bare flax/optax step on the same network and batch, as JSON.

  python benchmarks/learner.py --game=chess --batch=256 --channels=32 --blocks=4
  python benchmarks/learner.py --game=connect_four --batch=512 --num_players=10

Measures (after compilation, the two steps alternating ``--repeats`` times, medians):
  step_ms            ``azdb_jax.learner.learner_step``, jitted with its state donated, as
                     the trainer runs it: the AZdb loss (policy cross-entropy, value and
                     intrinsic-value errors, per-example weights), chess history dropout,
                     the configured optimiser, gradient and parameter norms;
  bare_step_ms       a bare AlphaZero step on the same network and batch: cross-entropy
                     plus value error, ``jax.grad``, ``optax.adamw`` with the same rate
                     and decay (on every parameter), ``optax.apply_updates``, nothing else;
  ratio              step_ms / bare_step_ms (1.0 = our bookkeeping is free);
  examples_per_s     batch / step time, ours.
The batch is random observations of the game's shape (the cost does not depend on the
values), random search policies and targets.
"""

import functools
import json
import statistics
import sys
import time

from absl import app, flags
import jax
import jax.numpy as jnp
import optax

from azdb_jax import games, learner, networks
from azdb_jax.cli import common_flags

_GAME = common_flags.define_game("Game (observation and action shapes).", default="connect_four", choices=games.IDS)
_BATCH = flags.DEFINE_integer("batch", 256, "Learner batch.", lower_bound=1)
_NUM_PLAYERS = flags.DEFINE_integer("num_players", 1, "Team size (latent planes of the network).", lower_bound=1)
_CHANNELS = flags.DEFINE_integer("channels", 32, "Network channels.", lower_bound=1)
_BLOCKS = flags.DEFINE_integer("blocks", 2, "Residual blocks.", lower_bound=0)
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed repetitions.", lower_bound=1)
_COMPUTE_DTYPE = flags.DEFINE_enum("compute_dtype", "float32", networks.COMPUTE_DTYPES,
                                   "Activations' dtype (the chess presets use bfloat16).")


def bare_step(apply_fn, optimizer: optax.GradientTransformation, params, opt_state, batch: learner.Batch):
    """One plain AlphaZero gradient step: CE(π, p) + (z − v)², mean over the batch."""

    def loss(params):
        out = apply_fn(params, batch.observation, batch.player)
        cross_entropy = -jnp.sum(batch.search_policy * jax.nn.log_softmax(out.policy_logits), axis=-1)
        return jnp.mean(cross_entropy + jnp.square(batch.z - out.value))

    grads = jax.grad(loss)(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def _random_batch(env, num_actions: int, num_players: int, size: int) -> learner.Batch:
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    obs_shape = jax.eval_shape(env.init, jax.random.PRNGKey(0)).observation.shape
    return learner.Batch(
        observation=jax.random.bernoulli(keys[0], 0.3, (size,) + obs_shape).astype(jnp.float32),
        player=jax.random.randint(keys[1], (size,), 0, num_players),
        search_policy=jax.nn.softmax(jax.random.normal(keys[2], (size, num_actions)), axis=-1),
        z=jax.random.choice(keys[3], jnp.array([-1.0, 0.0, 1.0]), (size,)),
        z_d=jax.random.normal(keys[4], (size,)),
        weight=jnp.ones((size,), jnp.float32),
    )


def main(argv):
    del argv
    env = games.make(_GAME.value)
    net_config = networks.NetworkConfig(channels=_CHANNELS.value, num_blocks=_BLOCKS.value,
                                        value_hidden=_CHANNELS.value, compute_dtype=_COMPUTE_DTYPE.value)
    network = networks.make_network(net_config, num_actions=env.num_actions, num_players=_NUM_PLAYERS.value)
    config = learner.LearnerConfig()  # adamw, as the CPU presets train
    optimizer = learner.make_optimizer(config)
    bare_optimizer = optax.adamw(config.learning_rate, weight_decay=config.weight_decay)
    batch = _random_batch(env, env.num_actions, _NUM_PLAYERS.value, _BATCH.value)

    ours = jax.jit(functools.partial(learner.learner_step, network, optimizer, config=config), donate_argnums=0)
    bare = jax.jit(functools.partial(bare_step, network.apply, bare_optimizer), donate_argnums=(0, 1))
    state = learner.init_train_state(network, optimizer, jax.random.PRNGKey(1), batch.observation[:1])
    bare_params = jax.tree.map(jnp.copy, state.params)
    bare_state = (bare_params, bare_optimizer.init(bare_params))
    key = jax.random.PRNGKey(2)

    def run_ours():
        nonlocal state
        state, metrics = ours(state, batch, key)
        return metrics["loss"]

    def run_bare():
        nonlocal bare_state
        bare_state = bare(*bare_state, batch)
        return bare_state[0]

    for fn in (run_ours, run_bare):  # compile
        jax.block_until_ready(fn())
    times = {"ours": [], "bare": []}
    for _ in range(_REPEATS.value):
        for name, fn in (("ours", run_ours), ("bare", run_bare)):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            times[name].append(time.perf_counter() - start)
    ours_s, bare_s = statistics.median(times["ours"]), statistics.median(times["bare"])
    json.dump(dict(game=_GAME.value, batch=_BATCH.value, num_players=_NUM_PLAYERS.value, channels=_CHANNELS.value,
                   blocks=_BLOCKS.value, compute_dtype=_COMPUTE_DTYPE.value, optimizer=config.optimizer, device=str(jax.devices()[0].platform),
                   step_ms=round(1e3 * ours_s, 2), bare_step_ms=round(1e3 * bare_s, 2),
                   ratio=round(ours_s / bare_s, 2), examples_per_s=round(_BATCH.value / ours_s, 1)),
              sys.stdout)
    print()


if __name__ == "__main__":
    app.run(main)
