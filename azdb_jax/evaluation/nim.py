"""Nim measures of a trained team: the expert measure and the champion measure.

Zhou & Riis ("Impartial Games: A Challenge for Reinforcement Learning") separate two
kinds of strength, and SPEC §2 ("Nim") asks for both:

- **Expert measure** — does the agent *know* the game? Over every non-terminal
  position reachable from the initial heaps (each heap at most its start size), per
  team player: the *policy top-1 accuracy* is the share of won positions (nonzero
  nim-sum) where the argmax of the network prior over legal moves is a winning move
  (one leaving a zero nim-sum); the *value sign accuracy* is the share of positions
  where ``sign(v)`` is the oracle's value (+1 won, −1 lost for the side to move; a
  value of exactly 0 counts as wrong). About 90 % of Nim's positions are won, so a
  constant "won" value scores 0.9 there: the balanced accuracy (the mean over won and
  lost positions, 0.5 for any constant) is reported beside it. Optionally the same after search: the
  most-visited move and the sign of the root value ``V = max_a Q(s, a)``. The random
  baseline of the top-1 accuracy is the mean of ``#winning / #legal`` over won positions.
- **Champion measure** — does the agent *win*? Every (checkpoint, player) agent plays
  every other one, both colours, several seeds (``azdb_jax.evaluation.matches``);
  maximum-likelihood Elo ratings anchored at the first agent (the earliest
  checkpoint) with standard errors (``ratings.fit_elo``), plus each agent's score
  against the Nim oracle.

``measure_checkpoints`` runs both over a run's checkpoints (one row per checkpoint and
player). The oracle is ``azdb_jax.envs.nim`` (Bouton's nim-sum rule). Host drivers; each
batched network call, search and match is one jitted program.
"""

import dataclasses
import functools
import itertools
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from azdb_jax import arena, ratings
from azdb_jax.agent import Agent
from azdb_jax.envs import nim as nim_lib
from azdb_jax.evaluation import matches
from azdb_jax.games.nim import nim_oracle_policy
from azdb_jax.policies import Policy

Array = jax.Array


# ------------------------------------------------------------------ positions and the oracle


def nim_positions(initial_heaps: Sequence[int], *, include_terminal: bool = False) -> np.ndarray:
    """Every heap configuration reachable from ``initial_heaps``, ``[P, K]`` int32.

    A heap can be reduced to any smaller size independently of the others, so the
    reachable set is the box ``0 <= heaps[k] <= initial_heaps[k]``; the empty board is
    left out unless ``include_terminal``.
    """
    heaps = np.array(list(itertools.product(*(range(h + 1) for h in initial_heaps))), dtype=np.int32)
    return heaps if include_terminal else heaps[heaps.sum(axis=1) > 0]


def sample_positions(initial_heaps: Sequence[int], count: int, *, seed: int = 0) -> np.ndarray:
    """``count`` distinct non-terminal positions drawn uniformly from the reachable box, ``[P, K]``.

    Every non-terminal position when there are no more than ``count`` of them (5 heaps of
    odd sizes have 3,839; 6 and 7 heaps 46,079 and 645,119: Zhou & Riis measure 10,000 of
    those). Sorted in the box's order; the same ``seed`` draws the same positions.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    sizes = np.asarray(initial_heaps, np.int64) + 1
    total = int(np.prod(sizes))  # the box, the empty board (index 0) included
    if total - 1 <= count:
        return nim_positions(initial_heaps)
    index = np.sort(np.random.default_rng(seed).choice(np.arange(1, total), size=count, replace=False))
    digits = np.zeros((count, len(sizes)), np.int64)
    for k in range(len(sizes) - 1, -1, -1):  # mixed radix, the last heap fastest (itertools.product's order)
        index, digits[:, k] = np.divmod(index, sizes[k])
    return digits.astype(np.int32)


class Oracle(NamedTuple):
    """The oracle's answers on a set of positions."""

    heaps: np.ndarray  # [P, K] positions
    legal: np.ndarray  # [P, A] legal moves
    winning: np.ndarray  # [P, A] moves leaving a zero nim-sum
    value: np.ndarray  # [P] +1 won / -1 lost for the side to move


