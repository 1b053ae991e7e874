"""Figure group ``matches`` (paper Table 2, 3, Fig. 6, 21-23): AZdb against AZ in matches.

Both arms trained with the same budget (equal compute, ``scales``); ``azdb`` seed k meets
``az`` seed k, or every ``az`` seed (the scale's ``eval.match_pairings``), and the λ = 1
``control`` plays the same pairings where ``eval.match_sides`` names it. Every game starts from one of ``eval.openings`` opening positions (the
``openings`` group's: Gardner chess, the start and short random openings with a fixed
seed; chess, ECO openings), once with each colour, for ``seeds`` match seeds, so that a
pairing plays ``2 · openings · seeds`` games (``seeds = max(2, ⌈eval.match_games / (2 ·
openings)⌉)``: the lookup needs a seed to build on and one to score). Every agent searches
``eval.simulations`` simulations per move and its player as in self-play (its λ_i and
intrinsic reward); the first ``SAMPLE_PLIES`` plies of a game are sampled ∝ visits so that
seeds give different games (the paper's random seeds); games still running at
``eval.max_plies`` are adjudicated by material (``ADJUDICATION``, margin ``MARGIN`` pawns).

Agents on the AZdb side, all against the AZ network's player 0:

- ``player_<j>``: each AZdb player alone (Fig. 22 rows, Table 3);
- ``team_<rule>``: the whole team as one agent, every latent searching and the selection
  rule of Eq. 9 choosing whose move to play (``Agent.rule_policy``; the paper's GAP);
- ``lookup``: the opening-specialisation lookup of Appendix C.5 (Table 2 "sub-additive
  planning"): per (opening, colour) the player with the best mean score over the other
  seeds, scored on the left-out seed (leave one seed out); ``lookup_gap`` the same with the
  player of each cell chosen by Eq. 9's GAP rule over the scores
  (``specialisation.lookup_table``); ``lookup_heldout`` builds the
  table on the first seeds and scores the rest, and ``lookup_curve`` does so for 1, 2, …
  training seeds (Fig. 21);
- ``max_over_latents``: per game the best result any player got (an oracle bound).

Every AZdb player's game at (opening, colour, seed) uses the same random key, so the
lookup's and the oracle's games are the players' games (``evaluation.specialisation``).
Scores: W 1, D ½, L 0 with the trinomial standard error; Elo ``−400 log10(1/p − 1)`` ±
its delta-method SE (``ratings.elo_difference``), over games for one training seed and
over seeds when the scale has several. Per-opening scores (Fig. 6, 23) are in the
paper's units (win 1, draw 0, loss −1), by the AZdb agent's colour, ± SE over match seeds.

Rows: one per game (``kind = "player"`` or ``"team"``) with its opening's FEN, colour,
seed, result, whether it was adjudicated, its length and its moves as action ids.

The pairings of two arms' seeds share their compiled programs (ψ and the parameters are
the policies' arguments: ``PairingPolicies``); on an accelerator every pairing is a
member of one program per agent (``play_pairings``), on a CPU they play one after another.
"""

import dataclasses
import functools
import math
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import adjudication, arena, games
from azdb_jax import agent as agent_lib
from azdb_jax.evaluation import loading
from azdb_jax.evaluation import matches as matches_lib
from azdb_jax.evaluation import specialisation
from azdb_jax.reproduction import openings as openings_group
from azdb_jax.reproduction.results import Results, ResultsError, RunInfo, crossed_mean_stderr, stderr

ARMS = ("azdb", "az")
SEED = 0
SAMPLE_PLIES = 2
ADJUDICATION = "material"
MARGIN = 3.0
TEAM_RULES = ("gap",)
COLOURS = ("white", "black")
OUTCOME = {"win": 1.0, "draw": 0.0, "loss": -1.0}


def num_match_seeds(match_games: int, num_openings: int) -> int:
    """Match seeds so that a pairing plays at least ``match_games`` games (both colours from
    every opening per seed), and at least 2 (the lookup needs a seed to build on)."""
    return max(2, math.ceil(match_games / (2 * max(num_openings, 1))))


def record(result, decided) -> Dict[str, Any]:
    """``arena.tally`` of games (result +1/0/−1 for the AZdb side; ``decided`` [..] bool)
    (its ``score_stderr`` included) plus the win rate in % (``winrate``, the score × 100, as in Table 2)."""
    out = arena.tally(result, decided)
    out["winrate"] = 100.0 * out["score"] if out["finished"] else float("nan")
    return out


