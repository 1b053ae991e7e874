"""The classical strength ladder: alpha-beta at depth d against depth d + 1 (and d + 2), Elo ± SE.

Belle's and Thompson's experiment on our searcher: ``alphabeta:depth=d`` plays
``alphabeta:depth=d+1`` (``--gaps=1``; ``--gaps=1,2`` adds d against d + 2) from
``--starts`` start positions, each with both colours. Chess starts from the shared
4-move book (``--book``), Gardner chess from ``--opening_plies`` uniformly random plies
from the initial position (distinct positions, ``--seed``). Reported per pair: W/D/L,
score, Elo difference ± SE (``azdb_jax.ratings``); per depth: the ladder (depth 1 = 0,
adjacent differences summed, SEs in quadrature), maximum-likelihood ratings over every
game, and the searcher's nodes per second. Games still running at ``--max_plies``
count as draws (and are reported).

Trained players join with ``--agents=RUN[@STEP]`` (player 0 searching ``--simulations``
simulations, as ``experiments/gardner_curve.py`` loads it) against ``--agent_depths`` and
``--agent_specs`` (any searcher, e.g. a weaker rung ``alphabeta:depth=1:quiescence=0``);
``--extra_pairs`` links such rungs to the ladder with host matches; a side written
``engine:LIMIT`` is the game's reference engine at that limit (Fairy-Stockfish on Gardner
chess, Stockfish on chess: ``engine:depth=1``, ``engine:nodes=1000``), which places the
engine on the ladder, e.g. ``--extra_pairs=alphabeta:depth=3~engine:depth=1``.

The report (``--out``, JSON) is rewritten after every match and a rerun skips the
matches it already holds, so a long ladder can be stopped and resumed. ``--merge`` pools
several reports (e.g. two sets of starts, ``--seed``) into one.

    python experiments/classical_ladder.py --game=gardner_chess --depths=1,2,3,4,5,6 --starts=30 \\
        --out=eval/ladder_gardner.json
    python experiments/classical_ladder.py --game=chess --depths=1,2,3,4 --starts=30 --out=eval/ladder_chess.json
"""

import json
import pathlib
import re
import sys
import time
from typing import Any, Dict, List

import numpy as np
from absl import app, flags

from azdb_jax import arena, cli, ratings
from azdb_jax.cli import common_flags
from azdb_jax.classical import matches as host_matches
from azdb_jax.classical import player as player_lib
from azdb_jax.evaluation import matches
from azdb_jax.files import write_atomic

_GAME = common_flags.define_game("The game.", default="gardner_chess", choices=host_matches.GAMES)
_DEPTHS = flags.DEFINE_list("depths", ["1", "2", "3", "4"], "Search depths on the ladder.")
_GAPS = flags.DEFINE_list("gaps", ["1"], "Depth differences to play (1: adjacent depths).")
_STARTS = flags.DEFINE_integer("starts", 30, "Start positions per match (each played with both colours).",
                               lower_bound=1)
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 4, "Gardner: random plies from the initial position.",
                                      lower_bound=0)
_BOOK = flags.DEFINE_string("book", None, "Chess: FEN/EPD book (default: the shared 4mvs book).")
_MAX_PLIES = common_flags.define_max_plies("Games still running here count as draws.", default=300)
_SPEC = flags.DEFINE_string("spec", "", "Further spec fields for every searcher, e.g. ':tt=0'.")
_AGENTS = flags.DEFINE_list("agents", [], "Trained runs (RUN[@STEP]) whose player 0 joins the ladder.")
_AGENT_DEPTHS = flags.DEFINE_list("agent_depths", ["1", "2", "3"], "Depths the agents play.")
_AGENT_SPECS = flags.DEFINE_list("agent_specs", [], "Further searchers the agents play (full specs, e.g. "
                                 "alphabeta:depth=1:quiescence=0).")
_EXTRA = flags.DEFINE_list("extra_pairs", [], "Further host matches A~B between full specs, e.g. "
                           "alphabeta:depth=1:quiescence=0~alphabeta:depth=1 (links extra rungs to the ladder).")
_SIMULATIONS = common_flags.define_simulations("The agents' search simulations (default: each run's evaluation "
                                               "budget).")
_SEED = common_flags.define_seed("Seed of the Gardner start positions.")
_SHARD = flags.DEFINE_string("shard", None, "i/n: play only starts i, i + n, i + 2n, ... (run the n shards as "
                             "separate processes, then --merge their reports).")
