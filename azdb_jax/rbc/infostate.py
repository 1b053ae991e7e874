"""Approximate information states and the evaluators that value them (paper §5, Algorithm 3).

The search (``uct``) and the belief's opponent model ask, for an approximate information
state, the priors of its player's choices and a value. An ``InfoState`` is the player's
possible boards (at most ℓ), its colour, the stage (sense or move), its synopsis context
(``synopsis.Context``: its last taken move and capture square, the opponent's last capture
square), its previous synopsis and whether it is the searching player's opponent's;
``InfoState.synopsis`` is its 104-plane synopsis (``synopsis.synopsis``) with that
context, made once when first read.

An ``Evaluator`` answers a batch of them (``InfoBatch``) with sense-prior logits over
``actions.NUM_SENSES``, move-prior logits over ``actions.NUM_MOVES`` and a value in
[−1, 1] for the player to act. The caller masks the logits to the legal choices (a
softmax over them gives the priors ``π``). ``ClassicalEvaluator`` needs no network:
uniform priors, and the value is the mean over a few boards of the set of
``tanh(eval / scale)`` with ``eval`` the classical evaluation
(``azdb_jax.classical.evaluation``) from the player's side, or ±1 on a board where the side
to move attacks the other king. ``HeuristicEvaluator`` adds hand-made priors (senses that
split the set, captures and king attacks) in place of a network's; a trained network
answers through ``evaluator.NetworkEvaluator``. An evaluator may also define
``start_game(color, opponent_name)``, which the player calls when a game starts.
"""

import dataclasses
import functools
import math
from typing import Optional, Protocol, Sequence, Tuple, Union

import chess
import numpy as np

from azdb_jax.classical import evaluation
from azdb_jax.rbc import actions, belief, rules, sensing, synopsis

__all__ = ["InfoState", "InfoBatch", "Evaluator", "ClassicalEvaluator", "HeuristicEvaluator", "EvaluatorPolicy",
           "classical_value", "softmax_over"]


@dataclasses.dataclass(frozen=True, eq=False)
class InfoState:
    """An approximate information state (module docstring).

    ``previous`` is the player's synopsis at its decision before: ``[104]`` planes, their
    carried ``[18]`` (``synopsis.carried``), or the ``InfoState`` of that decision (its
    carried planes are made when needed); None: none. ``planes``: the synopsis when it is
    already made (otherwise made from the rest when first read). ``opponent``: the state is
    the searching player's opponent's (a network answers it with the opponent's headset).
    """

    boards: Tuple[chess.Board, ...]
    color: bool
    move_stage: bool
    context: Optional[synopsis.Context] = None
    previous: Optional[Union[np.ndarray, "InfoState"]] = None
    opponent: bool = False
    planes: Optional[np.ndarray] = None

    @property
    def full_context(self) -> synopsis.Context:
        return self.context._replace(move_stage=self.move_stage) if self.context else synopsis.Context(self.move_stage)

    def synopsis(self) -> np.ndarray:
        """``[104]`` uint64 (made once)."""
        return self.planes if self.planes is not None else self._synopsis

    @functools.cached_property
    def _synopsis(self) -> np.ndarray:
        previous = self.previous.carried() if isinstance(self.previous, InfoState) else self.previous
        return synopsis.synopsis(self.boards, self.color, self.full_context, previous)

    def carried(self) -> np.ndarray:
        """``[18]``: the planes the player's next synopsis carries (``synopsis.carried``)."""
        if self.planes is not None or "_synopsis" in self.__dict__:
            return self.synopsis()[synopsis.CARRIED]
        return synopsis.carried(self.boards, self.color, self.full_context)


class InfoBatch:
    """A batch of information states; ``synopses`` (``[B, 104]`` uint64) is made when read."""

    def __init__(self, states: Sequence[InfoState]):
        self.states = list(states)
        self._synopses: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return len(self.states)

    @property
    def synopses(self) -> np.ndarray:
        if self._synopses is None:
            self._synopses = np.stack([s.synopsis() for s in self.states]).astype(np.uint64)
        return self._synopses


class Evaluator(Protocol):
    """``(sense_logits [B, NUM_SENSES], move_logits [B, NUM_MOVES], value [B])`` for a batch;
    values in [−1, 1] for the player to act, logits unmasked."""

    def __call__(self, batch: InfoBatch) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        ...


def softmax_over(logits: np.ndarray, move_stage: bool, choices: Sequence) -> np.ndarray:
    """The priors of ``choices`` (sense squares, or move requests with None the pass): a
    softmax of one state's sense or move ``logits`` restricted to them (the masking)."""
    if move_stage:
        picked = np.asarray([logits[actions.move_index(m)] for m in choices], dtype=np.float64)
    else:
        picked = np.asarray([logits[actions.sense_index(s)] for s in choices], dtype=np.float64)
    weights = np.exp(picked - picked.max())
    return weights / weights.sum()


