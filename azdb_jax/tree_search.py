"""Batched MCTS over compact trees: a node keeps one slot per legal action, not per action.

mctx lays a search tree out over the full action space: every node holds its children's
visits, values, rewards, discounts, prior logits and indices as ``[A]`` rows. For chess
(A = 4,672 actions, some 20-40 legal moves) that is ~112 KB per node, and mctx's
backward pass — a ``while_loop`` vmapped over the batch with the whole tree in its carry —
selects the entire tree once per level of every path, which made a PUCT search cost
several times its network calls (docs/performance.md has the profile).

Here a tree has ``K`` *slots* per node (``num_slots``, a per-game bound on the number of
legal moves): slot ``k`` of a node is its ``k``-th legal action in increasing action id,
``slot_actions[node, k]`` (``-1`` for empty slots). A position with more than ``K`` legal
moves keeps its ``K`` highest-prior moves (the rest are never searched; the bound per game
is chosen so that this is rare, see ``azdb_jax.search``). Because slots are ordered by
action id and ties are broken by a noise that depends on the action id only, a search with
any ``K`` at least the number of legal moves visits exactly what a search with ``K = A``
visits.

The tree is an ``mctx.Tree`` with ``num_actions = K`` (so mctx's ``qvalues``,
``summary`` and its Gumbel selection and Q transforms work on it unchanged) whose
``extra_data`` is a ``SlotData``. The loop is mctx's (simulate, expand, backward, one
simulation per step of a ``fori_loop``); backward is written for the whole batch, so each
level of a path updates a few scalars of the tree in place instead of selecting the tree.

A search can also track one *part* of its rewards and leaf values through the tree (the
intrinsic terms of an AZdb search, ``azdb_jax.search``): the recurrent function returns
the part beside each reward and value, the tree keeps it per node, and ``root_value_part``
gives the share of the root's value that the part makes up. It changes nothing the search
does.

Everything is written for a batch ``[B]`` of trees; selection functions see one tree.
A search's key may be one key or ``[B]`` keys, one per tree (``row_keys``): with one
per tree, what a tree draws depends on its own key only, not on the batch it is searched
in (a device that searches its share of a batch draws what one device searching all of
it would).
"""

from typing import Any, Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx

Array = jax.Array
Tree = mctx.Tree
ROOT = Tree.ROOT_INDEX
UNVISITED = Tree.UNVISITED
NO_PARENT = Tree.NO_PARENT


@chex.dataclass(frozen=True)
class SlotData:
    """What a compact tree adds to mctx's ``Tree`` (its ``extra_data``)."""

    slot_actions: Array  # [B, N, K] int32 action id of each slot, -1 for an empty slot
    root_gumbel: Array  # [B, K] Gumbel noise of the root slots (Gumbel search; 0 for PUCT)
    tie_seed: Array  # [B] uint32 seed of the tie-breaking noise of this search
    # The tracked part (None when the search tracks none): of the reward of the edge into
    # each node, and of each node's value when it was expanded (its leaf value).
    reward_part: Any = None  # [B, N]
    value_part: Any = None  # [B, N]


class RootInput(NamedTuple):
    """The positions to search, in the full action space."""

    prior_logits: Array  # [B, A] (noised if the caller wants root noise)
    value: Array  # [B]
    embedding: Any  # [B, ...] what the recurrent function steps from
    legal_action_mask: Array  # [B, A]
    value_part: Any = None  # [B] the tracked part of ``value`` (None: track no part)


class StepOutput(NamedTuple):
    """What the recurrent function says about the positions it reached."""

    reward: Array  # [B] reward of the transition for the player who moved
    discount: Array  # [B] -1 between plies of a two-player game, 0 after a terminal state
    prior_logits: Array  # [B, A]
    value: Array  # [B] from the side to move at the new position
    legal_action_mask: Array  # [B, A] legal actions at the new position (none if terminal)
    reward_part: Any = None  # [B] the tracked part of ``reward`` (when the root input tracks one)
    value_part: Any = None  # [B] the tracked part of ``value``


# (params, rng_key ([B] keys, one per tree), actions [B], embeddings [B, ...]) -> (StepOutput, embeddings [B, ...])
RecurrentFn = Callable[[Any, Array, Array, Any], tuple]
# (tree of one search, node index [], depth []) -> slot []
SelectionFn = Callable[[Tree, Array, Array], Array]


