"""Fixed opponents for evaluation, all behind one policy interface.

A *policy* is a pure function ``policy(params, rng_key, state) -> action`` over a
batched pgx ``State`` ``[B]``, returning ``[B]`` int32 legal actions; ``params`` is any
pytree (network parameters for the trained agent, ``None`` for fixed opponents) and
``rng_key`` is consumed. The arena (``azdb_jax.arena``) plays any two policies
against each other, so the trained team is measured against opponents whose strength
is known exactly: uniform random play, the Nim oracle (SPEC §2, "Nim"), a perfect
tic-tac-toe player and depth-limited minimax.

Every policy breaks ties uniformly at random among its best actions, so repeated games
between deterministic-strength players still cover different lines.
"""

import functools
from typing import Any, Callable, Dict, Optional

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import search as search_lib
from azdb_jax import tree_search
from azdb_jax.envs import nim as nim_lib

Array = jax.Array
# (params, rng_key, batched State [B]) -> actions [B] int32
Policy = Callable[[Any, Array, pgx.core.State], Array]

MAX_MINIMAX_LEAVES = 100_000
_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_TTT_NUM_CODES = 3**9


def sample_uniform(rng_key: Array, mask: Array) -> Array:
    """Samples one True entry of each row of ``mask`` [B, A] uniformly; consumes the key.

    Rows with no True entry return 0 (only terminal states, whose action is ignored).
    """
    noise = jax.random.uniform(rng_key, mask.shape)
    return jnp.argmax(jnp.where(mask, noise, -1.0), axis=-1).astype(jnp.int32)


def sample_by_visits(rng_key: Array, visits: Array) -> Array:
    """Samples one action per row of ``visits`` [B, A] with probability ∝ its visit count.

    Entries <= 0 (unvisited or illegal) are never drawn; consumes the key.
    """
    visits = jnp.asarray(visits, jnp.float32)
    logits = jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1e-30)), -jnp.inf)
    return jax.random.categorical(rng_key, logits, axis=-1).astype(jnp.int32)


def uniform_random_policy() -> Policy:
    """Plays a uniformly random legal move."""

    def policy(params, rng_key, state):
        del params
        return sample_uniform(rng_key, state.legal_action_mask)

    return policy


def nim_oracle_policy(max_heap: int) -> Policy:
    """Plays a winning Nim move (one leaving a zero nim-sum), uniformly among them.

    In a lost position (zero nim-sum) no move wins and it plays a uniformly random
    legal move. ``max_heap`` is the env's ``max_heap``; states must be Nim states.
    """

    def policy(params, rng_key, state):
        del params
        legal = state.legal_action_mask
        winning = jax.vmap(lambda h: nim_lib.winning_moves(h, max_heap))(state.heaps) & legal
        choice = jnp.where(winning.any(axis=-1, keepdims=True), winning, legal)
        return sample_uniform(rng_key, choice)

    return policy


# ------------------------------------------------------------------ tic-tac-toe


def tic_tac_toe_code(board) -> Any:
    """Base-3 code ``Σ_i (board[i] + 1)·3^i`` of a pgx tic-tac-toe board [..., 9].

    pgx stores cells as -1 (empty), 0 (X, who moves first) or 1 (O); the side to move
    follows from the counts, so the board alone identifies a position. Works on numpy
    and JAX arrays.
    """
    powers = 3 ** np.arange(9)
    return ((board + 1) * powers).sum(axis=-1)


def _ttt_won(board: tuple, mark: int) -> bool:
    return any(all(board[i] == mark for i in line) for line in _TTT_LINES)


@functools.lru_cache(maxsize=None)
def perfect_tic_tac_toe_table() -> np.ndarray:
    """Optimal-move masks ``[3^9, 9]`` (bool) of every reachable tic-tac-toe position.

    Negamax with memoisation over the positions reachable from the empty board. A move
    is scored from the mover's side as ``1 + e`` for a win leaving ``e`` empty cells,
    0 for a draw and the negated score of the reply otherwise, so among game-
    theoretically optimal moves the table keeps those that win soonest and lose
    latest (the sign of the score is the game value). Rows of terminal or unreachable
    positions are all False. Built once on the host (a few thousand positions).
    """
    table = np.zeros((_TTT_NUM_CODES, 9), dtype=bool)
    memo: Dict[tuple, int] = {}

    def negamax(board: tuple) -> int:
        if board in memo:
            return memo[board]
        mover = int(sum(c >= 0 for c in board) % 2)
        scores = np.full(9, -np.inf)
        for cell in range(9):
            if board[cell] != -1:
                continue
            child = board[:cell] + (mover,) + board[cell + 1:]
            empties = sum(c == -1 for c in child)
            if _ttt_won(child, mover):
                scores[cell] = 1 + empties
            elif empties == 0:
                scores[cell] = 0
            else:
                scores[cell] = -negamax(child)
        best = int(scores.max())
        table[tic_tac_toe_code(np.asarray(board))] = scores == best
        memo[board] = best
        return best

    negamax((-1,) * 9)
    table.setflags(write=False)
    return table


