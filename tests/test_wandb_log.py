"""Weights & Biases logging (azdb_jax.wandb_log), offline: every record a run writes to
metrics.jsonl is logged, number by number, under TensorBoard's ``kind/name`` keys with the
iteration beside it, and a resumed run goes on in the same W&B run.

What was logged is read back from the offline run's ``.wandb`` file (W&B's record log:
32 KiB blocks of length-prefixed chunks holding ``wandb_internal_pb2.Record`` messages),
not from the logger's own state."""

import json
import math
import struct
import time

import pytest

from conftest import trained_run_config

pytest.importorskip("wandb", reason='needs the wandb extra: pip install -e ".[wandb]"')

from wandb.proto import wandb_internal_pb2  # noqa: E402

from azdb_jax import config as config_lib, runner, runs, wandb_log  # noqa: E402


def _records(log: wandb_log.WandbLog, timeout: float = 120.0):
    """The run's records; W&B's service may still be writing them after ``finish`` returns (on
    a loaded machine), so this waits for the run's exit record."""
    deadline = time.monotonic() + timeout
    while True:
        records = _read_records(log)
        if any(r.WhichOneof("record_type") == "exit" for r in records) or time.monotonic() > deadline:
            return records
        time.sleep(0.5)


def _read_records(log: wandb_log.WandbLog):
    (path,) = log.run_dir.glob("run-*.wandb")
    data = path.read_bytes()
    assert data[:4] == b":W&B", path
    pos, block, chunks, out = 7, 32768, [], []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0 and length == 0:
            break
        chunks.append(data[pos + 7:pos + 7 + length])
        pos += 7 + length
        if kind in (1, 4):  # a whole record, or the last chunk of one
            record = wandb_internal_pb2.Record()
            try:
                record.ParseFromString(b"".join(chunks))
            except Exception:  # pylint: disable=broad-except  (a record still being written)
                break
            out.append(record)
            chunks = []
    return out


def _history(log: wandb_log.WandbLog):
    rows = []
    for record in _records(log):
        if record.WhichOneof("record_type") == "history":
            row = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            rows.append({k: v for k, v in row.items() if not k.startswith("_")})
    return rows


def _config_keys(log: wandb_log.WandbLog):
    """The config keys of the run record and of later config records."""
    keys = set()
    for record in _records(log):
        kind = record.WhichOneof("record_type")
        config = record.run.config if kind == "run" else record.config if kind == "config" else None
        if config is not None:
            keys |= {item.key or "/".join(item.nested_key) for item in config.update}
    return keys


def _expected(record):
    kind = record.get("kind", "train")
    row = {f"{kind}/{name}": value for name, value in record.items()
           if isinstance(value, (int, float)) and not isinstance(value, bool) and name != "iteration"}
    return dict(row, iteration=record["iteration"])


def _same(row, expected):
    assert set(row) == set(expected), (sorted(row), sorted(expected))
    for name, value in row.items():
        assert math.isclose(value, expected[name], rel_tol=1e-6, abs_tol=1e-9), (name, value, expected[name])


def test_records_are_logged_under_kind_and_name(tmp_path):
    log = wandb_log.WandbLog(tmp_path, {"run": {"seed": 3, "eval_opponents": ("random",)}}, project="azdb-test",
                             mode="offline")
    log.write({"iteration": 1, "loss": 2.5, "games_finished": 7.0})
    log.write({"iteration": 2, "kind": "eval", "score_vs_random_p0": 0.75, "opponent": "random", "final": True})
    log.close()
    assert _history(log) == [{"iteration": 1, "train/loss": 2.5, "train/games_finished": 7},
                             {"iteration": 2, "eval/score_vs_random_p0": 0.75}]  # strings and flags are not numbers
    assert {"run.seed", "run.eval_opponents"} <= _config_keys(log)  # flattened section.field keys
    assert (tmp_path / "wandb_id").read_text().strip() in log.run_dir.name


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        wandb_log.WandbLog(tmp_path, {}, project="p", mode="sometimes")
    with pytest.raises(ValueError, match="non-empty name"):
        wandb_log.WandbLog(tmp_path, {}, project="", mode="offline")


def test_a_training_run_logs_what_metrics_jsonl_holds_and_resume_keeps_the_run(tmp_path):
    config = config_lib.apply_overrides(trained_run_config("tic_tac_toe"), ["run.num_iterations=2"])
    workdir = tmp_path / "run"
    first = wandb_log.WandbLog(workdir, json.loads(config_lib.to_json(config)), project="azdb-test", mode="offline")
    runner.train(config, workdir, stop_after=1, progress=False, sinks=[first])
    first_rows = _history(first)
    again = wandb_log.WandbLog(workdir, {}, project="azdb-test", mode="offline", resume=True)
    runner.train(config, workdir, resume=True, progress=False, sinks=[again])
    assert first.run_dir.name.split("-")[-1] == again.run_dir.name.split("-")[-1]  # the same W&B run id
    assert "network.channels" in _config_keys(first)

    records = runs.read_metrics(workdir)
    assert {r["iteration"] for r in records} == {1, 2} and {r.get("kind", "train") for r in records} >= {"train", "eval"}
    rows = first_rows + _history(again)
    assert len(rows) == len(records)
    for row, record in zip(rows, records):
        _same(row, _expected(record))
