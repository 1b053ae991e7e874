"""UCT over approximate information states (paper §5, Algorithms 1 and 3, §5.4, §6).

**Playouts.** Each simulation starts from a particle of the belief (``belief.Particle``):
a hypothesis ``w`` of the true board and the opponent's approximate information state
``J_opp`` (at most ℓ boards holding ``w``); ours is ``J_self``, ℓ boards of our possible
set with ``w`` among them. The playout then plays both sides' senses and moves on ``w``
and updates both sets the way each player's observations would (paper Algorithm 3):

- a sense centred on ``s`` keeps the mover's boards that show what ``w`` shows there;
- a move request keeps the mover's boards on which it is taken as on ``w`` (same taken
  move, same capture square) and plays it; the other player sees only the capture square,
  so its set is replaced by children of its boards under the mover's possible moves with
  that capture square, sampled down to ℓ with ``w`` kept (``belief.expand_unseen_move``);
- a king capture ends the playout (value ±1), as does the static analysis of §5.4 in its
  simplest form: a mover to move whose set shows one request capturing the king on every
  board wins.

**Nodes.** A decision node is the mover's approximate information state, keyed by the
mover, the stage (sense or move) and a hash of the mover's observation history: ours
from the root, the opponent's from the particle's key (``Particle.key``). So both sides
act on what they know: the opponent's node after our move is the same whichever of our
moves led there unless the capture report differs. Nodes live in a hash table (§5.4).
A simulation descends until it reaches a node not in the table, which it evaluates and
adds, or the depth limit ``depth`` (actions), where it evaluates the playout's state; the
value is backed up along the path, each node's statistics from its mover's side. The
leaf's value is the evaluator's value of the mover's information state (the paper's,
``value_view="mover"``) or, with ``value_view="self"``, of ours at every leaf: the
opponent's set after our move mostly holds boards where we moved otherwise (it does not
see our move), so its value tells our moves apart only through the one true board in it;
a trained value head may make up for that, a static evaluation does not.

**Evaluator.** Nodes and leaves are valued by an ``infostate.Evaluator`` (the classical
or heuristic evaluators there, or a trained network through ``evaluator.NetworkEvaluator``):
for a batch of information states it returns sense and move logits, which the search
restricts to the node's choices and turns into the priors ``π`` by a softmax, and a value.
Each state carries its synopsis context as the training examples read it
(``synopsis.ContextTracker``): the root's comes from the player (``run``'s ``root``); in a
playout each side's last taken move, its capture square, the other's last capture square
and its previous decision's state follow the playout's actions. The opponent's side starts
from its particle with the capture squares both players were told, but without its last
taken move or previous synopsis (a particle does not hold them). The opponent's states
are marked (``InfoState.opponent``), so a network answers them with the opponent's headset.

**The bandit (Algorithm 1).** At a node visited ``n`` times before, with prior ``π``,
visits ``n_a``, mean values ``Q_a`` and least values ``M_a`` (from the mover's side):
with probability ``η(n) = 1 / (1 + m √n)`` the action is drawn from ``π`` (``m`` =
``mixing``: 0 always draws from ``π``, ∞ never does, so the policy is mixed in during a
node's early visits; the extracted paper text lacks the formula, and this schedule is
Smooth UCB's, which the paper names as the model); otherwise it is::

    UCB1 with priors:  argmax_a  Q'_a + c π_a sqrt(ln n / n_a)   (unvisited actions first,
                                                                   the one of highest prior first)
    aVoP:              argmax_a  Q'_a + c π_a sqrt(n) / (1 + n_a)  (unvisited: Q'_a = 0)

with ``c`` = ``exploration`` and, with paranoia ``p`` (§6, Eq. 2), ``Q'_a = (1 − p) Q_a
+ p M_a``: ``M_a`` is the least value a playout through ``a`` returned.

**Caution** (§6): in a fraction ``caution`` of the playouts the opponent's set is cut to
``cautious_size`` boards (default 1: the true board alone) and its nodes in that playout
are keyed by that set too: the opponent then acts on better information than it has,
and risky plays that only work while it is unsure are refuted in the tree.

**Variants** (§6, Table 4): the mixture (finite ``m``), tree only (``m`` = ∞ with uniform
priors) and the evaluator's policy without playouts (``DSMCPPlayer``'s ``network``
variant) are options of the player.
"""

import dataclasses
import math
import time
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np

from azdb_jax.rbc import belief, rules, synopsis
from azdb_jax.rbc.infostate import Evaluator, InfoBatch, InfoState, softmax_over

__all__ = ["SearchConfig", "Node", "Search", "SearchResult", "mixing_probability", "bandit_scores", "select",
           "forced_win", "BANDITS", "VALUE_VIEWS"]