# ------------------------------------------------------------------ keys


def is_row_keys(rng_key: Array) -> bool:
    """Whether ``rng_key`` is a batch of keys ``[B]`` rather than one key (typed keys of
    shape ``[B]`` or raw ``uint32`` keys of shape ``[B, 2]``)."""
    if jnp.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
        return rng_key.ndim == 1
    return rng_key.ndim == 2


def row_keys(rng_key: Array, batch: int) -> Array:
    """``[B]`` keys, one per row: ``rng_key`` itself if it already is (``is_row_keys``), else
    ``batch`` keys split from it."""
    if is_row_keys(rng_key):
        if rng_key.shape[0] != batch:
            raise ValueError(f"row_keys: {rng_key.shape[0]} keys for a batch of {batch}")
        return rng_key
    return jax.random.split(rng_key, batch)


def split_rows(keys: Array, num: int = 2) -> Array:
    """Each of ``[B]`` keys split in ``num``: ``[num, B]`` keys."""
    return jnp.swapaxes(jax.vmap(lambda key: jax.random.split(key, num))(keys), 0, 1)


# ------------------------------------------------------------------ slots


def legal_slots(legal: Array, prior_logits: Array, num_slots: int) -> Array:
    """Action ids of the ``num_slots`` slots of a batch of nodes: [B, A], [B, A] -> [B, K].

    Legal actions in increasing id, ``-1`` after the last. When a node has more legal
    actions than slots, it keeps the highest-prior ones (ties at the cut go to the lower
    ids); ``lax.cond`` skips that ranking for batches where every node fits.
    """
    num_actions = legal.shape[-1]
    if num_slots < num_actions:
        def keep_top(legal):
            # lax.top_k prefers the lower index among equal values.
            top = jax.lax.top_k(jnp.where(legal, prior_logits, -jnp.inf), num_slots)[1]
            rows = jnp.arange(legal.shape[0])[:, None]
            chosen = jnp.zeros_like(legal).at[rows, top].set(True)
            crowded = legal.sum(axis=-1, keepdims=True) > num_slots
            return jnp.where(crowded, chosen, legal)

        crowded = jnp.any(legal.sum(axis=-1) > num_slots)
        legal = jax.lax.cond(crowded, keep_top, lambda x: x, legal)
    first = jax.vmap(lambda row: jnp.nonzero(row, size=num_slots, fill_value=-1)[0])
    return first(legal).astype(jnp.int32)


def slot_logits(prior_logits: Array, slot_actions: Array) -> Array:
    """Prior logits of the slots, [B, A] + [B, K] -> [B, K]; empty slots masked as mctx does."""
    logits = jnp.take_along_axis(prior_logits, jnp.maximum(slot_actions, 0), axis=-1)
    logits = logits - jnp.max(jnp.where(slot_actions >= 0, logits, -jnp.inf), axis=-1, keepdims=True)
    return jnp.where(slot_actions >= 0, logits, jnp.finfo(logits.dtype).min)


def to_actions(tree: Tree, slot_values: Array, num_actions: int, fill=0) -> Array:
    """Root slot values [B, K] scattered to the full action space [B, A] (``fill`` elsewhere)."""
    actions = tree.extra_data.slot_actions[:, ROOT]
    batch = actions.shape[0]
    out = jnp.full((batch, num_actions + 1), fill, slot_values.dtype)
    rows = jnp.arange(batch)[:, None]
    return out.at[rows, jnp.where(actions >= 0, actions, num_actions)].set(slot_values)[:, :num_actions]


def tie_noise(tree: Tree, node: Array) -> Array:
    """[K] uniform noise in [0, 1) for one node of one tree, a function of the action ids.

    A multiplicative hash of (action id, search seed): the same action gets the same
    noise wherever it sits in the slots, so tie-breaking does not depend on ``K``.
    """
    actions = tree.extra_data.slot_actions[node].astype(jnp.uint32)
    mixed = (actions * jnp.uint32(2654435761)) ^ tree.extra_data.tie_seed
    mixed = (mixed ^ (mixed >> 15)) * jnp.uint32(2246822519)
    return (mixed >> 8).astype(jnp.float32) / float(1 << 24)


# ------------------------------------------------------------------ selection (one tree)


