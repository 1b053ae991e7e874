"""Position studies of a Nim agent (Zhou & Riis, Fig. 11-15): priors, move values and the search's choice.

``position_study`` takes one position apart: each legal move's prior, whether it wins,
the network's value of the move, then the search's most-visited move and visit shares at
several budgets. ``misleading_positions`` finds the won positions where the prior is
surest of a losing move; ``position_report`` studies the initial position, given ones
and the misleading ones (``experiments/nim_positions.py``, ``experiments/nim_study.py``).
"""

import functools
from typing import Any, Dict, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax.agent import Agent
from azdb_jax.envs import nim as nim_lib
from azdb_jax.evaluation import nim as nim_eval

Array = jax.Array


def move_name(action: int, max_heap: int) -> str:
    """Zhou & Riis's name of a move: the heap's letter and the counters taken ("e9": 9 from heap e)."""
    heap, take = divmod(int(action), max_heap)
    return f"{chr(ord('a') + heap)}{take + 1}"


def position_study(team: Agent, heaps: Sequence[int], *, player: int = 0,
                   simulations: Sequence[int] = tuple(2 ** k for k in range(11)),
                   rng_key: Optional[Array] = None) -> Dict[str, Any]:
    """What the network and the search say about one position (the paper's Fig. 11-15).

    For every legal move: whether it wins (leaves a zero nim-sum), the network's prior,
    and the value of the move for the side to move as the network sees it (minus the
    value of the position it leaves; +1 when it takes the last counter). Then for each
    budget in ``simulations``: the search's visit share of every move, its most-visited
    move and the root value ``V = max_a Q``. Searches score by the game only (λ = 1),
    without root noise, as the expert measure does.

    Returns:
      A dict: ``heaps``, ``player``, ``value`` (the oracle's), ``network_value``,
      ``winning_moves``; ``moves``, one dict per legal move (``move``, ``action``,
      ``winning``, ``prior``, ``move_value``) ordered by prior, highest first; ``searches``,
      one dict per budget (``simulations``, ``move``, ``winning``, ``root_value`` and
      ``visits``, each move's share of the visits).
    """
    env = team.env
    if not isinstance(env, nim_lib.Nim):
        raise ValueError(f"position studies need a Nim agent, got env '{env.id}'")
    heaps = np.asarray(heaps, np.int32)
    if heaps.shape != (len(env.initial_heaps),) or (heaps < 0).any() or \
            (heaps > np.asarray(env.initial_heaps)).any() or heaps.sum() == 0:
        raise ValueError(f"heaps {heaps.tolist()} is not a non-terminal position of Nim {list(env.initial_heaps)}")
    if not 0 <= player < team.num_players:
        raise ValueError(f"player must be in [0, {team.num_players}), got {player}")
    if not simulations or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in simulations):
        raise ValueError(f"simulations must be positive ints, got {simulations!r}")
    oracle = nim_eval.oracle_tables(env, heaps[None])
    legal, winning = oracle.legal[0], oracle.winning[0]
    actions = np.flatnonzero(legal)
    # The position and every position a legal move leaves, through the network at once.
    children = np.repeat(heaps[None], len(actions), axis=0)
    for row, action in enumerate(actions):
        children[row, action // env.max_heap] -= action % env.max_heap + 1
    net = nim_eval.network_answers(env, team.apply_fn)
    logits, value = (np.asarray(x) for x in net(team.params, jnp.asarray(np.concatenate([heaps[None], children])),
                                                jnp.int32(player)))
    prior = np.asarray(jax.nn.softmax(jnp.where(legal, logits[0], -jnp.inf)))
    move_values = np.where(children.sum(axis=1) == 0, 1.0, -value[1:])
    moves = [{"move": move_name(a, env.max_heap), "action": int(a), "winning": bool(winning[a]),
              "prior": float(prior[a]), "move_value": float(v)} for a, v in zip(actions, move_values)]
    moves.sort(key=lambda m: -m["prior"])
    key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    searches = []
    for n in simulations:
        fn = _study_search_fn(nim_eval.search_key(team).with_simulations(int(n)))
        visits, root_value, action = (np.asarray(x) for x in fn(team.params, jax.random.fold_in(key, n),
                                                                 jnp.asarray(heaps[None]), jnp.int32(player)))
        shares = visits[0] / max(visits[0].sum(), 1)
        searches.append({"simulations": int(n), "move": move_name(action[0], env.max_heap),
                         "winning": bool(winning[action[0]]), "root_value": float(root_value[0]),
                         "visits": {move_name(a, env.max_heap): float(shares[a]) for a in actions}})
    return {"heaps": heaps.tolist(), "player": player, "value": int(oracle.value[0]),
            "network_value": float(value[0]), "winning_moves": [move_name(a, env.max_heap)
                                                               for a in np.flatnonzero(winning)],
            "moves": moves, "searches": searches}


@functools.lru_cache(maxsize=64)
def _study_search_fn(team: Agent):
    """Jitted ``(params, rng_key, heaps [P, K], player) -> (visits [P, A], V [P], most-visited [P])``
    of ``team``'s search (an agent without arrays: its params are the program's input)."""

    def answers(params, rng_key, heaps, player):
        out = team.search(params, rng_key, jax.vmap(team.env.state_from_heaps)(heaps), players=player[None])
        return out.stats.visits[:, 0], out.stats.value[:, 0], out.most_visited_action[:, 0]

    return jax.jit(answers)


def misleading_positions(team: Agent, positions: np.ndarray, *, player: int = 0, count: int = 1) -> np.ndarray:
    """The won positions of ``positions`` where the prior is most sure of a losing move, ``[count, K]``.

    A won position whose top-1 prior move loses, ranked by that move's prior (the paper's
    Fig. 12 and 14: a prior of 97 % on a losing move keeps the search from the winning
    one); fewer rows when fewer positions mislead.
    """
    oracle = nim_eval.oracle_tables(team.env, positions)
    net = nim_eval.network_answers(team.env, team.apply_fn)
    logits = np.concatenate([np.asarray(net(team.params, jnp.asarray(chunk), jnp.int32(player))[0])
                             for chunk in np.array_split(oracle.heaps, max(1, len(oracle.heaps) // 1024))])
    prior = np.asarray(jax.nn.softmax(jnp.where(oracle.legal, logits, -jnp.inf), axis=-1))
    best = prior.argmax(axis=-1)
    misleads = (oracle.value > 0) & ~oracle.winning[np.arange(len(best)), best]
    ranked = np.flatnonzero(misleads)[np.argsort(-prior[np.flatnonzero(misleads), best[misleads]], kind="stable")]
    return oracle.heaps[ranked[:count]]


def position_report(team: Agent, positions: Sequence[Sequence[int]] = (), *, misleading: int = 1,
                    pool: int = 10_000, seed: int = 0, player: int = 0,
                    simulations: Sequence[int] = tuple(2 ** k for k in range(11))) -> Dict[str, Any]:
    """``position_study`` of the initial position, ``positions`` and the ``misleading`` most
    misleading won positions among ``pool`` drawn with ``seed`` (``misleading_positions``).

    Returns ``{"step", "player", "heaps", "studies": [...]}`` (``experiments/nim_positions.py``).
    """
    env = team.env
    chosen = [list(env.initial_heaps)] + [list(p) for p in positions]
    if misleading:
        drawn = nim_eval.sample_positions(env.initial_heaps, pool, seed=seed)
        chosen += misleading_positions(team, drawn, player=player, count=misleading).tolist()
    studies = [position_study(team, heaps, player=player, simulations=simulations) for heaps in chosen]
    return {"step": team.step, "player": player, "heaps": list(env.initial_heaps), "studies": studies}


def format_study(study: Dict[str, Any], *, top: int = 6) -> str:
    """Two small tables of a ``position_study``: the top moves by prior, then the searches."""
    lines = [f"heaps {study['heaps']} (player {study['player']}): oracle value {study['value']:+d}, network value "
             f"{study['network_value']:+.3f}, winning moves {', '.join(study['winning_moves']) or 'none'}",
             f"{'move':>6} {'wins':>5} {'prior':>7} {'move value':>10}"]
    for m in study["moves"][:top]:
        lines.append(f"{m['move']:>6} {'yes' if m['winning'] else 'no':>5} {m['prior']:7.3f} {m['move_value']:+10.3f}")
    lines.append(f"{'sims':>6} {'move':>5} {'wins':>5} {'V':>7}  top visit shares")
    for sr in study["searches"]:
        shares = sorted(sr["visits"].items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"{sr['simulations']:>6} {sr['move']:>5} {'yes' if sr['winning'] else 'no':>5} "
                     f"{sr['root_value']:+7.3f}  " + ", ".join(f"{k} {v:.2f}" for k, v in shares))
    return "\n".join(lines)


__all__ = ["move_name", "position_study", "misleading_positions", "position_report", "format_study"]