def oracle_tables(env: nim_lib.Nim, heaps: Optional[np.ndarray] = None) -> Oracle:
    """Legal and winning moves and game values of ``heaps`` (default: every non-terminal position)."""
    heaps = nim_positions(env.initial_heaps) if heaps is None else np.asarray(heaps, np.int32)
    h = jnp.asarray(heaps)
    states = jax.vmap(env.state_from_heaps)(h)
    winning = jax.vmap(lambda x: nim_lib.winning_moves(x, env.max_heap))(h)
    value = jax.vmap(nim_lib.position_value)(h)
    return Oracle(heaps=heaps, legal=np.asarray(states.legal_action_mask), winning=np.asarray(winning),
                  value=np.asarray(value))


# ------------------------------------------------------------------ expert measure (pure scoring)


def top1_hits(logits: Array, legal: Array, winning: Array) -> Array:
    """Whether the best legal action of each row of ``logits`` [P, A] is winning, [P] bool."""
    best = jnp.argmax(jnp.where(legal, logits, -jnp.inf), axis=-1)
    return jnp.take_along_axis(winning, best[:, None], axis=-1)[:, 0]


def topk_hits(logits: Array, legal: Array, winning: Array, k: int) -> Array:
    """Whether any of the ``k`` best legal actions of each row of ``logits`` [P, A] wins, [P] bool
    (fewer when a position has fewer legal moves)."""
    _, best = jax.lax.top_k(jnp.where(legal, logits, -jnp.inf), k)
    chosen = jnp.take_along_axis(legal, best, axis=-1)  # an illegal pick (too few legal moves) never counts
    return jnp.any(jnp.take_along_axis(winning, best, axis=-1) & chosen, axis=-1)


def move_hits(actions: Array, winning: Array) -> Array:
    """Whether each chosen action [P] is a winning move, [P] bool."""
    return jnp.take_along_axis(winning, actions[:, None].astype(jnp.int32), axis=-1)[:, 0]


def sign_hits(values: Array, truth: Array) -> Array:
    """``sign(v) == truth`` per position (a value of 0 never matches ±1), [P] bool."""
    return jnp.sign(values) == truth


def _accuracies(hits_move: np.ndarray, hits_sign: np.ndarray, truth: np.ndarray, prefix: str) -> Dict[str, float]:
    won = truth > 0
    return {
        f"{prefix}top1_accuracy": float(hits_move[won].mean()) if won.any() else float("nan"),
        f"{prefix}value_sign_accuracy": float(hits_sign.mean()),
        f"{prefix}value_sign_accuracy_won": float(hits_sign[won].mean()) if won.any() else float("nan"),
        f"{prefix}value_sign_accuracy_lost": float(hits_sign[~won].mean()) if (~won).any() else float("nan"),
        # The mean of the two: a constant value ("every position is won") scores 0.5 here,
        # however lopsided the positions are (about 90 % of them are won).
        f"{prefix}value_sign_balanced_accuracy": (float((hits_sign[won].mean() + hits_sign[~won].mean()) / 2)
                                                 if won.any() and (~won).any() else float("nan")),
    }


def _chunks(size: int, batch_size: int):
    return [(start, min(start + batch_size, size)) for start in range(0, size, batch_size)]


def _pad(x: np.ndarray, size: int) -> np.ndarray:
    return np.concatenate([x, np.repeat(x[:1], size - len(x), axis=0)]) if len(x) < size else x


