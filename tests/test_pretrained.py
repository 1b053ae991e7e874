"""Shipped teams (azdb_jax.pretrained, azdb_jax.team_files): exported from a run, read back
bit for bit, checked file by file, and usable wherever a run directory is."""

import json
import pathlib
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest

from azdb_jax import checkpoint, pretrained, runs, team_files
from azdb_jax.cli import common_flags

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def exported(trained_run, tmp_path_factory):
    """The shared tiny tic-tac-toe run, exported as team ``tiny`` into a folder of its own."""
    root = tmp_path_factory.mktemp("shipped")
    run = trained_run("tic_tac_toe")
    pretrained.export(run, "tiny", info_fields={"command": "tests", "seed": 0}, root=root)
    return run, root


def _leaves_equal(a, b) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


def test_an_exported_team_is_the_runs_team_without_its_training_state(exported):
    run, root = exported
    folder = team_files.folder("tiny", root=root)
    original, shipped = runs.load_agent(run), runs.load_agent(folder)
    assert _leaves_equal(original.params, shipped.params)
    assert np.array_equal(np.asarray(original.psi), np.asarray(shipped.psi))
    assert shipped.step == original.step == 2
    assert shipped.lambdas == original.lambdas and shipped.search_config == original.search_config
    # Only what play needs: no optimiser state, no previous network, no replay.
    with checkpoint.RunCheckpointer(str(folder / "checkpoints"), create=False) as manager:
        with pytest.raises(checkpoint.CheckpointError, match="holds no state/opt_state"):
            manager.restore_parts(parts=("opt_state",))
        with pytest.raises(checkpoint.CheckpointError, match="holds no state/extra/previous_params"):
            manager.restore_parts(parts=("extra/previous_params",))
    run_bytes = sum(f.stat().st_size for f in (run / "checkpoints" / "2").rglob("*") if f.is_file())
    team_bytes = sum(f.stat().st_size for f in (folder / "checkpoints").rglob("*") if f.is_file())
    assert team_bytes < run_bytes / 2, (team_bytes, run_bytes)
    manifest = json.loads((folder / team_files.MANIFEST).read_text())
    assert manifest["game"] == "tic_tac_toe" and manifest["iteration"] == 2 and manifest["players"] == 3
    assert manifest["command"] == "tests" and manifest["source"] == f"{run}@2"
    assert set(manifest["files"]) == {f.relative_to(folder).as_posix() for f in folder.rglob("*")
                                      if f.is_file() and f.name != team_files.MANIFEST}
    # A training state is refused by name, not half-read.
    with pytest.raises(ValueError, match="shipped team to play"):
        runs.load_run(folder)


def test_every_damaged_missing_or_added_file_is_named(exported, tmp_path):
    _, root = exported
    team_files.check_folder(root / "tiny")
    files = sorted(p for p in (root / "tiny").rglob("*") if p.is_file() and p.name != team_files.MANIFEST)
    for victim in files:
        copy = tmp_path / "root"
        shutil.copytree(root, copy)
        damaged = copy / "tiny" / victim.relative_to(root / "tiny")
        data = damaged.read_bytes()
        damaged.write_bytes(data[:-1] + bytes([data[-1] ^ 1]) if data else b"x")
        with pytest.raises(team_files.DamagedTeamError) as e:
            team_files.folder("tiny", root=copy)
        assert str(damaged) in str(e.value) and "damaged" in str(e.value) and "\n" not in str(e.value)
        damaged.unlink()
        with pytest.raises(team_files.DamagedTeamError, match=f"{damaged}: missing"):
            team_files.folder("tiny", root=copy)
        shutil.rmtree(copy)
    copy = tmp_path / "added"
    shutil.copytree(root, copy)
    (copy / "tiny" / "checkpoints" / "stray.txt").write_text("x")
    with pytest.raises(team_files.DamagedTeamError, match="stray.txt: not in"):
        team_files.folder("tiny", root=copy)
    (copy / "tiny" / team_files.MANIFEST).write_text("{")
    with pytest.raises(team_files.DamagedTeamError, match="MANIFEST.json: damaged"):
        team_files.folder("tiny", root=copy)


def test_export_replaces_a_team_whole_and_refuses_bad_names(exported, tmp_path):
    run, root = exported
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    pretrained.export(run, "tiny", step=1, info_fields={"command": "again"}, root=copy)
    assert team_files.manifest("tiny", root=copy)["iteration"] == 1
    assert runs.load_agent(copy / "tiny").step == 1
    assert sorted(p.name for p in copy.iterdir()) == ["tiny"]  # nothing left beside it
    for bad in ("", "a/b", "../x", "tiny team"):
        with pytest.raises(ValueError, match="letters, digits"):
            pretrained.export(run, bad, root=copy)
    with pytest.raises(checkpoint.CheckpointError):
        pretrained.export(run, "other", step=7, root=copy)
    assert sorted(p.name for p in copy.iterdir()) == ["tiny"]