def puct_selection(tree: Tree, node: Array, depth: Array, *, pb_c_init: float, pb_c_base: float,
                   qtransform: Callable[[Tree, Array], Array]) -> Array:
    """AlphaZero's PUCT: ``argmax_k Q̂(s, k) + c(s) P(s, k) sqrt(n) / (1 + N(s, k))``.

    ``c(s) = c_init + log((n + c_base + 1) / c_base)`` with ``n`` the node's visit count
    (mctx's count, one more than the sum of its children's visits), ``Q̂`` the caller's
    transform of Q to [0, 1]. Empty slots are never selected, at every depth; exact ties
    are broken by ``1e-7 ×`` ``tie_noise``, as mctx does with fresh noise.
    """
    del depth
    visits = tree.children_visits[node]
    n = tree.node_visits[node].astype(jnp.float32)
    pb_c = pb_c_init + jnp.log((n + pb_c_base + 1.0) / pb_c_base)
    prior = jax.nn.softmax(tree.children_prior_logits[node])
    score = qtransform(tree, node) + jnp.sqrt(n) * pb_c * prior / (visits + 1) + 1e-7 * tie_noise(tree, node)
    valid = tree.extra_data.slot_actions[node] >= 0
    return jnp.argmax(jnp.where(valid, score, -jnp.inf)).astype(jnp.int32)


def gumbel_selection(tree: Tree, node: Array, depth: Array, *, num_simulations: int,
                     max_num_considered_actions: int) -> Array:
    """Gumbel MuZero: sequential halving with Gumbel noise at the root, mctx's deterministic
    visit-matching rule inside the tree (both from mctx, on the slots)."""
    key = jax.random.PRNGKey(0)  # neither rule draws randomness
    root = mctx.gumbel_muzero_root_action_selection(
        key, tree, node, num_simulations=num_simulations, max_num_considered_actions=max_num_considered_actions)
    interior = mctx.gumbel_muzero_interior_action_selection(key, tree, node, depth)
    return jnp.where(depth == 0, root, interior).astype(jnp.int32)


# ------------------------------------------------------------------ the search


class _Walk(NamedTuple):
    node: Array  # [] node whose slot is selected
    slot: Array  # [] the selected slot
    next_node: Array  # [] the child behind it (UNVISITED if none)
    depth: Array  # []
    going: Array  # [] bool


def _simulate(tree: Tree, selection_fn: SelectionFn, max_depth: int):
    """From the root to an unexpanded slot (or ``max_depth``), one tree; returns (node, slot)."""

    def step(walk: _Walk) -> _Walk:
        node = walk.next_node
        slot = selection_fn(tree, node, walk.depth)
        next_node = tree.children_index[node, slot]
        depth = walk.depth + 1
        return _Walk(node, slot, next_node, depth, (next_node != UNVISITED) & (depth < max_depth))

    start = _Walk(jnp.int32(NO_PARENT), jnp.int32(NO_PARENT), jnp.int32(ROOT), jnp.int32(0), jnp.bool_(True))
    end = jax.lax.while_loop(lambda walk: walk.going, step, start)
    return end.node, end.slot


def _set_node(tree: Tree, index: Array, step_logits: Array, value: Array, embedding: Any,
              slot_actions: Array, value_part: Any = None) -> Tree:
    """Writes a freshly evaluated node (prior over its slots, value, state) at ``index`` [B]."""
    rows = jnp.arange(index.shape[0])
    extra = tree.extra_data
    if extra.value_part is not None:
        extra = extra.replace(value_part=extra.value_part.at[rows, index].set(value_part))
    return tree.replace(
        children_prior_logits=tree.children_prior_logits.at[rows, index].set(step_logits),
        raw_values=tree.raw_values.at[rows, index].set(value),
        node_values=tree.node_values.at[rows, index].set(value),
        node_visits=tree.node_visits.at[rows, index].add(1),
        embeddings=jax.tree.map(lambda t, s: t.at[rows, index].set(s), tree.embeddings, embedding),
        extra_data=extra.replace(slot_actions=extra.slot_actions.at[rows, index].set(slot_actions)),
    )


