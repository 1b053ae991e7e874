"""Reconnaissance Blind Chess: train the synopsis network with headsets and measure its heads on held-out games.

Reads the examples written by ``experiments/rbc_generate.py --examples`` (``--examples``:
folders of ``.npz`` files or files, comma-separated), holds out ``--validation_fraction`` of the games
by a hash of their names (no game in both sets), sets ``--dev_fraction`` of the other
games apart to keep the step with the least dev loss, makes one headset per group (player)
with at least ``--min_headset_examples`` training examples besides "all", trains with
Adam for ``--train_steps`` minibatches or ``--seconds`` (``azdb_jax.rbc.training.train``), saves
the checkpoint (``<out>/checkpoints/<step>``, orbax through ``azdb_jax.checkpoint``; load
it with ``azdb_jax.rbc.evaluator.Evaluator``) and writes the head-accuracy table per
headset on the held-out games, with chance baselines, to ``<out>/heads.md`` and
``<out>/report.json``.

    python experiments/rbc_train.py --examples=/tmp/rbc_data/examples --out=/tmp/rbc_run --seconds=600
"""

import dataclasses
import json
import pathlib
import time

from absl import app, flags

from azdb_jax import cli, files
from azdb_jax.cli import common_flags

_EXAMPLES = flags.DEFINE_string("examples", None, "Folders of examples .npz files (all of them) or files, "
                                "comma-separated.", required=True)
_OUT = common_flags.define_out("Run folder: checkpoints/, report.json, heads.md.", required=True)
_SEED = common_flags.define_seed("Seed of the initial parameters and the minibatches.")
_VALIDATION = flags.DEFINE_float("validation_fraction", 0.1, "Fraction of the games held out (0 < f < 1).")
_DEV = flags.DEFINE_float("dev_fraction", 0.1, "Fraction of the training games set apart to pick the step with the "
                          "least dev loss (0: none, the last step is kept).")
_EVAL_EVERY = flags.DEFINE_integer("eval_every", 500, "Steps between dev measurements.", lower_bound=1)
_SPLIT_SALT = flags.DEFINE_string("split_salt", "", "Mixed into the game-name hash that picks the held-out games.")
_MIN_HEADSET = flags.DEFINE_integer("min_headset_examples", 200, "Training examples a group needs for a headset "
                                    "of its own.", lower_bound=1)
_STOP_GRADIENT = flags.DEFINE_list("stop_gradient", ["RandomBot"], "Headsets that do not train the tower "
                                   "(names without a headset are ignored).")
_CHANNELS = flags.DEFINE_integer("channels", 32, "Width of the residual tower.", lower_bound=1)
_BLOCKS = flags.DEFINE_integer("blocks", 2, "Residual blocks.", lower_bound=0)
_POLICY_CHANNELS = flags.DEFINE_integer("policy_channels", 4, "1x1-conv channels of the policy heads.",
                                        lower_bound=1)
_VALUE_HIDDEN = flags.DEFINE_integer("value_hidden", 64, "Hidden units of the value-like heads.", lower_bound=1)
_BATCH = flags.DEFINE_integer("batch_size", 128, "Examples per minibatch.", lower_bound=1)
_LR = flags.DEFINE_float("learning_rate", 1e-3, "Adam's step size (> 0).")
_WEIGHT_DECAY = flags.DEFINE_float("weight_decay", 0.0, "AdamW's weight decay (0: Adam).", lower_bound=0.0)
_STEPS = flags.DEFINE_integer("train_steps", 100_000, "The most minibatches.", lower_bound=1)
_SECONDS = flags.DEFINE_float("seconds", None, "Wall-clock budget for training (default: none).")
flags.register_validator("learning_rate", lambda v: v > 0, message="--learning_rate must be > 0")
flags.register_validator("seconds", lambda v: v is None or v > 0, message="--seconds must be > 0")
flags.register_validator("dev_fraction", lambda v: 0 <= v < 1, message="--dev_fraction must be in [0, 1)")
flags.register_validator("validation_fraction", lambda v: 0 < v < 1, message="--validation_fraction must be in "
                         "(0, 1)")