def classical_value(board: chess.Board, color: bool, weights: evaluation.EvalWeights) -> float:
    """The classical evaluation's sum of terms (without tempo) from ``color``'s side, in centipawns."""
    total = sum(w * f for w, f in zip(weights.values, evaluation.chess_features(board)))
    return total if color == chess.WHITE else -total


class ClassicalEvaluator:
    """The network-free evaluator: uniform priors (zero logits) and, for the value, the mean
    over up to ``boards`` boards drawn from the set of 1 where the player attacks the opposing
    king and ``tanh(eval / scale)`` elsewhere (module docstring)."""

    def __init__(self, weights: evaluation.EvalWeights = evaluation.DEFAULT_WEIGHTS, scale: float = 400.0,
                 boards: int = belief.DEFAULT_SET_SIZE, seed: int = 0):
        if scale <= 0 or boards < 1:
            raise ValueError(f"scale must be > 0 and boards >= 1, got {scale}, {boards}")
        self.weights, self.scale, self.boards = weights, scale, boards
        self._rng = np.random.default_rng(seed)

    def board_value(self, board: chess.Board, color: bool) -> float:
        """``color``'s value of ``board``: ±1 when a king is gone or the side to move attacks
        the other king (it takes it next), else ``tanh(eval / scale)``."""
        for side in (color, not color):
            if board.king(side) is None:
                return -1.0 if side == color else 1.0
        mover = board.turn
        if board.attackers(mover, board.king(not mover)):
            return 1.0 if mover == color else -1.0
        return math.tanh(classical_value(board, color, self.weights) / self.scale)

    def __call__(self, batch: InfoBatch):
        values = np.zeros(len(batch))
        for i, state in enumerate(batch.states):
            boards = state.boards
            if len(boards) > self.boards:
                boards = [boards[j] for j in self._rng.choice(len(boards), size=self.boards, replace=False)]
            values[i] = np.mean([self.board_value(b, state.color) for b in boards])
        return (np.zeros((len(batch), actions.NUM_SENSES), np.float32),
                np.zeros((len(batch), actions.NUM_MOVES), np.float32), values)


class HeuristicEvaluator(ClassicalEvaluator):
    """``ClassicalEvaluator``'s value with hand-made priors instead of uniform ones (a stand-in
    for a network's policy, so that the mixture and network variants have a policy to use):

    - sense logits ``−sense_weight · E|S'| / |S|``: ``E|S'| = Σ n_k² / |S|`` is the expected
      number of the state's boards left after the sense (``sensing.expected_remaining``),
      so senses that split the boards are preferred;
    - move logits, on one board drawn from the set: ``king`` for a request that captures
      the king there, ``capture`` for one that captures another piece, ``attack`` when the
      moved piece then attacks the king, 0 otherwise (the pass included).
    """

    def __init__(self, *, sense_weight: float = 4.0, king: float = 6.0, capture: float = 1.5, attack: float = 1.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.sense_weight, self.king, self.capture, self.attack = sense_weight, king, capture, attack

    def __call__(self, batch: InfoBatch):
        sense_logits, move_logits, values = super().__call__(batch)
        for i, state in enumerate(batch.states):
            if not state.move_stage:
                codes = sensing.piece_codes(state.boards)
                sizes = np.asarray([sensing.expected_remaining(codes, s) for s in rules.INTERIOR_SQUARES])
                sense_logits[i] = -self.sense_weight * sizes / len(state.boards)
                continue
            board = state.boards[int(self._rng.integers(len(state.boards)))]
            if board.turn != state.color:
                continue
            target = board.king(not state.color)
            for request in rules.move_actions(board):
                taken = rules.taken_move(board, request)
                if taken is None or target is None:
                    continue
                index = actions.move_index(request)
                if taken.to_square == target:
                    move_logits[i, index] = self.king
                elif rules.capture_square(board, taken) is not None:
                    move_logits[i, index] = self.capture
                elif rules.play(board, taken).attacks_mask(taken.to_square) & chess.BB_SQUARES[target]:
                    move_logits[i, index] = self.attack
        return sense_logits, move_logits, values


class EvaluatorPolicy:
    """An opponent model for ``belief.Belief`` from an ``Evaluator``'s priors (e.g. a network's
    policy head for this opponent): a softmax of its logits restricted to the choices. The
    states it asks about are marked the opponent's."""

    def __init__(self, evaluator):
        self.evaluator = evaluator

    def __call__(self, boards, color, move_stage, choices, rng):
        batch = InfoBatch([InfoState(tuple(boards), color, move_stage, opponent=True)])
        sense_logits, move_logits, _ = self.evaluator(batch)
        return softmax_over(move_logits[0] if move_stage else sense_logits[0], move_stage, choices)
