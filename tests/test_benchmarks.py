"""The benchmarks: the plain pgx + mctx reference plays correct AlphaZero, and the scripts run.

The reference (``benchmarks/reference.py``) is what our self-play is compared with, so it
must be a working AlphaZero: it finds a win in one on tic-tac-toe with a random network,
and it never gives weight to an illegal move, at the root or deeper in the tree. The
benchmark scripts are run end to end on a tiny setup so that they keep working when the
search or the learner change.
"""

import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest

from azdb_jax import networks

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import reference  # noqa: E402  pylint: disable=g-import-not-at-top
from conftest import user_xla_env  # pylint: disable=g-bad-import-order


def _position_with_a_win_in_one():
    """X (to move) has 0 and 1, O has 3 and 4: only 2 wins at once (O threatens 5)."""
    env = pgx.make("tic_tac_toe")
    state = env.init(jax.random.PRNGKey(0))
    for action in (0, 3, 1, 4):
        state = env.step(state, action)
    return env, jax.tree.map(lambda x: jnp.stack([x] * 4), state)


def _tiny_network(env):
    network = networks.make_network(networks.NetworkConfig(channels=4, num_blocks=1, value_hidden=4),
                                    num_actions=env.num_actions, num_players=1)
    return network, network.init(jax.random.PRNGKey(7), jnp.zeros((1,) + env.observation_shape))


@pytest.mark.parametrize("algorithm", reference.ALGORITHMS)
@pytest.mark.slow
def test_reference_finds_a_win_in_one(algorithm):
    env, state = _position_with_a_win_in_one()
    network, params = _tiny_network(env)
    search = jax.jit(lambda p, k, s: reference.search(env, network.apply, p, k, s, algorithm=algorithm,
                                                        num_simulations=48))
    out = search(params, jax.random.PRNGKey(1), state)
    np.testing.assert_array_equal(np.asarray(out.action_weights.argmax(-1)), [2, 2, 2, 2])  # most visited
    if algorithm == "gumbel":  # (PUCT's action is sampled in proportion to the visits)
        np.testing.assert_array_equal(np.asarray(out.action), [2, 2, 2, 2])


@pytest.mark.parametrize("algorithm", reference.ALGORITHMS)
@pytest.mark.slow
def test_reference_never_weighs_illegal_moves(algorithm):
    env = pgx.make("tic_tac_toe")  # every move makes a square illegal: masks matter at every depth
    network, params = _tiny_network(env)
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 8))
    out = jax.jit(lambda p, k, s: reference.search(env, network.apply, p, k, s, algorithm=algorithm,
                                                   num_simulations=16))(params, jax.random.PRNGKey(1), state)
    legal = np.asarray(state.legal_action_mask)
    assert np.all(np.asarray(out.action_weights)[~legal] == 0)
    # Deeper: every expanded node's priors are masked with its own position's legal moves.
    tree = out.search_tree
    expanded = np.asarray(tree.node_visits) > 0  # [B, N]
    node_legal = np.asarray(tree.embeddings.legal_action_mask)  # [B, N, A]
    logits = np.asarray(tree.children_prior_logits)  # [B, N, A]
    illegal = expanded[..., None] & ~node_legal
    assert illegal[:, 1:].any()  # interior nodes with illegal moves were expanded
    assert np.all(logits[illegal] == np.finfo(np.float32).min)


def _run(script: str, *args: str, user_flags: bool = False, document: bool = False) -> dict:
    """The script's JSON: its last line, or (``document``) all of stdout (``report.emit``)."""
    env = dict(user_xla_env() if user_flags else os.environ, JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout if document else result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_selfplay_benchmark_compares_with_the_reference():
    report = _run("selfplay.py", "--game=tic_tac_toe", "--batch=4", "--simulations=3", "--plies=2",
                  "--channels=2", "--blocks=0", "--num_players=1,2", "--algorithms=gumbel", "--repeats=1")
    rows = report["results"]
    assert [(r["algorithm"], r["num_players"], r["diversity_in_search"]) for r in rows] == [
        ("gumbel", 1, False), ("gumbel", 2, True)]
    for row in rows:
        assert row["speedup"] == pytest.approx(row["positions_per_s"] / row["reference_positions_per_s"],
                                               rel=0.1, abs=0.02)
        assert row["overhead_ratio"] > 0 and row["reference_overhead_ratio"] > 0
    # The reference keeps whole pgx states in its tree: at least a state's bytes per node.
    state = jax.eval_shape(pgx.make("tic_tac_toe").init, jax.random.PRNGKey(0))
    state_bytes = sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(state))
    assert rows[0]["reference_tree_bytes_per_node"] > state_bytes
    assert 0 < rows[0]["tree_bytes_per_node"]
    # Both windows timed in the same turns: the ratio is the ratio of their positions/s.
    assert rows[1]["team_vs_one"] == pytest.approx(rows[1]["positions_per_s"] / rows[0]["positions_per_s"],
                                                   rel=0.05, abs=0.01)
    assert report["device_peak_bytes"] is None  # a CPU keeps no count


