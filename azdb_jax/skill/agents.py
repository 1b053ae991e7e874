"""Juniors, seniors and the teams they form in the skill-compatibility frameworks (paper §3.2).

Three kinds of function, all pure, batched over positions ``[B]`` and jittable:

* a **move model** ``model(params, state) -> [B, A]`` log-probabilities of the moves a
  player would make (``-inf`` off the legal moves): what a junior plays, sampled, and
  what the expector assumes of every agent;
* a **policy** ``policy(params, rng_key, state) -> [B]`` moves (``azdb_jax.opponents``):
  a senior, or a junior sampling its model (``sampling_policy``);
* a **brain** ``brain(params, rng_key, state) -> [B]`` piece types to move, for Hand and
  Brain (``brain_from_policy``: the type of a policy's move; ``hb_expector``).

Juniors are stochastic players with a stated strength: a network's policy at a softmax
temperature (``network_move_model``; an early checkpoint is a weak junior) or a small
search sampled by its visit counts (``search_move_model``). Seniors: the strong plain
AlphaZero player (the paper's *leela*; ``search_policy``), *tree* (the same
search over the junior's network: ``tree_senior``), the *expector* (``stt_expector``,
``hb_expector``). ``tag_team`` and ``hand_and_brain`` compose two agents into one
team policy of each framework.

The expector's expectations are exact over the move models' supports: each model is cut
to its ``top_k`` most likely moves (renormalised; ``top_k = 1`` models an agent by its
most likely move, a large ``top_k`` keeps every legal move).
"""

import dataclasses
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import arena
from azdb_jax import search as search_lib
from azdb_jax import tree_search
from azdb_jax.agent import search_policy
from azdb_jax.policies import Policy, sample_uniform
from azdb_jax.skill import frameworks

Array = jax.Array
MoveModel = Callable[[Any, pgx.core.State], Array]  # (params, state [B]) -> [B, A] log-probabilities
ValueModel = Callable[[Any, pgx.core.State], Array]  # (params, state [B]) -> [B] value in [-1, 1], side to move
Brain = Callable[[Any, Array, pgx.core.State], Array]  # (params, key, state [B]) -> [B] piece types


def _log_probs(logits: Array, legal: Array) -> Array:
    masked = jnp.where(legal, logits, -jnp.inf)
    return jax.nn.log_softmax(masked, axis=-1)


# ------------------------------------------------------------------ models


def network_move_model(apply_fn: search_lib.ApplyFn, *, player: int = 0, temperature: float = 1.0) -> MoveModel:
    """A network's policy over the legal moves at softmax temperature ``temperature``
    (latent ``player``): ``params`` are the network's."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")

    def model(params, state):
        batch = state.current_player.shape[0]
        out = apply_fn(params, state.observation, jnp.full((batch,), player, jnp.int32))
        return _log_probs(out.policy_logits / temperature, state.legal_action_mask)

    return model


def network_value(apply_fn: search_lib.ApplyFn, *, player: int = 0) -> ValueModel:
    """A network's value head (latent ``player``) for the side to move: ``params`` are the network's."""

    def value(params, state):
        batch = state.current_player.shape[0]
        return apply_fn(params, state.observation, jnp.full((batch,), player, jnp.int32)).value

    return value


def search_move_model(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, config: search_lib.SearchConfig, *,
                      player: int = 0, temperature: float = 1.0) -> MoveModel:
    """A search's root visit distribution, ``N(a)^(1/τ)`` normalised (no noise; ``config``
    should be PUCT, whose noiseless search is deterministic): a junior that thinks a
    little. Moves the search never visited get probability 0. ``params`` are the
    network's."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")

    def model(params, state):
        batch = state.current_player.shape[0]
        key = jax.random.PRNGKey(0)
        out = search_lib.run_search(env, apply_fn, params, key, state, jnp.full((batch,), player, jnp.int32),
                                    jnp.ones((batch,), jnp.float32), config=config, add_noise=False)
        visits = jnp.where(state.legal_action_mask, out.visits, 0.0)
        logits = jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1e-30)) / temperature, -jnp.inf)
        searched = jnp.any(visits > 0, axis=-1, keepdims=True)  # a finished game's row stays all -inf
        return jnp.where(searched, jax.nn.log_softmax(jnp.where(searched, logits, 0.0), axis=-1), -jnp.inf)

    return model


JUNIOR_KINDS = ("policy", "search")


