"""A connect-four team measured against the solved game: does its move keep the outcome?

Connect four is solved, so each position of a fixed set (``data.load_connect_four_positions``,
every move's solved score) says exactly what a move is worth. What matters to AlphaZero
is whether a move keeps the position's outcome — a won position stays won, a drawn one
drawn — not whether it wins fastest; in a lost position every move loses and the
position says nothing about the mover, so the move measures are taken over the positions
that are *not lost* for the side to move:

- ``search_keeps``: the player's search (most-visited move, no noise) keeps the outcome;
- ``prior_keeps``: the network's prior alone (its highest-prior legal move) does;
- ``search_best`` / ``prior_best``: the move is a best-scoring one (fastest win, slowest
  loss; for a drawn position, the same as keeping it);
- ``value_sign``: over every position, the network value's sign agrees with the solved
  outcome (v > 1/3 a win, v < −1/3 a loss, else a draw);
- ``random_keeps``: what a uniformly random legal move keeps, on average (the floor).

Each is a fraction with its binomial standard error, for every player of the team and
each phase of the game (opening, middle, late), and for the team's moves under a
selection rule (``planning.SELECTION_RULES``).
"""

import functools
import math
from typing import Any, Dict, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import planning
from azdb_jax.data.connect_four import SolvedPosition
from azdb_jax.games import connect_four

DRAW_BAND = 1.0 / 3.0  # |v| below this reads as a draw


def states(env, positions: Sequence[SolvedPosition]):
    """pgx states ``[P]`` of ``positions`` (their moves played from the initial state)."""
    length = max(len(p.moves) for p in positions)
    moves = np.full((len(positions), max(length, 1)), -1, np.int32)
    for row, position in enumerate(positions):
        moves[row, :len(position.moves)] = position.moves
    return _replay(env)(jnp.asarray(moves))


@functools.lru_cache(maxsize=None)
def _replay(env):
    """``moves [P, T] -> states [P]``, compiled once per env (and shape): each row's columns
    played from the initial state, −1 after its last move."""

    @jax.jit
    def play(moves):
        init = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), moves.shape[0]))

        def ply(state, column):
            stepped = jax.vmap(env.step)(state, jnp.maximum(column, 0))
            keep = column < 0
            return jax.tree.map(lambda old, new: jnp.where(keep.reshape((-1,) + (1,) * (new.ndim - 1)), old, new),
                                state, stepped), None

        return jax.lax.scan(ply, init, moves.T)[0]

    return play


def _fraction(hits: np.ndarray) -> Dict[str, float]:
    n = int(hits.size)
    rate = float(hits.mean()) if n else float("nan")
    return {"rate": rate, "stderr": math.sqrt(rate * (1 - rate) / n) if n else float("nan"), "n": n}


def _measures(chosen_search, chosen_prior, value, positions) -> Dict[str, Any]:
    keeping = np.stack([p.keeping for p in positions])
    best = np.stack([p.best for p in positions])
    outcome = np.array([p.value for p in positions])
    rows = np.arange(len(positions))
    open_ = outcome >= 0
    out = {
        "search_keeps": _fraction(keeping[rows, chosen_search][open_]),
        "search_best": _fraction(best[rows, chosen_search][open_]),
    }
    if value is not None:
        read = np.where(value > DRAW_BAND, 1, np.where(value < -DRAW_BAND, -1, 0))
        out["value_sign"] = _fraction(read == outcome)
    if chosen_prior is not None:
        out["prior_keeps"] = _fraction(keeping[rows, chosen_prior][open_])
        out["prior_best"] = _fraction(best[rows, chosen_prior][open_])
    return out