def main(argv):
    del argv
    import numpy as np  # pylint: disable=g-import-not-at-top

    from azdb_jax.rbc import dataset, network, training  # pylint: disable=g-import-not-at-top

    paths = []
    for part in (p.strip() for p in _EXAMPLES.value.split(",") if p.strip()):
        source = pathlib.Path(part)
        if source.is_dir():
            found = sorted(source.glob("*.npz"))
            if not found:
                raise ValueError(f"--examples: no .npz file in {source}")
            paths.extend(found)
        else:
            paths.append(source)
    examples = dataset.Examples.load(paths)
    train_set, held = dataset.split_by_game(examples, _VALIDATION.value, _SPLIT_SALT.value)
    if not len(train_set) or not len(held):
        raise ValueError(f"--validation_fraction={_VALIDATION.value} leaves {len(train_set)} training and "
                         f"{len(held)} held-out examples from {len(examples.games)} games: both must be > 0")
    dev = None
    if _DEV.value > 0:
        train_set, dev = dataset.split_by_game(train_set, _DEV.value, _SPLIT_SALT.value + "/dev")
        if not len(train_set) or not len(dev):
            raise ValueError(f"--dev_fraction={_DEV.value} leaves {len(train_set)} training and {len(dev)} dev "
                             "examples: both must be > 0 (or give --dev_fraction=0)")
    counts = {g: int(np.sum(train_set.group == i)) for i, g in enumerate(train_set.groups)}
    headsets = tuple(g for g, n in sorted(counts.items()) if n >= _MIN_HEADSET.value and g != network.ALL)
    net_config = network.RbcNetConfig(headsets=headsets, channels=_CHANNELS.value, num_blocks=_BLOCKS.value,
                                      policy_channels=_POLICY_CHANNELS.value, value_hidden=_VALUE_HIDDEN.value,
                                      stop_gradient=tuple(h for h in _STOP_GRADIENT.value if h in headsets))
    config = training.TrainConfig(batch_size=_BATCH.value, learning_rate=_LR.value, weight_decay=_WEIGHT_DECAY.value,
                                  steps=_STEPS.value, seconds=_SECONDS.value, seed=_SEED.value)
    net = network.make_rbc_network(net_config)
    held_games = sorted({held.games[i] for i in np.unique(held.game)})
    print(f"{len(examples)} examples from {len(examples.games)} games: {len(train_set)} training, "
          f"{len(dev) if dev else 0} dev, {len(held)} "
          f"held out ({len(held_games)} games); headsets {', '.join(net_config.headsets)} (stop gradient: "
          f"{', '.join(net_config.stop_gradient) or 'none'}); training examples per group {counts}", flush=True)

    def progress(row):
        if row.get("dev"):
            print(f"dev at step {row['step']}: loss {row['loss']:.3f} (all: policy {row['policy']:.3f} value "
                  f"{row['value']:.3f})", flush=True)
            return
        print(f"step {row['step']}: loss {row['loss']:.3f} (all: policy {row['policy']:.3f} value "
              f"{row['value']:.3f} soon win {row['soon_win']:.3f} lose {row['soon_lose']:.3f} pieces "
              f"{row['pieces']:.3f}), {row['seconds']:.0f} s", flush=True)

    result = training.train(net, train_set, config, dev=dev, eval_every=_EVAL_EVERY.value, log_every=200,
                            progress=progress)
    out = pathlib.Path(_OUT.value)
    saved = training.save_checkpoint(out / "checkpoints", net, config, result.params, result.opt_state, result.step,
                                     extra={"examples": [str(p) for p in paths],
                                            "validation_fraction": _VALIDATION.value, "split_salt": _SPLIT_SALT.value})
    start = time.perf_counter()
    rows = training.evaluate(net, result.params, held, train_set)
    losses = {"training": training.mean_losses(net, config, result.params, train_set),
              "held_out": training.mean_losses(net, config, result.params, held)}
    table = training.head_table(rows)
    files.write_atomic(out / "heads.md", table + "\n")
    files.write_atomic(out / "report.json", json.dumps({
        "examples": len(examples), "games": len(examples.games), "training_examples": len(train_set),
        "held_out_examples": len(held), "held_out_games": held_games, "training_examples_per_group": counts,
        "network": dataclasses.asdict(net_config), "train": dataclasses.asdict(config), "steps": result.step,
        "train_seconds": result.seconds, "steps_run": result.steps_run, "dev_examples": len(dev) if dev else 0,
        "dev_losses": result.dev_losses, "losses": result.losses, "final_losses_all_headset": losses, "heads": rows,
        "checkpoint": str(saved)}, indent=1))
    print(f"trained {result.steps_run} steps in {result.seconds:.0f} s, kept step {result.step}; checkpoint {saved}; "
          f"evaluated in "
          f"{time.perf_counter() - start:.0f} s")
    for name, values in losses.items():
        print(f"{name} losses in the all headset: " + ", ".join(f"{k} {v:.3f}" for k, v in values.items()))
    print(table)


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
