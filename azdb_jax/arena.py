"""Matches between two policies: a batch of games played as one ``lax.scan`` over plies.

Games come in colour-balanced pairs: pair ``p`` starts both of its games from the same
position, with agent A making the first move in game ``p`` and the second move in
game ``H + p`` (``H = num_games // 2``), as in match play from book positions (SPEC §2,
"Matches"). Each game draws its randomness from ``fold_in(rng_key, p)``, so a game's
course does not depend on how many other games share the batch; a caller that plays a
long match in chunks passes each pair's key itself (``pair_keys``), so that a game
depends only on its own key.

The batch is kept ordered so that the games where A is to move fill the first half:
each ply A's policy runs on the first half only and B's on the second half, then the
halves swap. Each policy thus runs once per ply on half the games instead of on all
of them; this relies on the players strictly alternating, which holds for every game
in ``azdb_jax.envs`` and is checked per game (``GameResults.in_turn``).

Policies see one game at a time (vmapped over a batch of one) so that each game keeps
its own random stream; see ``azdb_jax.opponents`` for the policy interface.

The swap is a roll by half the batch, so row ``r`` of either half always holds pair
``r`` (in one colour or the other). ``play_each`` relies on it to play A against several
opponents in one batch: the pairs are laid out in one static block per opponent, A's
policy runs once per ply on the whole half, and each opponent's policy on its own block
of rows with its own parameters (each traced once, none run on another's games).

Every game's moves are recorded in game order (``GameResults.actions``), so a game can
be replayed from its start position and written out (e.g. as PGN,
``azdb_jax.evaluation.game_records``).

This scan is the library's one loop for games between two agents: network teams and their
selection rules, fixed opponents, the skill frameworks' teams, and players that live on
the host — the classical searcher (``classical.policy``) and UCI engines
(``referee.host_policy``) — which enter it through host callbacks. A host player that
needs the game so far (an engine reading a board with its move stack) marks its batched
form ``reads_moves``: it is then also given each game's moves to date (see
``per_game_policy``), and a batch whose games have all ended skips the remaining plies,
so its host calls stop there. Only games between two host players on python-chess
boards (``referee.play_host_game``: the boards' rules, clocks, faults) are played
elsewhere. ``tally`` is the one W/D/L tally of every match.
"""

from typing import Any, Callable, Dict, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import ratings
from azdb_jax.policies import Policy

Array = jax.Array


class GameResults(NamedTuple):
    """Outcomes of a batch of games, from agent A's side; games ``[G]`` in pair order."""

    result: Array  # [G] float32 +1 win, 0 draw, -1 loss for A (0 when unfinished)
    a_first: Array  # [G] bool A made the first move (games [0, H)); else the second
    length: Array  # [G] int32 plies played
    finished: Array  # [G] bool the game ended (terminated or truncated) within max_plies
    in_turn: Array  # [G] bool every move came from the agent whose turn it was
    actions: Optional[Array] = None  # [G, max_plies] int32 moves in order, -1 after the end
    adjudicated: Optional[Array] = None  # [G] bool reached max_plies and was scored by the adjudicator


class _Slots(NamedTuple):
    """Per-game scan carry, ordered so that A is to move in the first half."""

    state: pgx.core.State  # [G] game states
    a_seat: Array  # [G] int32 pgx player id that agent A plays
    a_first: Array  # [G] bool A made the first move of this game
    game_index: Array  # [G] int32 position of the game in the output
    key: Array  # [G] per-game random key
    result: Array  # [G] float32 A's accumulated reward
    length: Array  # [G] int32
    in_turn: Array  # [G] bool


def per_game_policy(policy: Policy):
    """``(params, keys [G], states [G]) -> actions [G]``: ``policy`` on each game as a batch of
    one, with the game's own key (so a game's moves do not depend on its batch).

    A policy with a batched form ``policy.rows`` (same signature, the same move for each
    game as its per-game call) is played through it: one batch for all games, for players
    that share work across games (``skill.agents.stt_expector``) and host players (one
    callback for the batch). A batched form marked ``rows.reads_moves = True`` is called
    ``rows(params, keys, states, moves)`` with ``moves`` [G, max_plies] int32, each game's
    moves so far in order (−1 after the last): the record a host player replays on its
    board (``referee.host_policy``)."""
    rows = getattr(policy, "rows", None)
    if rows is not None:
        return rows

    def one(params, key, state):
        batch_of_one = jax.tree.map(lambda x: x[None], state)
        return policy(params, key, batch_of_one)[0]

    return jax.vmap(one, in_axes=(None, 0, 0))


def _swap_halves(tree, half: int):
    return jax.tree.map(lambda x: jnp.roll(x, half, axis=0), tree)


