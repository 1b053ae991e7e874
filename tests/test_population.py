"""Populations (azdb_jax.population): K seeds of one configuration as one program.

Checked against the plain runs (``runner.train``) of the same seeds: a population of one
is the plain run bit for bit; each member of a larger one is the plain run of its seed at
iteration 1 within float rounding; members are run directories every reader loads; a
population stopped (also while saving) and resumed equals the uninterrupted one.
"""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import distributed, population, runner, runs

from conftest import trained_run_config

# Per-iteration wall times differ between any two runs.
_TIMES = ("iteration_seconds", "eval_seconds")


def _config(iterations: int = 5):
    return config_lib.apply_overrides(trained_run_config("tic_tac_toe"), [
        f"run.num_iterations={iterations}", "run.eval_every=2", "run.checkpoint_every=2", "run.keep_checkpoints=3"])


def _records(run: pathlib.Path):
    out = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for record in out:
        for name in _TIMES:
            record.pop(name, None)
    return out


@pytest.fixture(scope="module")
def plain_runs(tmp_path_factory):
    """The plain runs of seeds 0 and 1 (5 iterations)."""
    root = tmp_path_factory.mktemp("plain")
    for seed in (0, 1):
        runner.train(population.member_config(_config(), seed), root / f"seed_{seed}", progress=False)
    return root