def junior_move_model(env: pgx.core.Env, apply_fn: search_lib.ApplyFn, search_config: search_lib.SearchConfig,
                      kind: str, *, temperature: float = 1.0, simulations: int = 8, player: int = 0) -> MoveModel:
    """The junior of a kind: ``"policy"`` — the network's policy at ``temperature``;
    ``"search"`` — a noiseless PUCT search of ``simulations`` (the run's other search
    settings) sampled by its visit counts at ``temperature``."""
    if kind == "policy":
        return network_move_model(apply_fn, player=player, temperature=temperature)
    if kind == "search":
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"a search junior needs simulations >= 1, got {simulations!r}")
        config = dataclasses.replace(search_config, algorithm="puct", num_simulations=simulations)
        return search_move_model(env, apply_fn, config, player=player, temperature=temperature)
    raise ValueError(f"unknown junior kind {kind!r}; valid: {', '.join(JUNIOR_KINDS)}")


def sampling_policy(model: MoveModel) -> Policy:
    """The player that samples its move model: a stochastic junior."""

    def policy(params, rng_key, state):
        return jax.random.categorical(rng_key, model(params, state), axis=-1).astype(jnp.int32)

    return policy


def tree_senior(env: pgx.core.Env, junior_apply: search_lib.ApplyFn, config: search_lib.SearchConfig, *,
                player: int = 0) -> Policy:
    """*tree*: the search over the junior's network (its policy and value): a senior that
    knows nothing stronger than its junior. ``params`` are the junior's network's."""
    return search_policy(env, junior_apply, config, player=player)


# ------------------------------------------------------------------ teams


def tag_team(senior: Policy, junior: Policy) -> Policy:
    """The STT team: on a ``frameworks.TagTeamState``, the senior's move when the coin says
    so, else the junior's. ``params = (senior params, junior params)``. Both agents are
    evaluated every ply (one batched program; the coin selects).

    A senior with a batched form (``senior.rows``, as the expector has) makes the team one
    too: ``team.rows(params, keys [G], states [G])`` plays every game with its own key as
    the per-game calls would, and asks the senior only for the games whose coin gives it
    the move (``active``), which is what lets the expector skip the others."""

    def policy(params, rng_key, state):
        senior_key, junior_key = jax.random.split(rng_key)
        senior_move = senior(params[0], senior_key, state.game)
        junior_move = junior(params[1], junior_key, state.game)
        return jnp.where(state.senior_to_move, senior_move, junior_move)

    senior_rows = getattr(senior, "rows", None)
    if senior_rows is not None:
        junior_rows = arena.per_game_policy(junior)

        def rows(params, keys, state, active=None):
            senior_keys, junior_keys = jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0)
            asked = state.senior_to_move if active is None else state.senior_to_move & active
            senior_move = senior_rows(params[0], senior_keys, state.game, active=asked)
            junior_move = junior_rows(params[1], junior_keys, state.game)
            return jnp.where(state.senior_to_move, senior_move, junior_move)

        policy.rows = rows
    return policy


def hand_and_brain(env: pgx.core.Env, brain: Brain, hand: MoveModel) -> Policy:
    """The HB team: the brain names a piece type, the hand samples its move model
    restricted to that type's legal moves. ``params = (brain params, hand params)``."""

    def policy(params, rng_key, state):
        brain_key, hand_key = jax.random.split(rng_key)
        piece = brain(params[0], brain_key, state)
        allowed = frameworks.piece_moves(env, state, piece)
        logits = jnp.where(allowed, hand(params[1], state), -jnp.inf)
        # A move model may give a legal move -inf (a search never visited it); the hand
        # then picks uniformly among the named type's moves.
        logits = jnp.where(jnp.isfinite(logits).any(-1, keepdims=True), logits, jnp.where(allowed, 0.0, -jnp.inf))
        return jax.random.categorical(hand_key, logits, axis=-1).astype(jnp.int32)

    return policy


def brain_from_policy(env: pgx.core.Env, policy: Policy) -> Brain:
    """A brain that names the type of the piece ``policy`` would move (paper: leela, tree
    and attuned as brains convey only the piece type)."""

    def brain(params, rng_key, state):
        move = policy(params, rng_key, state)
        types = frameworks.action_piece_types(env, state)
        return jnp.take_along_axis(types, move[:, None], axis=1)[:, 0]

    return brain


# ------------------------------------------------------------------ expectors