def tic_tac_toe_perfect_policy() -> Policy:
    """A perfect tic-tac-toe player: never loses, wins soonest, uniform among ties.

    Looks up ``perfect_tic_tac_toe_table`` by the board code of pgx's ``state._x.board``;
    falls back to a random legal move where the table has no entry (never reached from
    legal play).
    """
    table = jnp.asarray(perfect_tic_tac_toe_table())

    def policy(params, rng_key, state):
        del params
        legal = state.legal_action_mask
        optimal = table[tic_tac_toe_code(state._x.board)] & legal  # pylint: disable=protected-access
        choice = jnp.where(optimal.any(axis=-1, keepdims=True), optimal, legal)
        return sample_uniform(rng_key, choice)

    return policy


# ------------------------------------------------------------------ minimax


def minimax_policy(env: pgx.core.Env, depth: int, *, max_leaves: int = MAX_MINIMAX_LEAVES,
                   num_moves: Optional[int] = None) -> Policy:
    """Depth-limited negamax over the legal moves of the real game.

    The tree is unrolled at trace time: each level steps the position's legal moves —
    its first ``num_moves`` legal actions in id order (``azdb_jax.tree_search.legal_slots``;
    default the game's search bound ``search.num_slots_for(env)``, which covers every
    position seen in random play, see ``azdb_jax.search``) — with ``jax.vmap(env.step)``,
    so one decision costs ``num_moves^depth`` leaf steps per position (connect four depth
    4: 2,401; Gardner chess depth 2: 48² = 2,304 instead of 1,225² over all actions). A
    terminal move is worth its reward for the mover scaled by ``1 + 0.1·(plies left in
    the horizon)`` — sooner wins and later losses score higher in magnitude; a
    non-terminal leaf is worth 0. So depth 1 takes a win in one, depth 2 also avoids moves
    that let the opponent win in one. Ties are broken uniformly at random among the best
    actions.

    Raises:
      ValueError: ``depth < 1`` or ``num_moves ** depth > max_leaves``.
    """
    width = search_lib.num_slots_for(env) if num_moves is None else min(int(num_moves), env.num_actions)
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"minimax depth must be an int >= 1, got {depth!r}")
    if width**depth > max_leaves:
        raise ValueError(
            f"minimax over '{env.id}' at depth {depth} needs {width}^{depth} leaf steps per "
            f"position, more than max_leaves={max_leaves}; use a smaller depth or another opponent")

    def moves(state) -> Array:
        """[W] the legal actions of one state, -1 padded."""
        legal = state.legal_action_mask & ~(state.terminated | state.truncated)
        return tree_search.legal_slots(legal[None], jnp.zeros((1, env.num_actions)), width)[0]

    def action_scores(state, plies_left: int) -> Array:
        """[W] negamax score of each legal move (slot) for the mover of one state."""
        actions = moves(state)
        children = jax.vmap(env.step, in_axes=(None, 0))(state, jnp.maximum(actions, 0))
        reward = children.rewards[:, state.current_player]
        terminal_score = reward * (1.0 + 0.1 * (plies_left - 1))
        if plies_left == 1:
            continuation = jnp.zeros_like(reward)
        else:
            # One child's subtree at a time: the deepest level is the only one held in memory
            # (a Gardner position's 48 x 48 grandchildren, not all levels at once).
            continuation = -jax.lax.map(lambda child: state_value(child, plies_left - 1), children)
        scores = jnp.where(children.terminated, terminal_score, continuation)
        return jnp.where(actions >= 0, scores, -jnp.inf)

    def state_value(state, plies_left: int) -> Array:
        best = jnp.max(action_scores(state, plies_left))
        return jnp.where(state.terminated | ~jnp.isfinite(best), 0.0, best)

    def policy(params, rng_key, state):
        del params
        scores = jax.vmap(lambda s: action_scores(s, depth))(state)
        actions = jax.vmap(moves)(state)
        best = (scores >= jnp.max(scores, axis=-1, keepdims=True) - 1e-6) & (actions >= 0)
        slot = sample_uniform(rng_key, best)
        return jnp.take_along_axis(actions, slot[:, None], axis=1)[:, 0].astype(jnp.int32)

    return policy