def _expand(params: Any, rng_key: Array, tree: Tree, recurrent_fn: RecurrentFn, parent: Array, slot: Array,
            child: Array, num_slots: int) -> Tree:
    """Steps the selected actions of the batch and stores the new nodes at ``child`` [B]."""
    rows = jnp.arange(parent.shape[0])
    action = tree.extra_data.slot_actions[rows, parent, slot]
    embedding = jax.tree.map(lambda t: t[rows, parent], tree.embeddings)
    # An empty slot is only ever selected under a terminal node (no legal move): its action
    # is ignored by the game, which returns the terminal state again.
    step, embedding = recurrent_fn(params, rng_key, jnp.maximum(action, 0), embedding)
    slots = legal_slots(step.legal_action_mask, step.prior_logits, num_slots)
    tree = _set_node(tree, child, slot_logits(step.prior_logits, slots), step.value, embedding, slots,
                     step.value_part)
    if tree.extra_data.reward_part is not None:
        part = tree.extra_data.reward_part.at[rows, child].set(step.reward_part)
        tree = tree.replace(extra_data=tree.extra_data.replace(reward_part=part))
    return tree.replace(
        children_index=tree.children_index.at[rows, parent, slot].set(child),
        children_rewards=tree.children_rewards.at[rows, parent, slot].set(step.reward),
        children_discounts=tree.children_discounts.at[rows, parent, slot].set(step.discount),
        parents=tree.parents.at[rows, child].set(parent),
        action_from_parent=tree.action_from_parent.at[rows, child].set(slot),
    )


def _backward(tree: Tree, leaf: Array) -> Tree:
    """Backs the leaf values [B] up to the roots, batched.

    At each level every tree moves one edge up: ``v ← r + γ v`` and the parent's value
    becomes the running mean ``(W·n + v) / (n + 1)`` (mctx's rule). The tree stays in the
    loop's carry and only the touched entries are scattered (trees already at their root
    scatter out of bounds, which drops the write), so a level costs O(B), not O(tree).
    The child's value written into its parent's slot is carried from the level below
    rather than read back: with a second read of ``node_values`` in the loop, XLA copied
    the whole array at every level, O(tree) per level (docs/performance.md).
    """
    rows = jnp.arange(leaf.shape[0])
    num_nodes = tree.node_values.shape[1]

    def level(carry):
        tree, value, child_value, index = carry
        active = index != ROOT
        parent = jnp.where(active, tree.parents[rows, index], ROOT)
        slot = jnp.where(active, tree.action_from_parent[rows, index], 0)
        count = tree.node_visits[rows, parent]
        value = tree.children_rewards[rows, parent, slot] + tree.children_discounts[rows, parent, slot] * value
        parent_value = (tree.node_values[rows, parent] * count + value) / (count + 1.0)
        target = jnp.where(active, parent, num_nodes)  # out of bounds: dropped
        tree = tree.replace(
            node_values=tree.node_values.at[rows, target].set(parent_value, mode="drop"),
            node_visits=tree.node_visits.at[rows, target].set(count + 1, mode="drop"),
            children_values=tree.children_values.at[rows, target, slot].set(child_value, mode="drop"),
            children_visits=tree.children_visits.at[rows, target, slot].add(1, mode="drop"),
        )
        return tree, value, parent_value, parent

    leaf_value = tree.node_values[rows, leaf]
    tree, _, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[3] != ROOT), level, (tree, leaf_value, leaf_value, leaf))
    return tree


def _empty_rows(tree: Tree, index: Array) -> Tree:
    """Node ``index`` [B] of each tree without visits or children, before a new node is
    written there (arrays reused by ``continue_search`` hold old nodes past the last one;
    an out-of-bounds index leaves a tree as it is)."""
    rows = jnp.arange(index.shape[0])
    return tree.replace(
        node_visits=tree.node_visits.at[rows, index].set(0, mode="drop"),
        children_index=tree.children_index.at[rows, index].set(UNVISITED, mode="drop"),
        children_visits=tree.children_visits.at[rows, index].set(0, mode="drop"),
        children_values=tree.children_values.at[rows, index].set(0, mode="drop"),
        children_rewards=tree.children_rewards.at[rows, index].set(0, mode="drop"),
        children_discounts=tree.children_discounts.at[rows, index].set(0, mode="drop"),
    )


