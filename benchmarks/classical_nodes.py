"""Nodes the classical search needs to complete a depth, with each technique on and off.

  python benchmarks/classical_nodes.py --game=gardner_chess --depth=5 --out=eval/nodes_gardner.json
  python benchmarks/classical_nodes.py --game=chess --depth=4 --out=eval/nodes_chess.json

On ``--positions`` fixed positions (chess: the first positions of the shared 4-move
book; Gardner chess: distinct positions after 6 random plies, seed 1), each
configuration searches every position to ``--depth`` with a fresh searcher (empty
table, killers, history) and no endgame tables. Configurations: ``all`` (every technique
of ``SearchOptions`` on, singular extensions off), one technique switched off at a time
(``-name``), ``-ordering`` (table move, MVV/LVA, killers, history and the root's
iterative-deepening order all off), ``+singular`` (singular extensions on) and
``minimax`` (no alpha-beta pruning, no table and no quiescence: every move with the full
window, static evaluation at the horizon; compare it with ``-quiescence``). Without
alpha-beta the quiescence search is itself a full-width tree of capture sequences, so
``-alpha_beta`` mostly reaches the cap.
A search that reaches ``--node_cap`` nodes is stopped and counted as the cap (reported
as a lower bound; each configuration records the cap it ran under). Per configuration: total and median nodes, the geometric mean of
nodes / nodes of ``all`` over the positions, seconds, nodes per second, and how often
the best move and the score equal ``all``'s.

The report is rewritten after every configuration; a rerun keeps the configurations it
holds. Configurations can run in separate processes (``--configs``, one report each),
merged afterwards with ``--merge``.
"""

import dataclasses
import json
import pathlib
import statistics
import sys
import time

import numpy as np
from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.classical import matches as host_matches
from azdb_jax.classical import search
from azdb_jax.files import write_atomic

_GAME = common_flags.define_game("The game.", default="gardner_chess", choices=host_matches.GAMES)
_DEPTH = flags.DEFINE_integer("depth", 5, "Depth each search completes.", lower_bound=1)
_POSITIONS = flags.DEFINE_integer("positions", 30, "Fixed positions.", lower_bound=1)
_NODE_CAP = flags.DEFINE_integer("node_cap", 500_000, "Nodes at which a search is stopped.", lower_bound=1)
_CONFIGS = flags.DEFINE_list("configs", [], "Configurations to run (default: all).")
_MERGE = flags.DEFINE_list("merge", [], "Instead of searching: merge reports of the same positions and depth "
                           "(configurations run in separate processes, --configs) into --out.")
_OUT = common_flags.define_out("JSON report.", required=True)

TECHNIQUES = ("alpha_beta", "iterative_deepening", "root_ordering", "tt_move", "mvv_lva", "killers", "history",
              "transposition_table", "quiescence")
ORDERING = ("root_ordering", "tt_move", "mvv_lva", "killers", "history")


def configurations():
    """{name: SearchOptions} of the benchmark (module docstring)."""
    base = dict(endgame_tables=False)
    configs = {"all": search.SearchOptions(**base)}
    for name in TECHNIQUES:
        configs[f"-{name}"] = search.SearchOptions(**base, **{name: False})
    configs["-ordering"] = search.SearchOptions(**base, **{name: False for name in ORDERING})
    configs["+singular"] = search.SearchOptions(**base, singular_extensions=True)
    configs["minimax"] = search.SearchOptions(**base, alpha_beta=False, transposition_table=False, quiescence=False)
    return configs


def run_config(options: search.SearchOptions, boards, depth: int, cap: int):
    rows = []
    for position in boards:
        searcher = search.Searcher(options)
        result = searcher.search(position.copy(), search.Limits(depth=depth, nodes=cap))
        rows.append(dict(nodes=result.nodes, seconds=result.seconds, depth=result.depth,
                         capped=result.nodes >= cap and result.depth < depth,
                         move=position.uci(result.best_move), score=result.score,
                         extensions=searcher.extensions))
    return rows


def summary(rows, reference):
    nodes = np.array([r["nodes"] for r in rows], float)
    seconds = sum(r["seconds"] for r in rows)
    out = dict(total_nodes=int(nodes.sum()), median_nodes=float(statistics.median(nodes)), seconds=seconds,
               nps=float(nodes.sum() / seconds) if seconds else 0.0, capped=sum(r["capped"] for r in rows),
               extensions=sum(r["extensions"] for r in rows))
    if reference is not None:
        base = np.array([r["nodes"] for r in reference], float)
        out["ratio_to_all_geomean"] = float(np.exp(np.mean(np.log(nodes / base))))
        out["same_move_as_all"] = sum(r["move"] == b["move"] for r, b in zip(rows, reference))
        out["same_score_as_all"] = sum(r["score"] == b["score"] for r, b in zip(rows, reference))
    return out


def merge_reports(parts):
    """One report from reports of the same positions and depth holding different configurations;
    every summary is recomputed against the merged ``all``."""
    first = parts[0]
    for part in parts[1:]:
        if part["positions"] != first["positions"] or part["depth"] != first["depth"]:
            raise ValueError("--merge: the reports searched different positions or depths")
    configs = {}
    for part in parts:
        configs.update(part["configs"])
    if "all" not in configs:
        raise ValueError("--merge: no report holds the configuration 'all'")
    for name, config in configs.items():
        config["summary"] = summary(config["rows"], None if name == "all" else configs["all"]["rows"])
    return dict(first, configs={"all": configs.pop("all"), **configs}, merged_from=[p["command"] for p in parts])


def main(argv):
    del argv
    if _MERGE.value:
        merged = merge_reports([json.loads(pathlib.Path(p).read_text()) for p in _MERGE.value])
        write_atomic(pathlib.Path(_OUT.value), json.dumps(dict(merged, command=" ".join(sys.argv)), indent=1))
        return
    out = pathlib.Path(_OUT.value)
    report = host_matches.resumable_report(out, {"configs": {}})
    fens, boards = host_matches.fixed_positions(_GAME.value, _POSITIONS.value)
    report.update(game=_GAME.value, depth=_DEPTH.value, node_cap=_NODE_CAP.value, positions=fens,
                  command=" ".join(sys.argv))
    configs = configurations()
    chosen = _CONFIGS.value or list(configs)
    unknown = [c for c in chosen if c not in configs]
    if unknown:
        raise ValueError(f"--configs: unknown {unknown}; configurations: {', '.join(configs)}")
    for name in ["all"] + [c for c in chosen if c != "all"]:
        if name in report["configs"]:
            continue
        start = time.time()
        rows = run_config(configs[name], boards, _DEPTH.value, _NODE_CAP.value)
        reference = report["configs"].get("all", {}).get("rows") if name != "all" else None
        report["configs"][name] = dict(options=dataclasses.asdict(configs[name]), rows=rows, node_cap=_NODE_CAP.value,
                                       summary=summary(rows, reference), wall_seconds=time.time() - start)
        print(name, json.dumps(report["configs"][name]["summary"]), flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