_MERGE = flags.DEFINE_list("merge", [], "Instead of playing: merge these reports (games of the same pairing "
                           "pooled) into --out.")
_OUT = common_flags.define_out("The JSON report (rewritten after every match; resumed from).", required=True)


def ladder(report: Dict[str, Any]) -> Dict[str, Any]:
    """Adjacent-depth ladder and maximum-likelihood ratings of every agent in the report."""
    names = sorted({m[k] for m in report["matches"] for k in ("a", "b")},
                   key=lambda n: (not n.startswith(player_lib.PREFIX), n))
    plain = {n: int(n.rsplit("=", 1)[1]) for n in names if re.fullmatch(rf"{player_lib.PREFIX}:depth=\d+", n)}
    depth_names = sorted(plain, key=plain.get)  # the rungs alphabeta:depth=d, by depth
    anchor = depth_names[0] if depth_names else names[0]
    ids = {name: i for i, name in enumerate(names)}
    first, second, scores = [], [], []
    for match in report["matches"]:
        for result in match["results"]:
            first.append(ids[match["a"]])
            second.append(ids[match["b"]])
            scores.append((result + 1) / 2)
    fit = ratings.fit_elo_from_games(first, second, scores, len(names), anchor=ids[anchor])
    out = {"anchor": anchor, "mle": {n: [float(fit.ratings[ids[n]]), float(fit.stderr[ids[n]])] for n in names}}
    cumulative, variance, steps = 0.0, 0.0, {}
    by_pair = {(m["a"], m["b"]): m for m in report["matches"]}
    for lower, upper in zip(depth_names, depth_names[1:]):
        match = by_pair.get((upper, lower))
        if match is None:
            break
        cumulative += match["elo_clipped"]
        variance += match["elo_clipped_stderr"] ** 2
        steps[upper] = [cumulative, variance ** 0.5]
    out["adjacent"] = {depth_names[0]: [0.0, 0.0], **steps} if depth_names else {}
    return out


