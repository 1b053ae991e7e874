"""The reproduction's scales, results folder and Gardner start positions."""

import dataclasses
import importlib
import json
import pathlib
import re
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest

from azdb_jax import games
from azdb_jax import presets, reproduction, runs
from azdb_jax.config import StartPositionsConfig
from azdb_jax.data import gardner as gardner_data
from azdb_jax.envs import gardner_interop
from azdb_jax import start_positions as sp
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.reproduction import parallel, scales


def _data_rows(name):
    """Puzzle rows of a packaged Gardner set, counted from the file itself."""
    lines = gardner_data.packaged_path(name).read_text().splitlines()
    body = [line for line in lines if line.strip() and not line.startswith("#")]
    assert body[0].startswith("PuzzleId,")
    return body[1:]


# ------------------------------------------------------------------ scales


@pytest.mark.parametrize("name", list(scales.SCALES))
def test_every_arm_has_equal_compute_and_its_own_team(name):
    scale = scales.get_scale(name)
    specs = scales.run_specs(scale)
    assert [s.name for s in specs] == [f"{s.arm}_s{s.seed}" for s in specs]
    assert {s.arm for s in specs} == set(scale.all_arms) and set(scale.arms) <= set(scales.ARMS)
    budgets = {(s.config.run.num_iterations, s.config.run.learner_steps, s.config.selfplay.num_games,
                s.config.selfplay.num_plies, s.config.search.num_simulations) for s in specs}
    assert len(budgets) == 1  # equal compute per arm
    for spec in specs:
        team = spec.config.team
        assert spec.config.env.name == scale.game and spec.config.run.seed == spec.seed
        variant = scale.variant(spec.arm)
        if variant is not None:  # a sweep's setting: the azdb team with its own λ
            assert variant.base == "azdb" and team.num_players == scale.num_players
            assert f"team.lam={team.lam}" in variant.overrides and team.lam < 1
        elif spec.arm == "azdb":
            assert (team.num_players, team.lam) == (scale.num_players, scale.lam) and team.lam < 1
        elif spec.arm == "control":
            assert (team.num_players, team.lam) == (scale.num_players, 1.0)
        else:
            assert (team.num_players, team.lam) == (1, 1.0)
        starts = spec.config.start_positions
        assert bool(starts.sources) == spec.arm.startswith("az_starts")
        if spec.arm == "az_starts_random":
            assert (starts.split, starts.test_count) == ("random", scale.test_count)
        if spec.arm == "az_starts_ood":
            assert (starts.split, starts.heldout_group) == ("group", scale.heldout_group)
        if spec.arm.startswith("az_starts"):
            assert spec.config.env.max_pieces == (32 if scale.game == "chess" else 0)
    # Table 1 rows 2 and 5-7: every puzzle at clock 0, then each row adds one thing.
    rows = {s.arm: s.config for s in specs if s.seed == 0}
    if "az_starts_halfmove" in rows:
        row2, row5, row6, row7 = (rows[a] for a in ("az_starts", *scales.TABLE1_LOWER))
        assert row2.start_positions.split == "none" and row2.start_positions.halfmove_clocks == (0,)
        assert not row2.start_positions.intermediate and row5.start_positions.intermediate
        assert row5.selfplay == row2.selfplay
        assert (row6.selfplay.sample_plies, row6.selfplay.sample_temperature) == (15, 10.0)
        assert row6.start_positions == row5.start_positions and row7.selfplay == row6.selfplay
        assert row7.start_positions.halfmove_clocks == (0, 20, 40, 60, 80)
    elif scale.arms == scales.PACK_ARMS:  # the accelerator pack: AZ, AZdb and control only, 16 or 2 fresh seeds
        assert name in ("cpu16", "lease16", "ci_pack") and set(scale.groups) == set(scales.PACK_GROUPS)
        assert not set(scale.seeds) & set(scales.get_scale("cpu").seeds + scales.get_scale("cpu_sweep").seeds)
    elif not scale.variants:  # the paper's chess list publishes no solution lines: no intermediate positions
        assert name == "chess_fast" and not set(scales.TABLE1_LOWER) & set(rows)