def _support(log_probs: Array, top_k: int):
    """The ``top_k`` most likely moves of each row and their renormalised probabilities
    (0 for padding where fewer moves are legal): ``[B, A] -> ([B, k] int32, [B, k])``."""
    k = min(int(top_k), log_probs.shape[-1])
    # Rows without a legal move (a finished game's) are all -inf or NaN: they get weight 0.
    top, moves = jax.lax.top_k(jnp.where(jnp.isnan(log_probs), -jnp.inf, log_probs), k)
    finite = jnp.isfinite(top)
    peak = jnp.max(jnp.where(finite, top, -1e30), axis=-1, keepdims=True)
    weight = jnp.where(finite, jnp.exp(jnp.where(finite, top, peak) - peak), 0.0)
    weight = weight / jnp.maximum(weight.sum(-1, keepdims=True), 1e-30)
    return moves.astype(jnp.int32), weight


class STTModels(NamedTuple):
    """What an STT expector assumes: a move model per agent and a strong value.

    ``params`` of the expector are an ``STTModels`` of the models' params."""

    value: Any  # ValueModel: the win-probability evaluator (value of the side to move)
    own_junior: Any  # MoveModel: the expector's own junior
    own_senior: Any  # MoveModel: the expector itself, two plies on
    opponent_junior: Any
    opponent_senior: Any


def _mixture(models: STTModels, params: STTModels, state, junior_top_k: int, senior_top_k: int, own: bool):
    """The mover's next move under a fair coin: half its junior's support, half its
    senior's: ``([B, kj + ks] moves, [B, kj + ks] probabilities)``."""
    junior, senior = (models.own_junior, models.own_senior) if own else (models.opponent_junior,
                                                                        models.opponent_senior)
    j_params, s_params = (params.own_junior, params.own_senior) if own else (params.opponent_junior,
                                                                          params.opponent_senior)
    j_moves, j_weight = _support(junior(j_params, state), junior_top_k)
    s_moves, s_weight = _support(senior(s_params, state), senior_top_k)
    return jnp.concatenate([j_moves, s_moves], -1), 0.5 * jnp.concatenate([j_weight, s_weight], -1)


def _two_ply_values(env: pgx.core.Env, models: STTModels, params: STTModels, s1, me, junior_top_k: int,
                    senior_top_k: int) -> Array:
    """``E_s[w]`` for the expector's side ``me [n]`` after its candidate move (``s1 [n]``,
    the opponent to move): the opponent's reply from its coin mixture, then the own
    side's move from its mixture, the strong value at the end (or the game's result
    where it ends on the way). ``w`` in ``[-1, 1]``."""
    n = me.shape[0]
    step_all = jax.vmap(jax.vmap(env.step))

    def flat(tree, lead: int):
        return jax.tree.map(lambda x: x.reshape((lead,) + x.shape[2:]), tree)

    def mine(s, player):  # reward of ``player`` [m] at states s [m, ...] (the result where s just ended)
        index = jnp.broadcast_to(player.reshape(player.shape + (1,) * (s.rewards.ndim - 1)),
                                 s.rewards.shape[:-1] + (1,))
        return jnp.take_along_axis(s.rewards, index, axis=-1)[..., 0]

    # Ply 1: the opponent's reply under the coin.
    reply, reply_p = _mixture(models, params, s1, junior_top_k, senior_top_k, own=False)  # [n, k1]
    k1 = reply.shape[-1]
    s2 = step_all(jax.tree.map(lambda x: jnp.repeat(x[:, None], k1, 1), s1), reply)
    n2 = n * k1
    s2f = flat(s2, n2)
    # Ply 2: the expector's side moves under the coin.
    answer, answer_p = _mixture(models, params, s2f, junior_top_k, senior_top_k, own=True)  # [n2, k2]
    k2 = answer.shape[-1]
    s3 = step_all(jax.tree.map(lambda x: jnp.repeat(x[:, None], k2, 1), s2f), answer)
    s3f = flat(s3, n2 * k2)
    # The opponent is to move at s3: the expector's side's value is minus its value.
    v3 = -models.value(params.value, s3f).reshape(n2, k2)
    me2 = jnp.repeat(me, k1)  # [n2]
    w3 = jnp.where(s3.terminated, mine(s3, me2), v3)
    w2 = jnp.where(s2f.terminated, mine(s2f, me2), jnp.sum(answer_p * w3, -1))  # [n2]
    return jnp.where(s1.terminated, mine(s1, me), jnp.sum(reply_p * w2.reshape(n, k1), -1))