def test_a_recorded_field_joins_the_manifest_and_keeps_the_files_checked(exported, tmp_path):
    _, root = exported
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    before = team_files.manifest("tiny", root=copy)
    pretrained.record("tiny", {"strength": {"players": [{"player": 0, "search_keeps": 0.5}]}}, root=copy)
    after = team_files.manifest("tiny", root=copy)
    assert after["strength"]["players"][0]["search_keeps"] == 0.5
    assert {k: v for k, v in after.items() if k != "strength"} == before
    team_files.check_folder(copy / "tiny")  # the files still match
    with pytest.raises(ValueError, match="cannot be recorded over: files, iteration"):
        pretrained.record("tiny", {"files": {}, "iteration": 3}, root=copy)
    (copy / "tiny" / "config.json").write_text("{}")  # a damaged team is not written to
    with pytest.raises(team_files.DamagedTeamError, match="config.json"):
        pretrained.record("tiny", {"strength": {}}, root=copy)


def test_pretrained_names_resolve_where_run_directories_do(exported, monkeypatch):
    _, root = exported
    monkeypatch.setattr(team_files, "ROOT", root)
    assert team_files.names() == ["tiny"]
    assert common_flags.split_checkpoint("pretrained:tiny") == (root / "tiny", None)
    assert common_flags.split_checkpoint("pretrained:tiny@2") == (root / "tiny", 2)
    with pytest.raises(ValueError, match=r"no pretrained team 'nope' \(shipped: tiny\)"):
        common_flags.split_checkpoint("pretrained:nope")
    assert runs.load_run_config("pretrained:tiny").env.name == "tic_tac_toe"
    team = runs.load_agent("pretrained:tiny", num_simulations=3)
    assert team.name == "pretrained:tiny@2" and team.search_config.num_simulations == 3
    with pytest.raises(ValueError, match="shipped team to play"):
        runs.load_run("pretrained:tiny")


def test_the_shipped_teams_load_and_play():
    shipped = pretrained.names()
    assert "connect_four" in shipped, shipped
    for name in shipped:
        manifest = pretrained.info(name)
        assert manifest["name"] == name and manifest["commit"] and manifest["command"].startswith(
            "python experiments/train.py") and pretrained.RECIPES[name].preset in manifest["command"]
        team = pretrained.load(name, num_simulations=4)
        assert team.name == f"pretrained:{name}@{manifest['iteration']}" and team.step == manifest["iteration"]
        assert team.num_players == manifest["players"]


@pytest.mark.slow  # every player of every shipped connect-four team on the 600 solved positions
def test_the_recorded_strength_of_a_shipped_team_is_what_it_plays():
    import jax  # pylint: disable=g-import-not-at-top
    from azdb_jax import data  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import solved_positions  # pylint: disable=g-import-not-at-top

    measured = [name for name in pretrained.names() if "strength" in pretrained.info(name)]
    if not measured:
        pytest.skip("no shipped team records its strength")
    positions = data.load_connect_four_positions()
    for name in measured:
        recorded = pretrained.info(name)["strength"]
        team = pretrained.load(name)
        assert team.search_config.num_simulations == recorded["simulations"]
        report = solved_positions.evaluate(team, positions, jax.random.PRNGKey(0))
        assert report["not_lost"] == recorded["positions"]
        for entry in recorded["players"]:
            now = report["players"][entry["player"]]["all"]
            # Another processor's XLA code can break a few visit ties differently: within a
            # binomial standard error (about 0.02 on 395 positions).
            for measure in ("search_keeps", "prior_keeps", "value_sign"):
                assert now[measure]["rate"] == pytest.approx(entry[measure], abs=0.02), (name, entry, measure)


def test_a_bad_pretrained_name_ends_a_script_in_one_line(tmp_path):
    bad = subprocess.run([sys.executable, str(REPO / "experiments" / "play_match.py"), "--a=pretrained:nope",
                          "--b=random", f"--out={tmp_path / 'match'}"], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode != 0
    last = bad.stderr.strip().splitlines()[-1]
    assert "no pretrained team 'nope'" in last and "connect_four" in last, bad.stderr[-2000:]


@pytest.mark.slow
def test_a_script_plays_a_shipped_team(tmp_path):
    out = tmp_path / "match"
    run = subprocess.run([sys.executable, str(REPO / "experiments" / "play_match.py"), "--a=pretrained:connect_four",
                          "--a_player=1", "--b=random", "--seeds=2", "--simulations=8", f"--out={out}"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((out / "match.json").read_text())["summary"]
    assert summary["games"] == 4 and summary["wins"] + summary["draws"] + summary["losses"] == 4, summary
