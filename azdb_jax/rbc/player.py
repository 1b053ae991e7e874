"""reconchess players: ``TrackingPlayer`` (search-free) and ``DSMCPPlayer`` (belief and search).

``TrackingPlayer``, the first, search-free player of the RBC work:

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

``DSMCPPlayer`` (paper §5, Algorithm 4) keeps the same tracker and, beside it, the
particle filter over the opponent's information states (``belief.Belief``), and chooses
its senses and moves with UCT over approximate information states (``uct.Search``)
within a time budget per decision (``seconds_per_decision``, at most 1/30 of the clock
left, as the paper's time "approximately proportional to the time remaining"); when the
budget is below ``min_search_seconds`` it falls back to ``TrackingPlayer``'s choice. A
request that captures the king on every possible board is played without a search
(§5.4's static analysis), and by default (``safety_filter``) the search chooses among the
requests that leave our king capturable on the fewest of 128 sampled possible boards (our
addition: without a trained value the playouts see a threat only when their particle
holds it). Variants (§6): ``mixture`` (the bandit mixes the evaluator's
priors in during early visits, ``mixing`` = m), ``tree`` (m = ∞, uniform priors; the
evaluator's values) and ``network`` (the evaluator's policy at the root, no playouts:
meaningful with a trained network, ``evaluator.NetworkEvaluator``; with
``infostate.ClassicalEvaluator``'s uniform priors it plays uniformly at random).

At every decision (each sense and each move, searched or not) ``DSMCPPlayer`` makes the
synopsis of a uniform sample of at most ``synopsis_boards`` of its possible boards with
its context (``synopsis.ContextTracker``), as the training examples are made
(``data.game_examples``); that state is the search's root, and its synopsis is the
previous synopsis of the next decision (``synopses`` keeps them).
"""

import logging
import math
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np
import reconchess

from azdb_jax.classical import evaluation
from azdb_jax.rbc import belief, infostate, rules, sensing, synopsis, tracking, uct

__all__ = ["TrackingPlayer", "DSMCPPlayer", "VARIANTS", "safest_moves", "WIN", "DEFAULT_CHECK_BONUS", "move_values",
           "king_captures"]

log = logging.getLogger(__name__)
VARIANTS = ("mixture", "tree", "network")

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


def safest_moves(boards: Sequence[chess.Board], moves: Sequence[Optional[chess.Move]],
                 color: bool) -> List[Optional[chess.Move]]:
    """The requests of ``moves`` that leave ``color``'s king capturable (attacked by the
    opponent, who moves next) on the fewest of ``boards``; a request that captures the
    opponent's king on a board is safe there."""
    unsafe = []
    for move in moves:
        count = 0
        for board in boards:
            taken = rules.taken_move(board, move)
            if taken is not None and taken.to_square == board.king(not color):
                continue
            after = rules.play(board, taken)
            king = after.king(color)
            count += king is None or bool(after.attackers(not color, king))
        unsafe.append(count)
    least = min(unsafe)
    return [m for m, n in zip(moves, unsafe) if n == least]