def _starts(game: str, env, fens: Sequence[str]):
    interop = games.board_game(game)
    boards = [interop.new_board(f) for f in fens]
    return interop.states_from_boards(boards, max_pieces=getattr(env, "max_pieces", None))


def _grid(match: matches_lib.MatchResult, num_openings: int, seeds: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """(result, decided) [P, 2, S]: opening, AZdb side moves first (0) / second (1), seed."""
    return specialisation.result_grid(dataclasses.replace(match, finished=match.decided), num_openings, seeds)


def _game_rows(match: matches_lib.MatchResult, kind: str, agent: str, pairing: str,
               openings: Sequence[Tuple[str, str]]) -> List[Dict[str, Any]]:
    rows = []
    for row in matches_lib.match_rows(match):
        label, fen = openings[row["start_index"]]
        result = row.pop("result")
        rows.append({"kind": kind, "agent": agent, "pairing": pairing, "opening": row["start_index"],
                     "opening_label": label, "fen": fen, "seed": row["seed"], "colour": row["a_colour"],
                     "first": row["a_first"], "result": result, "score": OUTCOME.get(result),
                     "adjudicated": row.get("adjudicated", False), "plies": row["plies"], "moves": row["moves"]})
    return rows


def opening_scores(result: np.ndarray, decided: np.ndarray, colour_of_first: np.ndarray) -> Dict[str, Any]:
    """Mean score per opening and colour in the paper's units (win 1, draw 0, loss −1; an
    undecided game 0), ± SE over seeds: ``{"mean", "stderr"}`` [P][2] with columns (white, black).

    ``result``/``decided`` [P, 2, S] (opening, AZdb side first / second, seed);
    ``colour_of_first`` [P] the colour of the side that moves first in each opening.
    """
    scores = np.where(decided, result, 0.0)
    num_openings = scores.shape[0]
    mean = np.zeros((num_openings, 2))
    err = np.zeros((num_openings, 2))
    for p in range(num_openings):
        for turn in range(2):
            colour = colour_of_first[p] if turn == 0 else ("black" if colour_of_first[p] == "white" else "white")
            c = COLOURS.index(colour)
            mean[p, c] = scores[p, turn].mean()
            err[p, c] = stderr(scores[p, turn])
    return {"mean": mean, "stderr": err}


def lookup_curve(result: np.ndarray, decided: np.ndarray) -> Dict[str, Any]:
    """Fig. 21: the lookup built on the first k seeds, k = 1 … S − H, scored on the last
    H = max(1, S // 2) seeds; beside it the best player and max over latents on those seeds.

    ``result``/``decided`` [n, P, 2, S] every player's games.
    """
    num_seeds = result.shape[-1]
    heldout = list(range(num_seeds - max(1, num_seeds // 2), num_seeds))
    points = []
    for k in range(1, heldout[0] + 1):
        report = specialisation.specialisation_report(result, decided, list(range(k)), heldout)
        lookup = report["lookup"]
        points.append({"train_seeds": k, "score": lookup["score"], "score_stderr": lookup["score_stderr"]})
    report = specialisation.specialisation_report(result, decided, list(range(heldout[0])), heldout)
    best, oracle = report["best_latent"], report["max_over_latents"]
    return {"heldout_seeds": len(heldout), "points": points,
            "best_latent": {"player": best["player"], "score": best["score"]},
            "max_over_latents": {"score": oracle["score"]}}


class PairingPolicies(NamedTuple):
    """The policies of a pairing, built from the first pairing's agents with ψ in their
    params (``Agent.psi_as_param``), so that every pairing of runs with the same
    configurations (the seeds of two arms) plays through the same compiled programs:
    one compile per program for all seeds instead of one per seed."""

    key: Tuple[str, str]  # the two arms' configurations, seeds left out
    env: Any
    starts: Any
    adjudicate: Any
    latent: Any  # params (AZdb ψ, (network params, player))
    rules: Dict[str, Any]  # rule -> policy, params (AZdb ψ, network params)
    opponent: Any  # AZ player 0, params (AZ ψ, network params)


def pairing_policies(game: str, azdb, az, openings: Sequence[Tuple[str, str]], key: Tuple[str, str]
                     ) -> PairingPolicies:
    """``PairingPolicies`` of the loaded agents ``azdb`` and ``az``."""
    env = az.env
    return PairingPolicies(
        key=key, env=env, starts=_starts(game, env, [fen for _, fen in openings]),
        adjudicate=adjudication.adjudicator(env, ADJUDICATION, margin=MARGIN),
        latent=azdb.psi_as_param(lambda a: a.latent_policy(sample_plies=SAMPLE_PLIES)),
        rules={rule: azdb.psi_as_param(functools.partial(_rule_policy, rule)) for rule in TEAM_RULES},
        opponent=az.psi_as_param(lambda a: a.player_policy(0, sample_plies=SAMPLE_PLIES)))


def _rule_policy(rule: str, agent):
    return agent.rule_policy(rule, sample_plies=SAMPLE_PLIES)


def play_pairings(results: Results, policies: PairingPolicies, azdbs: Sequence[Any], azs: Sequence[Any],
                  openings: Sequence[Tuple[str, str]], seeds: Sequence[int]) -> List[Dict[str, Any]]:
    """The matches of the pairings ``(azdbs[k], azs[k])`` (loaded agents of two arms'
    configurations, ``policies``'): per pairing ``{agent: MatchResult}`` for every AZdb
    player and team rule against AZ's player 0. Several pairings are played as members of
    one program (``play_match(members=K)``: every agent's games of all pairings in one call)."""
    sizes = results.scale.eval
    several = len(azdbs) > 1
    members = len(azdbs) if several else None

    def stacked(trees):
        return agent_lib.stack_members(trees) if several else trees[0]

    common = dict(starts=policies.starts, seeds=seeds, max_plies=sizes.max_plies, rng_key=jax.random.PRNGKey(SEED),
                  adjudicate=policies.adjudicate, batch_pairs=max(1, len(openings) * len(seeds)), members=members)
    opponent_params = stacked([(az.psi, az.params) for az in azs])
    played: List[Dict[str, Any]] = [{} for _ in azdbs]

    def keep(name, matches):
        for k, match in enumerate(matches if several else [matches]):
            played[k][name] = dataclasses.replace(match, names=(f"{azdbs[k].name}/{name}", azs[k].name))

    for j in range(azdbs[0].num_players):
        params = stacked([(azdb.psi, (azdb.params, jnp.int32(j))) for azdb in azdbs])
        keep(f"player_{j}", matches_lib.play_match(policies.env, policies.latent, params, policies.opponent,
                                                   opponent_params, a_player=j, **common))
    for rule in TEAM_RULES:
        params = stacked([(azdb.psi, azdb.params) for azdb in azdbs])
        keep(f"team_{rule}", matches_lib.play_match(policies.env, policies.rules[rule], params, policies.opponent,
                                                    opponent_params, **common))
    return played


def evaluate_pairing(results: Results, azdb_run: RunInfo, az_run: RunInfo,
                     openings: Sequence[Tuple[str, str]], seeds: Sequence[int],
                     policies: Optional[PairingPolicies] = None) -> Dict[str, Any]:
    """Every AZdb agent of ``azdb_run`` against player 0 of ``az_run``: per-agent records,
    the lookup and max over latents, per-opening scores; ``{"summary", "rows", "policies"}``.

    ``policies``: an earlier pairing's (``PairingPolicies``), reused when its two
    configurations are this pairing's, so that the pairings share compiled programs."""
    sizes = results.scale.eval
    az = loading.load_team(az_run.workdir, num_simulations=sizes.simulations)
    azdb = loading.load_team(azdb_run.workdir, num_simulations=sizes.simulations)
    key_now = (azdb_run.configuration, az_run.configuration)
    if policies is None or policies.key != key_now:
        policies = pairing_policies(results.scale.game, azdb, az, openings, key_now)
    played = play_pairings(results, policies, [azdb], [az], openings, seeds)[0]
    return dict(summarise_pairing(azdb_run, az_run, azdb, az, played, openings, seeds), policies=policies)


def summarise_pairing(azdb_run: RunInfo, az_run: RunInfo, azdb, az, played: Dict[str, Any],
                      openings: Sequence[Tuple[str, str]], seeds: Sequence[int]) -> Dict[str, Any]:
    """``{"summary", "rows"}`` of one pairing's matches (``play_pairings``)."""
    pairing = f"{azdb_run.name} vs {az_run.name}"
    rows: List[Dict[str, Any]] = []
    agents: Dict[str, Dict[str, Any]] = {}
    grids = []
    colour_of_first = None
    for j in range(azdb.num_players):
        match = played[f"player_{j}"]
        rows += _game_rows(match, "player", f"player_{j}", pairing, openings)
        grids.append(_grid(match, len(openings), seeds))
        agents[f"player_{j}"] = _agent_summary(match)
        if colour_of_first is None:
            first = match.a_first
            colour_of_first = np.array([match.a_colour[first & (match.start_index == p)][0]
                                        for p in range(len(openings))])
    for rule in TEAM_RULES:
        match = played[f"team_{rule}"]
        rows += _game_rows(match, "team", f"team_{rule}", pairing, openings)
        grid = _grid(match, len(openings), seeds)
        agents[f"team_{rule}"] = _agent_summary(match)
        agents[f"team_{rule}"]["opening_scores"] = opening_scores(*grid, colour_of_first)
    result = np.stack([g[0] for g in grids])  # [n, P, 2, S]
    decided = np.stack([g[1] for g in grids])
    for j in range(azdb.num_players):
        agents[f"player_{j}"]["opening_scores"] = opening_scores(result[j], decided[j], colour_of_first)
    num_seeds = len(seeds)
    train = list(range(num_seeds - max(1, num_seeds // 2)))
    heldout = list(range(train[-1] + 1, num_seeds))
    spec = specialisation.specialisation_report(result, decided, train, heldout)
    oracle_r, oracle_d = specialisation.max_over_latents_games(result, decided)
    # the lookup's games, leave one seed out: per seed the table of the other seeds, the
    # table's player the best of each cell ("lookup", Appendix C.5) or chosen by the GAP
    # rule over the scores ("lookup_gap")
    for name, rule in (("lookup", "best"), ("lookup_gap", "gap")):
        lookup_r, lookup_d, tables = specialisation.leave_one_seed_out(result, decided, rule)
        agents[name] = _grid_summary(lookup_r, lookup_d, colour_of_first)
        agents[name]["tables"] = tables  # [S][P][2]: player per (opening, AZdb side first/second)
    agents["max_over_latents"] = _grid_summary(oracle_r, oracle_d, colour_of_first)
    held_table = np.asarray(spec["table"])
    held_r, held_d = specialisation.chosen_games(result[..., heldout], decided[..., heldout], held_table)
    agents["lookup_heldout"] = dict(record(held_r, held_d), table=held_table.tolist(),
                                    train_seeds=[int(seeds[s]) for s in train],
                                    heldout_seeds=[int(seeds[s]) for s in heldout])
    summary = {
        "pairing": pairing, "azdb_run": azdb_run.name, "az_run": az_run.name, "seed": azdb_run.seed,
        "azdb_step": azdb.step, "az_step": az.step, "num_players": azdb.num_players,
        "azdb_search": azdb.search_description(), "az_search": az.search_description(),
        "colour_of_first": colour_of_first.tolist(),
        "agents": agents,
        "lookup_curve": lookup_curve(result, decided),
    }
    return {"summary": summary, "rows": rows}


def _by_colour(result, decided, colours) -> Dict[str, Dict[str, Any]]:
    return {c: record(result[colours == c], decided[colours == c]) for c in COLOURS}


def _agent_summary(match: matches_lib.MatchResult) -> Dict[str, Any]:
    decided = match.decided
    out = record(match.result, decided)
    out["adjudicated"] = int(match.adjudicated.sum()) if match.adjudicated is not None else 0
    out["by_colour"] = _by_colour(match.result, decided, match.a_colour)
    out["mean_length"] = float(match.length.mean())
    return out


def _grid_summary(result: np.ndarray, decided: np.ndarray, colour_of_first: np.ndarray) -> Dict[str, Any]:
    """Record of games on a [P, 2, S] grid, overall, by colour and per opening."""
    colours = np.empty(result.shape, object)
    for p, colour in enumerate(colour_of_first):
        colours[p, 0] = colour
        colours[p, 1] = "black" if colour == "white" else "white"
    out = record(result, decided)
    out["by_colour"] = _by_colour(result, decided, colours)
    out["opening_scores"] = opening_scores(result, decided, colour_of_first)
    return out


AGENT_FIELDS = ("score", "winrate", "elo")


def combine(pairings: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Per agent over training-seed pairings: W/D/L summed; score, win rate and Elo with their
    standard errors over games (one pairing) or their means ± SE over pairings (several)."""
    names = list(pairings[0]["agents"])
    out: Dict[str, Dict[str, Any]] = {}
    for name in names:
        records = [p["agents"][name] for p in pairings]
        entry = {k: int(sum(r[k] for r in records)) for k in ("wins", "draws", "losses", "finished", "games")}
        if len(records) == 1:
            r = records[0]
            entry.update(score=r["score"], score_stderr=r["score_stderr"], winrate=r["winrate"],
                         winrate_stderr=100.0 * r["score_stderr"], elo=r["elo"], elo_stderr=r["elo_stderr"],
                         elo_clipped=r["elo_clipped"], elo_clipped_stderr=r["elo_clipped_stderr"],
                         stderr_over="games")
        else:
            scores = [r["score"] for r in records]
            elos = [r["elo_clipped"] for r in records]
            entry.update(score=float(np.mean(scores)), score_stderr=stderr(scores),
                         winrate=100.0 * float(np.mean(scores)), winrate_stderr=100.0 * stderr(scores),
                         elo=float(np.mean(elos)), elo_stderr=stderr(elos), elo_clipped=float(np.mean(elos)),
                         elo_clipped_stderr=stderr(elos), stderr_over="seeds")
        if all("by_colour" in r for r in records):
            entry["by_colour"] = {c: {"score": float(np.mean([r["by_colour"][c]["score"] for r in records])),
                                      "winrate": float(np.mean([r["by_colour"][c]["winrate"] for r in records])),
                                      **{k: int(sum(r["by_colour"][c][k] for r in records))
                                         for k in ("wins", "draws", "losses")}} for c in COLOURS}
        out[name] = entry
    return out


def pairs_of(sides: Sequence[RunInfo], azs: Sequence[RunInfo], mode: str) -> List[Tuple[RunInfo, RunInfo]]:
    """The (side, AZ) run pairs that meet: ``"same_seed"`` the runs of equal seed (a seed
    either arm lacks is left out), ``"all"`` every side run against every AZ run, side
    seed by side seed."""
    if mode == "same_seed":
        by_seed = {r.seed: r for r in azs}
        return [(r, by_seed[r.seed]) for r in sides if r.seed in by_seed]
    if mode == "all":
        return [(r, b) for r in sides for b in azs]
    raise ValueError(f"unknown pairing mode {mode!r}")


def crossed(pairings: Sequence[Dict[str, Any]], agent: str, field: str = "elo_clipped"
            ) -> Optional[Dict[str, Any]]:
    """``field`` of ``agent`` over pairings that cross every side seed with every AZ seed (at
    least 2 x 2): the mean over the table with both arms' seeds random
    (``results.crossed_mean_stderr``) and the table itself; None when they do not."""
    side_seeds = sorted({int(p["seed"]) for p in pairings})
    az_seeds = sorted({int(p["az_seed"]) for p in pairings})
    cells = {(int(p["seed"]), int(p["az_seed"])): p["agents"][agent][field] for p in pairings}
    if len(side_seeds) < 2 or len(az_seeds) < 2 or len(cells) != len(side_seeds) * len(az_seeds):
        return None
    table = [[cells[(i, j)] for j in az_seeds] for i in side_seeds]
    if not np.isfinite(np.asarray(table, float)).all():
        return None
    return dict(crossed_mean_stderr(table), table=table, side_seeds=side_seeds, az_seeds=az_seeds)


def _play(results: Results, pairs: Sequence[Tuple[RunInfo, RunInfo]], openings, seeds,
          batch_members: Optional[bool]) -> Tuple[List[Dict[str, Any]], bool]:
    """Every pairing's ``{"summary", "rows"}`` and whether they played as members of one program."""
    sizes = results.scale.eval
    batched = (jax.default_backend() != "cpu") if batch_members is None else batch_members
    batched = batched and len(pairs) > 1 and len({(a.configuration, b.configuration) for a, b in pairs}) == 1
    if batched:  # every pairing a member of one program per agent
        loaded = [(loading.load_team(a.workdir, num_simulations=sizes.simulations),
                   loading.load_team(b.workdir, num_simulations=sizes.simulations)) for a, b in pairs]
        policies = pairing_policies(results.scale.game, *loaded[0], openings,
                                    (pairs[0][0].configuration, pairs[0][1].configuration))
        played = play_pairings(results, policies, [a for a, _ in loaded], [b for _, b in loaded], openings, seeds)
        return [summarise_pairing(*pair, *agents, one, openings, seeds)
                for pair, agents, one in zip(pairs, loaded, played)], True
    outs, policies = [], None
    for side_run, az_run in pairs:
        outs.append(evaluate_pairing(results, side_run, az_run, openings, seeds, policies))
        policies = outs[-1]["policies"]
    return outs, False


def evaluate(results: Results, batch_members: Optional[bool] = None) -> dict:
    """Evaluates the group into ``results`` (``eval/matches.json|csv``); returns the report.

    Which seeds meet is the scale's ``eval.match_pairings`` (``pairs_of``); the λ = 1
    control plays the same pairings against AZ when ``eval.match_sides`` names it (its
    pairings and agents under ``summary["control"]``). Where the pairings cross every seed
    of both arms, each agent's ``crossed`` entry holds its Elo over the table with both
    arms' seeds random.

    ``batch_members``: play every pairing as a member of one program per agent
    (``play_pairings``) when the pairings share their two configurations; default on an
    accelerator, where the members' games run side by side (on a CPU they would run one
    after another anyway, and the pairings share compiled programs either way)."""
    start = time.perf_counter()
    sizes = results.scale.eval
    openings = openings_group.opening_positions(results.scale.game, sizes.openings)
    seeds = list(range(num_match_seeds(sizes.match_games, len(openings))))
    sides = tuple(sizes.match_sides)
    found = {arm: results.runs(arm) for arm in (*sides, "az")}
    for arm in found:
        if not found[arm]:
            results.first_run(arm)  # ResultsError saying how to train it
    played_by_side, rows, names, any_batched = {}, [], [], False
    for side in sides:
        pairs = pairs_of(found[side], found["az"], sizes.match_pairings)
        if not pairs:
            raise ResultsError(f"{results.root}: no {side} run has an az run of its seed to play")
        outs, batched = _play(results, pairs, openings, seeds, batch_members)
        any_batched = any_batched or batched
        pairings = []
        for (side_run, az_run), out in zip(pairs, outs):
            pairings.append(dict(out["summary"], side=side, az_seed=az_run.seed))
            rows += [dict(r, side=side) for r in out["rows"]]
            names += [n for n in (side_run.name, az_run.name) if n not in names]
        played_by_side[side] = pairings
    sides_out = {}
    for side, pairings in played_by_side.items():
        agents = combine([p for p in pairings if p["seed"] == p["az_seed"]] or pairings)
        for agent in agents:
            table = crossed(pairings, agent)
            if table is not None:
                agents[agent]["crossed"] = table
        sides_out[side] = {"pairings": pairings, "agents": agents}
    summary = {
        "game": results.scale.game, "openings": [{"label": label, "fen": fen} for label, fen in openings],
        "seeds": seeds, "games_per_agent": 2 * len(openings) * len(seeds), "num_simulations": sizes.simulations,
        "max_plies": sizes.max_plies, "adjudication": ADJUDICATION, "margin": MARGIN,
        "sample_plies": SAMPLE_PLIES, "team_rules": list(TEAM_RULES), "colours": list(COLOURS),
        "score_units": "score: W 1, D 1/2, L 0 (winrate = 100 x score); opening scores: win 1, draw 0, loss -1",
        "match_pairings": sizes.match_pairings,
        "pairings": sides_out["azdb"]["pairings"],
        "agents": sides_out["azdb"]["agents"],
        "stderr_over": "seeds" if len({p["seed"] for p in sides_out["azdb"]["pairings"]}) > 1 else "games",
        "agents_over": "the same-seed pairings (each agent's 'crossed' entry: every pairing)",
        "members_batched": bool(any_batched),
    }
    if "control" in sides_out:
        summary["control"] = sides_out["control"]
    results.write_report("matches", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("matches")


__all__ = ["ARMS", "PairingPolicies", "evaluate", "evaluate_pairing", "pairing_policies", "play_pairings",
           "summarise_pairing", "num_match_seeds", "record", "opening_scores", "pairs_of", "crossed",
           "lookup_curve", "combine", "stderr"]
