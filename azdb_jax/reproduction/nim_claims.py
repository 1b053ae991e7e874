"""Zhou & Riis's claims decided on a results folder of Nim runs (``azdb_jax.figures.nim.load_runs``).

  from azdb_jax.figures import nim as figures_nim
  from azdb_jax.reproduction import nim_claims
  print(nim_claims.format_claims(nim_claims.claims(figures_nim.load_runs("results/nim"))))

Each claim is decided from its per-seed values with a 95 % t interval over training seeds
(``reproduction.claims.claim_row``), as the paper's chess claims are.
"""

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from azdb_jax.figures import nim as figures_nim
from azdb_jax.reproduction import claims as claims_lib


def _at(curve: Dict[str, Any], step: Optional[int]) -> np.ndarray:
    """The per-seed values at ``step`` (default: the last step every seed measured)."""
    if not curve["steps"]:
        raise ValueError("the seeds share no measured checkpoint")
    if step is not None and step not in curve["steps"]:
        raise ValueError(f"checkpoint {step} was not measured on every seed (measured: {curve['steps']})")
    index = len(curve["steps"]) - 1 if step is None else curve["steps"].index(step)
    return curve["values"][:, index]


def _margin(runs, setting, step):
    """Per seed: player 0's top-1 accuracy minus the random policy's, and balanced value accuracy minus 0.5."""
    chosen = [r for r in runs if r["setting"] == setting]
    baseline = np.array([r["summary"]["random_baseline"] for r in chosen])
    top1 = _at(figures_nim.curves(runs, setting, "top1_accuracy"), step)
    balanced = _at(figures_nim.curves(runs, setting, "value_sign_balanced_accuracy"), step)
    return top1 - baseline, balanced - 0.5


def _last_common(runs, first: str, second: str) -> int:
    """The latest checkpoint every seed of both settings measured."""
    steps = (set(figures_nim.curves(runs, first, "top1_accuracy")["steps"])
             & set(figures_nim.curves(runs, second, "top1_accuracy")["steps"]))
    if not steps:
        raise ValueError(f"{first} and {second} share no measured checkpoint")
    return max(steps)