def new_tree(root: RootInput, num_nodes: int, num_slots: int, root_gumbel: Array, tie_seed: Array) -> Tree:
    """Trees [B] with room for ``num_nodes`` nodes, holding only their roots (``write_root``)."""
    batch = root.prior_logits.shape[0]
    nodes = num_nodes
    dtype = root.value.dtype
    tree = Tree(
        node_visits=jnp.zeros((batch, nodes), jnp.int32),
        raw_values=jnp.zeros((batch, nodes), dtype),
        node_values=jnp.zeros((batch, nodes), dtype),
        parents=jnp.full((batch, nodes), NO_PARENT, jnp.int32),
        action_from_parent=jnp.full((batch, nodes), NO_PARENT, jnp.int32),
        children_index=jnp.full((batch, nodes, num_slots), UNVISITED, jnp.int32),
        children_prior_logits=jnp.zeros((batch, nodes, num_slots), root.prior_logits.dtype),
        children_values=jnp.zeros((batch, nodes, num_slots), dtype),
        children_visits=jnp.zeros((batch, nodes, num_slots), jnp.int32),
        children_rewards=jnp.zeros((batch, nodes, num_slots), dtype),
        children_discounts=jnp.zeros((batch, nodes, num_slots), dtype),
        embeddings=jax.tree.map(lambda x: jnp.zeros((batch, nodes) + x.shape[1:], x.dtype), root.embedding),
        root_invalid_actions=jnp.ones((batch, num_slots), dtype),
        extra_data=SlotData(slot_actions=jnp.full((batch, nodes, num_slots), -1, jnp.int32),
                            root_gumbel=root_gumbel, tie_seed=tie_seed,
                            reward_part=None if root.value_part is None else jnp.zeros((batch, nodes), dtype),
                            value_part=None if root.value_part is None else jnp.zeros((batch, nodes), dtype)),
    )
    return write_root(tree, root, jnp.ones((batch,), bool))


def write_root(tree: Tree, root: RootInput, which: Array) -> Tree:
    """The trees where ``which`` [B] is True restarted at ``root`` (only a root, no
    children; the rest of the arrays is left as it is, to be overwritten); others as they are."""
    num_slots = tree.children_index.shape[-1]
    slots = legal_slots(root.legal_action_mask, root.prior_logits, num_slots)
    index = jnp.where(which, ROOT, tree.node_visits.shape[1])  # out of bounds: dropped
    tree = _set_node(_empty_rows(tree, index), index, slot_logits(root.prior_logits, slots), root.value,
                     root.embedding, slots, root.value_part)
    invalid = (tree.extra_data.slot_actions[:, ROOT] < 0).astype(tree.root_invalid_actions.dtype)
    return tree.replace(parents=tree.parents.at[:, ROOT].set(NO_PARENT),
                        action_from_parent=tree.action_from_parent.at[:, ROOT].set(NO_PARENT),
                        root_invalid_actions=invalid)


def continue_search(params: Any, rng_key: Array, tree: Tree, recurrent_fn: RecurrentFn, selection_fn: SelectionFn,
                    *, num_simulations: Array, next_node: Array, max_depth: int) -> Tree:
    """Runs ``num_simulations`` (may be traced) more simulations on a batch of trees;
    consumes ``rng_key`` (one key, or ``[B]`` keys, one per tree). Simulation ``s`` writes its new node at ``next_node + s``
    (``next_node`` [B]: each tree's first free node); the caller keeps that within the
    arrays. Each simulation is mctx's: select down to an unexpanded slot, expand it with
    ``recurrent_fn``, back the value up."""
    batch, num_nodes = tree.node_visits.shape
    num_slots = tree.children_index.shape[-1]
    simulate = jax.vmap(_simulate, in_axes=(0, None, None))
    rows = jnp.arange(batch)
    rng_key = row_keys(rng_key, batch)

    def one_simulation(sim, carry):
        key, tree = carry
        key, expand_key = split_rows(key)
        parent, slot = simulate(tree, selection_fn, max_depth)
        child = tree.children_index[rows, parent, slot]
        new = child == UNVISITED
        child = jnp.where(new, next_node + sim, child)
        tree = _empty_rows(tree, jnp.where(new, child, num_nodes))
        tree = _expand(params, expand_key, tree, recurrent_fn, parent, slot, child, num_slots)
        return key, _backward(tree, child)

    _, tree = jax.lax.fori_loop(0, num_simulations, one_simulation, (rng_key, tree))
    return tree


