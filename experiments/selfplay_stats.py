"""How a checkpoint's self-play games go: lengths, endings, policy shape, mates seen and missed.

  python experiments/selfplay_stats.py --workdir=runs/gardner --steps=1,20,40 --games=64

For each checkpoint, plays ``--games`` games of player ``--player`` against itself with
the run's self-play search (root noise, moves sampled in proportion to the visits for the
run's ``selfplay.sample_plies`` plies, then the most-visited move), to the end or
``--max_plies``, and reports:

- games finished, mean length, decisive share; for chess-like games how each game
  ended (mate, stalemate, threefold repetition, fifty-move rule, insufficient material,
  the ply cap);
- the policy's shape: entropy of the network prior and of the search policy (nats),
  the share of moves made by the king, the share of plies that reach a position not seen
  before in the same game (low: the game shuffles);
- what the search sees: the share of positions with a mate in one where a mating move was
  played, and the share of moves that allow the opponent a mate in one (each measured
  by stepping every legal move of every position);
- the search tree's depth (deepest node, mean over positions) and the root value.

Printed as a table, written as JSON with ``--out``.
"""

import json
import pathlib
from typing import Dict, List

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import features, games, runs, search, tree_search
from azdb_jax.cli import common_flags

_WORKDIR = common_flags.define_workdir("Run directory.", required=True)
_STEPS = common_flags.define_steps("Checkpoint steps, comma-separated (default: every saved one).")
_GAMES = common_flags.define_games("Games per checkpoint.", default=64)
_PLAYER = flags.DEFINE_integer("player", 0, "Team player playing both sides.")
_MAX_PLIES = common_flags.define_max_plies("Plies per game at most; games still running there count as "
                                           "unfinished (default: the game's own longest game).")
_SIMULATIONS = common_flags.define_simulations("Search budget (default: the run's self-play budget).")
_SEED = common_flags.define_seed("Seed.")
_OUT = common_flags.define_out("JSON output path (default: the table only).")

END_REASONS = ("mate", "stalemate", "repetition", "fifty_moves", "insufficient", "ply_cap", "other")


def _gardner_reason(state) -> jax.Array:
    from pgx import gardner_chess as g  # pylint: disable=g-import-not-at-top

    legal = g._legal_action_mask(state).any()  # pylint: disable=protected-access
    repeats = (state._hash_history == state._zobrist_hash).all(axis=1).sum() - 1
    return _classify(state.rewards, legal, repeats >= 2, state._halfmove_count >= 100,
                     g.has_insufficient_pieces(state), state._step_count >= g.MAX_TERMINATION_STEPS)


def _chess_reason(state) -> jax.Array:
    from pgx._src.games import chess as g  # pylint: disable=g-import-not-at-top

    x = state._x
    legal = g._legal_action_mask(x).any()  # pylint: disable=protected-access
    repeats = (x.hash_history == g._zobrist_hash(x)).all(axis=1).sum() - 1  # pylint: disable=protected-access
    return _classify(state.rewards, legal, repeats >= 2, x.halfmove_count >= 100,
                     g._is_insufficient(x) if hasattr(g, "_is_insufficient") else jnp.bool_(False),
                     x.step_count >= g.MAX_TERMINATION_STEPS)


def _classify(rewards, has_legal, repetition, fifty, insufficient, cap) -> jax.Array:
    return jnp.select([jnp.any(rewards != 0), ~has_legal, repetition, fifty, insufficient, cap],
                      jnp.arange(6), 6).astype(jnp.int32)


def _tree_depth(tree) -> jax.Array:
    """[B] depth of the deepest node of each tree (nodes are created in order, parents first)."""
    parents = tree.parents

    def body(depth, n):
        parent = parents[:, n]
        d = jnp.take_along_axis(depth, jnp.maximum(parent, 0)[:, None], 1)[:, 0] + 1
        return depth.at[:, n].set(jnp.where((parent >= 0) & (tree.node_visits[:, n] > 0), d, 0)), None

    depth = jnp.zeros_like(parents)
    depth, _ = jax.lax.scan(body, depth, jnp.arange(1, parents.shape[1]))
    return depth.max(axis=1)