def play_games(
    env: pgx.core.Env,
    policy_a: Policy,
    params_a: Any,
    policy_b: Policy,
    params_b: Any,
    rng_key: Array,
    *,
    num_games: int,
    max_plies: int,
    initial_state: Optional[pgx.core.State] = None,
    pair_keys: Optional[Array] = None,
    adjudicate: Optional[Callable[[pgx.core.State], Array]] = None,
) -> GameResults:
    """Plays ``num_games`` games of A against B, both colours, and scores them for A.

    Jit-friendly (the caller jits, with the policies and sizes static): one
    ``lax.scan`` of ``max_plies`` steps over the whole batch.

    Args:
      env: a two-player game whose players alternate.
      policy_a, params_a: agent A (``policy(params, rng_key, state [B]) -> [B]``).
      policy_b, params_b: agent B.
      rng_key: consumed (start positions, every policy call): pair ``p`` plays with
        ``fold_in(rng_key, p)``.
      num_games: an even number ``G``; games ``[0, G/2)`` have A moving first, games
        ``[G/2, G)`` replay the same start positions with A moving second.
      max_plies: plies per game at most; games still running then are unfinished.
      initial_state: optional start positions, a batched State ``[G/2]`` (e.g. book
        positions); default ``env.init`` with a key per pair.
      pair_keys: optional keys ``[G/2]``, one per pair, used instead of the keys derived
        from ``rng_key`` (which is then ignored); a game depends on nothing else.
      adjudicate: optional ``azdb_jax.adjudication`` rule: a game still running at
        ``max_plies`` gets its result for the side to move (+1/0/−1), turned into A's.

    Returns:
      ``GameResults``; games still running at ``max_plies`` have ``finished`` False and
      result 0, or the adjudicated result with ``adjudicated`` True; the moves of game
      ``g`` are ``actions[g, :length[g]]``.
    """
    _check_sizes(num_games, max_plies)
    half = num_games // 2
    if pair_keys is None:
        pair_keys = _keys_of_pairs(rng_key, half)
    elif pair_keys.shape[0] != half:
        raise ValueError(f"pair_keys must hold num_games // 2 = {half} keys, got {pair_keys.shape[0]}")
    return _play_pairs(env, per_game_policy(policy_a), params_a, per_game_policy(policy_b), params_b, pair_keys,
                       max_plies=max_plies, initial_state=initial_state, adjudicate=adjudicate)


def play_each(
    env: pgx.core.Env,
    policy_a: Policy,
    params_a: Any,
    policies_b: Sequence[Policy],
    params_b: Sequence[Any],
    rng_keys: Array,
    *,
    num_games: int,
    max_plies: int,
    adjudicate: Optional[Callable[[pgx.core.State], Array]] = None,
) -> GameResults:
    """Plays A against each of ``K = len(policies_b)`` opponents, ``num_games`` games each, in one batch.

    Match ``j`` is ``play_games(env, policy_a, params_a, policies_b[j], params_b[j],
    rng_keys[j], num_games=num_games, max_plies=max_plies, adjudicate=adjudicate)`` game for
    game, since a game depends only on its pair's key: the ``K * num_games / 2`` pairs are
    one batch in ``play_games``' layout, in static blocks of ``num_games / 2`` pairs, block
    ``j`` opponent ``j``'s. Each ply A's policy runs once on the half of the whole batch
    where A is to move, and opponent ``j``'s policy on its own block of the other half only
    (row ``r`` of a half is always pair ``r``, see the module docstring), with
    ``params_b[j]``. Jit-friendly like ``play_games``: one program, in which A's policy and
    each opponent's are traced once.

    Args:
      env, policy_a, params_a: as for ``play_games``.
      policies_b: the opponents, a sequence of policies (static).
      params_b: their parameters, one pytree per opponent (``None`` for fixed ones).
      rng_keys: ``[K]`` keys, ``rng_keys[j]`` match ``j``'s ``rng_key`` (pair ``p`` of it plays
        with ``fold_in(rng_keys[j], p)``).
      num_games, max_plies, adjudicate: per match, as for ``play_games``.

    Returns:
      ``GameResults`` with a leading opponent axis, every field ``[K, num_games, ...]``:
      entry ``j`` is match ``j``'s, its games in ``play_games``' order.
    """
    _check_sizes(num_games, max_plies)
    count = len(policies_b)
    if count < 1 or len(params_b) != count or rng_keys.shape[0] != count:
        raise ValueError(f"policies_b, params_b and rng_keys must hold one entry per opponent (at least one), got "
                         f"{count}, {len(params_b)} and {rng_keys.shape[0]}")
    half = num_games // 2
    pair_keys = jnp.concatenate([_keys_of_pairs(rng_keys[j], half) for j in range(count)])
    runs = [per_game_policy(policy) for policy in policies_b]

    def run_b(params, keys, states, moves=None):
        blocks = []
        for j, run in enumerate(runs):
            rows = slice(j * half, (j + 1) * half)
            record = (moves[rows],) if _reads_moves(run) else ()
            blocks.append(run(params[j], keys[rows], jax.tree.map(lambda x, rows=rows: x[rows], states), *record))
        return jnp.concatenate([block.astype(jnp.int32) for block in blocks])

    run_b.reads_moves = any(_reads_moves(run) for run in runs)

    results = _play_pairs(env, per_game_policy(policy_a), params_a, run_b, tuple(params_b), pair_keys,
                          max_plies=max_plies, initial_state=None, adjudicate=adjudicate)

    def by_opponent(x):  # [2 K H, ...] (A first in all pairs, then A second) -> [K, 2 H, ...]
        x = x.reshape(2, count, half, *x.shape[1:])
        return jnp.swapaxes(x, 0, 1).reshape(count, num_games, *x.shape[3:])

    return jax.tree.map(by_opponent, results)