class DSMCPPlayer(TrackingPlayer):
    """Tracking, the belief over the opponent and UCT over information states (module docstring).

    Args:
      seconds_per_decision: time for one sense or move choice (at most 1/30 of the clock left).
      simulations: playouts per decision at most (None: until the time is up).
      variant: ``mixture``, ``tree`` or ``network`` (module docstring).
      bandit: ``ucb1`` (UCB1 with priors) or ``avop``.
      exploration: c; mixing: m (the mixture variant); paranoia: p; caution: κ, with
        ``cautious_size`` boards for the opponent in cautious playouts (``uct`` docstring).
      depth: actions per playout before the leaf is evaluated.
      set_size: ℓ, boards in an approximate information state.
      particles, persistence, turns_back: the belief's size, k and kept turns (``belief``).
      evaluator: the priors and values of the search (an ``infostate.Evaluator``; default
        ``infostate.ClassicalEvaluator``; a network: ``evaluator.NetworkEvaluator``); its
        ``start_game(color, opponent_name)``, if it has one, is called when a game starts.
      synopsis_boards: the most possible boards the synopsis of a decision reads (a uniform
        sample; the training examples' ``synopsis_boards``).
      opponent_policy: the opponent model of the belief (default uniform).
      min_search_seconds: below this budget the ``TrackingPlayer`` choice is made instead.
      search_senses: False to sense as ``TrackingPlayer`` does and search only moves.
      safety_filter: search only the move requests that leave our king capturable on the fewest
        of a sample of the possible boards (our addition, not the paper's: without a trained
        value the search sees a threat only in the playouts whose particle holds it).
      value_view: whose information state values a leaf, ``mover`` (the paper's) or ``self`` (ours;
        the default, since the network-free evaluator cannot tell our moves apart on the
        opponent's set; ``uct`` docstring).
      tracking_kwargs: ``TrackingPlayer``'s (``max_boards``, ``sense_samples``, ...).
    """

    def __init__(self, *, seconds_per_decision: float = 0.5, simulations: Optional[int] = None,
                 variant: str = "mixture", bandit: str = "ucb1", exploration: float = 2.0, mixing: float = 1.0,
                 paranoia: float = 0.0, caution: float = 0.0, cautious_size: int = 1, depth: int = 6,
                 set_size: int = belief.DEFAULT_SET_SIZE, particles: int = belief.DEFAULT_PARTICLES,
                 persistence: int = belief.DEFAULT_PERSISTENCE, turns_back: int = 2,
                 evaluator: Optional[infostate.Evaluator] = None,
                 opponent_policy: Optional[belief.OpponentPolicy] = None, min_search_seconds: float = 0.05,
                 search_senses: bool = True, value_view: str = "self", safety_filter: bool = True,
                 synopsis_boards: int = 64, seed: int = 0, **tracking_kwargs):
        if not seconds_per_decision > 0:
            raise ValueError(f"seconds_per_decision must be > 0, got {seconds_per_decision}")
        if simulations is not None and simulations < 1:
            raise ValueError(f"simulations must be >= 1 or None, got {simulations}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        for name, value in (("particles", particles), ("persistence", persistence), ("turns_back", turns_back)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if synopsis_boards < 1:
            raise ValueError(f"synopsis_boards must be >= 1, got {synopsis_boards}")
        if min_search_seconds < 0:
            raise ValueError(f"min_search_seconds must be >= 0, got {min_search_seconds}")
        self.config = uct.SearchConfig(depth=depth, exploration=exploration,
                                       mixing=math.inf if variant == "tree" else mixing, bandit=bandit,
                                       paranoia=paranoia, caution=caution, cautious_size=cautious_size,
                                       set_size=set_size, uniform_priors=variant == "tree", value_view=value_view)
        self.config.validate()
        super().__init__(seconds_per_move=seconds_per_decision, seed=seed, **tracking_kwargs)
        self.seconds_per_decision = seconds_per_decision
        self.simulations = simulations
        self.variant = variant
        self.particles, self.persistence, self.turns_back = particles, persistence, turns_back
        self.evaluator = evaluator or infostate.ClassicalEvaluator(seed=seed)
        self.synopsis_boards = synopsis_boards
        self.opponent_policy = opponent_policy
        self.min_search_seconds = min_search_seconds
        self.search_senses = search_senses
        self.safety_filter = safety_filter
        self.belief: Optional[belief.Belief] = None
        self.decisions: List[Dict[str, Any]] = []
        self.context = synopsis.ContextTracker()
        self.synopses: List[np.ndarray] = []  # [104] per decision of the game, in order

    # ------------------------------------------------------------------ observations

    def handle_game_start(self, color: bool, board: chess.Board, opponent_name: str) -> None:
        super().handle_game_start(color, board, opponent_name)
        self.belief = belief.Belief(board, color, num_particles=self.particles, set_size=self.config.set_size,
                                    persistence=self.persistence, turns_back=self.turns_back,
                                    policy=self.opponent_policy, seed=int(self.rng.integers(2 ** 31)))
        self.decisions = []
        self.context = synopsis.ContextTracker()
        self.synopses = []
        start_game = getattr(self.evaluator, "start_game", None)
        if start_game is not None:
            start_game(color, opponent_name)

    def handle_opponent_move_result(self, captured_my_piece: bool, capture_square: Optional[int]) -> None:
        super().handle_opponent_move_result(captured_my_piece, capture_square)
        capture = capture_square if captured_my_piece else None
        self.belief.opponent_moved(capture, self.tracker)
        self.context.opponent_moved(capture)

    def handle_sense_result(self, sense_result: List[Tuple[int, Optional[chess.Piece]]]) -> None:
        super().handle_sense_result(sense_result)
        self.belief.sensed(sense_result, self.tracker)

    def handle_move_result(self, requested_move: Optional[chess.Move], taken_move: Optional[chess.Move],
                           captured_opponent_piece: bool, capture_square: Optional[int]) -> None:
        super().handle_move_result(requested_move, taken_move, captured_opponent_piece, capture_square)
        capture = capture_square if captured_opponent_piece else None
        self.belief.moved(requested_move, taken_move, capture, self.tracker)
        self.context.moved(taken_move, capture)

    # ------------------------------------------------------------------ decisions

    def _budget(self, seconds_left: float) -> float:
        return min(self.seconds_per_decision, max(seconds_left, 0.0) / 30)

    def _root(self, move_stage: bool) -> infostate.InfoState:
        """Our information state at a decision: the synopsis of at most ``synopsis_boards``
        possible boards with our context (module docstring), kept in ``synopses``."""
        boards = tuple(self.tracker.sample(self.synopsis_boards, self.rng))
        context, previous = self.context.context(move_stage), self.context.previous
        planes = self.context.synopsis(boards, self.color, move_stage)
        self.synopses.append(planes)
        return infostate.InfoState(boards, self.color, move_stage, context, previous, planes=planes)

    def _decide(self, root: infostate.InfoState, moves: Optional[Sequence[chess.Move]], budget: float,
                start: float):
        """The search's (or the network variant's) choice from ``root``, and its record."""
        move_stage = root.move_stage
        if self.variant == "network":
            choices = list(moves) if move_stage else list(rules.INTERIOR_SQUARES)
            sense_logits, move_logits, _ = self.evaluator(infostate.InfoBatch([root]))
            prior = infostate.softmax_over(move_logits[0] if move_stage else sense_logits[0], move_stage, choices)
            best = np.flatnonzero(prior >= prior.max() * (1 - 1e-9))
            return choices[int(self.rng.choice(best))], {"simulations": 0, "nodes": 0}
        boards = self.tracker.sample(4096, self.rng)
        search = uct.Search(self.evaluator, self.config, seed=int(self.rng.integers(2 ** 31)))
        result = search.run(self.color, move_stage, boards, self.belief.particles, moves=moves,
                            simulations=self.simulations, deadline=start + budget, root=root)
        log.debug("%s: %s after %d playouts (%d nodes, %.2f s), visits %s", "move" if move_stage else "sense",
                  result.best, result.simulations, result.nodes, result.seconds, result.visits.tolist())
        return result.best, {"simulations": result.simulations, "nodes": result.nodes}

    def choose_sense(self, sense_actions: List[int], move_actions: List[chess.Move],
                     seconds_left: float) -> Optional[int]:
        start = time.perf_counter()
        budget = self._budget(seconds_left)
        root = self._root(False)
        if not self.search_senses or budget < self.min_search_seconds:
            self.decisions.append({"stage": "sense", "fallback": self.search_senses, "simulations": 0})
            return super().choose_sense(sense_actions, move_actions, seconds_left)
        square, record = self._decide(root, None, budget, start)
        self.decisions.append({"stage": "sense", "fallback": False, **record,
                               "seconds": time.perf_counter() - start})
        return square

    def choose_move(self, move_actions: List[chess.Move], seconds_left: float) -> Optional[chess.Move]:
        start = time.perf_counter()
        budget = self._budget(seconds_left)
        root = self._root(True)
        win = uct.forced_win(self.tracker.boards, self.color)
        if win is not None and win in move_actions:
            self.king_capture_tries += 1
            self.decisions.append({"stage": "move", "fallback": False, "forced_win": True, "simulations": 0})
            return win
        if budget < self.min_search_seconds:
            self.decisions.append({"stage": "move", "fallback": True, "simulations": 0})
            return super().choose_move(move_actions, seconds_left)
        moves: List[Optional[chess.Move]] = [m for m in move_actions if m.promotion in (None, chess.QUEEN)] + [None]
        if self.safety_filter:
            moves = safest_moves(self.tracker.sample(128, self.rng), moves, self.color)
        move, record = self._decide(root, moves, budget, start)
        self.decisions.append({"stage": "move", "fallback": False, **record, "candidates": len(moves),
                               "seconds": time.perf_counter() - start})
        return move

    def planner_summary(self) -> Dict[str, Any]:
        """Decisions searched and fallen back, playouts per searched decision, the belief's counters."""
        searched = [d for d in self.decisions if d.get("simulations")]
        return {"decisions": len(self.decisions), "searched": len(searched),
                "fallbacks": sum(bool(d.get("fallback")) for d in self.decisions),
                "forced_wins": sum(bool(d.get("forced_win")) for d in self.decisions),
                "mean_simulations": float(np.mean([d["simulations"] for d in searched])) if searched else 0.0,
                "belief": self.belief.stats.summary() if self.belief is not None else {}}