def _mates_in_one(env, states, num_slots):
    """[B, K] the legal move in slot k mates (slots: legal moves in id order) and [B, K] slot actions."""
    slots = tree_search.legal_slots(states.legal_action_mask, jnp.zeros(states.legal_action_mask.shape), num_slots)
    children = jax.vmap(lambda s, acts: jax.vmap(env.step, in_axes=(None, 0))(s, jnp.maximum(acts, 0)))(states, slots)
    mover = states.current_player[:, None]
    won = jnp.take_along_axis(children.rewards, mover[..., None], axis=-1)[..., 0] > 0
    return won & (slots >= 0), slots, children


def self_play_games(env, apply_fn, params, config, *, player, num_games, max_plies, key):
    """Self-play games of ``player`` against itself to the end; per-ply records (host arrays).

    The run's self-play, not a match (the arena's games): one searched batch per ply with
    one key, as ``selfplay`` searches, and the search's own outputs (prior, visits, tree,
    value) recorded at every position."""
    search_config = config.search
    sample_plies = config.selfplay.sample_plies
    num_slots = min(search_config.num_slots or search.num_slots_for(env), env.num_actions)
    reason_fn = {"gardner_chess": _gardner_reason, "chess": _chess_reason}.get(env.id)
    players, lams = jnp.full((num_games,), player, jnp.int32), jnp.ones((num_games,))

    @jax.jit
    def ply(state, done, t, key):
        search_key, sample_key = jax.random.split(key)
        out = search.run_search(env, apply_fn, params, search_key, state, players, lams, config=search_config,
                                add_noise=True)
        visits = out.visits
        sampled = jax.random.categorical(sample_key, jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1)), -jnp.inf))
        action = jnp.where(t < sample_plies, sampled, jnp.argmax(visits, axis=-1)).astype(jnp.int32)
        mating, slots, children = _mates_in_one(env, state, num_slots)
        played_mate = jnp.any(mating & (slots == action[:, None]), axis=-1)
        nxt = jax.vmap(env.step)(state, action)
        # After our move: can the opponent mate in one?
        their_mates, _, _ = _mates_in_one(env, nxt, num_slots)
        allows = their_mates.any(axis=-1) & ~nxt.terminated
        prior = jax.nn.softmax(out.prior_logits, axis=-1)
        entropy = lambda p: -jnp.sum(jnp.where(p > 0, p * jnp.log(jnp.maximum(p, 1e-30)), 0.0), axis=-1)  # noqa: E731
        king = _is_king_move(env, state, action)
        record = dict(
            active=~done, has_mate=mating.any(-1), played_mate=played_mate, allows_mate=allows,
            prior_entropy=entropy(prior), search_entropy=entropy(out.policy), king_move=king,
            depth=_tree_depth(out.tree), root_value=out.search_value,
            position=_position_key(env, nxt),
        )
        reason = jax.vmap(reason_fn)(nxt) if reason_fn else jnp.where(jnp.any(nxt.rewards != 0, -1), 0, 6)
        return nxt, done | nxt.terminated | nxt.truncated, record, reason, nxt.rewards

    state = jax.vmap(env.init)(jax.random.split(key, num_games))
    first = state.current_player
    done = jnp.zeros((num_games,), bool)
    records: List[Dict[str, np.ndarray]] = []
    reasons = np.full(num_games, -1)
    results = np.zeros(num_games)
    lengths = np.zeros(num_games, int)
    for t in range(max_plies):
        if bool(done.all()):
            break
        key, sub = jax.random.split(key)
        was_done = np.asarray(done)
        state, done, record, reason, rewards = ply(state, done, jnp.int32(t), sub)
        record = jax.device_get(record)
        records.append(record)
        ended = np.asarray(done) & ~was_done
        reasons[ended] = np.asarray(reason)[ended]
        first_reward = np.take_along_axis(np.asarray(rewards), np.asarray(first)[:, None], 1)[:, 0]
        results[ended] = first_reward[ended]
        lengths[~was_done] += 1
    return records, reasons, results, lengths