def test_cpu_scale_azdb_arm_is_the_gardner_cpu_preset():
    preset = presets.get_preset("gardner_cpu")
    cpu = scales.get_scale("cpu")
    assert not set(cpu.seeds) & set(scales.get_scale("cpu_sweep").seeds)  # the claims' seeds chose nothing
    spec = next(s for s in scales.run_specs(cpu) if s.name == "azdb_s3")
    assert spec.config.team == preset.team and spec.config.network == preset.network
    assert spec.config.search == preset.search and spec.config.selfplay == preset.selfplay
    assert spec.config.diversity == preset.diversity and spec.config.diversity.l0 == presets.GARDNER_L0
    assert spec.config.run.seed == 3 and spec.config.run.num_iterations == 60


def test_unknown_scale_and_arm_are_named():
    with pytest.raises(ValueError, match="unknown scale 'gpu'"):
        scales.get_scale("gpu")
    with pytest.raises(ValueError, match="unknown arm 'alphago'"):
        scales.arm_config(scales.get_scale("ci"), "alphago", 0)
    with pytest.raises(ValueError, match="unknown figure group"):
        reproduction.group_module("fig99")


# ------------------------------------------------------------------ results folder


def test_results_folder_manifest_reports_and_figures(tmp_path):
    with pytest.raises(reproduction.ResultsError, match="manifest.json not found"):
        reproduction.Results(tmp_path)
    results = reproduction.Results(tmp_path, "ci")
    assert [r.name for r in results.runs("azdb", trained=False)] == ["azdb_s0"]
    assert results.runs("azdb") == []  # nothing finished
    with pytest.raises(reproduction.ResultsError, match="no finished run of arm 'az'"):
        results.first_run("az")
    with pytest.raises(reproduction.ResultsError, match="has no run 'azdb_s7'"):
        results.run("azdb_s7")

    results.write_report("openings", {"distinct": 1.5}, [{"position": 0, "moves": 2}], runs=["azdb_s0"], seconds=3.21)
    assert results.read_report("openings") == {"summary": {"distinct": 1.5}, "rows": [{"position": 0, "moves": 2}]}
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["scale"] == "ci" and manifest["game"] == "gardner_chess"
    assert manifest["figures"]["openings"] == {"report": "eval/openings.json", "runs": ["azdb_s0"], "seconds": 3.2}
    assert reproduction.Results(tmp_path).scale.name == "ci"  # the scale comes from the manifest
    with pytest.raises(reproduction.ResultsError, match="holds scale 'ci', not 'cpu'"):
        reproduction.Results(tmp_path, "cpu")
    with pytest.raises(reproduction.ResultsError, match="experiments/reproduce.py"):
        results.read_report("matches")

    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    fig, ax = plt.subplots()
    ax.bar([0, 1], [0.25, 0.75])
    path = results.save_figure(fig, "fig0_test", {"bars": np.array([0.25, 0.75])})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(path.with_suffix(".json").read_text()) == {"bars": [0.25, 0.75]}

    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(reproduction.ResultsError, match="not valid JSON"):
        reproduction.Results(tmp_path)


