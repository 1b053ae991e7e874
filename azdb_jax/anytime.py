"""An anytime team search: trees grown in chunks of simulations until the caller stops.

``planning.team_search`` runs a fixed number of simulations in one compiled program
(mctx's budget is static). A chess engine on a clock needs a search that can stop
between any two simulations and go on later. Here the search state is the compact
trees of ``azdb_jax.tree_search``, one per team player (the batch axis is the player
axis, as in ``planning.team_search``), with room for ``capacity`` nodes each, carried
from call to call:

- ``begin`` allocates the trees and roots them at a position;
- ``grow`` runs ``k`` more simulations (``k`` is traced: one compiled program serves
  every chunk size); a tree never grows past its capacity;
- ``answers`` reads the team's root statistics (SPEC §1.9), applies every selection
  rule of Eq. 9 (``planning.team_move``) and walks each player's principal variation;
- ``restart`` roots the next search in the same arrays, keeping each tree's subtree
  under the plies played since (subtree reuse), compacted to the front of the arrays.

Each player searches as in ``planning.team_search``: its own latent and ``λ_i``, the
intrinsic-reward hook of the team, no root noise. A PUCT tree grows exactly as a PUCT
search of the same total number of simulations (``tests/test_anytime.py`` checks it
node for node against ``planning.team_search``). Gumbel MuZero's root rule, sequential
halving, needs its budget in advance: ``grow`` takes it as a traced ``budget``, and the
schedule is mctx's for that budget, continued past it with the last two moves in turn
(``considered_visit``); inside the tree Gumbel search uses mctx's interior rule, which
needs no budget. A Gumbel tree should not be reused: its root's visits would not follow
the schedule of the next search.

Nothing is jitted here; the engine jits ``begin``, ``restart``, ``grow`` and
``answers`` once each (with the search state donated).
"""

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import mctx
import pgx.core

from azdb_jax import planning, tree_search
from azdb_jax import search as search_lib

Array = jax.Array
Tree = tree_search.Tree
ROOT = tree_search.ROOT
UNVISITED = tree_search.UNVISITED
NO_PARENT = tree_search.NO_PARENT


class AnytimeSearch(NamedTuple):
    """One position searched by ``n`` team players, one tree each (batch axis = player)."""

    tree: Tree  # compact trees [n, N, K] (N = capacity); nodes past num_nodes are stale
    num_nodes: Array  # [n] int32 nodes in use; the next simulation writes node num_nodes
    player: Array  # [n] int32 latent of each tree
    lam: Array  # [n] float32 λ_i of each tree
    root_seat: Array  # [n] int32 pgx player id to move at the root
    rng_key: Array  # consumed by the next call


# ------------------------------------------------------------------ sequential halving, anytime