def stt_move_values(env: pgx.core.Env, models: STTModels, params: STTModels, state: pgx.core.State, *,
                    junior_top_k: int = 4, senior_top_k: int = 1, num_moves: Optional[int] = None,
                    active: Optional[Array] = None, pairs_per_chunk: int = 32):
    """The STT expector's evaluation of a batch of positions ``[B]``.

    For each legal move ``m`` of the side to move (its ``num_moves`` slots; default the
    game's search bound), ``E_s[w | m, s]`` over the four coin strings ``s`` of the next
    two plies (the opponent's move, then the expector's side's): under coin ``s`` the
    opponent's junior or senior replies, then the own junior or senior moves, each drawn
    from its move model's support; ``w`` is the win probability ``(1 + v)/2`` of the
    final position for the expector's side by ``models.value`` (or the game's result
    where a game ends on the way). Averaging over the coins makes each ply's mover a
    half-half mixture of its two agents, which is how it is computed.

    Cost is one two-ply look-ahead per (position, legal move) pair, and only for the
    pairs that need one: the pairs of the whole batch are sorted, needed first, and
    evaluated ``pairs_per_chunk`` at a time, skipping (``lax.cond``) chunks with none —
    empty slots and rows outside ``active`` (``[B]`` bool; e.g. the games where the coin
    gives the junior the move) and finished games cost nothing. Outside ``vmap`` only;
    under ``vmap`` the skip becomes a select and every chunk is computed.

    Returns:
      ``(moves [B, K], expected w [B, K])``; empty slots, finished games and rows outside
      ``active`` have w -inf (and moves -1 for empty slots).
    """
    width = search_lib.num_slots_for(env) if num_moves is None else min(int(num_moves), env.num_actions)
    if pairs_per_chunk < 1:
        raise ValueError(f"pairs_per_chunk must be >= 1, got {pairs_per_chunk!r}")
    batch = state.current_player.shape[0]
    candidates = tree_search.legal_slots(state.legal_action_mask, jnp.zeros(state.legal_action_mask.shape), width)
    # A finished game's row has every action "legal" (pgx) and nothing to decide.
    need = (candidates >= 0) & ~(state.terminated | state.truncated)[:, None]
    if active is not None:
        need = need & active[:, None]
    pairs = batch * width
    chunk = min(int(pairs_per_chunk), pairs)
    num_chunks = -(-pairs // chunk)
    padding = num_chunks * chunk - pairs
    order = jnp.argsort(jnp.logical_not(need.reshape(-1)).astype(jnp.int32), stable=True)
    order = jnp.concatenate([order, jnp.zeros((padding,), order.dtype)])
    needed = jnp.concatenate([need.reshape(-1)[order[:pairs]], jnp.zeros((padding,), bool)])
    flat_moves = jnp.maximum(candidates.reshape(-1), 0)

    def chunk_values(c):
        index = jax.lax.dynamic_slice_in_dim(order, c * chunk, chunk)
        rows = index // width

        def look_ahead():
            s0 = jax.tree.map(lambda x: x[rows], state)
            s1 = jax.vmap(env.step)(s0, flat_moves[index])
            return _two_ply_values(env, models, params, s1, state.current_player[rows], junior_top_k, senior_top_k)

        # Needed pairs come first: a chunk whose first pair is not needed has none.
        return jax.lax.cond(needed[c * chunk], look_ahead, lambda: jnp.zeros((chunk,), jnp.float32))

    values = jax.lax.map(chunk_values, jnp.arange(num_chunks)).reshape(-1)
    w1 = jnp.zeros((pairs,), jnp.float32).at[order[:pairs]].set(values[:pairs]).reshape(batch, width)
    win = (1.0 + w1) / 2.0
    return candidates, jnp.where(need, win, -jnp.inf)


def stt_expector(env: pgx.core.Env, models: STTModels, *, junior_top_k: int = 4, senior_top_k: int = 1,
                 num_moves: Optional[int] = None, pairs_per_chunk: int = 32) -> Policy:
    """*expector* for STT: ``argmax_m E_s[w | m, s]`` (``stt_move_values``), ties broken
    at random. ``params`` are an ``STTModels`` of the models' params.

    ``expector.rows(params, keys [G], states [G], active=None)`` is the same player on a
    batch of games, each with its own key (the move of game ``g`` is the per-game call's
    with ``keys[g]``), looking ahead only for the ``active`` games (the others get an
    arbitrary legal move): ``arena`` plays it so, one batch for all games."""
    options = dict(junior_top_k=junior_top_k, senior_top_k=senior_top_k, num_moves=num_moves,
                   pairs_per_chunk=pairs_per_chunk)

    def best_moves(moves, win):
        return (win >= jnp.max(win, -1, keepdims=True) - 1e-6) & (moves >= 0)

    def policy(params, rng_key, state):
        moves, win = stt_move_values(env, models, params, state, **options)
        slot = sample_uniform(rng_key, best_moves(moves, win))
        return jnp.take_along_axis(moves, slot[:, None], axis=1)[:, 0]

    def rows(params, keys, state, active=None):
        moves, win = stt_move_values(env, models, params, state, active=active, **options)
        best = best_moves(moves, win)
        slot = jax.vmap(lambda k, b: sample_uniform(k, b[None])[0])(keys, best)
        return jnp.take_along_axis(moves, slot[:, None], axis=1)[:, 0]

    policy.rows = rows
    return policy


class HBModels(NamedTuple):
    """What an HB expector brain assumes: its hand's move model and a strong value."""

    value: Any  # ValueModel
    hand: Any  # MoveModel


def hb_piece_values(env: pgx.core.Env, models: HBModels, params: HBModels, state: pgx.core.State, *,
                    num_moves: Optional[int] = None) -> Array:
    """``[B, 7]`` the HB expector's ``E_{m ~ D_p}[w | m]`` for each piece type ``p`` (by
    code; ``-inf`` for types without a legal move): ``D_p`` is the hand's move model
    restricted to ``p``'s legal moves and renormalised, ``w`` the win probability after
    ``m`` for the side that moved (the game's result where ``m`` ends it)."""
    width = search_lib.num_slots_for(env) if num_moves is None else min(int(num_moves), env.num_actions)
    batch = state.current_player.shape[0]
    hand = models.hand(params.hand, state)  # [B, A]
    moves = tree_search.legal_slots(state.legal_action_mask, hand, width)  # [B, K]
    children = jax.vmap(jax.vmap(env.step))(jax.tree.map(lambda x: jnp.repeat(x[:, None], width, 1), state),
                                             jnp.maximum(moves, 0))
    flat = jax.tree.map(lambda x: x.reshape((batch * width,) + x.shape[2:]), children)
    value = -models.value(params.value, flat).reshape(batch, width)  # for the mover
    reward = jnp.take_along_axis(children.rewards, state.current_player[:, None, None], axis=-1)[..., 0]
    win = (1.0 + jnp.where(children.terminated, reward, value)) / 2.0
    types = jnp.take_along_axis(frameworks.action_piece_types(env, state), jnp.maximum(moves, 0), axis=1)
    types = jnp.where(moves >= 0, types, 0)
    log_p = jnp.where(moves >= 0, jnp.take_along_axis(hand, jnp.maximum(moves, 0), axis=1), -jnp.inf)
    of_type = types[:, :, None] == jnp.arange(frameworks.NUM_PIECE_CODES)[None, None, :]  # [B, K, 7]
    logits = jnp.where(of_type, log_p[:, :, None], -jnp.inf)
    # A type whose moves the hand never plays (all -inf): uniform over them.
    uniform = jnp.where(of_type, 0.0, -jnp.inf)
    logits = jnp.where(jnp.isfinite(logits).any(1, keepdims=True), logits, uniform)
    weight = jax.nn.softmax(logits, axis=1)  # [B, K, 7], NaN-free: rows without moves are all -inf
    weight = jnp.where(of_type, weight, 0.0)
    expected = jnp.sum(jnp.nan_to_num(weight) * win[:, :, None], axis=1)
    return jnp.where(of_type.any(1).at[:, 0].set(False), expected, -jnp.inf)


def hb_expector(env: pgx.core.Env, models: HBModels, *, num_moves: Optional[int] = None) -> Brain:
    """*expector* for HB: the brain naming ``argmax_p E_{m ~ D_p}[w | m]``
    (``hb_piece_values``), ties at random. ``params`` are an ``HBModels`` of params."""

    def brain(params, rng_key, state):
        values = hb_piece_values(env, models, params, state, num_moves=num_moves)
        best = (values >= jnp.max(values, -1, keepdims=True) - 1e-6) & jnp.isfinite(values)
        return sample_uniform(rng_key, best)

    return brain


__all__ = ["Brain", "HBModels", "JUNIOR_KINDS", "MoveModel", "STTModels", "ValueModel", "brain_from_policy",
           "hand_and_brain", "hb_expector", "hb_piece_values", "junior_move_model", "network_move_model",
           "network_value", "sampling_policy", "search_move_model", "stt_expector", "stt_move_values", "tag_team",
           "tree_senior"]