def expert_measure(
    team: Agent,
    *,
    search: bool = False,
    rng_key: Optional[Array] = None,
    batch_size: int = 1024,
    positions: Optional[np.ndarray] = None,
) -> Dict[str, Any]:
    """The expert measure of every team player over every non-terminal position (or ``positions``).

    Args:
      team: the agent (its Nim env's initial heaps fix the positions); players
        ``0..n-1`` are measured.
      search: also measure after the team's search (its ``search_config``, no noise):
        the most-visited move (``search_top1_accuracy``) and the sign of ``V = max_a Q``
        (``search_value_*``). The searches score positions by the game's outcome only
        (``Agent.as_extrinsic_only``): a value mixed with v_d has no sign to compare with
        the oracle's.
      rng_key: consumed by the searches (tie breaks); default ``PRNGKey(0)``.
      batch_size: positions per network call / search; the last batch is padded.
      positions: ``[P, K]`` non-terminal heaps to measure (e.g. ``sample_positions``);
        default every non-terminal position.

    Returns:
      ``{"positions", "won_positions", "random_baseline", "players": [per player dict]}``
      where each player dict holds ``player``, ``top1_accuracy``, ``top3_accuracy`` (any of
      the prior's 3 best legal moves wins), ``value_sign_accuracy``
      (also ``_won``/``_lost``/``balanced``) and, with search, the same keys prefixed
      ``search_``; ``"team"`` holds the max over latents: ``top1_accuracy_any`` (a won
      position counts when any player's top-1 move wins; ``search_top1_accuracy_any``
      with search).
    """
    env, params, num_players = team.env, team.params, team.num_players
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    oracle = oracle_tables(env, positions)
    if (oracle.heaps.sum(axis=1) == 0).any():
        raise ValueError("positions must be non-terminal (the empty board has no move to measure)")
    num_positions = len(oracle.heaps)
    size = min(batch_size, num_positions)
    net = network_answers(env, team.apply_fn)
    logits = np.zeros((num_players,) + oracle.legal.shape, np.float32)
    values = np.zeros((num_players, num_positions), np.float32)
    for start, stop in _chunks(num_positions, size):
        heaps = _pad(oracle.heaps[start:stop], size)
        for j in range(num_players):
            out_logits, out_value = net(params, heaps, jnp.int32(j))
            logits[j, start:stop] = np.asarray(out_logits)[: stop - start]
            values[j, start:stop] = np.asarray(out_value)[: stop - start]
    players = []
    won = oracle.value > 0
    any_hits = np.zeros(num_positions, bool)
    for j in range(num_players):
        hits = np.asarray(top1_hits(logits[j], oracle.legal, oracle.winning))
        signs = np.asarray(sign_hits(values[j], oracle.value))
        players.append({"player": j, **_accuracies(hits, signs, oracle.value, "")})
        # A team of 3 offers 3 moves: one player's 3 most probable moves are the fair baseline.
        top3 = np.asarray(topk_hits(logits[j], oracle.legal, oracle.winning, min(3, oracle.legal.shape[-1])))
        players[j]["top3_accuracy"] = float(top3[won].mean()) if won.any() else float("nan")
        any_hits |= hits
    # Max over latents (SPEC §2): a won position counts when any player's top-1 move wins.
    over_team = {"top1_accuracy_any": float(any_hits[won].mean()) if won.any() else float("nan")}

    if search:
        key = jax.random.PRNGKey(0) if rng_key is None else rng_key
        team_fn = _search_fn(search_key(team))
        actions = np.zeros((num_positions, num_players), np.int32)
        root_values = np.zeros((num_positions, num_players), np.float32)
        for index, (start, stop) in enumerate(_chunks(num_positions, size)):
            heaps = _pad(oracle.heaps[start:stop], size)
            a, v = team_fn(params, jax.random.fold_in(key, index), heaps)
            actions[start:stop], root_values[start:stop] = np.asarray(a)[: stop - start], np.asarray(v)[: stop - start]
        any_hits = np.zeros(num_positions, bool)
        for j in range(num_players):
            hits = np.asarray(move_hits(actions[:, j], oracle.winning))
            signs = np.asarray(sign_hits(root_values[:, j], oracle.value))
            players[j].update(_accuracies(hits, signs, oracle.value, "search_"))
            players[j]["search_simulations"] = team.search_config.num_simulations
            any_hits |= hits
        over_team["search_top1_accuracy_any"] = float(any_hits[won].mean()) if won.any() else float("nan")

    baseline = (oracle.winning.sum(-1) / oracle.legal.sum(-1))[won].mean() if won.any() else float("nan")
    return {"positions": num_positions, "won_positions": int(won.sum()), "random_baseline": float(baseline),
            "heaps": list(env.initial_heaps), "players": players, "team": over_team}


# Compiled programs are cached per (env, network, settings): the checkpoints of a run share them.


def search_key(team: Agent) -> Agent:
    """``team`` as the key of a compiled λ = 1 search: without its arrays (the program's
    inputs), labels or ℓ0, so that every checkpoint of a run shares one program. The
    measures search extrinsic-only (``Agent.as_extrinsic_only``): a value mixed with v_d
    has no sign to compare with the oracle's."""
    return dataclasses.replace(team.with_arrays(None).as_extrinsic_only(), l0=1.0, name="team", step=None)