def claims(runs: Sequence[Dict[str, Any]], *, step: Optional[int] = None) -> List[Dict[str, Any]]:
    """The paper's claims at checkpoint ``step`` (default: each setting's last common one,
    and for a comparison of two settings the last checkpoint both have).

    Per single-player setting: the policy beats the random policy (top-1 margin > 0) and
    the value beats chance (balanced sign accuracy − 0.5 > 0). Across heap counts (the
    central claim): the margins fall from each heap count to the next and from the fewest
    to the most (seed k of one setting against seed k of the other: independent runs, so
    the t interval of the differences is valid). Networks (beyond the paper, which has one):
    where two torsos were trained on the same heaps, the margins of one (in name order, the
    later: ``resnet``) above the other's (``lstm``), seed against seed. Team settings
    (``num_players > 1``): the max-over-latents top-1
    accuracy against player 0's top-1 and top-3, against the single-player setting of the
    same heaps and network, and against that setting's top-3 accuracy (a team of 3 offers 3
    moves: any 3 distinct moves find more than one, so the top-3 rows are the comparisons
    that credit diversity); and the team's player 0 (λ = 1) against the single player.
    Each row holds the per-seed values, the mean, its 95 % t interval and the verdict
    (``agrees`` when the interval is above 0).
    """
    rows = []
    single = [s for s in figures_nim.settings(runs) if next(r for r in runs if r["setting"] == s)["num_players"] == 1]
    for setting in single:
        top1, value = _margin(runs, setting, step)
        rows.append(claims_lib.claim_row(f"{setting}: policy top-1 above the random policy's",
                                         "yes for 5 heaps, ≈ random for 7", "top-1 accuracy − random baseline",
                                         "share", top1, "gain"))
        rows.append(claims_lib.claim_row(f"{setting}: value sign better than chance",
                                         "≈ 90 % (5 heaps), > 60 % (6), ≈ 50 % (7)",
                                         "balanced sign accuracy − 0.5", "share", value, "gain"))
    by_heaps: Dict[str, Dict[int, str]] = {}
    for setting in single:
        run = next(r for r in runs if r["setting"] == setting)
        by_heaps.setdefault(run["torso"], {})[len(run["heaps"])] = setting
    for torso, table in by_heaps.items():
        counts = sorted(table)
        pairs = list(zip(counts, counts[1:])) + ([(counts[0], counts[-1])] if len(counts) > 2 else [])
        for small, large in pairs:
            at = step if step is not None else _last_common(runs, table[small], table[large])
            a, b = _margin(runs, table[small], at), _margin(runs, table[large], at)
            n = min(len(a[0]), len(b[0]))
            for index, what in enumerate(("top-1 margin", "balanced value margin")):
                rows.append(claims_lib.claim_row(
                    f"{torso}: the {what} falls from {small} to {large} heaps", "yes (accuracy falls towards random)",
                    f"{what}, {table[small]} − {table[large]}", "share", a[index][:n] - b[index][:n], "gain",
                    step=at))
    networks = sorted(by_heaps)
    for first, second in zip(networks, networks[1:]):  # the networks on the same heaps (beyond the paper)
        for heaps in sorted(set(by_heaps[first]) & set(by_heaps[second])):
            one, other = by_heaps[second][heaps], by_heaps[first][heaps]
            at = step if step is not None else _last_common(runs, one, other)
            a, b = _margin(runs, one, at), _margin(runs, other, at)
            n = min(len(a[0]), len(b[0]))
            for index, what in enumerate(("top-1 margin", "balanced value margin")):
                rows.append(claims_lib.claim_row(
                    f"{heaps} heaps: the {what} of {second} above {first}'s", "not asked (one network)",
                    f"{what}, {one} − {other}", "share", a[index][:n] - b[index][:n], "gain", step=at))
    for setting in figures_nim.settings(runs):
        run = next(r for r in runs if r["setting"] == setting)
        if run["num_players"] == 1:
            continue
        any_top1 = _at(figures_nim.curves(runs, setting, "team_top1_accuracy_any", player=0), step)
        top1 = _at(figures_nim.curves(runs, setting, "top1_accuracy"), step)
        rows.append(claims_lib.claim_row(f"{setting}: the team's max over latents finds more winning moves than "
                                         "its player 0", "not asked", "max-over-latents top-1 − player 0's top-1",
                                         "share", any_top1 - top1, "gain"))
        # n players offer n moves: player 0's n most probable moves are the fair comparison.
        top3 = _at(figures_nim.curves(runs, setting, "top3_accuracy"), step)
        rows.append(claims_lib.claim_row(f"{setting}: the team's max over latents finds more winning moves than "
                                         "its player 0's 3 best moves", "not asked",
                                         "max-over-latents top-1 − player 0's top-3", "share", any_top1 - top3, "gain"))
        twin = by_heaps.get(run["torso"], {}).get(len(run["heaps"]))
        if twin is not None:
            single_top1 = _at(figures_nim.curves(runs, twin, "top1_accuracy"), step)
            n = min(len(any_top1), len(single_top1))
            rows.append(claims_lib.claim_row(f"{setting} against {twin}: the team's max over latents finds more "
                                             "winning moves than one AlphaZero", "not asked",
                                             f"max-over-latents top-1 ({setting}) − top-1 ({twin})", "share",
                                             any_top1[:n] - single_top1[:n], "gain"))
            rows.append(claims_lib.claim_row(f"{setting} against {twin}: the team's player 0 (λ = 1) finds more "
                                             "winning moves than one AlphaZero", "not asked",
                                             f"player 0's top-1 ({setting}) − top-1 ({twin})", "share",
                                             top1[:n] - single_top1[:n], "gain"))
            # A team of n offers n moves; one AlphaZero's n most probable moves are the fair comparison.
            single_top3 = _at(figures_nim.curves(runs, twin, "top3_accuracy"), step)
            rows.append(claims_lib.claim_row(f"{setting} against {twin}'s 3 best moves: the team's max over latents "
                                             "finds more winning moves", "not asked",
                                             f"max-over-latents top-1 ({setting}) − top-3 ({twin})", "share",
                                             any_top1[:n] - single_top3[:n], "gain"))
    return rows


def format_claims(rows: Sequence[Dict[str, Any]]) -> str:
    """One line per claim: the mean, its 95 % interval, the seeds and the verdict."""
    return "\n".join(f"{row['claim']}: {row['mean']:+.3f} [{row['lo']:+.3f}, {row['hi']:+.3f}] over {row['seeds']} "
                     f"seed(s): {row['verdict']}" for row in rows)


__all__ = ["claims", "format_claims"]
