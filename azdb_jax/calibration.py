"""Calibrating the diversity term of a game from data: ℓ0 (paper Eq. 7-8; SPEC §1.5).

ℓ0 is a distance between expected features, ``‖ψ_i − ψ_j‖₂``, so it lives on the scale of
the game's features φ: connect four's 2×42 discs, Gardner chess's 12×25 piece planes and
chess's 772 values spread players apart by different amounts. The intrinsic reward

    r_d^i(s, a) = (1 − (d_i/ℓ0)³) · φ(s, a)·(ψ_i − ψ_{j*_i})                       (Eq. 8)

pushes a player away from its nearest neighbour while d_i < ℓ0 and vanishes at d_i = ℓ0,
"which allows the policies to focus on maximizing the extrinsic reward" (paper §3). An ℓ0
the team never reaches keeps the reward on for the whole run; an ℓ0 below where players
sit anyway turns it into a strong pull together (at d = 2ℓ0 the factor is −7).

The procedure (docs/method.md, "Calibrating ℓ0 per game"):

1. Train the λ = 1 control of the setting: the same team, matchmaker and budget, no
   diversity reward. Its players differ only by their latents and by chance.
2. Its *settled spread* ``s``: the median, over the control's last ``window`` iterations,
   of the players' mean nearest-neighbour distance ``mean_i d_i`` (``metrics.jsonl``);
   over several control seeds, the median of their spreads.
3. ``ℓ0 = factor · s`` (``factor`` 3 by default): where the control's players sit the reward
   pushes at ``1 − 1/factor³`` of its strength (0.96), at twice that distance at 0.70, and
   it switches off at ``factor`` times the distance identical players keep by chance.

Everything here is host-side arithmetic on recorded distances (or ψ arrays).
"""

import math
import pathlib
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Sequence

import numpy as np

DEFAULT_FACTOR = 3.0
DEFAULT_WINDOW = 10


class Calibration(NamedTuple):
    """A calibrated ℓ0 and what it came from."""

    l0: float  # factor · spread
    spread: float  # s: the control's settled mean nearest-neighbour distance (median over runs)
    factor: float
    run_spreads: Sequence[float]  # s of each control run
    window: int  # iterations of each run the spread is taken over

    def describe(self) -> str:
        runs = ", ".join(f"{s:.3f}" for s in self.run_spreads)
        return (f"ℓ0 = {self.factor:g} × {self.spread:.3f} = {self.l0:.3f} (the λ = 1 control's mean "
                f"nearest-neighbour distance over its last {self.window} iterations: {runs})")

    def as_dict(self) -> Dict[str, Any]:
        return dict(l0=self.l0, spread=self.spread, factor=self.factor, run_spreads=list(self.run_spreads),
                    window=self.window)


def team_distances(record: Mapping[str, Any]) -> List[float]:
    """The ``d_<i>`` of one metrics record, in player order (empty when it has none)."""
    out, i = [], 0
    while f"d_{i}" in record:
        out.append(float(record[f"d_{i}"]))
        i += 1
    return out


def settled_spread(records: Iterable[Mapping[str, Any]], *, window: int = DEFAULT_WINDOW,
                   source: str = "metrics") -> float:
    """The median over the last ``window`` training records of the players' mean ``d_i``.

    Raises:
      ValueError: no training record with the distances of at least two players, or a bad window.
    """
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an int >= 1, got {window!r}")
    means = []
    for record in records:
        if record.get("kind", "train") != "train":
            continue
        distances = team_distances(record)
        if len(distances) >= 2:
            means.append((int(record.get("iteration", len(means))), float(np.mean(distances))))
    if not means:
        raise ValueError(f"{source}: no training record with the nearest-neighbour distances d_0, d_1, ... of a "
                         "team of two or more players")
    means.sort()
    return float(np.median([m for _, m in means[-window:]]))


def calibrate_l0(spreads: Sequence[float], *, factor: float = DEFAULT_FACTOR,
                 window: int = DEFAULT_WINDOW) -> Calibration:
    """``ℓ0 = factor · median(spreads)``: the spreads of one or more λ = 1 control runs."""
    spreads = [float(s) for s in spreads]
    if not spreads or not all(math.isfinite(s) and s > 0 for s in spreads):
        raise ValueError(f"need one or more positive control spreads, got {spreads!r}")
    if not (isinstance(factor, (int, float)) and factor > 1):
        raise ValueError(f"factor must be > 1 (ℓ0 above where the control's players sit), got {factor!r}")
    spread = float(np.median(spreads))
    return Calibration(l0=float(factor) * spread, spread=spread, factor=float(factor), run_spreads=tuple(spreads),
                       window=window)


def check_control(config, *, source: str) -> None:
    """A control for calibration: a team of two or more players, all with λ = 1."""
    if config.team.num_players < 2 or config.team.lam != 1.0:
        raise ValueError(f"{source}: a λ = 1 control of two or more players is needed to calibrate ℓ0 "
                         f"(this run has {config.team.num_players} player(s), team.lam={config.team.lam})")


def calibrate_from_runs(workdirs: Sequence, *, factor: float = DEFAULT_FACTOR,
                        window: int = DEFAULT_WINDOW) -> Calibration:
    """``calibrate_l0`` from the ``metrics.jsonl`` of λ = 1 control runs (each checked to be one)."""
    from azdb_jax import runs  # pylint: disable=g-import-not-at-top  (runs are read only here)

    spreads = []
    for workdir in workdirs:
        check_control(runs.load_run_config(pathlib.Path(workdir)), source=str(workdir))
        spreads.append(settled_spread(runs.read_metrics(workdir), window=window,
                                      source=str(pathlib.Path(workdir) / "metrics.jsonl")))
    return calibrate_l0(spreads, factor=factor, window=window)


def reward_factor(d: float, l0: float) -> float:
    """``1 − (d/ℓ0)³``, the factor of Eq. 8 at distance d: how hard the reward pushes there."""
    return 1.0 - (float(d) / float(l0)) ** 3


__all__ = ["Calibration", "DEFAULT_FACTOR", "DEFAULT_WINDOW", "calibrate_from_runs", "calibrate_l0",
           "check_control", "reward_factor", "settled_spread", "team_distances"]