def _position_key(env, state) -> jax.Array:
    """[B] a 32-bit hash of each position: the board (features φ) and the side to move."""
    phi = jax.vmap(features.feature_fn(env))(state).astype(jnp.float32)
    phi = jnp.concatenate([phi, state.current_player[:, None].astype(jnp.float32)], axis=-1)
    weights = jnp.sin(jnp.arange(phi.shape[1], dtype=jnp.float32) * 12.9898 + 1.0) * 43758.5453
    return jax.lax.bitcast_convert_type((phi * weights).sum(-1), jnp.int32)


def _is_king_move(env, state, action) -> jax.Array:
    """[B] the moving piece is the king (chess-like games: those with boards and material;
    False elsewhere). An action is ``origin square * planes + plane`` (``BoardGame.board_size``)."""
    game = games.get(env)
    if game.board is None or game.mover_board is None:
        return jnp.zeros(action.shape, bool)
    planes = env.num_actions // game.board.board_size ** 2
    board = game.mover_board(state)
    from_square = action // planes
    return jnp.take_along_axis(board, from_square[:, None], axis=1)[:, 0] == 6


def summarize(records, reasons, results, lengths, env_id) -> Dict[str, float]:
    active = np.stack([r["active"] for r in records])  # [T, B]
    mean = lambda name: float(np.stack([r[name] for r in records])[active].mean())  # noqa: E731
    has_mate = np.stack([r["has_mate"] for r in records]) & active
    played = np.stack([r["played_mate"] for r in records]) & has_mate
    positions = np.stack([r["position"] for r in records])  # [T, B]
    new = []
    for b in range(positions.shape[1]):
        seen, count = set(), 0
        for t in range(lengths[b]):
            count += positions[t, b] not in seen
            seen.add(positions[t, b])
        new.append(count / max(lengths[b], 1))
    finished = reasons >= 0
    out = dict(
        games=len(lengths), finished=int(finished.sum()), mean_length=float(lengths.mean()),
        decisive=float((results[finished] != 0).mean()) if finished.any() else float("nan"),
        first_player_score=float(((results[finished] + 1) / 2).mean()) if finished.any() else float("nan"),
        prior_entropy=mean("prior_entropy"), search_entropy=mean("search_entropy"), king_moves=mean("king_move"),
        new_positions=float(np.mean(new)), tree_depth=mean("depth"), root_value=mean("root_value"),
        mate_in_one_positions=int(has_mate.sum()),
        mate_in_one_played=float(played.sum() / max(has_mate.sum(), 1)),
        allows_mate_in_one=mean("allows_mate"),
    )
    if env_id in games.BOARD_IDS:
        for i, name in enumerate(END_REASONS):
            out[f"end_{name}"] = int((reasons == i).sum())
    return out


def main(argv):
    del argv
    workdir = pathlib.Path(_WORKDIR.value)
    from azdb_jax import checkpoint  # pylint: disable=g-import-not-at-top

    with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
        steps = _STEPS.value or manager.all_steps()
    rows = {}
    for step in steps:
        config, components, state = runs.load_run(workdir, step)
        if _SIMULATIONS.value:
            config = config.__class__(**{**config.__dict__, "search": __import__("dataclasses").replace(
                config.search, num_simulations=_SIMULATIONS.value)})
        max_plies = games.max_plies(components.env) if _MAX_PLIES.value is None else _MAX_PLIES.value
        records, reasons, results, lengths = self_play_games(
            components.env, components.network.apply, state.train_state.params, config, player=_PLAYER.value,
            num_games=_GAMES.value, max_plies=max_plies, key=jax.random.PRNGKey(_SEED.value))
        rows[step] = summarize(records, reasons, results, lengths, components.env.id)
        print(f"step {step}: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in rows[step].items()), flush=True)
    if _OUT.value:
        pathlib.Path(_OUT.value).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    app.run(main)