BANDITS = ("ucb1", "avop")
VALUE_VIEWS = ("mover", "self")


# ---------------------------------------------------------------------------- the bandit


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """The search's constants (paper names in brackets; module docstring)."""

    depth: int = 6  # actions a playout plays at most before its leaf is evaluated (d)
    exploration: float = 2.0  # c
    mixing: float = 1.0  # m; math.inf: never draw from the prior (tree only)
    bandit: str = "ucb1"  # or "avop"
    paranoia: float = 0.0  # p in [0, 1]
    caution: float = 0.0  # fraction of playouts in [0, 1] where the opponent's set is cut
    cautious_size: int = 1  # ℓ for the opponent in those playouts
    set_size: int = belief.DEFAULT_SET_SIZE  # ℓ
    uniform_priors: bool = False  # ignore the evaluator's logits (the tree-only variant)
    value_view: str = "mover"  # whose information state gives a leaf's value: "mover" or "self" (ours)

    def validate(self) -> None:
        """ValueError naming the first option out of range."""
        checks = (("depth", self.depth >= 1, ">= 1"), ("exploration", self.exploration >= 0, ">= 0"),
                  ("mixing", self.mixing >= 0, ">= 0 (inf: tree only)"),
                  ("bandit", self.bandit in BANDITS, f"one of {', '.join(BANDITS)}"),
                  ("paranoia", 0 <= self.paranoia <= 1, "in [0, 1]"), ("caution", 0 <= self.caution <= 1, "in [0, 1]"),
                  ("cautious_size", self.cautious_size >= 1, ">= 1"), ("set_size", self.set_size >= 1, ">= 1"),
                  ("value_view", self.value_view in VALUE_VIEWS, f"one of {', '.join(VALUE_VIEWS)}"))
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(f"{name} must be {rule}, got {getattr(self, name)!r}")


class Node:
    """A decision node: the mover's choices, their priors and the statistics of each (from the
    mover's side): visits ``n_a``, summed values, least value ``M_a``; ``value`` is the
    evaluator's value when the node was added."""

    __slots__ = ("choices", "prior", "visits", "total", "least", "value")

    def __init__(self, choices: Sequence, prior: np.ndarray, value: float = 0.0):
        self.choices = list(choices)
        self.prior = np.asarray(prior, dtype=np.float64)
        self.visits = np.zeros(len(self.choices), dtype=np.int64)
        self.total = np.zeros(len(self.choices))
        self.least = np.full(len(self.choices), np.inf)
        self.value = value

    def mean(self) -> np.ndarray:
        """``Q_a`` (0 for an unvisited action)."""
        return np.divide(self.total, self.visits, out=np.zeros_like(self.total), where=self.visits > 0)

    def update(self, index: int, value: float) -> None:
        self.visits[index] += 1
        self.total[index] += value
        self.least[index] = min(self.least[index], value)


def mixing_probability(visits: int, mixing: float) -> float:
    """``η(n) = 1 / (1 + m √n)``: the chance of drawing from the prior at a node visited ``n`` times."""
    if math.isinf(mixing):
        return 0.0
    return 1.0 / (1.0 + mixing * math.sqrt(visits))


def bandit_scores(node: Node, config: SearchConfig) -> np.ndarray:
    """The bandit's score of each action (the argmax is chosen; module docstring). UCB1 gives
    an unvisited action ``1e9 + π_a`` so that every action is tried once, highest prior first."""
    n = int(node.visits.sum())
    mean = node.mean()
    least = np.where(node.visits > 0, node.least, 0.0)
    exploit = (1 - config.paranoia) * mean + config.paranoia * least
    if config.bandit == "avop":
        return exploit + config.exploration * node.prior * math.sqrt(n) / (1 + node.visits)
    visited = node.visits > 0
    bonus = config.exploration * node.prior * np.sqrt(np.log(max(n, 1)) / np.maximum(node.visits, 1))
    return np.where(visited, exploit + bonus, 1e9 + node.prior)


def select(node: Node, config: SearchConfig, rng: np.random.Generator) -> int:
    """Algorithm 1: an action index of ``node`` (ties broken uniformly)."""
    if rng.random() < mixing_probability(int(node.visits.sum()), config.mixing):
        return int(rng.choice(len(node.choices), p=node.prior))
    scores = bandit_scores(node, config)
    best = np.flatnonzero(scores >= scores.max() - 1e-12)
    return int(best[0] if len(best) == 1 else rng.choice(best))


# ---------------------------------------------------------------------------- playouts


