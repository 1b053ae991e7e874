"""Learning the evaluation's weights by least squares from game outcomes.

Each position ``s`` of a finished game gives a row ``x(s)`` — the evaluation's features
from the side to move (``evaluation.side_features``: the White-minus-Black terms times
±1, then the tempo constant 1) — and a target ``z(s)``, the game's result for the side
to move (+1 win, 0 draw, −1 loss). The weights minimise the ridge-regularised squared
error

    w* = argmin_w Σ_s (z(s) − w · x(s))² + λ ‖w‖²  =  (XᵀX + λI)⁻¹ Xᵀz,

the "least squares with no search" of Deep Blue's weight fitting. The fitted weights
predict the result in units of the outcome; `fit_weights` rescales them so that a pawn
is worth 100 centipawns (the evaluation's unit; the search's decisions depend only on
the ratios, and the ratio to draw scores, which rescaling keeps).

Only *quiet* positions are used: side to move not in check and without a capture or
promotion (`is_quiet`), so that a position's material is not about to change — the
evaluation is meant for the quiescence search's leaves.
"""

from typing import Iterable, List, Sequence, Tuple

import numpy as np

from azdb_jax.classical import evaluation

__all__ = ["fit_weights", "is_quiet", "dataset", "explained_variance"]


def is_quiet(position) -> bool:
    """Side to move not in check and without captures or promotions."""
    return not position.in_check() and not position.noisy_moves()


def dataset(games: Iterable[Tuple[Sequence[object], float]], *, skip_plies: int = 4,
            quiet_only: bool = True) -> Tuple[np.ndarray, np.ndarray]:
    """(X [N, F], z [N]) from games given as (positions in order, White's result +1/0/−1).

    Positions are the classical search's (``ChessPosition``/``GardnerPosition``); the
    first ``skip_plies`` of each game (its opening) are left out.
    """
    rows: List[List[int]] = []
    targets: List[float] = []
    for positions, white_result in games:
        for ply, position in enumerate(positions):
            if ply < skip_plies or (quiet_only and not is_quiet(position)):
                continue
            rows.append(evaluation.side_features(position))
            targets.append(white_result if position.turn else -white_result)
    if not rows:
        raise ValueError("no positions to learn from (games too short or never quiet)")
    return np.asarray(rows, np.float64), np.asarray(targets, np.float64)


def fit_weights(features: np.ndarray, outcomes: np.ndarray, *, ridge: float = 1.0,
                name: str = "learned") -> evaluation.EvalWeights:
    """Least-squares weights (module docstring), rescaled to a 100-centipawn pawn.

    Args:
      features: [N, F] rows of ``evaluation.side_features``.
      outcomes: [N] results for the side to move.
      ridge: λ ≥ 0 (keeps features that never vary, e.g. a piece type absent from the
        data, at zero).

    Raises:
      ValueError: shapes disagree, or the fitted pawn weight is not positive (too few or
        too uninformative games to set a scale).
    """
    features, outcomes = np.asarray(features, np.float64), np.asarray(outcomes, np.float64)
    if features.ndim != 2 or features.shape[1] != len(evaluation.FEATURES) or outcomes.shape != features.shape[:1]:
        raise ValueError(f"features must be [N, {len(evaluation.FEATURES)}] and outcomes [N], got "
                         f"{features.shape} and {outcomes.shape}")
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    f = features.shape[1]
    weights = np.linalg.solve(features.T @ features + ridge * np.eye(f), features.T @ outcomes)
    pawn = weights[evaluation.FEATURES.index("pawn")]
    if not pawn > 0:
        raise ValueError(f"the fitted pawn weight is {pawn:.4g}, not positive: the games do not tie outcomes to "
                         "material (more or more decisive games are needed)")
    scaled = 100.0 * weights / pawn
    return evaluation.EvalWeights(tuple(float(round(w, 2)) for w in scaled), name)


def explained_variance(features: np.ndarray, outcomes: np.ndarray, weights: evaluation.EvalWeights) -> float:
    """R² of the best rescaling of ``features @ weights`` as a predictor of the outcomes."""
    prediction = np.asarray(features, np.float64) @ np.asarray(weights.values)
    scale = (prediction @ outcomes) / max(prediction @ prediction, 1e-12)
    residual = outcomes - scale * prediction
    return float(1.0 - residual.var() / max(outcomes.var(), 1e-12))
