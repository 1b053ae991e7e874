"""Time a simulation of the engine's anytime search takes, against the trees' capacity.

  python benchmarks/anytime_capacity.py --checkpoint=runs/demo_chess --capacities=1024,16384,131072 \
      --simulations=300 --out=capacity.json

The engine's trees have room for ``capacity`` nodes (the ``Hash`` option) and a search
uses a few thousand of them, so a simulation must cost the same whatever the capacity.
For each capacity, ``anytime.grow`` runs ``--simulations`` simulations on the team's
trees from the start position (jitted with the trees donated, as the engine runs it),
``--repeats`` times in turns over the capacities (median reported). It runs twice: with
``tree_search``'s backward pass, and with the backward pass as it was before it carried
the child's value up (it read it back from ``node_values``, and XLA then copied that
array at every level of every backup: O(capacity) a level).
"""

import functools
import time
from typing import List

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import anytime, games, tree_search
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import loading

_CHECKPOINT = common_flags.define_checkpoint("Run directory[@step] (chess or Gardner chess).", required=True)
_CAPACITIES = flags.DEFINE_list("capacities", ["1024", "16384", "131072"], "Nodes per player tree.")
_SIMULATIONS = common_flags.define_simulations("Simulations per timed call.", default=300)
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed calls per capacity.")
_OUT = common_flags.define_out("Write the rows as JSON here (default: print them only).")


def backward_read_back(tree, leaf):
    """``tree_search._backward`` before the change: the child's value read back from
    ``node_values`` at every level (the reference the benchmark compares with)."""
    rows = jnp.arange(leaf.shape[0])
    num_nodes = tree.node_values.shape[1]

    def level(carry):
        tree, value, index = carry
        active = index != tree_search.ROOT
        parent = jnp.where(active, tree.parents[rows, index], tree_search.ROOT)
        slot = jnp.where(active, tree.action_from_parent[rows, index], 0)
        count = tree.node_visits[rows, parent]
        value = tree.children_rewards[rows, parent, slot] + tree.children_discounts[rows, parent, slot] * value
        parent_value = (tree.node_values[rows, parent] * count + value) / (count + 1.0)
        child_value = tree.node_values[rows, index]
        target = jnp.where(active, parent, num_nodes)
        tree = tree.replace(
            node_values=tree.node_values.at[rows, target].set(parent_value, mode="drop"),
            node_visits=tree.node_visits.at[rows, target].set(count + 1, mode="drop"),
            children_values=tree.children_values.at[rows, target, slot].set(child_value, mode="drop"),
            children_visits=tree.children_visits.at[rows, target, slot].add(1, mode="drop"))
        return tree, value, parent

    carry = (tree, tree.node_values[rows, leaf], leaf)
    tree, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[2] != tree_search.ROOT), level, carry)
    return tree


def main(argv: List[str]) -> None:
    del argv
    path, step = common_flags.split_checkpoint(_CHECKPOINT.value)
    team = loading.load_team(path, step=step)
    game = games.board_game(team.env)
    params = jax.device_put(team.params, jax.devices()[0])
    state = jax.tree.map(lambda x: x[0], game.states_from_boards([game.new_board(None)], max_pieces=16))
    hook = team.search_hook()
    players, lam = jnp.arange(team.num_players), jnp.asarray(team.search_lambdas)
    actions, sims = jnp.zeros(8, jnp.int32), _SIMULATIONS.value
    carried = tree_search._backward  # pylint: disable=protected-access
    programs = {}
    for name, backward in (("carried", carried), ("read back", backward_read_back)):
        tree_search._backward = backward  # pylint: disable=protected-access  (traced into the programs below)
        for capacity in (int(c) for c in _CAPACITIES.value):
            grow = jax.jit(functools.partial(anytime.grow, team.env, team.apply_fn, config=team.search_config,
                                             hook=hook._replace(hook_params=None)),
                           donate_argnums=(1,))
            restart = jax.jit(functools.partial(anytime.restart, team.env, team.apply_fn), donate_argnums=(1,))
            trees = anytime.begin(team.env, team.apply_fn, params, jax.random.PRNGKey(0), state, players=players,
                                  lam=lam, config=team.search_config, capacity=capacity)
            trees, _ = restart(params, trees, state, actions, 0)
            trees = jax.block_until_ready(grow(params, trees, 4, hook_params=hook.hook_params, budget=sims))
            programs[(name, capacity)] = [grow, restart, trees]
    tree_search._backward = carried  # pylint: disable=protected-access
    times = {key: [] for key in programs}
    for _ in range(_REPEATS.value):  # in turns, so that other jobs' load falls on every row alike
        for key, (grow, restart, trees) in programs.items():
            trees, _ = restart(params, trees, state, actions, 0)
            start = time.perf_counter()
            trees = jax.block_until_ready(grow(params, trees, sims, hook_params=hook.hook_params, budget=sims))
            times[key].append((time.perf_counter() - start) / sims * 1000)
            programs[key][2] = trees
    rows = [dict(backward=name, capacity=capacity, ms_per_simulation=float(np.median(ms)),
                 runs=[round(x, 3) for x in ms]) for (name, capacity), ms in times.items()]
    report.emit(rows, _OUT.value)


if __name__ == "__main__":
    app.run(main)