def evaluate(agent, positions: Sequence[SolvedPosition], rng_key, *, rules: Sequence[str] = ("visit",),
             batch_size: int = 256) -> Dict[str, Any]:
    """Every player's (and each rule's team) measures on ``positions``, overall and per phase.

    Args:
      agent: a connect-four ``agent.Agent`` (its evaluation search, no noise).
      positions: solved positions (none over).
      rng_key: consumed (the search's keys).
      rules: selection rules for the team's move (``planning.SELECTION_RULES``).
      batch_size: positions searched at once.

    Returns:
      A dict: ``positions``, ``not_lost``, ``random_keeps``, ``outcomes`` (won, drawn and
      lost positions for the mover), ``players`` (player j -> phase or ``all`` -> the
      measures) and ``rules`` (rule -> phase or ``all`` -> the team's move measures).
    """
    if agent.env.id != connect_four.GAME.id:
        raise ValueError(f"solved positions are connect four's; the agent plays {agent.env.id}")
    positions = list(positions)
    if not positions:
        raise ValueError("no positions to evaluate")
    for rule in rules:
        planning.get_rule(rule)
    search = jax.jit(agent.search)
    select = {rule: jax.jit(jax.vmap(planning.get_rule(rule))) for rule in rules}
    n = agent.num_players
    visits, priors, values, team = [], [], [], {rule: [] for rule in rules}
    for start in range(0, len(positions), batch_size):
        chunk = positions[start:start + batch_size]
        padded = chunk + [chunk[-1]] * (batch_size - len(chunk)) if len(positions) > batch_size else chunk
        rng_key, key = jax.random.split(rng_key)
        result = search(agent.params, key, states(agent.env, padded))
        stats = result.stats
        legal = np.stack([p.legal for p in padded])[:, None, :]
        priors.append(np.where(legal, np.asarray(stats.prior), -np.inf)[:len(chunk)])
        visits.append(np.asarray(result.most_visited_action)[:len(chunk)])
        values.append(np.asarray(result.network_value)[:len(chunk)])
        for rule in rules:
            player = np.asarray(select[rule](stats))[:len(chunk)]
            team[rule].append(np.asarray(result.most_visited_action)[np.arange(len(chunk)), player])
    visits, values = np.concatenate(visits), np.concatenate(values)
    prior_moves = np.concatenate(priors).argmax(-1)
    phases = sorted({p.phase for p in positions}, key=["opening", "middle", "late"].index)

    def by_phase(measure):
        out = {"all": measure(np.ones(len(positions), bool))}
        for phase in phases:
            out[phase] = measure(np.array([p.phase == phase for p in positions]))
        return out

    def player_measures(j):
        def measure(mask):
            chosen = [p for p, m in zip(positions, mask) if m]
            return _measures(visits[mask, j], prior_moves[mask, j], values[mask, j], chosen)
        return by_phase(measure)

    def rule_measures(rule):
        moves = np.concatenate(team[rule])

        def measure(mask):
            chosen = [p for p, m in zip(positions, mask) if m]
            return _measures(moves[mask], None, None, chosen)
        return by_phase(measure)

    not_lost = [p for p in positions if p.value >= 0]
    random_keeps = float(np.mean([p.keeping.sum() / p.legal.sum() for p in not_lost])) if not_lost else float("nan")
    return {
        "positions": len(positions), "not_lost": len(not_lost), "random_keeps": random_keeps,
        "outcomes": {name: int(sum(p.value == v for p in positions)) for name, v in
                     (("won", 1), ("drawn", 0), ("lost", -1))},
        "players": {j: player_measures(j) for j in range(n)},
        "rules": {rule: rule_measures(rule) for rule in rules},
    }