def forced_win(boards: Sequence[chess.Board], color: bool) -> Optional[chess.Move]:
    """A request of ``color`` (to move) that captures the opposing king on every board, or None
    (§5.4's static analysis, in its simplest form; the lowest such request in uci order)."""
    common = None
    for board in boards:
        king = board.king(not color)
        if king is None:
            return None
        pairs = {chess.Move(a, king) for a in board.attackers(color, king)}
        common = pairs if common is None else common & pairs
        if not common:
            return None
    if not common:
        return None
    for move in sorted(common, key=chess.Move.uci):
        if all(rules.taken_move(b, move) == move for b in boards):
            return move
    return None


@dataclasses.dataclass
class _Side:
    """One player in a playout: its set, the key of its node, and its synopsis context."""

    boards: List[chess.Board]
    key: int
    size: int  # ℓ for this side in this playout
    opponent: bool  # the searching player's opponent
    context: synopsis.Context  # its stage is set when a state is made
    last_state: Optional[InfoState] = None  # its previous decision (the previous synopsis's source)

    def state(self, color: bool, move_stage: bool) -> InfoState:
        return InfoState(tuple(self.boards), color, move_stage, self.context._replace(move_stage=move_stage),
                         previous=self.last_state, opponent=self.opponent)


def _sense_code(result) -> Tuple[int, ...]:
    return tuple(s * 16 + (0 if p is None else p.piece_type + 6 * (p.color == chess.BLACK)) for s, p in result)


def _move_code(move: Optional[chess.Move]) -> int:
    return -1 if move is None else move.from_square * 64 + move.to_square + 4096 * (move.promotion or 0)


@dataclasses.dataclass
class SearchResult:
    """The root's choices with their visits and mean values (our side), the chosen one
    (most visits, ties by value) and the search's counts."""

    choices: List
    visits: np.ndarray
    values: np.ndarray
    best: object
    simulations: int
    nodes: int
    seconds: float