def considered_visit(num_considered: Array, simulation: Array, budget: Array, *, max_considered: int) -> Array:
    """The visit count a considered root move has at ``simulation`` under sequential halving.

    mctx's schedule (``seq_halving.get_sequence_of_considered_visits``) for ``m`` moves and
    a budget of ``S`` simulations, in closed form so that ``S`` can be traced: phase ``p``
    considers ``c_p = max(2, ⌊m / 2^p⌋)`` moves and gives each
    ``e_p = max(1, ⌊S / (⌈log2 m⌉ c_p)⌋)`` more visits in turn, so at simulation ``s`` of
    phase ``p`` (begun at ``s_p`` with ``V_p = Σ_{q<p} e_q`` visits each) the count is
    ``V_p + ⌊(s − s_p) / c_p⌋``. The phase with two moves has no end: past ``S`` the
    schedule goes on as mctx's generator would. ``m ≤ 1``: ``s``. ``max_considered``
    bounds ``m`` (it sets the number of phases, which must be static).
    """
    m = jnp.maximum(num_considered, 1).astype(jnp.int32)
    s = simulation.astype(jnp.int32)
    budget = jnp.asarray(budget, jnp.float32)
    log2m = 32 - jax.lax.clz(jnp.maximum(m, 2) - 1)  # ⌈log2 m⌉ for m ≥ 2, exactly
    start, visits = jnp.int32(0), jnp.int32(0)
    answer, found = jnp.int32(0), jnp.bool_(False)
    for p in range(math.ceil(math.log2(max(max_considered, 2))) + 1):
        considered = jnp.maximum(2, m >> p)
        extra = jnp.maximum(1, jnp.floor(budget / (log2m * considered).astype(jnp.float32))).astype(jnp.int32)
        last = considered == 2  # the phase that never ends
        inside = ~found & (last | (s < start + extra * considered))
        answer = jnp.where(inside, visits + (s - start) // considered, answer)
        found = found | inside
        start, visits = start + extra * considered, visits + extra
    return jnp.where(m <= 1, s, answer)


def halving_root_selection(tree: Tree, node: Array, *, budget: Array, max_considered: int) -> Array:
    """Gumbel MuZero's root move by sequential halving with a traced ``budget``, one tree.

    Among the valid root slots whose visits equal ``considered_visit``, the one with the
    largest ``g + logits + σ(completed Q)`` (mctx's score); when no slot has that count
    (a root whose visits follow another schedule), the largest score over all of them.
    """
    visits = tree.children_visits[node]
    logits = tree.children_prior_logits[node]
    valid = tree.root_invalid_actions == 0
    completed_q = mctx.qtransform_completed_by_mix_value(tree, node)
    num_considered = jnp.minimum(max_considered, valid.sum())
    wanted = considered_visit(num_considered, visits.sum(), budget, max_considered=max_considered)
    score = jnp.where(valid, jnp.maximum(-1e9, tree.extra_data.root_gumbel + logits - logits.max() + completed_q),
                      -jnp.inf)
    matching = valid & (visits == wanted)
    return jnp.argmax(jnp.where(jnp.any(matching) & ~matching, -jnp.inf, score)).astype(jnp.int32)


def selection_fn(config: search_lib.SearchConfig, budget: Array) -> tree_search.SelectionFn:
    """The search's slot selection: AlphaZero's PUCT (``budget`` unused), or Gumbel
    MuZero with ``halving_root_selection`` at the root."""
    if config.algorithm == "puct":
        return functools.partial(tree_search.puct_selection, pb_c_init=config.pb_c_init, pb_c_base=config.pb_c_base,
                                 qtransform=functools.partial(search_lib.qtransform_alphazero, config=config))

    def gumbel(tree, node, depth):
        root = halving_root_selection(tree, node, budget=budget, max_considered=config.max_num_considered_actions)
        interior = mctx.gumbel_muzero_interior_action_selection(jax.random.PRNGKey(0), tree, node, depth)
        return jnp.where(depth == 0, root, interior).astype(jnp.int32)

    return gumbel


# ------------------------------------------------------------------ begin, restart, grow


def _context(search: AnytimeSearch, params: Any, hook_params: Any) -> search_lib.SearchContext:
    return search_lib.SearchContext(params, search.player, search.root_seat, search.lam, hook_params, search.player)


def _roots(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, ctx: search_lib.SearchContext,
           position: pgx.core.State) -> tree_search.RootInput:
    """Each player's root at ``position`` (one state): the clean prior, no tracked part."""
    n = ctx.player.shape[0]
    root = jax.tree.map(lambda x: jnp.broadcast_to(x[None], (n,) + x.shape), position)
    _, root_input = search_lib.evaluate_root(env, apply_fn, ctx, root)
    return root_input._replace(value_part=None)


def begin(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, params: Any, rng_key: Array, position: pgx.core.State,
          *, players: Array, lam: Array, config: search_lib.SearchConfig, capacity: int) -> AnytimeSearch:
    """New trees of ``capacity`` nodes rooted at ``position`` (one state, not batched),
    one per player in ``players`` [n], searching with ``lam`` [n]; consumes ``rng_key``.
    This allocates the arrays; the next searches ``restart`` in them."""
    players, lam = players.astype(jnp.int32), lam.astype(jnp.float32)
    ctx = search_lib.SearchContext(params, players, jnp.zeros_like(players), lam, None, players)
    root = _roots(env, apply_fn, ctx, position)
    num_slots = min(config.num_slots or search_lib.num_slots_for(env), env.num_actions)
    n = players.shape[0]
    seed_key, rng_key = jax.random.split(rng_key)
    tree = tree_search.new_tree(root, capacity, num_slots, jnp.zeros((n, num_slots), root.value.dtype),
                                jax.random.bits(seed_key, (n,), jnp.uint32))
    return AnytimeSearch(tree=tree, num_nodes=jnp.ones((n,), jnp.int32), player=players, lam=lam,
                         root_seat=jnp.broadcast_to(position.current_player, (n,)).astype(jnp.int32),
                         rng_key=rng_key)


def restart(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, params: Any, search: AnytimeSearch,
            position: pgx.core.State, actions: Array, length: Array):
    """The next search, in ``search``'s arrays: each tree keeps its subtree under
    ``actions[:length]`` (the plies played since its root; ``length = 0``: none) when it
    holds that line, else starts afresh at ``position``. Returns (search, [n] reused).

    Use an even ``length``: rewards and leaf values were mixed for the old root player
    (``λ_i``), who is to move again only after an even number of plies. Costs a pass
    over the kept nodes, not over the capacity. Consumes ``search.rng_key``.
    """
    tree = search.tree
    n = tree.node_visits.shape[0]
    nodes = jax.vmap(_descend, in_axes=(0, None, None))(tree, actions, length)
    reused = (length > 0) & (nodes != UNVISITED)
    tree, count = _compact(tree, search.num_nodes, jnp.maximum(nodes, 0), reused)
    seats = jnp.broadcast_to(position.current_player, (n,)).astype(jnp.int32)
    search = search._replace(root_seat=seats)
    tree = tree_search.write_root(tree, _roots(env, apply_fn, _context(search, params, None), position), ~reused)
    seed_key, rng_key = jax.random.split(search.rng_key)
    tree = tree.replace(extra_data=tree.extra_data.replace(tie_seed=jax.random.bits(seed_key, (n,), jnp.uint32)))
    return search._replace(tree=tree, num_nodes=jnp.where(reused, count, 1), rng_key=rng_key), reused


def grow(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, params: Any, search: AnytimeSearch,
         num_simulations: Array, *, config: search_lib.SearchConfig, hook: search_lib.SearchHook = search_lib.NO_HOOK,
         hook_params: Any = None,
         budget: Array = 0) -> AnytimeSearch:
    """``search`` after ``num_simulations`` more simulations on every tree (fewer when a
    tree would pass its capacity); ``budget`` is the Gumbel root's planned total.
    ``hook`` is the team's search hook (``Agent.search_hook``); its ψ is read from
    ``hook_params``, so that it stays an argument of the compiled program (its
    ``hook.hook_params`` is not used).

    Simulations are ``tree_search.continue_search``'s (mctx's simulate, expand, backward),
    each writing its new node at ``num_nodes`` of its tree.
    """
    tree = search.tree
    capacity = tree.node_visits.shape[1]
    recurrent_fn = search_lib.make_recurrent_fn(env, apply_fn, feature_fn=hook.feature_fn,
                                                intrinsic_reward_fn=hook.intrinsic_reward_fn,
                                                opponent_model=config.opponent_model)
    count = jnp.clip(num_simulations, 0, capacity - jnp.max(search.num_nodes)).astype(jnp.int32)
    key, rng_key = jax.random.split(search.rng_key)
    tree = tree_search.continue_search(_context(search, params, hook_params), key, tree, recurrent_fn,
                                       selection_fn(config, budget), num_simulations=count,
                                       next_node=search.num_nodes, max_depth=capacity)
    return search._replace(tree=tree, num_nodes=search.num_nodes + count, rng_key=rng_key)


# ------------------------------------------------------------------ reading the trees


class Answers(NamedTuple):
    """What the engine reads from the trees (``n`` players, ``R`` rules, lines of ``L``)."""

    player_actions: Array  # [n] each player's move (most visited or LCB)
    player_values: Array  # [n] V_j = max over visited moves of Q_j (side to move)
    rule_players: Array  # [R] the player each selection rule picks
    rule_actions: Array  # [R] the team's move under each rule
    pv: Array  # [n, L] each player's principal variation from its move (action ids, -1 past its end)
    nodes: Array  # [n] nodes in each tree
    depth: Array  # [n] mean depth of the nodes below the root
    seldepth: Array  # [n] depth of the deepest node


def root_statistics(tree: Tree, num_actions: int, *, config: search_lib.SearchConfig) -> search_lib.RootStatistics:
    """``search.root_statistics`` of compact trees [B]; the clean prior is read from the
    root's slots (an evaluation search adds no noise)."""
    visits, qvalues = search_lib.root_visits(tree, num_actions)
    fill = jnp.finfo(tree.children_prior_logits.dtype).min
    prior_logits = tree_search.to_actions(tree, tree.children_prior_logits[:, ROOT], num_actions, fill=fill)
    return search_lib.statistics(tree, visits, qvalues, prior_logits, config=config)


def principal_variation(tree: Tree, action: Array, length: int) -> Array:
    """``action`` then the most-visited line below it, [length] action ids (-1 past the
    tree's end), in one tree; ties go to the lower slot."""

    def step(node, _):
        at = jnp.maximum(node, 0)
        slot = jnp.argmax(tree.children_visits[at])
        here = (node != UNVISITED) & (tree.children_visits[at, slot] > 0)
        return (jnp.where(here, tree.children_index[at, slot], UNVISITED),
                jnp.where(here, tree.extra_data.slot_actions[at, slot], -1))

    child = tree.children_index[ROOT, jnp.argmax(tree.extra_data.slot_actions[ROOT] == action)]
    _, rest = jax.lax.scan(step, child, None, length=length - 1)
    return jnp.concatenate([action[None], rest]).astype(jnp.int32)


def node_depths(tree: Tree, num_nodes: Array) -> Array:
    """Edges from the root to each node of one tree [N] (0 past ``num_nodes``), by pointer
    jumping: each node keeps a distance to an ancestor and jumps to that ancestor's
    ancestor, so ``⌈log2 N⌉`` passes reach the root from any depth."""
    capacity = tree.parents.shape[0]
    index = jnp.arange(capacity)
    above = jnp.where((index < num_nodes) & (index != ROOT), tree.parents, -1)  # -1: at the root
    depth = (above >= 0).astype(jnp.int32)
    for _ in range(max(1, math.ceil(math.log2(capacity)))):
        step = above >= 0
        at = jnp.maximum(above, 0)
        depth = depth + jnp.where(step, depth[at], 0)
        above = jnp.where(step, above[at], -1)
    return depth


def answers(search: AnytimeSearch, num_actions: int, *, config: search_lib.SearchConfig, move: str = "visits",
            pv_length: int = 12) -> Answers:
    """Every player's move and value, each rule's choice (``planning.SELECTION_RULES``
    order), the lines and the sizes of the trees."""
    tree = search.tree
    stats = root_statistics(tree, num_actions, config=config)
    if move == "lcb":
        actions = jax.vmap(planning.lcb_action)(stats.q, stats.u, stats.visited)
    else:
        actions = jax.vmap(planning.most_visited_action)(stats.visits, stats.q)
    team = planning.TeamRootStatistics(*(x[None] for x in stats))
    chosen = [planning.team_move(team, rule, move=move) for rule in planning.SELECTION_RULES]
    depth = jax.vmap(node_depths)(tree, search.num_nodes)
    return Answers(
        player_actions=actions, player_values=stats.value,
        rule_players=jnp.concatenate([player for player, _ in chosen]),
        rule_actions=jnp.concatenate([action for _, action in chosen]),
        pv=jax.vmap(principal_variation, in_axes=(0, 0, None))(tree, actions, pv_length),
        nodes=search.num_nodes, depth=depth.sum(axis=-1) / jnp.maximum(search.num_nodes - 1, 1),
        seldepth=depth.max(axis=-1))


# ------------------------------------------------------------------ subtree reuse


def _descend(tree: Tree, actions: Array, length: Array) -> Array:
    """The node reached from the root of one tree by ``actions[:length]``; UNVISITED
    when the tree does not hold that line."""

    def step(node, i):
        at = jnp.maximum(node, 0)
        slot = jnp.argmax(tree.extra_data.slot_actions[at] == actions[i])
        held = (node != UNVISITED) & (tree.extra_data.slot_actions[at, slot] == actions[i])
        return jnp.where(i < length, jnp.where(held, tree.children_index[at, slot], UNVISITED), node), None

    node, _ = jax.lax.scan(step, jnp.int32(ROOT), jnp.arange(actions.shape[0]))
    return node


def _compact(tree: Tree, num_nodes: Array, node: Array, keep_any: Array):
    """Each tree's subtree under ``node`` [B] moved to the front of its arrays, in place:
    (trees, nodes kept [B]). Nothing is kept where ``keep_any`` [B] is False.

    A node is kept when its parent is (nodes come after their parents, so the marks
    settle after as many sweeps as the subtree is deep). Kept nodes keep their order,
    so parents still precede children, and node ``i`` of the result comes from node
    ``order[i] ≥ i``: copying in increasing ``i`` never overwrites a node not yet
    copied. One loop over the kept nodes serves the batch (trees done early write out
    of bounds, which drops the write), as ``tree_search``'s backward pass does.
    """
    batch, capacity = tree.node_visits.shape
    rows = jnp.arange(batch)
    index = jnp.arange(capacity)[None]
    parents = tree.parents

    def sweep(carry):
        keep, _ = carry
        parent_kept = jnp.take_along_axis(keep, jnp.maximum(parents, 0), axis=1)
        grown = keep | ((parents >= 0) & parent_kept & (index < num_nodes[:, None]))
        return grown, jnp.any(grown != keep)

    start = (index == node[:, None]) & keep_any[:, None]
    keep, _ = jax.lax.while_loop(lambda c: c[1], sweep, (start, jnp.any(start)))
    new_index = (jnp.cumsum(keep, axis=1) - 1).astype(jnp.int32)
    count = keep.sum(axis=1).astype(jnp.int32)
    order = jax.vmap(lambda k: jnp.nonzero(k, size=capacity, fill_value=0)[0])(keep)

    def renumber(x):  # node ids [B, ...] in the old arrays -> in the new ones
        new = jnp.take_along_axis(new_index, jnp.maximum(x, 0).reshape(batch, -1), axis=1).reshape(x.shape)
        return jnp.where(x >= 0, new, x)

    def copy(i, tree):
        source = order[:, i]
        target = jnp.where(i < count, i, capacity)  # out of bounds: dropped

        def move(x, value=None):
            return x.at[rows, target].set(x[rows, source] if value is None else value, mode="drop")

        extra = tree.extra_data
        # Every array with a node axis moves; the root's own fields stay.
        moved = jax.tree.map(move, tree.replace(root_invalid_actions=None,
                                                extra_data=extra.replace(root_gumbel=None, tie_seed=None)))
        top = i == ROOT
        return moved.replace(
            root_invalid_actions=tree.root_invalid_actions,
            extra_data=moved.extra_data.replace(root_gumbel=extra.root_gumbel, tie_seed=extra.tie_seed),
            parents=move(moved.parents, jnp.where(top, NO_PARENT, renumber(tree.parents[rows, source]))),
            action_from_parent=move(moved.action_from_parent,
                                    jnp.where(top, NO_PARENT, tree.action_from_parent[rows, source])),
            children_index=move(moved.children_index, renumber(tree.children_index[rows, source])))

    tree = jax.lax.fori_loop(0, jnp.max(count), copy, tree)
    invalid = (tree.extra_data.slot_actions[:, ROOT] < 0).astype(tree.root_invalid_actions.dtype)
    return tree.replace(root_invalid_actions=invalid), count


__all__ = ["AnytimeSearch", "Answers", "begin", "restart", "grow", "answers", "root_statistics",
           "principal_variation", "node_depths", "considered_visit", "halving_root_selection", "selection_fn"]
