"""A plain pgx + mctx AlphaZero self-play step: the baseline our self-play is measured against.

This is what one writes from the pgx and mctx documentation (the shape of pgx's
AlphaZero example, on current JAX and with a flax network), independent of
``azdb_jax.search`` and ``azdb_jax.selfplay``:

- the search embedding is the whole pgx ``State`` (observation included);
- ``recurrent_fn`` steps the game, calls the network on the new observation, masks the
  illegal moves' logits (mctx masks only the root), gives the mover's reward and a
  discount of -1 between plies (0 at the end of the game);
- the search is ``mctx.muzero_policy`` (mctx's own Dirichlet noise and Q transform) or
  ``mctx.gumbel_muzero_policy``, with the illegal root moves passed as invalid;
- the move is mctx's proposed action, the game steps with pgx's ``auto_reset``;
- a step records what AlphaZero trains on: observation, search policy, reward and
  whether the game ended.

One self-play window is a ``lax.scan`` of such steps, jitted by the caller. The network
is ``azdb_jax.networks``' so that both sides pay for the same forward passes; it is
called with latent 0 (a team of one).
"""

from typing import Any, Callable, NamedTuple, Tuple

import jax
import jax.numpy as jnp
import mctx
import pgx.core
import pgx.experimental

Array = jax.Array
# (params, observations [B, ...], players [B]) -> .policy_logits [B, A], .value [B]
ApplyFn = Callable[[Any, Array, Array], Any]
ALGORITHMS = ("puct", "gumbel")


class Sample(NamedTuple):
    """One searched move of every game of the batch; a window stacks them [T, B, ...]."""

    observation: Array  # [B, ...obs] position searched, mover's view
    action_weights: Array  # [B, A] search policy (the training target)
    reward: Array  # [B] reward of the move for its mover
    terminated: Array  # [B] the move ended the game


def make_recurrent_fn(env: pgx.core.Env, apply_fn: ApplyFn) -> Callable:
    """mctx ``recurrent_fn`` over pgx states, with illegal moves masked at every depth."""

    def recurrent_fn(params, rng_key, action, state):
        del rng_key
        mover = state.current_player
        state = jax.vmap(env.step)(state, action)
        out = apply_fn(params, state.observation, jnp.zeros_like(mover))
        logits = jnp.where(state.legal_action_mask, out.policy_logits, jnp.finfo(out.policy_logits.dtype).min)
        reward = jnp.take_along_axis(state.rewards, mover[:, None], axis=1)[:, 0]
        output = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(state.terminated, 0.0, -1.0),
            prior_logits=logits,
            value=jnp.where(state.terminated, 0.0, out.value),
        )
        return output, state

    return recurrent_fn


def search(env: pgx.core.Env, apply_fn: ApplyFn, params: Any, rng_key: Array, state: pgx.core.State, *,
           algorithm: str, num_simulations: int) -> mctx.PolicyOutput:
    """One search from every position of the batch ``state`` [B]; consumes ``rng_key``."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    out = apply_fn(params, state.observation, jnp.zeros_like(state.current_player))
    logits = jnp.where(state.legal_action_mask, out.policy_logits, jnp.finfo(out.policy_logits.dtype).min)
    root = mctx.RootFnOutput(prior_logits=logits, value=out.value, embedding=state)
    policy = mctx.muzero_policy if algorithm == "puct" else mctx.gumbel_muzero_policy
    return policy(params, rng_key, root, make_recurrent_fn(env, apply_fn), num_simulations,
                  invalid_actions=~state.legal_action_mask)


def selfplay_step(env: pgx.core.Env, apply_fn: ApplyFn, params: Any, rng_key: Array, state: pgx.core.State, *,
                  algorithm: str, num_simulations: int) -> Tuple[pgx.core.State, Sample]:
    """Searches every game, plays mctx's move, restarts finished games; consumes ``rng_key``."""
    search_key, step_key = jax.random.split(rng_key)
    policy_output = search(env, apply_fn, params, search_key, state, algorithm=algorithm,
                           num_simulations=num_simulations)
    mover = state.current_player
    step = jax.vmap(pgx.experimental.auto_reset(env.step, env.init))
    next_state = step(state, policy_output.action, jax.random.split(step_key, mover.shape[0]))
    sample = Sample(
        observation=state.observation,
        action_weights=policy_output.action_weights,
        reward=jnp.take_along_axis(next_state.rewards, mover[:, None], axis=1)[:, 0],
        terminated=next_state.terminated | next_state.truncated,
    )
    return next_state, sample


def selfplay(env: pgx.core.Env, apply_fn: ApplyFn, params: Any, rng_key: Array, state: pgx.core.State, *,
             algorithm: str, num_simulations: int, num_plies: int) -> Tuple[pgx.core.State, Sample]:
    """``num_plies`` self-play steps of the batch ``state``: the games after, and samples [T, B]."""

    def body(state, key):
        return selfplay_step(env, apply_fn, params, key, state, algorithm=algorithm, num_simulations=num_simulations)

    return jax.lax.scan(body, state, jax.random.split(rng_key, num_plies))


__all__ = ["ALGORITHMS", "Sample", "make_recurrent_fn", "search", "selfplay_step", "selfplay"]