@functools.lru_cache(maxsize=16)
def network_answers(env, apply_fn):
    """Jitted ``(params, heaps [P, K], player []) -> (logits [P, A], value [P])``."""

    def answers(params, heaps, player):
        states = jax.vmap(env.state_from_heaps)(heaps)
        out = apply_fn(params, states.observation, jnp.full(heaps.shape[:1], player, jnp.int32))
        return out.policy_logits, out.value

    return jax.jit(answers)


@functools.lru_cache(maxsize=16)
def _search_fn(team: Agent):
    """Jitted ``(params, rng_key, heaps [P, K]) -> (most-visited action [P, n], V [P, n])``
    of ``team``'s search (an agent without arrays: its params are the program's input)."""

    def answers(params, rng_key, heaps):
        out = team.search(params, rng_key, jax.vmap(team.env.state_from_heaps)(heaps))
        return out.most_visited_action, out.stats.value

    return jax.jit(answers)


# ------------------------------------------------------------------ champion measure


class Entrant(NamedTuple):
    """A match participant: ``policy(params, rng_key, state [B]) -> [B]`` with its ``params``."""

    name: str
    policy: Policy
    params: Any
    step: Optional[int] = None  # checkpoint step, for reports
    player: Optional[int] = None  # team player (latent id), for reports


def checkpoint_agents(team: Agent, checkpoints: Sequence[Tuple[int, Any]]) -> List[Entrant]:
    """One agent per (checkpoint step, team player) of ``team`` with each checkpoint's
    parameters, in checkpoint then player order.

    Every agent plays through one ``team.latent_policy`` policy with ``params =
    (net_params, player)``, so all (checkpoint, player) agents share one compiled match.
    """
    policy = team.with_arrays(None).latent_policy()
    return [Entrant(f"step{step}/p{j}", policy, (params, jnp.int32(j)), step=step, player=j)
            for step, params in checkpoints for j in range(team.num_players)]


def _play(env, agent_a: Entrant, agent_b: Entrant, rng_key: Array, starts, *, num_seeds: int,
          max_plies: int) -> Dict[str, Any]:
    """``matches.play_match`` of A against B from ``starts`` [P], seeds ``0..num_seeds-1``, tallied for A."""
    match = matches.play_match(env, agent_a.policy, agent_a.params, agent_b.policy, agent_b.params, starts=starts,
                               seeds=range(num_seeds), max_plies=max_plies, rng_key=rng_key,
                               names=(agent_a.name, agent_b.name))
    return arena.tally(match.result, match.finished)