class Search:
    """UCT over approximate information states for the player ``color`` (module docstring).

    ``run`` searches from our decision (a sense or a move) given our possible boards (a
    sample is enough) and the belief's particles, until ``simulations`` or ``deadline``.
    """

    def __init__(self, evaluator: Evaluator, config: SearchConfig = SearchConfig(), *, seed: int = 0):
        config.validate()
        self.evaluator = evaluator
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.table: Dict[Tuple[bool, bool, int], Node] = {}
        self.evaluations = 0
        self.terminals = 0

    # ------------------------------------------------------------------ evaluator

    def _evaluate(self, state: InfoState, choices: Sequence) -> Tuple[np.ndarray, float]:
        """The priors over ``choices`` (a softmax of the logits restricted to them) and the value."""
        sense_logits, move_logits, values = self.evaluator(InfoBatch([state]))
        self.evaluations += 1
        value = float(np.clip(values[0], -1.0, 1.0))
        if self.config.uniform_priors:
            return np.full(len(choices), 1.0 / len(choices)), value
        return softmax_over(move_logits[0] if state.move_stage else sense_logits[0], state.move_stage, choices), value

    def _value(self, state: InfoState) -> float:
        _, _, values = self.evaluator(InfoBatch([state]))
        self.evaluations += 1
        return float(np.clip(values[0], -1.0, 1.0))

    @staticmethod
    def _choices(truth: chess.Board, move_stage: bool) -> List:
        if not move_stage:
            return list(rules.INTERIOR_SQUARES)
        return [m for m in rules.move_actions(truth) if m.promotion in (None, chess.QUEEN)] + [None]

    # ------------------------------------------------------------------ search

    def run(self, color: bool, move_stage: bool, boards: Sequence[chess.Board], particles: Sequence[belief.Particle],
            *, moves: Optional[Sequence[Optional[chess.Move]]] = None, simulations: Optional[int] = None,
            deadline: Optional[float] = None, context: Optional[synopsis.Context] = None,
            root: Optional[InfoState] = None) -> SearchResult:
        """Searches from our decision and returns the root's statistics.

        Args:
          color: our colour (we are to act).
          move_stage: True to choose a move, False a sense.
          boards: our possible boards (or a uniform sample of them).
          particles: the belief's particles (their boards are among ours).
          moves: the move requests to choose from (None: the pass; under-promotions are
            dropped); default: ``rules.move_actions`` on a board and the pass.
          simulations, deadline: stop after that many playouts or at ``time.perf_counter()``
            ``deadline``, whichever comes first (at least one playout).
          context: our synopsis context at the root (None: none).
          root: our information state at the root, whose synopsis gives the root's priors
            and value and which our later states in the playouts take as their previous
            decision; default: ℓ of ``boards`` with ``context`` and no previous synopsis.
        """
        if not boards or not particles:
            raise ValueError("a search needs possible boards and particles")
        if simulations is None and deadline is None:
            raise ValueError("give simulations or a deadline")
        start = time.perf_counter()
        size = self.config.set_size
        if root is None:
            root_sample = list(boards) if len(boards) <= size else [boards[i] for i in self.rng.choice(
                len(boards), size=size, replace=False)]
            root = InfoState(tuple(root_sample), color, move_stage, context)
        elif root.color != color or root.move_stage != move_stage:
            raise ValueError("the root state is not our decision's (colour or stage differ)")
        if moves is not None:
            root_choices = [m for m in moves if m is None or m.promotion in (None, chess.QUEEN)]
            if not root_choices:
                raise ValueError("no move to search")
        else:
            root_choices = self._choices(boards[0], True) if move_stage else self._choices(boards[0], False)
        root_key = (color, move_stage, 0)
        prior, value = self._evaluate(root, root_choices)
        root_node = Node(root_choices, prior, value)
        self.table[root_key] = root_node
        done = 0
        while True:
            self._simulate(color, move_stage, boards, particles, root_key, root)
            done += 1
            if simulations is not None and done >= simulations:
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break
        values = root_node.mean()
        order = np.lexsort((values, root_node.visits))  # most visits, then best mean
        best = root_node.choices[int(order[-1])]
        return SearchResult(root_node.choices, root_node.visits.copy(), values, best, done, len(self.table),
                            time.perf_counter() - start)

    def _simulate(self, us: bool, move_stage: bool, boards: Sequence[chess.Board],
                  particles: Sequence[belief.Particle], root_key, root: InfoState) -> None:
        config, rng = self.config, self.rng
        particle = particles[int(rng.integers(len(particles)))]
        truth = particle.board
        others = [boards[i] for i in rng.choice(len(boards), size=min(len(boards), config.set_size), replace=False)]
        ours = root.full_context
        # The opponent was told where our last move captured, and we where its last one did.
        theirs = synopsis.Context(False, last_own_capture=ours.last_opponent_capture,
                                  last_opponent_capture=ours.last_own_capture)
        sides = {us: _Side(list(belief._with_truth(others, truth))[:config.set_size], 0, config.set_size, False, ours),
                 not us: _Side(list(particle.opponent_boards), particle.key, config.set_size, True, theirs)}
        if config.caution and rng.random() < config.caution:
            opponent = sides[not us]
            pool = [b for b in opponent.boards[1:]]
            keep = [pool[i] for i in rng.permutation(len(pool))[:config.cautious_size - 1]]
            opponent.boards = [truth] + keep
            opponent.size = config.cautious_size
            opponent.key = hash((opponent.key, 7, tuple(sorted(rules.board_key(b) for b in opponent.boards))))
        mover, stage = us, move_stage
        path: List[Tuple[Node, int, bool]] = []
        value_us = None
        for depth in range(config.depth + 1):
            side = sides[mover]
            if stage and depth:
                win = forced_win(side.boards, mover)
                if win is not None:
                    self.terminals += 1
                    value_us = 1.0 if mover == us else -1.0
                    break
            key = root_key if depth == 0 else (mover, stage, side.key)
            node = self.table.get(key)
            if node is None or depth == config.depth:
                state = side.state(mover, stage)
                if node is None:
                    choices = self._choices(truth, stage)
                    prior, value = self._evaluate(state, choices)
                    if depth < config.depth:
                        self.table[key] = Node(choices, prior, value)
                else:
                    value = self._value(state)
                value_us = value if mover == us else -value
                if config.value_view == "self" and mover != us:
                    value_us = self._value(sides[us].state(us, False))
                break
            index = select(node, config, rng)
            path.append((node, index, mover))
            side.last_state = root if depth == 0 else side.state(mover, stage)
            choice = node.choices[index]
            if not stage:  # a sense
                seen = belief.sense_observation(truth, choice)
                side.boards = [b for b in side.boards if rules.sense_matches(b, seen)]
                side.key = hash((side.key, 3, choice, _sense_code(seen)))
                stage = True
                continue
            taken = rules.taken_move(truth, choice)
            capture = rules.capture_square(truth, taken)
            after = rules.play(truth, taken)
            side.boards = [rules.play(b, taken) for b in side.boards
                           if rules.taken_move(b, choice) == taken and rules.capture_square(b, taken) == capture]
            side.key = hash((side.key, 4, _move_code(choice), _move_code(taken), capture))
            side.context = side.context._replace(
                last_from=taken.from_square if taken else None, last_to=taken.to_square if taken else None,
                last_own_capture=capture)
            other = sides[not mover]
            other.boards = list(belief.expand_unseen_move(other.boards, after, capture, other.size, rng))
            other.key = hash((other.key, 1, capture))
            other.context = other.context._replace(last_opponent_capture=capture)
            truth = after
            if after.king(not mover) is None:
                self.terminals += 1
                value_us = 1.0 if mover == us else -1.0
                break
            mover, stage = not mover, False
        for node, index, mover in path:
            node.update(index, value_us if mover == us else -value_us)