def search(params: Any, rng_key: Array, root: RootInput, recurrent_fn: RecurrentFn, selection_fn: SelectionFn, *,
           num_simulations: int, num_slots: int, root_gumbel: Array | None = None,
           max_depth: int | None = None) -> Tree:
    """Runs ``num_simulations`` simulations on a batch of compact trees; consumes ``rng_key``.

    Args:
      params: passed to ``recurrent_fn``.
      rng_key: consumed (tie-breaking seeds and the recurrent function's keys): one key,
        or ``[B]`` keys, one per tree (``row_keys``).
      root: the root positions and network outputs (full action space).
      recurrent_fn: ``(params, key, actions [B], embeddings) -> (StepOutput, embeddings)``.
      selection_fn: picks a slot of one node of one tree (``puct_selection``,
        ``gumbel_selection`` with their options bound).
      num_simulations: S; the tree has S + 1 nodes.
      num_slots: K, slots per node (at least 1; at most A is useful).
      root_gumbel: [B, K] Gumbel noise of the root slots (Gumbel search), default 0.
      max_depth: longest path (edges) a simulation may take; default S.

    Returns:
      The tree; ``extra_data`` is a ``SlotData``.
    """
    batch, num_actions = root.prior_logits.shape
    chex.assert_shape([root.value], (batch,))
    chex.assert_shape([root.legal_action_mask], (batch, num_actions))
    num_slots = min(int(num_slots), num_actions)
    max_depth = num_simulations if max_depth is None else max_depth
    seed_key, rng_key = split_rows(row_keys(rng_key, batch))
    tie_seed = jax.vmap(lambda key: jax.random.bits(key, (), jnp.uint32))(seed_key)
    if root_gumbel is None:
        root_gumbel = jnp.zeros((batch, num_slots), root.value.dtype)
    tree = new_tree(root, num_simulations + 1, num_slots, root_gumbel, tie_seed)
    return continue_search(params, rng_key, tree, recurrent_fn, selection_fn, num_simulations=num_simulations,
                           next_node=jnp.ones((batch,), jnp.int32), max_depth=max_depth)


def root_value_part(tree: Tree) -> Array:
    """The tracked part of each root's value, [B] (0 for a tree that tracks no part).

    Backup is linear: a node's value is the mean of the returns of the simulations through
    it, its own leaf value once and ``r_c + γ_c V(c)`` once per visit of each child c, so

        V(n) = (v_leaf(n) + Σ_c N(c) (r_c + γ_c V(c))) / N(n)

    holds for the tree's values, and the same recursion over the parts of the rewards and
    leaf values gives the part of V(root). Children are created after their parents, so
    one pass over the nodes from the last to the first has every child's value before its
    parent's. (A simulation cut by ``max_depth`` re-expands a node; the default depth S
    never is.)
    """
    extra = tree.extra_data
    batch, num_nodes = tree.node_visits.shape
    if extra.value_part is None:
        return jnp.zeros((batch,), tree.node_values.dtype)
    rows = jnp.arange(batch)
    visits = tree.node_visits.astype(tree.node_values.dtype)

    def node(k, acc):
        child = num_nodes - 1 - k
        parent = tree.parents[:, child]
        exists = parent != NO_PARENT
        parent = jnp.maximum(parent, 0)
        value = (extra.value_part[:, child] + acc[:, child]) / jnp.maximum(visits[:, child], 1.0)
        discount = tree.children_discounts[rows, parent, jnp.maximum(tree.action_from_parent[:, child], 0)]
        returns = visits[:, child] * (extra.reward_part[:, child] + discount * value)
        return acc.at[rows, parent].add(jnp.where(exists, returns, 0.0))

    acc = jax.lax.fori_loop(0, num_nodes - 1, node, jnp.zeros((batch, num_nodes), tree.node_values.dtype))
    return (extra.value_part[:, ROOT] + acc[:, ROOT]) / jnp.maximum(visits[:, ROOT], 1.0)


__all__ = ["SlotData", "RootInput", "StepOutput", "Tree", "legal_slots", "slot_logits", "to_actions", "tie_noise",
           "puct_selection", "gumbel_selection", "search", "new_tree", "write_root", "continue_search",
           "root_value_part"]
