"""Where a search's time goes: each part timed alone, in one run, printed as JSON.

  python benchmarks/search_profile.py --game=chess --batch=32 --simulations=32 --channels=32 --blocks=4

Parts (each jitted on its own, median of --repeats runs after compilation):
  search_ms      one ``search.run_search`` (PUCT unless --algorithm=gumbel), no root noise;
  forwards_ms    S + 1 batched network forwards on the root observations (what a search
                 must spend on the network);
  env_steps_ms   S + 1 batched ``env.step`` calls from the root positions;
  features_ms    S + 1 batched feature computations φ (only paid with diversity in search);
  machinery_ms   the tree search with a recurrent function that does no work (constant
                 outputs, no game, no network): selection, expansion, backward;
and ratios search / (forwards + env steps) and search / forwards. ``tree_bytes_per_node``
is the size of the search tree's arrays and stored states per node.
"""

import functools
import json
import sys

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

import profiling  # benchmarks/profiling.py (this folder is on the path when a script runs)
from azdb_jax import features, games, networks, search, tree_search

_FLAGS = profiling.define_search_flags()
flags.adopt_module_key_flags(profiling)  # --help lists the shared search flags with this script's own
_NUM_SLOTS = flags.DEFINE_integer("num_slots", 0, "Tree slots per node (0: the game's bound).")


def tree_bytes_per_node(tree) -> float:
    """Bytes of a tree's node-indexed arrays (children rows, node fields, stored states) per node."""
    batch, nodes = tree.node_visits.shape
    total = sum(leaf.nbytes for leaf in jax.tree.leaves(tree)
                if leaf.ndim >= 2 and leaf.shape[:2] == (batch, nodes))
    return total / (batch * nodes)


def main(argv):
    del argv
    env = games.make(_FLAGS.game.value)
    batch, sims = _FLAGS.batch.value, _FLAGS.simulations.value
    config = search.SearchConfig(num_simulations=sims, algorithm=_FLAGS.algorithm.value,
                                 num_slots=_NUM_SLOTS.value)
    network = networks.make_network(
        networks.NetworkConfig(channels=_FLAGS.channels.value, num_blocks=_FLAGS.blocks.value,
                               value_hidden=_FLAGS.channels.value),
        num_actions=env.num_actions, num_players=1)
    roots = profiling.random_positions(env, batch, _FLAGS.opening_plies.value, jax.random.PRNGKey(0))
    params = network.init(jax.random.PRNGKey(1), roots.observation)
    players, lams = jnp.zeros((batch,), jnp.int32), jnp.ones((batch,))
    repeats = _FLAGS.repeats.value

    run = jax.jit(lambda p, k, s: search.run_search(env, network.apply, p, k, s, players, lams, config=config,
                                                      add_noise=False))
    out = run(params, jax.random.PRNGKey(2), roots)
    search_s = profiling.timed(lambda p, k, s: run(p, k, s).action, params, jax.random.PRNGKey(2), roots,
                               repeats=repeats)

    def forwards(p, obs):
        def body(c, _):
            return c + network.apply(p, obs + c, players).value.sum() * 0.0, None
        return jax.lax.scan(body, 0.0, None, length=sims + 1)[0]
    forwards_s = profiling.timed(jax.jit(forwards), params, roots.observation, repeats=repeats)

    def steps(s, key):
        # A game of S + 1 plies from each root (restarting finished games), like a search path.
        def body(state, k):
            action = jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -1e9))
            nxt = jax.vmap(env.step)(state, action)
            done = (nxt.terminated | nxt.truncated)
            keep = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
            return jax.tree.map(keep, s, nxt), None
        return jax.lax.scan(body, s, jax.random.split(key, sims + 1))[0].rewards
    steps_s = profiling.timed(jax.jit(steps), roots, jax.random.PRNGKey(4), repeats=repeats)

    phi_fn = jax.vmap(features.feature_fn(env))

    def feats(s):
        def body(state, _):
            return state.replace(current_player=1 - state.current_player), phi_fn(state).sum()
        return jax.lax.scan(body, s, None, length=sims + 1)[1]
    features_s = profiling.timed(jax.jit(feats), roots, repeats=repeats)

    num_slots = min(config.num_slots or search.num_slots_for(env), env.num_actions)
    logits = jnp.where(roots.legal_action_mask, 0.0, -1e9)

    def idle_recurrent(params, key, action, emb):
        del params, key
        step = tree_search.StepOutput(reward=jnp.zeros(batch), discount=-jnp.ones(batch), prior_logits=logits,
                                      value=jnp.zeros(batch), legal_action_mask=roots.legal_action_mask)
        return step, emb + action * 0

    if config.algorithm == "puct":
        selection = functools.partial(tree_search.puct_selection, pb_c_init=config.pb_c_init, pb_c_base=config.pb_c_base,
                                      qtransform=functools.partial(search.qtransform_alphazero, config=config))
    else:
        selection = functools.partial(tree_search.gumbel_selection, num_simulations=sims,
                                      max_num_considered_actions=config.max_num_considered_actions)
    root = tree_search.RootInput(prior_logits=logits, value=jnp.zeros(batch), embedding=jnp.zeros(batch, jnp.int32),
                                 legal_action_mask=roots.legal_action_mask)
    machinery = jax.jit(lambda k: tree_search.search(None, k, root, idle_recurrent, selection, num_simulations=sims,
                                                      num_slots=num_slots).node_visits)
    machinery_s = profiling.timed(machinery, jax.random.PRNGKey(3), repeats=repeats)

    result = dict(
        game=_FLAGS.game.value, batch=batch, simulations=sims, channels=_FLAGS.channels.value,
        blocks=_FLAGS.blocks.value,
        algorithm=_FLAGS.algorithm.value, num_slots=num_slots, device=str(jax.devices()[0].platform),
        search_ms=round(1e3 * search_s, 1), forwards_ms=round(1e3 * forwards_s, 1),
        env_steps_ms=round(1e3 * steps_s, 1), features_ms=round(1e3 * features_s, 1),
        machinery_ms=round(1e3 * machinery_s, 1),
        search_over_forwards=round(search_s / forwards_s, 2),
        search_over_forwards_and_steps=round(search_s / (forwards_s + steps_s), 2),
        tree_bytes_per_node=round(tree_bytes_per_node(out.tree)),
        mean_legal_moves=float(np.asarray(roots.legal_action_mask.sum(-1)).mean()),
    )
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    app.run(main)