def test_match_games_is_an_evaluation_size_only(tmp_path):
    script = pathlib.Path(__file__).resolve().parents[1] / "experiments" / "reproduce.py"
    for args, message in ((["--stages=train,eval", "--match_games=8"], "--match_games: an evaluation size"),
                          (["--stages=eval", "--match_games=0"], "--match_games=0: 0 is not a positive integer")):
        done = subprocess.run([sys.executable, str(script), "--scale=ci", f"--out={tmp_path}", *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and message in done.stderr, done.stderr
    assert not (tmp_path / "manifest.json").exists()  # refused before anything is written


def test_trained_ci_folder_records_every_run(ci_results):
    results = reproduction.Results(ci_results)
    manifest = results.read_manifest()
    assert sorted(manifest["runs"]) == sorted(s.name for s in results.specs)
    for name, entry in manifest["runs"].items():
        assert entry["done"] and entry["iterations"] == 2 and entry["train_seconds"] > 0
        assert results.run(name).latest_step == 2
        # Every run's network was trained (the replay held a batch by its last iteration):
        # the puzzle-start arms would otherwise all be the same initial network.
        metrics = [json.loads(line) for line in (results.run(name).workdir / "metrics.jsonl").read_text().splitlines()]
        assert [m["learner_ready"] for m in metrics if m.get("kind") == "train"][-1] == 1.0, name
    # The out-of-distribution run held out exactly the mate-in-3 set and trained on the rest.
    ood = json.loads((results.run("az_starts_ood_s0").workdir / "start_positions" / "manifest.json").read_text())
    assert {p["group"] for p in ood["test"]} == {"gardner:mate_in_3"}
    assert len(ood["test"]) == len(_data_rows("mate_in_3"))
    assert len(ood["train"]) == sum(len(_data_rows(s)) for s in ("mate_in_1", "mate_in_2", "only_move"))
    random_split = json.loads(
        (results.run("az_starts_random_s0").workdir / "start_positions" / "manifest.json").read_text())
    assert len(random_split["test"]) == results.scale.test_count


@pytest.mark.slow
def test_runs_trained_in_worker_processes_equal_runs_trained_in_process(tmp_path, capsys):
    alone = reproduction.Results(tmp_path / "alone", "ci")
    reproduction.train_runs(alone, ["az_s0"], progress=False)
    both = reproduction.Results(tmp_path / "both", "ci")
    reproduction.train_runs(both, ["az_s0", "az_starts_random_s0"], progress=False, jobs=2)
    manifest = both.read_manifest()
    assert sorted(manifest["runs"]) == ["az_s0", "az_starts_random_s0"]
    for name in ("az_s0", "az_starts_random_s0"):
        info = both.run(name)
        assert info.done and manifest["runs"][name]["done"] and manifest["runs"][name]["train_seconds"] > 0
        assert "azdb_jax.reproduction train" in (info.workdir / "train.log").read_text()
    # The same run, in a worker or in this process: the same records, iteration by iteration.
    records = [runs.read_metrics(r.run("az_s0").workdir, wall_clock=False) for r in (alone, both)]
    assert [r["iteration"] for r in records[1] if r["kind"] == "train"] == [1, 2]
    assert records[0] == records[1]

    # Resumed from before its last recorded iteration: the bar starts from what the resume
    # keeps (the records past the checkpoint are dropped and trained again), never counting
    # down. (The ci scale does not checkpoint its replay buffer, so iteration 2 is trained
    # again from an empty buffer: only iteration 1's record is kept as it was.)
    info = both.run("az_s0")
    shutil.rmtree(info.workdir / "checkpoints" / "2")
    assert parallel.finished_iterations(info.workdir) == 2 and parallel.resumed_iterations(info.workdir) == 1
    capsys.readouterr()
    reproduction.train_runs(both, ["az_s0"], progress=True, jobs=2)
    bar = capsys.readouterr().err
    assert " 1/2 [" in bar and " 2/2 [" in bar, bar
    assert re.search(r"(?<!\w)-\d", bar) is None, bar  # no negative rate or time left
    resumed = runs.read_metrics(info.workdir, wall_clock=False)
    assert [r["iteration"] for r in resumed if r["kind"] == "train"] == [1, 2] and resumed[0] == records[0][0]

    # A run that cannot resume (its checkpoint damaged): the error names the run and its
    # console, whose end tells why; the folder's other runs are untouched.
    info = both.run("az_starts_random_s0")
    shutil.rmtree(info.workdir / "checkpoints" / "2")
    meta = info.workdir / "checkpoints" / "1" / "meta" / "metadata"
    meta.write_text(meta.read_text()[:20])
    with pytest.raises(RuntimeError, match=r"run az_starts_random_s0 failed \(its console: .*train.log\)"):
        reproduction.train_runs(both, ["az_starts_random_s0"], progress=False, jobs=2)
    assert "checkpoints/1" in (info.workdir / "train.log").read_text().split("=== ")[-1]
    assert both.run("az_s0").done
    with pytest.raises(ValueError, match="jobs must be an int >= 1"):
        reproduction.train_runs(both, ["az_s0"], jobs=0)
    changed = reproduction.Results(tmp_path / "changed", dataclasses.replace(scales.get_scale("ci"), seeds=(0, 1)))
    with pytest.raises(ValueError, match="named scales"):
        reproduction.train_runs(changed, ["az_s1"], jobs=2)


# ------------------------------------------------------------------ Gardner start positions


def test_gardner_sources_load_every_puzzle_with_its_group():
    records = games.get("gardner_chess").start_positions.load_records("gardner:mate_in_2")
    rows = _data_rows("mate_in_2")
    assert len(records) == len(rows)
    assert {r.group for r in records} == {"gardner:mate_in_2"}
    first = rows[0].split(",")
    # The puzzle position is the one after the opponent's move Moves[0].
    board = GardnerBoard(first[1])
    moves = first[2].split()
    board.push_uci(moves[0])
    assert records[0].fen == board.fen() and records[0].line == tuple(moves[1:])
    with pytest.raises(ValueError, match="packaged Gardner sets are"):
        games.get("gardner_chess").start_positions.load_records("gardner:mate_in_9")
    with pytest.raises(FileNotFoundError, match="positions file not found"):
        games.get("gardner_chess").start_positions.load_records("/nonexistent/puzzles.csv")


def test_gardner_line_positions_lead_to_the_mate(fsf_path):
    """The position after the solver's first move and the reply is a mate in one (Fairy-Stockfish)."""
    import chess.engine  # pylint: disable=g-import-not-at-top

    from azdb_jax.evaluation import fairy_stockfish  # pylint: disable=g-import-not-at-top

    game = games.get("gardner_chess").start_positions
    with fairy_stockfish.FairyStockfish(fsf_path) as engine:
        for record in game.load_records("gardner:mate_in_2")[:6]:
            positions = game.line_positions(record.fen, record.line)
            assert len(positions) == 1  # the solver moves again once, then mates
            assert positions[0] == engine.engine_fen(record.fen, record.line[:2])
            info = engine.analyse(positions[0], limit=chess.engine.Limit(depth=4))
            assert info.lines[0].score.mate() == 1


def test_gardner_start_states_have_the_engines_legal_moves(fsf_path):
    import pgx  # pylint: disable=g-import-not-at-top

    from azdb_jax.evaluation import fairy_stockfish  # pylint: disable=g-import-not-at-top

    config = StartPositionsConfig(sources=("gardner:only_move",), split="none")
    positions = sp.load_start_positions("gardner_chess", config)
    fens = [p.fen for p in positions.train[:8]]
    states = games.get("gardner_chess").start_positions.states_from_fens(pgx.make("gardner_chess"), fens)
    with fairy_stockfish.FairyStockfish(fsf_path) as engine:
        for i, fen in enumerate(fens):
            state = jax.tree.map(lambda x, i=i: x[i], states)
            assert sorted(gardner_interop.legal_uci_moves(state)) == sorted(engine.legal_moves(fen))


def test_every_figure_group_has_its_module_figures_and_notebook():
    colabs = pathlib.Path(__file__).resolve().parents[1] / "colabs"
    for group in reproduction.GROUPS:
        module = reproduction.group_module(group)
        assert callable(module.evaluate) and module.ARMS and set(module.ARMS) <= set(reproduction.ARMS), group
        assert importlib.import_module(f"azdb_jax.figures.{group}").__all__, group
        notebook = json.loads((colabs / f"{group}.ipynb").read_text())
        source = "".join("".join(cell["source"]) for cell in notebook["cells"])
        assert f'"{group}")' in source and "AZDB_RESULTS" in source, group
        runners = [t for t in (pathlib.Path(__file__).parent).glob("test_repro_*.py")
                   if f'COLABS / "{group}.ipynb"' in t.read_text()]
        assert runners, f"no test executes colabs/{group}.ipynb"
    with pytest.raises(ValueError, match="unknown figure group"):
        reproduction.group_module("heatmaps")
