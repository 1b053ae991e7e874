"""A reconchess player that tracks the possible boards, senses for information and moves robustly.

The first, search-free player of the RBC work (the network, the particle filter over
the opponent's information states and the search over information states of the paper
come later; docs/rbc.md):

- it keeps the exact set of possible boards (``tracking.PossibleStates``);
- it senses where the result is expected to leave the fewest boards
  (``sensing.choose_sense``);
- it captures the opponent's king when some possible board lets one of its moves do it
  (the move that does on the most boards);
- otherwise it scores each move it may request, averaged over a uniform sample of the
  possible boards, by the value after the move *taken on that board* (RBC's revision:
  ``rules.taken_move``): a king capture is ``+WIN``, leaving its king capturable is
  ``−WIN``, and otherwise the classical evaluation (``azdb_jax.classical.evaluation``)
  after the opponent's best capture or no capture (a one-ply quiescence for the
  opponent, who in truth sees less), plus ``check_bonus`` when it does not capture and
  our pieces then attack its king: RBC reports no check, so an attacked king is often
  captured next turn (without the bonus the player shuffled against opponents that
  stopped moving, and drew on the 100-ply rule). Boards are added to the sample until the
  move's time budget (``seconds_per_move``, at most 1/30 of the clock left) runs out.
"""

import time
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np
import reconchess

from azdb_jax.classical import evaluation
from azdb_jax.rbc import rules, sensing, tracking

__all__ = ["TrackingPlayer", "WIN", "DEFAULT_CHECK_BONUS", "move_values", "king_captures"]

WIN = 100_000  # a king capture, far above any evaluation (|eval| <= evaluation.EVAL_LIMIT)
DEFAULT_CHECK_BONUS = 300.0  # a minor piece's worth: an unseen attack on the king often wins the game


def _value(board: chess.Board, color: bool, weights: evaluation.EvalWeights) -> float:
    """The classical evaluation's sum of terms (without tempo) from ``color``'s side."""
    total = sum(w * f for w, f in zip(weights.values, evaluation.chess_features(board)))
    return total if color == chess.WHITE else -total


def _after_reply(board: chess.Board, color: bool, weights: evaluation.EvalWeights, check_bonus: float) -> float:
    """``board`` with the opponent to move: −WIN if it can take our king, else the least of the
    value standing pat (with ``check_bonus`` if we attack its king) and after each of its captures."""
    king = board.king(color)
    if king is None or board.attackers(not color, king):
        return -WIN
    best = _value(board, color, weights)
    their_king = board.king(not color)
    if their_king is not None and board.attackers(color, their_king):
        best += check_bonus
    for move in board.generate_pseudo_legal_captures():
        child = rules.play(board, move)
        best = min(best, _value(child, color, weights))
    return best


def move_values(boards: Sequence[chess.Board], moves: Sequence[Optional[chess.Move]], color: bool,
                weights: evaluation.EvalWeights = evaluation.DEFAULT_WEIGHTS, check_bonus: float = 0.0,
                deadline: Optional[float] = None) -> Tuple[np.ndarray, int]:
    """``[len(moves)]`` mean values of requesting each move over ``boards`` (module docstring),
    and the number of boards used: boards are scored one at a time (every move on each)
    until ``deadline`` (``time.perf_counter()``), at least one."""
    totals = np.zeros(len(moves))
    used = 0
    for board in boards:
        their_king = board.king(not color)
        for index, move in enumerate(moves):
            taken = rules.taken_move(board, move)
            if taken is not None and taken.to_square == their_king:
                totals[index] += WIN
            else:
                totals[index] += _after_reply(rules.play(board, taken), color, weights, check_bonus)
        used += 1
        if deadline is not None and time.perf_counter() > deadline:
            break
    return totals / max(used, 1), used


def king_captures(boards: Sequence[chess.Board], moves: Sequence[chess.Move]) -> Dict[chess.Move, int]:
    """For each requested move that captures the opponent's king on some board, on how many."""
    by_target: Dict[int, List[chess.Move]] = {}
    for move in moves:
        by_target.setdefault(move.to_square, []).append(move)
    counts: Dict[chess.Move, int] = {}
    for board in boards:
        king = board.king(not board.turn)
        for move in by_target.get(king, ()) if king is not None else ():
            taken = rules.taken_move(board, move)
            if taken is not None and taken.to_square == king:
                counts[move] = counts.get(move, 0) + 1
    return counts