# ------------------------------------------------------------------ the trained agent


def search_policy(
    env: pgx.core.Env,
    apply_fn: search_lib.ApplyFn,
    search_config: search_lib.SearchConfig,
    *,
    player: int,
    lam: float = 1.0,
    sample_plies: int = 0,
    feature_fn: Optional[Callable[[pgx.core.State], Array]] = None,
    intrinsic_reward_fn: Optional[search_lib.IntrinsicRewardFn] = None,
    hook_params: Any = None,
) -> Policy:
    """The trained agent as one fixed team player: search without noise, most-visited move.

    ``params`` of the returned policy are the network parameters. The search runs as in
    evaluation (SPEC §1.8: no Dirichlet or Gumbel noise) with the latent of ``player``
    and its ``λ`` conditioning every network call; with the intrinsic-reward hook
    (``feature_fn``, ``intrinsic_reward_fn``, ``hook_params``: ``Team.search_hook``) and
    the player's ``λ_i`` it searches as in self-play (SPEC §2); ``player``, ``lam`` and
    ``hook_params`` may be traced values. The move is the most-visited root
    action, ties broken by the higher root Q, then uniformly at random (Gumbel's
    sequential halving ends with its finalists on equal visits, so the value decides).

    ``sample_plies = k > 0`` samples the move in proportion to the root visit counts
    while fewer than ``k`` plies have been played (``state._step_count``: 0 at
    ``env.init`` and at a position built from a FEN), as self-play does: matches then
    differ from seed to seed, which a noiseless search alone hardly does.
    """
    if not isinstance(sample_plies, int) or sample_plies < 0:
        raise ValueError(f"sample_plies must be an int >= 0, got {sample_plies!r}")

    def policy(params, rng_key, state):
        search_key, tie_key = jax.random.split(rng_key)
        batch = state.current_player.shape[0]
        out = search_lib.run_search(
            env, apply_fn, params, search_key, state,
            jnp.full((batch,), player, jnp.int32), jnp.full((batch,), lam, jnp.float32),
            config=search_config, add_noise=False, feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn,
            hook_params=hook_params)
        visits = jnp.where(state.legal_action_mask, out.visits, -1)
        most_visited = visits == visits.max(axis=-1, keepdims=True)
        q = jnp.where(most_visited, out.qvalues, -jnp.inf)
        action = sample_uniform(tie_key, most_visited & (q >= q.max(axis=-1, keepdims=True)))
        if sample_plies:
            sample_key = jax.random.fold_in(tie_key, 1)
            action = jnp.where(state._step_count < sample_plies, sample_by_visits(sample_key, visits), action)
        return action

    return policy


def classical_opponents(env: pgx.core.Env, names) -> Dict[str, Policy]:
    """The classical alpha-beta players among ``names`` (specs such as ``alphabeta:depth=3``,
    ``alphabeta:nodes=20000``; ``azdb_jax.classical.player``), as policies for ``env``
    (chess or Gardner chess). They search on the host through a callback at every ply
    (``azdb_jax.classical.policy``), so they slow a compiled match by their search time.
    Names that are not specs are left out; ValueError names a bad spec or a game without
    boards."""
    from azdb_jax.classical import player, policy  # pylint: disable=g-import-not-at-top

    return {name: policy.alphabeta_policy(env, name) for name in names if player.is_spec(name)}


def opponents_for(env_id: str, env: Optional[pgx.core.Env] = None) -> Dict[str, Policy]:
    """The sensible fixed opponents of a game, by name.

    Every game: "random". nim: "oracle". tic_tac_toe: "perfect", "minimax2".
    connect_four, gardner_chess: "minimax2" (depth-2 negamax over the legal moves: wins
    in one, avoids moves that let the opponent win in one).
    ``env`` defaults to ``azdb_jax.envs.make(env_id)``; pass the env in use when it has
    options (Nim heaps).
    """
    if env is None:
        from azdb_jax import envs  # pylint: disable=g-import-not-at-top

        env = envs.make(env_id)
    if env.id != env_id:
        raise ValueError(f"env is '{env.id}', not '{env_id}'")
    opponents: Dict[str, Policy] = {"random": uniform_random_policy()}
    if env_id == "nim":
        opponents["oracle"] = nim_oracle_policy(env.max_heap)
    elif env_id == "tic_tac_toe":
        opponents["perfect"] = tic_tac_toe_perfect_policy()
        opponents["minimax2"] = minimax_policy(env, 2)
    elif env_id in ("connect_four", "gardner_chess"):
        opponents["minimax2"] = minimax_policy(env, 2)
    return opponents