def merge_reports(reports_in: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One report from several (e.g. two sets of start positions): the games of the same
    pairing pooled, their tallies and Elo differences recomputed, nodes per second summed."""
    pooled: Dict[tuple, Dict[str, Any]] = {}
    nps: Dict[str, List[float]] = {}
    for report in reports_in:
        for match in report["matches"]:
            into = pooled.setdefault((match["a"], match["b"]), dict(a=match["a"], b=match["b"], results=[],
                                                                    seconds=0.0, unfinished=0, plies=0.0))
            into["results"] += match["results"]
            into["seconds"] += match.get("seconds", 0.0)
            into["unfinished"] += match["unfinished"]
            into["plies"] += match["mean_length"] * len(match["results"])
        for name, (nodes, seconds) in report.get("nps", {}).items():
            total = nps.setdefault(name, [0, 0.0])
            total[0] += nodes
            total[1] += seconds
    matches_out = []
    for match in pooled.values():
        results = np.asarray(match.pop("results"))
        summary = arena.tally(results, np.ones(results.shape, bool))
        plies = match.pop("plies")
        matches_out.append(dict(match, **{k: summary[k] for k in (
            "games", "wins", "draws", "losses", "score", "elo", "elo_stderr", "elo_clipped", "elo_clipped_stderr")},
            mean_length=plies / len(results), results=results.tolist()))
    merged = dict(matches=matches_out, nps=nps, merged_from=[r.get("command") for r in reports_in])
    merged["ladder"] = ladder(merged)
    return merged


def main(argv):
    del argv
    if _MERGE.value:
        merged = merge_reports([json.loads(pathlib.Path(p).read_text()) for p in _MERGE.value])
        write_atomic(pathlib.Path(_OUT.value), json.dumps(dict(merged, command=" ".join(sys.argv)), indent=1))
        return
    out = pathlib.Path(_OUT.value)
    report = host_matches.resumable_report(out, {"matches": [], "nps": {}})
    env_id = _GAME.value
    starts = host_matches.host_starts(env_id, _STARTS.value, plies=_OPENING_PLIES.value, seed=_SEED.value,
                                      book=_BOOK.value)
    if _SHARD.value:
        index, _, count = _SHARD.value.partition("/")
        if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
            raise ValueError(f"--shard={_SHARD.value!r} is not i/n with 0 <= i < n")
        starts = starts[int(index)::int(count)]
    report.update(game=_GAME.value, starts=starts, max_plies=_MAX_PLIES.value, command=" ".join(sys.argv))
    depths = sorted(int(d) for d in _DEPTHS.value)
    spec = lambda depth: f"{player_lib.PREFIX}:depth={depth}{_SPEC.value}"  # noqa: E731
    done = {(m["a"], m["b"]) for m in report["matches"]}
    pairs = [(d + g, d) for g in sorted(int(x) for x in _GAPS.value) for d in depths if d + g in depths]

    def save():
        report["ladder"] = ladder(report) if report["matches"] else {}
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(report, indent=1))

    pairs = [(spec(upper), spec(lower)) for upper, lower in pairs] + [_extra_pair(text) for text in _EXTRA.value]
    for a_spec, b_spec in pairs:
        a, b = _host_player(a_spec, env_id), _host_player(b_spec, env_id)
        try:
            if (a.name, b.name) in done:
                continue
            start = time.time()
            match = host_matches.play_host_match(a, b, starts, env_id=env_id, max_plies=_MAX_PLIES.value,
                                                 names=(a.name, b.name), progress=True)
        finally:
            for p in (a, b):
                if hasattr(p, "close"):
                    p.close()
        report["matches"].append(dict(host_matches.match_record(match), seconds=time.time() - start))
        for p in (a, b):
            if hasattr(p, "nodes_total"):  # the classical searcher's own count (engines report none)
                nps = report["nps"].setdefault(p.name, [0, 0.0])
                nps[0] += p.nodes_total
                nps[1] += p.seconds_total
        print(matches.format_summary(matches.summarize_match(match)), flush=True)
        save()
    opponents = [spec(int(d)) for d in _AGENT_DEPTHS.value] + list(_AGENT_SPECS.value)
    for run in _AGENTS.value:
        play_agent(run, opponents, starts, env_id, report, done, save)
    save()


ENGINE_PREFIX = "engine:"


def _extra_pair(text: str):
    sides = text.split("~")
    if len(sides) != 2 or not all(sides):
        raise ValueError(f"--extra_pairs: {text!r} is not A~B (two player specs)")
    for side in sides:
        if not side.startswith(ENGINE_PREFIX):
            player_lib.parse_spec(side)  # a clear error before any game is played
    return tuple(sides)


def _host_player(text: str, env_id: str):
    """A classical spec's searcher, or with ``engine:LIMIT`` the game's reference engine."""
    if text.startswith(ENGINE_PREFIX):
        from azdb_jax.skill import experiment  # pylint: disable=g-import-not-at-top

        limit = text[len(ENGINE_PREFIX):]
        return _NamedEngine(experiment.engine_player(env_id, limit), limit)
    return player_lib.player_from_spec(text)


class _NamedEngine:
    """A reference engine named with its limit (``Fairy-Stockfish 11.1 ... depth=1``), so that
    two levels of one engine are two players on the ladder."""

    def __init__(self, engine, limit: str):
        self.engine = engine
        self.name = engine.name if engine.name.endswith(limit) else f"{engine.name} {limit}"

    def __call__(self, board):
        return self.engine(board)

    def new_game(self):
        if hasattr(self.engine, "new_game"):
            self.engine.new_game()

    def close(self):
        self.engine.close()


def play_agent(run: str, opponents, starts, env_id: str, report, done, save) -> None:
    """Player 0 of ``run`` against the searchers ``opponents`` (specs).

    The player searches with ``--simulations`` simulations (default: the run's evaluation budget).
    """
    import jax  # pylint: disable=g-import-not-at-top

    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top

    path, step = common_flags.split_checkpoint(run)
    team = loading.load_team(path, step=step, num_simulations=_SIMULATIONS.value)
    if team.env.id != env_id:
        raise ValueError(f"--agents: {run} plays {team.env.id}, the ladder {env_id}")
    agent = team.player_policy(0)
    name = f"{team.name}/player0/sims{team.search_config.num_simulations}"
    for text in opponents:
        engine = player_lib.player_from_spec(text)
        if (name, engine.name) in done:
            continue
        start = time.time()
        match = matches.play_engine_match(agent, team.params, engine, starts, env=team.env,
                                          max_plies=_MAX_PLIES.value, rng_key=jax.random.PRNGKey(0),
                                          agent_name=name, progress=True)
        report["matches"].append(dict(host_matches.match_record(match), seconds=time.time() - start))
        print(matches.format_summary(matches.summarize_match(match)), flush=True)
        save()


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