def champion_measure(
    env,
    agents: Sequence[Entrant],
    rng_key: Array,
    *,
    num_games: int = 16,
    num_seeds: int = 2,
    max_plies: Optional[int] = None,
    prior_draws: float = 0.5,
    oracle: bool = True,
    progress: bool = False,
) -> Dict[str, Any]:
    """Round robin of ``agents`` and their Elo ratings; optionally each agent's score against the oracle.

    Each pair plays ``matches.play_match`` (both colours, seeds ``0..num_seeds-1``) from
    ``num_games // 2`` copies of the initial heaps: Nim has one start position, and the
    copies give each seed ``num_games // 2`` pairs of games, pair ``p`` of seed ``s``
    with its own key ``fold_in(fold_in(pair_key, s), p)`` (``matches.pair_keys``).

    Args:
      env: the Nim env.
      agents: the participants; ratings are anchored at ``agents[0]`` (Elo 0), e.g.
        the earliest checkpoint's player 0.
      rng_key: consumed; pair ``(a, b)`` uses ``fold_in(rng_key, a * len(agents) + b)``,
        agent ``i`` against the oracle ``fold_in(rng_key, len(agents) ** 2 + i)``.
      num_games: games per pair and seed (even: half with each agent moving first).
      num_seeds: independent rounds per pair.
      max_plies: game length cap; default the total number of counters (always enough).
      prior_draws: virtual draws added to every pair before the fit (``ratings.fit_elo``):
        in Nim a strong agent often beats a weak one in every game, which has no finite
        maximum-likelihood rating otherwise.
      oracle: also play every agent against the Nim oracle policy.
      progress: tqdm bar over the pairs.

    Returns:
      A dict with ``agents`` (a list of ``{name, step, player, elo, elo_stderr,
      score_vs_oracle, ...}``), ``pairs`` (a list of ``{a, b, wins, draws, losses, score,
      elo_difference, elo_difference_stderr}``), ``anchor``, ``num_games_per_pair`` and
      ``prior_draws``.
    """
    if len(agents) < 2:
        raise ValueError(f"the champion measure needs at least two agents, got {len(agents)}")
    if len({a.name for a in agents}) != len(agents):
        raise ValueError("agent names must be unique")
    if not isinstance(num_games, int) or num_games < 2 or num_games % 2:
        raise ValueError(f"num_games must be an even int >= 2 (both colours per start), got {num_games!r}")
    if not isinstance(num_seeds, int) or num_seeds < 1:
        raise ValueError(f"num_seeds must be an int >= 1, got {num_seeds!r}")
    max_plies = max_plies or int(sum(env.initial_heaps))
    starts = jax.vmap(env.state_from_heaps)(jnp.tile(jnp.int32(env.initial_heaps), (num_games // 2, 1)))
    play = functools.partial(_play, env, starts=starts, num_seeds=num_seeds, max_plies=max_plies)
    n = len(agents)
    wins, draws, losses = (np.zeros((n, n)) for _ in range(3))
    pairs = []
    jobs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    for a, b in tqdm.tqdm(jobs, desc="matches", unit="pair", disable=not progress):
        tally = play(agents[a], agents[b], jax.random.fold_in(rng_key, a * n + b))
        wins[a, b], draws[a, b], losses[a, b] = tally["wins"], tally["draws"], tally["losses"]
        diff = ratings.elo_difference(tally["wins"], tally["draws"], tally["losses"], saturated="clip")
        pairs.append({"a": agents[a].name, "b": agents[b].name, "wins": tally["wins"], "draws": tally["draws"],
                      "losses": tally["losses"], "unfinished": tally["unfinished"], "score": tally["score"],
                      "elo_difference": float(diff.elo), "elo_difference_stderr": float(diff.stderr)})
    fit = ratings.fit_elo(wins, draws, losses, anchor=0, prior_draws=prior_draws)
    rows = [{"name": agent.name, "step": agent.step, "player": agent.player, "elo": float(fit.ratings[i]),
             "elo_stderr": float(fit.stderr[i])} for i, agent in enumerate(agents)]
    if oracle:
        oracle_agent = Entrant("oracle", nim_oracle_policy(env.max_heap), None)
        for i, agent in enumerate(tqdm.tqdm(agents, desc="vs oracle", unit="agent", disable=not progress)):
            tally = play(agent, oracle_agent, jax.random.fold_in(rng_key, n * n + i))
            rows[i].update(score_vs_oracle=tally["score"], wins_vs_oracle=tally["wins"],
                           losses_vs_oracle=tally["losses"])
    return {"agents": rows, "pairs": pairs, "anchor": agents[0].name,
            "num_games_per_pair": num_games * num_seeds, "prior_draws": prior_draws}


def measure_checkpoints(teams: Sequence[Tuple[int, Agent]], *, num_games: int = 16, num_seeds: int = 2,
                        seed: int = 0, prior_draws: float = 0.5, max_positions: Optional[int] = None,
                        search: bool = True, champion: bool = True,
                        progress: bool = True) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Both measures for checkpoints ``teams`` ([(step, team)], earliest first): ``(summary, rows)``.

    All teams must share the env, network and team size (checkpoints of one run). The
    rows (one per checkpoint and player) hold the expert measure and the champion
    measure side by side; write both with ``reports.write_report``
    (``experiments/nim_measures.py``).

    Args:
      max_positions: measure at most this many non-terminal positions, drawn once with
        ``seed`` (``sample_positions``) and shared by every checkpoint; None: all of them.
      search: also the expert measure after search (each team's ``search_config``).
      champion: also the champion measure (round robin, Elo, score against the oracle);
        without it the rows hold the expert measure only.
    """
    if not teams:
        raise ValueError("no checkpoints to measure")
    steps = [step for step, _ in teams]
    if steps != sorted(steps) or len(set(steps)) != len(steps):
        raise ValueError(f"checkpoint steps must be distinct and increasing, got {steps}")
    first = teams[0][1]
    if not isinstance(first.env, nim_lib.Nim):  # the oracle's tables read Nim's heaps
        raise ValueError(f"the Nim measures need a Nim run, got env '{first.env.id}'")
    for step, team in teams:
        if team.num_players != first.num_players:
            raise ValueError(f"checkpoint {step} has {team.num_players} players, checkpoint {steps[0]} "
                             f"{first.num_players}")
    if champion and len(teams) * first.num_players < 2:
        raise ValueError("the champion measure needs at least two agents: measure two checkpoints or more, "
                         "or pass champion=False")
    positions = (None if max_positions is None
                 else sample_positions(first.env.initial_heaps, max_positions, seed=seed))
    # The measures compare moves and values with Nim's game-theoretic oracle, so every
    # search scores positions by the game's outcome only (λ = 1, Agent.as_extrinsic_only):
    # a value mixed with v_d has no sign to compare with the oracle's.
    key = jax.random.PRNGKey(seed)
    expert: Dict[Tuple[int, int], Dict[str, Any]] = {}
    started = time.perf_counter()
    for index, (step, team) in enumerate(tqdm.tqdm(teams, desc="expert measure", unit="ckpt", disable=not progress)):
        result = expert_measure(team, search=search, rng_key=jax.random.fold_in(key, index), positions=positions)
        for player in result["players"]:
            expert[(step, player["player"])] = {**player, **{f"team_{k}": v for k, v in result["team"].items()}}
    expert_seconds = time.perf_counter() - started
    rows = []
    champion_summary = None
    if champion:
        agents = checkpoint_agents(first.as_extrinsic_only(), [(step, team.params) for step, team in teams])
        outcome = champion_measure(first.env, agents, jax.random.fold_in(key, len(teams)), num_games=num_games,
                                   num_seeds=num_seeds, prior_draws=prior_draws, progress=progress)
        champion_summary = {k: v for k, v in outcome.items() if k != "agents"}
        for agent_row in outcome["agents"]:
            row = {"step": agent_row["step"], "player": agent_row["player"], "name": agent_row["name"]}
            row.update({k: v for k, v in expert[(agent_row["step"], agent_row["player"])].items() if k != "player"})
            row.update({k: v for k, v in agent_row.items() if k not in ("step", "player", "name")})
            rows.append(row)
    else:
        for (step, player), measures in expert.items():
            rows.append({"step": step, "player": player, "name": f"step{step}/p{player}",
                         **{k: v for k, v in measures.items() if k != "player"}})
    summary = {
        "heaps": list(first.env.initial_heaps),
        "encoding": first.env.encoding,
        "num_players": first.num_players,
        "steps": steps,
        "simulations": first.search_config.num_simulations,
        "search": "extrinsic_only",  # against the oracle: see the comment above
        "random_baseline": result["random_baseline"],
        "positions": result["positions"],
        "positions_sampled": result["positions"] < int(np.prod(np.asarray(first.env.initial_heaps) + 1)) - 1,
        "won_positions": result["won_positions"],
        "champion": champion_summary,
        "seconds": {"expert": round(expert_seconds, 1), "total": round(time.perf_counter() - started, 1)},
    }
    return summary, rows


def format_measures(rows: Sequence[Dict[str, Any]]) -> str:
    """A fixed-width table of ``measure_checkpoints``' headline numbers, one line per (checkpoint, player)."""
    columns = (("step", "step", "{}"), ("player", "player", "{}"), ("top1", "top1_accuracy", "{:.3f}"),
               ("value sign", "value_sign_accuracy", "{:.3f}"),
               ("balanced", "value_sign_balanced_accuracy", "{:.3f}"),
               ("search top1", "search_top1_accuracy", "{:.3f}"),
               ("Elo", "elo", "{:+.0f}"), ("± SE", "elo_stderr", "{:.0f}"), ("vs oracle", "score_vs_oracle", "{:.3f}"))
    lines = ["  ".join(f"{title:>11}" for title, _, _ in columns)]
    for row in rows:
        cells = [fmt.format(row[key]) if row.get(key) is not None else "-" for _, key, fmt in columns]
        lines.append("  ".join(f"{cell:>11}" for cell in cells))
    return "\n".join(lines)


__all__ = ["nim_positions", "sample_positions", "Oracle", "topk_hits", "oracle_tables", "top1_hits", "move_hits",
           "sign_hits", "expert_measure", "Entrant", "checkpoint_agents", "champion_measure", "measure_checkpoints",
           "format_measures", "network_answers"]