def _check_sizes(num_games, max_plies) -> None:
    if not isinstance(num_games, int) or num_games < 2 or num_games % 2:
        raise ValueError(f"num_games must be an even int >= 2 (both colours per start), got {num_games!r}")
    if not isinstance(max_plies, int) or max_plies < 1:
        raise ValueError(f"max_plies must be an int >= 1, got {max_plies!r}")


def _reads_moves(run) -> bool:
    """The batched policy ``run`` is given the games' moves so far (``per_game_policy``)."""
    return bool(getattr(run, "reads_moves", False))


def _keys_of_pairs(rng_key: Array, half: int) -> Array:
    """``[half]`` keys, ``fold_in(rng_key, p)`` for pair ``p``."""
    return jax.vmap(lambda p: jax.random.fold_in(rng_key, p))(jnp.arange(half))


def _play_pairs(env, run_a, params_a, run_b, params_b, pair_keys, *, max_plies, initial_state,
                adjudicate) -> GameResults:
    """``play_games``' games, a pair per key of ``pair_keys`` [H], with the policies in their
    batched form (``per_game_policy``); ``run_b`` sees pair ``r`` in row ``r`` of its half."""
    half = pair_keys.shape[0]
    num_games = 2 * half
    init_keys, first_keys, second_keys = jnp.moveaxis(jax.vmap(lambda k: jax.random.split(k, 3))(pair_keys), 1, 0)
    if initial_state is None:
        start = jax.vmap(env.init)(init_keys)
    else:
        start = initial_state
        if start.current_player.shape != (half,):
            raise ValueError(f"initial_state must be a batch of num_games // 2 = {half} positions, "
                             f"got batch shape {start.current_player.shape}")
    state = jax.tree.map(lambda x: jnp.concatenate([x, x], axis=0), start)
    first_mover = state.current_player.astype(jnp.int32)
    a_first = jnp.arange(num_games) < half
    slots = _Slots(
        state=state,
        a_seat=jnp.where(a_first, first_mover, 1 - first_mover),
        a_first=a_first,
        game_index=jnp.arange(num_games, dtype=jnp.int32),
        key=jnp.concatenate([first_keys, second_keys], axis=0),
        result=jnp.zeros(num_games, jnp.float32),
        length=jnp.zeros(num_games, jnp.int32),
        in_turn=jnp.ones(num_games, bool),
    )
    a_moves = a_first  # the first half is A's to move, by the layout invariant
    reads_a, reads_b = _reads_moves(run_a), _reads_moves(run_b)

    def ply(carry, t):
        slots, moves = carry
        state = slots.state
        keys = jax.vmap(lambda k: jax.random.fold_in(k, t))(slots.key)
        first, second = jax.tree.map(lambda x: x[:half], state), jax.tree.map(lambda x: x[half:], state)
        so_far = moves[slots.game_index] if reads_a or reads_b else None  # each row's game to date
        actions = jnp.concatenate([run_a(params_a, keys[:half], first, *((so_far[:half],) if reads_a else ())),
                                   run_b(params_b, keys[half:], second, *((so_far[half:],) if reads_b else ()))])
        done = state.terminated | state.truncated
        expected_mover = jnp.where(a_moves, slots.a_seat, 1 - slots.a_seat)
        in_turn = slots.in_turn & (done | (state.current_player == expected_mover))
        next_state = jax.vmap(env.step)(state, actions)
        # Slots move around every ply; the record is kept in game order.
        moves = moves.at[slots.game_index, t].set(jnp.where(done, -1, actions.astype(jnp.int32)))
        reward_a = jnp.take_along_axis(next_state.rewards, slots.a_seat[:, None], axis=1)[:, 0]
        slots = slots._replace(
            state=next_state,
            result=slots.result + jnp.where(done, 0.0, reward_a),
            length=slots.length + (~done).astype(jnp.int32),
            in_turn=in_turn,
        )
        return (_swap_halves(slots, half), moves), None

    step = ply
    if reads_a or reads_b:
        # A host player answers every ply of the scan: once every game of the batch has
        # ended, the plies left change nothing (no move, no reward, no length; the halves'
        # order is undone below), so they are skipped, with the host's calls.
        def step(carry, t):
            over = jnp.all(carry[0].state.terminated | carry[0].state.truncated)
            return jax.lax.cond(over, lambda c, t: (c, None), ply, carry, t)

    moves = jnp.full((num_games, max_plies), -1, jnp.int32)
    (slots, moves), _ = jax.lax.scan(step, (slots, moves), jnp.arange(max_plies))
    order = jnp.argsort(slots.game_index)
    slots = jax.tree.map(lambda x: x[order], slots)
    finished = slots.state.terminated | slots.state.truncated
    result = jnp.where(finished, slots.result, 0.0)
    adjudicated = jnp.zeros_like(finished)
    if adjudicate is not None:
        verdict = adjudicate(slots.state)  # for the side to move
        for_a = jnp.where(slots.state.current_player == slots.a_seat, verdict, -verdict)
        adjudicated = ~finished
        result = jnp.where(adjudicated, for_a, result)
    return GameResults(
        result=result,
        a_first=slots.a_first,
        length=slots.length,
        finished=finished,
        in_turn=slots.in_turn,
        actions=moves,
        adjudicated=adjudicated,
    )