@pytest.mark.slow
def test_team_profile_times_a_team_against_one_player():
    report = _run("team_profile.py", "--game=connect_four", "--batch=4", "--simulations=3", "--channels=2",
                  "--blocks=0", "--num_players=2", "--opening_plies=2", "--repeats=1")
    assert set(report) == {"n1", "n1_fwd", "n2_nodiv", "n2_nodiv_fwd", "n2"}
    assert all(ms > 0 for ms in report.values())


@pytest.mark.slow
def test_learner_benchmark_compares_with_a_bare_step():
    report = _run("learner.py", "--game=tic_tac_toe", "--batch=8", "--channels=2", "--blocks=0",
                  "--num_players=2", "--repeats=1", "--compute_dtype=bfloat16")
    assert report["compute_dtype"] == "bfloat16"  # as the chess presets train
    assert report["step_ms"] > 0 and report["bare_step_ms"] > 0
    assert report["ratio"] == pytest.approx(report["step_ms"] / report["bare_step_ms"], rel=0.1, abs=0.02)


@pytest.mark.slow
def test_expector_profile_counts_the_pairs_it_looks_ahead_from():
    report = _run("expector_profile.py", "--game=tic_tac_toe", "--batch=3", "--junior_simulations=2",
                  "--junior_top_k=2", "--channels=2", "--blocks=0", "--opening_plies=2", "--repeats=1")
    # Three tic-tac-toe positions two plies in: 7 legal moves each, 9 slots; supports of 2 + 1.
    assert report["candidate_slots"] == 9 and report["legal_moves"] == 21 and report["mixture_support"] == 3
    assert report["positions"] == {"ply1": 27, "ply2": 81, "leaves": 243}
    for part in ("per_game_ms", "batched_ms", "half_active_ms", "policy_junior_ms", "junior_search_ms",
                 "senior_policy_ms", "value_ms", "env_steps_ms"):
        assert report[part] > 0


@pytest.mark.slow
def test_iteration_profile_times_each_part_of_an_iteration():
    report = _run("iteration_profile.py", "--preset=demo", "--warmup=1", "--repeats=1",
                  "--override=selfplay.num_games=4", "--override=selfplay.num_plies=2",
                  "--override=search.num_simulations=2", "--override=network.channels=2",
                  "--override=network.num_blocks=0", "--override=network.value_hidden=2",
                  "--override=run.learner_steps=2", "--override=run.batch_size=8")
    assert (report["games"], report["plies"], report["simulations"], report["learner_steps"]) == (4, 2, 2, 2)
    for part in ("iteration_s", "selfplay_s", "learner_s", "search_s", "forwards_s", "env_steps_s"):
        assert report[part] > 0, part
    for share, (part, whole) in {"search_share_of_selfplay": ("search_s", "selfplay_s"),
                                 "learner_share_of_iteration": ("learner_s", "iteration_s"),
                                 "forwards_share_of_search": ("forwards_s", "search_s")}.items():
        assert report[share] == pytest.approx(report[part] / report[whole], rel=0.02, abs=0.002), share


@pytest.mark.slow
def test_env_dispatch_counts_the_programs_an_eager_step_compiles():
    report = _run("env_dispatch.py", "--game_ids=tic_tac_toe", "--batch=2", "--plies=1")
    assert report["game"] == "tic_tac_toe" and report["batch"] == 2
    pgx_calls, library = report["pgx"], report["library"]
    # pgx's methods compile each primitive; the library's env one program for init and one for step
    # (the key splits and the random action compile the same few programs in both).
    assert pgx_calls["first_compiles"] > library["first_compiles"] + 20, report
    assert pgx_calls["again_compiles"] == library["again_compiles"] == 0, report
    assert report["first_call_ratio"] == pytest.approx(pgx_calls["first_s"] / library["first_s"], rel=0.02, abs=0.01)