class TrackingPlayer(reconchess.Player):
    """Possible-state tracking, information-greedy senses and sampled robust moves (module docstring).

    Args:
      seconds_per_move: time budget for scoring moves (at most 1/30 of the clock left).
      max_boards: the tracker's cap on possible boards (None: no cap).
      max_boards_before_sense: its cap between the opponent's move and the sense (None:
        ``tracking.BEFORE_SENSE_FACTOR`` times ``max_boards``).
      sense_samples: boards the sense choice reads at most (a uniform sample of the set).
      seed: seed of the sampling (senses, moves, the tracker's cap).
      weights: the classical evaluation's weights.
      check_bonus: centipawns for leaving the opponent's king attacked (module docstring).
    """

    def __init__(self, *, seconds_per_move: float = 0.5, max_boards: Optional[int] = tracking.DEFAULT_MAX_BOARDS,
                 max_boards_before_sense: Optional[int] = None, sense_samples: int = 5000, seed: int = 0,
                 weights: evaluation.EvalWeights = evaluation.DEFAULT_WEIGHTS,
                 check_bonus: float = DEFAULT_CHECK_BONUS):
        if seconds_per_move <= 0:
            raise ValueError(f"seconds_per_move must be > 0, got {seconds_per_move}")
        if sense_samples < 1:
            raise ValueError(f"sense_samples must be >= 1, got {sense_samples}")
        self.seconds_per_move = seconds_per_move
        self.max_boards = max_boards
        self.max_boards_before_sense = max_boards_before_sense
        self.sense_samples = sense_samples
        self.weights = weights
        self.check_bonus = check_bonus
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self.tracker: Optional[tracking.PossibleStates] = None
        self.color: Optional[bool] = None
        self.boards_scored: List[int] = []  # boards sampled per move choice
        self.king_capture_tries = 0
        self.result: Optional[Tuple[Optional[bool], Optional[reconchess.WinReason]]] = None

    # ------------------------------------------------------------------ reconchess.Player

    def handle_game_start(self, color: bool, board: chess.Board, opponent_name: str) -> None:
        self.color = color
        self.tracker = tracking.PossibleStates(board, color, max_boards=self.max_boards,
                                               max_boards_before_sense=self.max_boards_before_sense,
                                               seed=int(self.rng.integers(2 ** 31)))
        self.boards_scored, self.king_capture_tries, self.result = [], 0, None

    def handle_opponent_move_result(self, captured_my_piece: bool, capture_square: Optional[int]) -> None:
        self.tracker.opponent_moved(capture_square if captured_my_piece else None)

    def choose_sense(self, sense_actions: List[int], move_actions: List[chess.Move],
                     seconds_left: float) -> Optional[int]:
        candidates = [s for s in rules.INTERIOR_SQUARES if s in sense_actions] or list(sense_actions)
        return sensing.choose_sense(self.tracker.sample(self.sense_samples, self.rng), self.rng, candidates)

    def handle_sense_result(self, sense_result: List[Tuple[int, Optional[chess.Piece]]]) -> None:
        self.tracker.sensed(sense_result)

    def choose_move(self, move_actions: List[chess.Move], seconds_left: float) -> Optional[chess.Move]:
        start = time.perf_counter()
        budget = min(self.seconds_per_move, max(seconds_left, 0.0) / 30)
        boards = self.tracker.boards
        captures = king_captures(boards, move_actions)
        if captures:
            self.king_capture_tries += 1
            most = max(captures.values())
            return sorted((m for m, n in captures.items() if n == most), key=chess.Move.uci)[0]
        # Underpromotions are dropped: a queen does what they do (RBC has no stalemate).
        moves: List[Optional[chess.Move]] = [m for m in move_actions if m.promotion in (None, chess.QUEEN)] + [None]
        order = self.rng.permutation(len(boards))
        values, used = move_values([boards[i] for i in order], moves, self.color, self.weights, self.check_bonus,
                                   deadline=start + budget)
        self.boards_scored.append(used)
        best = np.flatnonzero(values >= values.max() - 1e-9)
        return moves[int(self.rng.choice(best))]

    def handle_move_result(self, requested_move: Optional[chess.Move], taken_move: Optional[chess.Move],
                           captured_opponent_piece: bool, capture_square: Optional[int]) -> None:
        self.tracker.moved(requested_move, taken_move, capture_square if captured_opponent_piece else None)

    def handle_game_end(self, winner_color: Optional[bool], win_reason: Optional[reconchess.WinReason],
                        game_history: reconchess.GameHistory) -> None:
        self.result = (winner_color, win_reason)
