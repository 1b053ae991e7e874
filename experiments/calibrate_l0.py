"""ℓ0 for a game from its λ = 1 control runs (docs/method.md, "Calibrating ℓ0 per game").

  python experiments/calibrate_l0.py --control=runs/control_s0,runs/control_s1
  python experiments/calibrate_l0.py --control=runs/demo_control --factor=3 --window=10 --out=l0.json

Each control is a team of two or more players with λ = 1 (``--override=team.lam=1.0`` of the
setting to calibrate: same game, team size, matchmaker and budget). Prints ℓ0 = factor × the
median over the controls of their settled spread (the players' mean nearest-neighbour
distance d_i over their last ``--window`` iterations, from metrics.jsonl), each run's
spread, and the factor (1 − (d/ℓ0)³) of Eq. 8 at distances around it; ``--out`` writes the
same as JSON. Use the value with ``--override=diversity.l0=...`` or in a preset.
"""

import json
import pathlib
from typing import List

from absl import app, flags

from azdb_jax import calibration, cli
from azdb_jax.cli import common_flags
from azdb_jax.files import write_atomic

flags.DEFINE_list("control", None, "λ = 1 control run directories (comma-separated).")
flags.DEFINE_float("factor", calibration.DEFAULT_FACTOR, "ℓ0 = factor × the controls' settled spread.")
flags.DEFINE_integer("window", calibration.DEFAULT_WINDOW, "Last iterations of each run the spread is taken over.",
                     lower_bound=1)
common_flags.define_out("Write the calibration as JSON here (default: print it only).")


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    values = flags.FLAGS
    if not values.control:
        raise ValueError("--control is required: one or more λ = 1 control run directories")
    result = calibration.calibrate_from_runs(values.control, factor=values.factor, window=values.window)
    print(result.describe())
    for ratio in (1.0, 2.0, result.factor, 1.5 * result.factor):
        d = ratio * result.spread
        print(f"  at d = {d:.3f} ({ratio:g} × the spread): 1 − (d/ℓ0)³ = {calibration.reward_factor(d, result.l0):+.3f}")
    if values.out:
        report = dict(result.as_dict(), controls=[str(pathlib.Path(c)) for c in values.control])
        write_atomic(pathlib.Path(values.out), json.dumps(report, indent=1))
        print(f"written: {values.out}")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