def test_suite_compiles_counts_each_tests_compiles_in_its_own_record(tmp_path):
    (tmp_path / "test_two.py").write_text(
        "import jax, numpy as np\n"
        "f = jax.jit(lambda x: x * 2.0 + 1.0)\n"
        "def test_compiles_once():\n    assert float(f(np.float32(1.0))) == 3.0\n"
        "def test_reuses_the_compiled_program():\n    assert float(f(np.float32(2.0))) == 5.0\n"
        "def test_compiles_nothing():\n    assert 1 + 1 == 2\n")
    log = tmp_path / "compiles"
    # Threshold 0: the one program is written to the cache, as the suite's longer ones are.
    env = dict(os.environ, AZDB_TEST_COMPILE_LOG=str(log), JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", PYTHONPATH=str(REPO / "tests"))
    env.pop("PYTEST_XDIST_WORKER", None)  # one record file, compiles.main
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_two.py")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    records = {json.loads(line)["test"].split("::")[1]: json.loads(line)
               for line in (tmp_path / "compiles.main").read_text().splitlines()}
    assert records["test_compiles_once"]["compile"] == 1 and records["test_compiles_once"]["compile_s"] > 0
    assert "compile" not in records["test_reuses_the_compiled_program"]
    assert "compile" not in records["test_compiles_nothing"]
    summary = subprocess.run([sys.executable, str(REPO / "benchmarks" / "suite_compiles.py"), f"--log={log}",
                              "--top=2"], capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith("3 tests in 1 files:") and "1 compiles" in summary.stdout

    # --marked splits the totals; --cache reads the entries JAX wrote (here: the one program,
    # compiled in well under a second, so 0 whole seconds).
    test_id = next(r for r in records.values() if r["test"].endswith("::test_compiles_once"))["test"]
    (tmp_path / "marked").write_text(f"{test_id}\n\n1 test collected\n")
    summary = subprocess.run([sys.executable, str(REPO / "benchmarks" / "suite_compiles.py"), f"--log={log}",
                              f"--marked={tmp_path / 'marked'}", f"--cache={tmp_path / 'cache'}"],
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr
    assert "marked: 1 tests, " in summary.stdout and "others: 2 tests, " in summary.stdout
    assert "1 cache entries of 1 program names: 0-1 s" in summary.stdout
    assert "| jit__lambda | 1 | 0 |" in summary.stdout


def test_suite_compiles_sums_the_compile_seconds_written_in_cache_entries(tmp_path):
    # Entries laid out by hand as JAX documents them: the compile time in 4 big-endian bytes,
    # then the executable, compressed with JAX's codec; named program-hash-cache.
    from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top

    cache = tmp_path / "cache"
    cache.mkdir()
    for name, seconds in (("jit_selfplay_phase-aa", 12), ("jit_selfplay_phase-bb", 7), ("jit__lambda-cc", 3)):
        (cache / f"{name}-cache").write_bytes(
            compilation_cache.compress_executable(seconds.to_bytes(4, "big") + b"executable bytes"))
    (cache / "unrelated.txt").write_text("not an entry")
    (tmp_path / "compiles.gw0").write_text(json.dumps({"test": "tests/test_a.py::test_one", "wall_s": 1.0}) + "\n")

    def summary(folder):
        return subprocess.run([sys.executable, str(REPO / "benchmarks" / "suite_compiles.py"),
                               f"--log={tmp_path / 'compiles'}", f"--cache={folder}"],
                              capture_output=True, text=True, timeout=120)

    result = summary(cache)
    assert result.returncode == 0, result.stderr
    assert "3 cache entries of 2 program names: 22-25 s" in result.stdout
    table = result.stdout.split("| program | entries | compile_s |")[1]
    assert table.index("| jit_selfplay_phase | 2 | 19 |") < table.index("| jit__lambda | 1 | 3 |")
    (cache / "jit_broken-dd-cache").write_bytes(b"not compressed")
    result = summary(cache)
    assert result.returncode != 0 and "jit_broken-dd-cache" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = summary(empty)
    assert result.returncode != 0 and "no cache entries" in result.stderr


@pytest.mark.slow
def test_program_compiles_builds_each_program_twice_and_compares_their_outputs():
    # The second build takes the options a run's init is compiled with; the two builds must draw
    # the same state bit for bit (what RUN_ONCE_COMPILER_OPTIONS promises). The default build is
    # the user's: the script compiles with the user's XLA flags, not the tests' unoptimised ones.
    report = _run("program_compiles.py", "--recipe=tic_tac_toe", "--programs=init", "--repeats=1", user_flags=True)
    assert report["config"] == "recipe:tic_tac_toe" and list(report["programs"]) == ["init"]
    assert report["options"] == networks.RUN_ONCE_COMPILER_OPTIONS
    init = report["programs"]["init"]
    assert init["bitwise_equal"] is True
    for build in ("default", "options"):
        assert init[build]["compile_cpu_s"] > 0 and init[build]["run_cpu_s"] > 0
    assert init["compile_cpu_ratio"] == pytest.approx(
        init["options"]["compile_cpu_s"] / init["default"]["compile_cpu_s"], rel=0.01, abs=0.002)


@pytest.mark.slow
def test_population_benchmark_times_members_against_plain_runs():
    tiny = ["--override=env.name=tic_tac_toe", "--override=network.channels=2", "--override=network.num_blocks=0",
            "--override=search.num_simulations=2", "--override=selfplay.num_games=2", "--override=selfplay.num_plies=3",
            "--override=run.batch_size=4", "--override=run.learner_steps=1", "--override=replay.capacity=32"]
    report = _run("population.py", "--sizes=2", "--maps=vmap,map+unroll", "--iterations=1", *tiny, document=True)
    assert [row["members"] for row in report["rows"]] == [2] and report["backend"] == "cpu"
    for row in report["rows"]:
        for name in ("plain", "vmap", "map+unroll"):
            timing = row[name]
            assert timing["selfplay_s"] > 0 and timing["learner_s"] > 0
            assert timing["member_iterations_per_s"] == pytest.approx(
                row["members"] / (timing["selfplay_s"] + timing["learner_s"]), rel=0.02)  # from rounded times
        assert row["vmap"]["speedup"] == pytest.approx(
            row["vmap"]["member_iterations_per_s"] / row["plain"]["member_iterations_per_s"], rel=1e-2)
    # AZdb and its control as one population of arms, against each arm's plain runs
    arms = _run("population.py", "--sizes=2", "--arms", "--maps=map+unroll", "--iterations=1", *tiny, document=True)
    assert arms["arms"] is True and [row["members"] for row in arms["rows"]] == [2]
    assert all(arms["rows"][0][name]["selfplay_s"] > 0 for name in ("plain", "map+unroll"))
    with pytest.raises(AssertionError, match="do not split into two arms"):
        _run("population.py", "--sizes=3", "--arms", "--maps=map", "--iterations=1", *tiny)


@pytest.mark.slow
def test_population_drift_compares_members_with_plain_runs():
    report = _run("population_drift.py", "--members=2", "--iterations=2", document=True)
    assert report["members"] == 2 and report["member_maps"] == ["map", "groups"]
    assert report["largest_relative_difference"]["train/loss"] < 1e-5  # the same runs, within rounding
    for name, plain in report["final"]["plain"].items():
        assert report["final"]["population"][name]["mean"] == pytest.approx(plain["mean"], rel=1e-4, abs=1e-6)


@pytest.mark.slow
def test_pairing_benchmark_times_a_table2_pairing():
    report = _run("pairing.py", "--games=4", "--simulations=2", "--max_plies=4", "--openings=1", document=True)
    # one opening, both colours, 2 match seeds (the lookup's least): 4 games an agent
    assert report["games"] == 4 and report["backend"] == "cpu"
    for agent in ("player", "team_gap"):
        assert report[f"{agent}_first_s"] > 0 and report[f"{agent}_second_s"] > 0
        assert 1 <= report[f"{agent}_mean_plies"] <= 4


@pytest.mark.slow
def test_the_accelerator_check_runs_its_parts_within_its_budget(tmp_path):
    # scripts/device_check.sh at its tiny size on the CPU: parts a and b, each under the budget left
    out = tmp_path / "out"
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHON=sys.executable)
    result = subprocess.run(["bash", str(REPO / "scripts" / "device_check.sh"), str(out), "tiny"], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    log = (out / "log.txt").read_text()
    for part in ("a_scaling_demo", "b_drift_vmap", "b_population"):
        assert f"device_check: {part}: exit 0 after" in log, log[-4000:]
    scaling = json.loads((out / "scaling_demo.json").read_text())
    assert scaling["forced_cpu_devices"] is False and [r["devices"] for r in scaling["runs"]] == [1]
    assert scaling["runs"][0]["programs"]["learner"]["flops"] > 0
    drift = json.loads((out / "drift_vmap.json").read_text())
    assert drift["member_maps"] == ["vmap", "vmap"]
    # vmap members are their seeds' plain runs within float rounding
    assert max(drift["largest_relative_difference"].values()) < 1e-4, drift["largest_relative_difference"]
    population = json.loads((out / "population.json").read_text())
    for row in population["rows"]:
        assert row["vmap"]["member_iterations_per_s"] > 0 and row["map"]["member_iterations_per_s"] > 0, row