def tally(result, finished) -> Dict[str, Any]:
    """The tally of every match: W/D/L of the finished games of ``result`` [G] (+1/0/−1
    for A), with the unfinished count.

    ``score = (W + D/2) / N`` with its standard error ``score_stderr`` from the trinomial
    counts (``ratings.score_stderr``) and ``win_rate = W / N`` over the ``N`` finished
    games (NaN when none finished); ``elo``/``elo_stderr`` from ``ratings.elo_difference``
    (±inf at a perfect score or a whitewash; ``elo_clipped``/``elo_clipped_stderr`` then
    give the finite bound of ``saturated="clip"``, otherwise the same values). Arrays of
    any shape are read as flat lists of games; pass ``finished | adjudicated`` to count
    adjudicated games (``MatchResult.decided``)."""
    result = np.asarray(result, np.float64).reshape(-1)
    finished = np.asarray(finished, bool).reshape(-1)
    wins = int(np.sum(finished & (result > 0)))
    draws = int(np.sum(finished & (result == 0)))
    losses = int(np.sum(finished & (result < 0)))
    n = wins + draws + losses
    elo = ratings.elo_difference(wins, draws, losses)
    clipped = ratings.elo_difference(wins, draws, losses, saturated="clip")
    return {
        "games": int(result.shape[0]),
        "finished": n,
        "unfinished": int(result.shape[0]) - n,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "score": (wins + 0.5 * draws) / n if n else float("nan"),
        "score_stderr": float(ratings.score_stderr(wins, draws, losses)) if n else float("nan"),
        "win_rate": wins / n if n else float("nan"),
        "elo": float(elo.elo),
        "elo_stderr": float(elo.stderr),
        "elo_clipped": float(clipped.elo),
        "elo_clipped_stderr": float(clipped.stderr),
    }


def summarize(results: GameResults) -> Dict[str, Any]:
    """Host-side W/D/L tally of A's games, overall and split by A's colour.

    ``score = (W + D/2) / N`` over the ``N`` finished games (NaN when none finished);
    unfinished games count as neither and are reported; adjudicated games count with their
    adjudicated result (and ``adjudicated`` says how many). Keys: ``games``, ``finished``,
    ``unfinished``, ``adjudicated``, ``wins``, ``draws``, ``losses``, ``score``,
    ``mean_length`` and the same tallies under ``as_first`` / ``as_second`` (A made the
    first / second move).

    Raises:
      ValueError: a game was played out of turn (the env does not alternate players).
    """
    result, a_first, length, finished, in_turn = (
        np.asarray(x) for x in (results.result, results.a_first, results.length, results.finished, results.in_turn))
    if not in_turn.all():
        raise ValueError(f"{int((~in_turn).sum())} games had a move out of turn: the arena needs a game "
                         "whose two players alternate")
    adjudicated = np.zeros_like(finished) if results.adjudicated is None else np.asarray(results.adjudicated)
    finished = finished | adjudicated  # decided, by the rules or by the adjudicator
    summary = tally(result, finished)
    summary["adjudicated"] = int(adjudicated.sum())
    summary["mean_length"] = float(length.mean()) if length.size else float("nan")
    summary["as_first"] = tally(result[a_first], finished[a_first])
    summary["as_second"] = tally(result[~a_first], finished[~a_first])
    return summary


__all__ = ["GameResults", "play_games", "play_each", "summarize", "tally", "per_game_policy"]