def test_a_population_of_one_is_the_plain_run_bit_for_bit(plain_runs, tmp_path):
    population.train(_config(), tmp_path, [0], progress=False)
    member = population.member_dir(tmp_path, 0)
    # Every metric and evaluation of 5 iterations, bit for bit but the gradient's norm: a
    # diagnostic that the member's program reduces in another order (29.795383 against
    # 29.795385 plain at iteration 2 on some x86 CPUs, equal on others), while the gradient
    # it is the norm of moves the parameters bit for bit (below).
    mine_records, plain_records = _records(member), _records(plain_runs / "seed_0")
    mine_norms = [record.pop("grad_norm", None) for record in mine_records]
    plain_norms = [record.pop("grad_norm", None) for record in plain_records]
    assert mine_records == plain_records
    assert [n is None for n in mine_norms] == [n is None for n in plain_norms]
    assert [n for n in mine_norms if n is not None] == pytest.approx([n for n in plain_norms if n is not None], rel=1e-6)
    mine, plain = runs.load_run(member)[2], runs.load_run(plain_runs / "seed_0")[2]
    for a, b in zip(jax.tree.leaves(mine), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.slow
def test_members_are_the_plain_runs_of_their_seeds_and_load_as_runs(plain_runs, tmp_path):
    summary = population.train(_config(), tmp_path, [0, 1], progress=False)
    assert [m["seed"] for m in summary["members"]] == [0, 1]
    manifest = population.read_manifest(tmp_path)
    assert manifest["seeds"] == [0, 1]
    assert population.member_dirs(tmp_path) == [tmp_path / "seed_0", tmp_path / "seed_1"]
    for seed in (0, 1):
        member = population.member_dir(tmp_path, seed)
        assert runs.load_run_config(member).run.seed == seed
        mine, plain = _records(member), _records(plain_runs / f"seed_{seed}")
        assert [(r["kind"], r["iteration"]) for r in mine] == [(r["kind"], r["iteration"]) for r in plain]
        first_mine = next(r for r in mine if r["kind"] == "train")
        first_plain = next(r for r in plain if r["kind"] == "train")
        for name, value in first_plain.items():  # iteration 1: the same games, learner sums in another order
            expected = value if isinstance(value, str) else pytest.approx(value, rel=1e-5, abs=1e-6)
            assert first_mine[name] == expected, name
        run_config, _, state = runs.load_run(member, 4)  # a member is a run
        assert int(state.iteration) == 4 and run_config.run.seed == seed
        assert runs.load_agent(member, 4).num_players == 3
    # The two members are different runs (their seeds), not one run twice.
    assert _records(tmp_path / "seed_0")[0] != _records(tmp_path / "seed_1")[0]


@pytest.mark.slow
def test_vmap_members_are_the_plain_runs_of_their_seeds(plain_runs, tmp_path):
    """``member_map="vmap"`` (an accelerator's ``auto``; batched convolutions, both branches
    of every ``cond``): each member's first iteration is its seed's plain run within float
    rounding."""
    population.train(_config(1), tmp_path, [0, 1], member_map="vmap", progress=False)
    assert population.read_manifest(tmp_path)["member_maps"] == ["vmap", "vmap"]
    for seed in (0, 1):
        mine = next(r for r in _records(population.member_dir(tmp_path, seed)) if r["kind"] == "train")
        plain = next(r for r in _records(plain_runs / f"seed_{seed}") if r["kind"] == "train")
        assert mine.keys() == plain.keys()
        for name, value in plain.items():
            expected = value if isinstance(value, str) else pytest.approx(value, rel=1e-5, abs=1e-6)
            assert mine[name] == expected, (seed, name)


@pytest.mark.slow
def test_a_stopped_population_resumes_exactly_also_when_stopped_while_saving(tmp_path):
    config = _config()
    population.train(config, tmp_path / "whole", [0, 1], progress=False)
    population.train(config, tmp_path / "stopped", [0, 1], stop_after=4, progress=False)
    # Stopped while saving iteration 4: member 1's checkpoint of 4 was never written.
    stopped = tmp_path / "stopped"
    shutil.rmtree(population.member_dir(stopped, 1) / "checkpoints" / "4")
    population.train(config, stopped, [0, 1], resume=True, progress=False)
    for seed in (0, 1):
        assert _records(population.member_dir(stopped, seed)) == _records(population.member_dir(tmp_path / "whole",
                                                                                                  seed))
    with pytest.raises(ValueError, match="seeds"):
        population.train(config, stopped, [0, 2], resume=True, progress=False)


@pytest.mark.slow  # four trainings; the population of one above keeps the quick tier's check
def test_runs_trained_apart_resume_as_one_population(plain_runs, tmp_path):
    """Named run folders (a results folder's), stopped at one checkpoint as plain runs,
    continue as one population and end as the plain runs of their seeds."""
    folders = [tmp_path / "runs" / f"az_s{seed}" for seed in (0, 1)]
    for seed, folder in zip((0, 1), folders):
        runner.train(population.member_config(_config(), seed), folder, stop_after=2, progress=False)
    population.train(_config(), tmp_path / "runs" / "az_population", [0, 1], runs=folders, resume=True,
                     progress=False)
    assert population.member_dirs(tmp_path / "runs" / "az_population") == [f.resolve() for f in folders]
    for seed, folder in zip((0, 1), folders):
        mine, plain = _records(folder), _records(plain_runs / f"seed_{seed}")
        assert [(r["kind"], r["iteration"]) for r in mine] == [(r["kind"], r["iteration"]) for r in plain]
        for a, b in zip(mine, plain):
            for name, value in b.items():
                expected = value if isinstance(value, str) else pytest.approx(value, rel=1e-5, abs=1e-6)
                assert a[name] == expected, (seed, a["iteration"], name)


def _arm(config, lam: float, l0: float):
    return config_lib.apply_overrides(config, [f"team.lam={lam}", f"diversity.l0={l0}"])


@pytest.mark.slow
def test_arms_of_one_shape_train_as_one_population(plain_runs, tmp_path):
    """AZdb (λ = 0.5), its λ = 1 control on the same seed and a third arm with another λ and
    ℓ0 as members of one program: each member's records (training and evaluation, 5
    iterations) are its own plain run's, and each member's run is its own arm's."""
    azdb = _config()
    arms = [azdb, _arm(azdb, 1.0, 0.8), _arm(azdb, 0.7, 0.3)]
    seeds = [0, 0, 1]
    plain = [plain_runs / "seed_0", tmp_path / "plain_control", tmp_path / "plain_third"]
    for config, seed, folder in list(zip(arms, seeds, plain))[1:]:
        runner.train(population.member_config(config, seed), folder, progress=False)
    folders = [tmp_path / "runs" / name for name in ("azdb_s0", "control_s0", "third_s1")]
    population.train(azdb, tmp_path / "runs" / "arms_population", seeds, runs=folders, configs=arms, progress=False)
    manifest = population.read_manifest(tmp_path / "runs" / "arms_population")
    assert [a["team.lam"] for a in manifest["arms"]] == [0.5, 1.0, 0.7]
    for config, seed, folder, reference in zip(arms, seeds, folders, plain):
        loaded = runs.load_run_config(folder)
        assert (loaded.team.lam, loaded.diversity.l0, loaded.run.seed) == (config.team.lam, config.diversity.l0, seed)
        mine, theirs = _records(folder), _records(reference)
        assert [(r["kind"], r["iteration"]) for r in mine] == [(r["kind"], r["iteration"]) for r in theirs]
        for a, b in zip(mine, theirs):
            for name, value in b.items():
                # Float sums in another order (the members' programs batched): every record agrees to
                # 1.2e-6 but the third arm's gradient norm at iteration 5 (190.724 plain, 190.719 here, 2.6e-5
                # apart), a norm of large gradients that a last-bit difference moves further.
                rel = 1e-4 if name == "grad_norm" else 1e-5
                expected = value if isinstance(value, str) else pytest.approx(value, rel=rel, abs=1e-6)
                assert a[name] == expected, (folder.name, a["iteration"], name)
    control = _records(folders[1])
    assert all(r["reward_d_per_move"] == 0.0 and r["mean_reward_d"] == 0.0 for r in control if r["kind"] == "train")
    assert any(r["mean_reward_d"] != 0.0 for r in _records(folders[0]) if r["kind"] == "train")
    assert runs.load_agent(folders[1], 4).lambdas == (1.0, 1.0, 1.0)
    # Arms must share every shape but λ and ℓ0.
    with pytest.raises(ValueError, match="differs from the population's in team.num_players"):
        population.train(azdb, tmp_path / "bad", [0, 1], configs=[azdb, config_lib.apply_overrides(
            azdb, ["team.num_players=2"])], progress=False)
    control = runs.build_components(arms[1])
    with pytest.raises(ValueError, match="no λ_i < 1"):  # its program computes no intrinsic reward to weigh
        control.with_arm(population.arm_values(arms[:1]))
    assert population.same_shape(arms[0], arms[2]) and not population.same_shape(
        arms[0], config_lib.apply_overrides(azdb, ["selfplay.num_games=4"]))
    with pytest.raises(ValueError, match="repeat a directory"):
        population.train(azdb, tmp_path / "bad", [0, 0], runs=[tmp_path / "x", tmp_path / "x"],
                         configs=arms[:2], progress=False)


def test_member_maps_and_bad_input(tmp_path):
    assert population.member_maps("auto", backend="cpu") == ("map", "groups")
    assert population.member_maps("auto", backend="gpu") == ("vmap", "vmap")
    assert population.member_maps("vmap") == ("vmap", "vmap")
    assert population.member_maps("map, unroll") == ("map", "unroll")
    with pytest.raises(ValueError, match="member_map"):
        population.member_maps("pmap")
    with pytest.raises(ValueError, match="runs only the learner"):
        population.member_maps("groups")
    # A member's state travels between processes as the bits of its values (here one
    # process, so only the round trip through the unsigned views): -0.0 stays -0.0.
    sent = {"x": np.array([-0.0, 1.5], np.float32), "b": np.array([True, False]), "k": np.uint32(7)}
    got = distributed.broadcast_exact(sent, True)
    assert np.signbit(got["x"][0]) and got["x"].dtype == np.float32 and got["x"][1] == 1.5
    assert got["b"].tolist() == [True, False] and got["k"] == 7 and got["k"].shape == ()
    with pytest.raises(ValueError, match="float64"):
        distributed.broadcast_exact({"x": np.zeros(2, np.float64)}, True)
    with pytest.raises(ValueError, match="repeats a seed"):
        population.train(_config(), tmp_path, [3, 3], progress=False)
    with pytest.raises(FileNotFoundError, match="no population"):
        population.read_manifest(tmp_path)
    (tmp_path / population.MANIFEST).write_text("{not json")
    with pytest.raises(ValueError, match="line 1"):
        population.read_manifest(tmp_path)


REPO = pathlib.Path(__file__).resolve().parents[1]


def _train_cli(*args):
    return [sys.executable, str(REPO / "experiments" / "train.py"), "--preset=demo", "--nosummary", *args]


@pytest.mark.slow
def test_a_population_killed_mid_run_resumes_as_if_never_stopped(tmp_path):
    """``kill -9`` of ``azdb-train --seeds=0,1,2,3`` between or during checkpoints, then
    ``--resume``: every member's records equal those of the population never stopped."""
    from azdb_jax import presets  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(_config(24), ["run.eval_every=4"])
    preset = runs.flatten_config(config_lib.to_dict(presets.get_preset("demo")))
    flat = runs.flatten_config(config_lib.to_dict(config))
    overrides = [f"--override={name}={json.dumps(value)}" for name, value in flat.items() if preset[name] != value]
    seeds = "--seeds=0,1,2,3"
    whole = subprocess.run(_train_cli(*overrides, seeds, f"--workdir={tmp_path / 'whole'}"), capture_output=True,
                           text=True, timeout=900)
    assert whole.returncode == 0, whole.stderr[-3000:]
    killed = tmp_path / "killed"
    process = subprocess.Popen(_train_cli(*overrides, seeds, f"--workdir={killed}"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while not (population.member_dir(killed, 3) / "checkpoints" / "8").exists():
            assert process.poll() is None and time.monotonic() < deadline, "the run ended before it was killed"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not (population.member_dir(killed, 0) / "checkpoints" / "24").exists()
    resumed = subprocess.run(_train_cli(seeds, f"--workdir={killed}", "--resume"), capture_output=True, text=True,
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for seed in range(4):
        assert _records(population.member_dir(killed, seed)) == _records(population.member_dir(tmp_path / "whole",
                                                                                                 seed)), seed


DEVICES_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    assert jax.device_count() == 2, jax.devices()
    from azdb_jax import config as config_lib
    from azdb_jax import population
    sys.path.insert(0, {tests!r})
    from test_population import _config, _records
    out = {{}}
    for devices in (1, 2):
        config = config_lib.apply_overrides(_config({iterations}), ["run.num_devices=%d" % devices])
        workdir = {tmp!r} + "/pop%d" % devices
        progs = population.programs(config, {member_map!r})
        assert progs.mesh.size == devices and progs.member_maps == {maps!r}
        population.train(config, workdir, [0, 1, 2, 3], member_map={member_map!r}, progress=False)
        out[devices] = [_records(population.member_dir(workdir, seed)) for seed in range(4)]
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_learner_groups_step_every_member_as_unrolled_steps_do(tmp_path):
    """The ``groups`` learner (a group of members per call, the group an argument) gives
    every member the records of the ``unroll`` learner bit for bit: 4 members (two
    groups, so the second group's slice and write-back are used) and 3 (groups of one)."""
    config = config_lib.apply_overrides(_config(3), ["run.checkpoint_every=0"])
    for members in (4, 3):
        records = {}
        for member_map in ("map,unroll", "map,groups"):
            folder = tmp_path / f"{members}_{member_map.replace(',', '_')}"
            population.train(config, folder, list(range(members)), member_map=member_map, progress=False)
            records[member_map] = [_records(run) for run in population.member_dirs(folder)]
        assert records["map,groups"] == records["map,unroll"], members
        assert records["map,groups"][0] != records["map,groups"][-1]  # the members are different runs


@pytest.mark.slow
@pytest.mark.parametrize("member_map, maps, iterations", [("auto", ["map", "groups"], 3), ("vmap", ["vmap", "vmap"], 2)])
def test_members_split_over_two_devices_train_as_on_one(tmp_path, member_map, maps, iterations):
    """4 members on 2 forced CPU devices (2 each, ``shard_map``) give the runs of 1 device,
    with the CPU's member maps and with ``vmap`` (what ``auto`` picks on an accelerator)."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    script = DEVICES_SCRIPT.format(tests=str(REPO / "tests"), tmp=str(tmp_path), member_map=member_map,
                                   maps=tuple(maps), iterations=iterations)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for one, two in zip(out["1"], out["2"]):
        assert [(r["kind"], r["iteration"]) for r in one] == [(r["kind"], r["iteration"]) for r in two]
        for a, b in zip(one, two):
            for name, value in a.items():
                expected = value if isinstance(value, str) else pytest.approx(value, rel=1e-4, abs=1e-5)
                assert b[name] == expected, (a["iteration"], name)


@pytest.mark.slow
def test_the_accelerator_pack_runs_at_a_tiny_scale(tmp_path, fsf_path):
    """``scripts/device_pack.sh OUT ci_pack``: the pack's three arms for 2 seeds as
    populations, its claims table and at most 8 files (what a device call brings back)."""
    out = tmp_path / "out"
    env = dict(os.environ, PYTHON=sys.executable, AZDB_PACK_WORK=str(tmp_path / "work"), AZDB_FAIRY_STOCKFISH=fsf_path)
    result = subprocess.run(["bash", str(REPO / "scripts" / "device_pack.sh"), str(out), "ci_pack"], env=env,
                            capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(["claims.md", "claims.json", "manifest.json", "openings.json", "solve_rates.json",
                            "matches.json", "log.txt"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["runs"]) == sorted(f"{arm}_s{seed}" for arm in ("az", "azdb", "control")
                                              for seed in (10, 11))
    together = {"az": "az", "azdb": "azdb+control", "control": "azdb+control"}  # AZdb and control: one shape
    for name, entry in manifest["runs"].items():
        assert entry["done"] and entry["population"] == f"runs/{together[entry['arm']]}_population", name
    work = tmp_path / "work"
    for name, arms in (("az", ("az",)), ("azdb+control", ("azdb", "control"))):  # into the usual run folders
        assert population.member_dirs(work / "runs" / f"{name}_population") == [
            (work / "runs" / f"{arm}_s{seed}").resolve() for arm in arms for seed in (10, 11)]
    rows = json.loads((out / "claims.json").read_text())
    table2 = [row for row in rows if row["paper"] == "Table 2"]
    # one row per player, the per-move GAP team and the per-opening lookup team by both rules
    # (``claims._TABLE2_AGENTS``), each over the 2 seeds
    measures = sorted(row["measure"].split(" against AZ")[0].removeprefix("Elo of ") for row in table2)
    players = sum(m.startswith("AZdb player ") for m in measures)
    assert players == 3 and len(table2) == players + 3, measures
    assert sum("lookup team" in m for m in measures) == 2 and sum("GAP rule over every" in m for m in measures) == 1
    assert all(row["seeds"] == 2 and len(row["per_seed"]) == 2 for row in table2), table2
    assert {row["paper"] for row in rows} >= {"Fig. 3", "Fig. 5", "Table 2"}
    table = (out / "claims.md").read_text()
    assert table.count("\n|") >= len(rows) and "verdict" in table.lower()
    assert "device_pack:" in (out / "log.txt").read_text()
    # Table 2 with its pairings as members of one program (an accelerator's default) plays
    # the same games as the pack's pairing after pairing
    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import matches  # pylint: disable=g-import-not-at-top

    plain = json.loads((out / "matches.json").read_text())
    rows = (work / "eval" / "matches.csv").read_text()
    results = reproduction.Results(work, reproduction.SCALES["ci_pack"])
    batched = matches.evaluate(results, batch_members=True)
    assert batched["summary"]["members_batched"] and not plain["summary"]["members_batched"]
    assert batched["summary"]["pairings"] == plain["summary"]["pairings"]
    assert (work / "eval" / "matches.csv").read_text() == rows
    # and so do the distinct moves, each arm's seeds searched as members of one program:
    # benchmarks/members_eval.py evaluates them one run after another, then batched (the
    # report it leaves), and times both
    rows = (work / "eval" / "openings.csv").read_text()
    assert not json.loads((out / "openings.json").read_text())["summary"]["members_batched"]
    timed = subprocess.run([sys.executable, str(REPO / "benchmarks" / "members_eval.py"), f"--results={work}",
                            "--scale=ci_pack", "--groups=openings", "--repeats=1"], capture_output=True, text=True,
                           timeout=900, cwd=REPO)
    assert timed.returncode == 0, timed.stderr[-3000:]
    seconds = json.loads(timed.stdout)["groups"]["openings"]
    assert seconds["speedup"] == pytest.approx(seconds["unbatched"][0] / seconds["batched"][0], rel=0.01)
    assert json.loads((work / "eval" / "openings.json").read_text())["summary"]["members_batched"]
    assert (work / "eval" / "openings.csv").read_text() == rows