def against_perfect(agent, positions: Sequence[SolvedPosition], rng_key, *, player: int = 0,
                    opponent: str = "perfect") -> Dict[str, Any]:
    """Player ``player`` of ``agent`` (its search, no noise) plays on from each position that
    is not lost for the mover, as the mover, against the solver (``opponent``, a
    ``perfect[...]`` spec); it *keeps the result* when it wins a won position or draws
    a drawn one (a win in a drawn position: the solver does not lose one). The arena
    plays every start with both colours; the games where the solver moves first from the
    position are played and left out (twice the games a one-colour loop would play).

    Returns:
      A dict: ``keeps_result`` (rate, stderr, n), the same per phase, and the games'
      ``wins``, ``draws`` and ``losses``.
    """
    from azdb_jax import arena  # pylint: disable=g-import-not-at-top
    from azdb_jax.games import connect_four_solver  # pylint: disable=g-import-not-at-top

    if agent.env.id != connect_four.GAME.id:
        raise ValueError(f"solved positions are connect four's; the agent plays {agent.env.id}")
    starts = [p for p in positions if p.value >= 0]
    if not starts:
        raise ValueError("no position that is not lost for the mover")
    options = connect_four_solver.parse_spec(opponent)
    if options is None:
        raise ValueError(f"{opponent!r} is not a perfect[:random=R][,depth=D] spec")
    policy_b = connect_four_solver.perfect_policy(**options)
    play = jax.jit(lambda params, key, start: arena.play_games(
        agent.env, agent.player_policy(player), params, policy_b, None, key, num_games=2 * len(starts),
        max_plies=42, initial_state=start))
    results = play(agent.params, rng_key, states(agent.env, starts))
    result = np.asarray(results.result)[:len(starts)]  # the games the agent starts, as the mover
    if not np.asarray(results.finished)[:len(starts)].all():
        raise RuntimeError("a game from a solved position did not finish in 42 plies")
    outcome = np.array([p.value for p in starts])
    kept = np.where(outcome > 0, result > 0, result >= 0)
    out = {"keeps_result": _fraction(kept), "opponent": opponent, "player": player,
           "wins": int((result > 0).sum()), "draws": int((result == 0).sum()), "losses": int((result < 0).sum())}
    for phase in ("opening", "middle", "late"):
        mask = np.array([p.phase == phase for p in starts])
        if mask.any():
            out[phase] = _fraction(kept[mask])
    return out


def make_positions(seed: int, per_phase: int, solver: Optional[Any] = None, *,
                   noisy_rate: float = 0.3) -> list:
    """``per_phase`` positions of each phase, labelled by the solver, half from random play
    and half from the solver's own play with a random move at rate ``noisy_rate``; each
    position once, none over, ids ``c4_<n>`` in phase order."""
    from azdb_jax.data import connect_four as c4  # pylint: disable=g-import-not-at-top
    from azdb_jax.games import connect_four_solver  # pylint: disable=g-import-not-at-top

    solver = connect_four_solver.solver() if solver is None else solver
    rng = np.random.default_rng(seed)
    seen, out = set(), []
    for phase, (low, high) in c4.PHASES.items():
        for source_index in range(per_phase):
            source = c4.SOURCES[source_index % 2]
            while True:
                plies = int(rng.integers(low, high + 1))
                moves, cells = [], c4.cells_from_moves([])
                for _ in range(plies):
                    legal = np.flatnonzero((cells.reshape(6, 7) < 0).any(axis=0))
                    if source == "noisy_solver" and rng.random() >= noisy_rate:
                        column = int(rng.choice(np.flatnonzero(solver.best_moves(cells))))
                    else:
                        column = int(rng.choice(legal))
                    moves.append(column)
                    cells = c4.cells_from_moves(moves)
                    if c4.winner(cells) is not None or (cells >= 0).all():
                        break
                key = cells.tobytes()  # a position once, whatever the move order that reached it
                if len(moves) == plies and c4.winner(cells) is None and key not in seen:
                    break
            seen.add(key)
            scores = solver.move_scores(cells)
            out.append(c4.SolvedPosition(
                f"c4_{len(out)}", phase, source, tuple(moves),
                tuple(None if s == connect_four_solver.ILLEGAL else int(s) for s in scores)))
    return out


__all__ = ["DRAW_BAND", "against_perfect", "evaluate", "make_positions", "states"]
