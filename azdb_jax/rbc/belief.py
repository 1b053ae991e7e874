"""The belief over the opponent's information state: an unweighted particle filter (paper §5, Algorithms 2 and 4).

DSMCP plans against an opponent that is itself uncertain, so its belief is "second
order": a particle is not only a hypothesis of the true board but also of what the
opponent knows. Here a ``Particle`` holds

- ``board``: a hypothesis of the true board, consistent with every observation of ours;
- ``opponent_boards``: the opponent's approximate information state ``J`` (the paper's
  limited-size set of world states possible from its point of view, at most ``set_size``
  = ℓ boards, always holding ``board``);
- ``key``: a hash of the opponent's observation history in that hypothesis (its capture
  reports, senses and results, move requests and results), so two particles with the same
  key stand for the same opponent information state; the search keys the opponent's
  decision nodes by it.

**Sampling with rejection (Algorithm 2).** A particle of the current turn is made from a
parent particle of an earlier turn (uniformly chosen) by playing the opponent's turn with
actions drawn from an opponent *policy* (``OpponentPolicy``: a sense, then a move request,
each given the opponent's own set ``J``; ``UniformPolicy`` by default, ``AggressivePolicy``,
or ``infostate.EvaluatorPolicy`` for a network's priors) and then our own observations of this
turn in the order they came (the capture report, the sense result, our move result): the
candidate is rejected at the first observation its board would not have produced. After
``persistence`` (= k) rejections in a row a *singleton* particle is taken instead: a uniformly chosen board of
our possible set (``tracking.PossibleStates``), with ``J = {board}`` (an opponent that
knows the board) and a fresh key.

**Filtering and refilling (Algorithm 4).** Each observation of ours removes the particles
that disagree with it; the removed ones are replaced by sampling with rejection. The paper
keeps a belief state for every past turn and, after an observation, refills the
inconsistent particles of all of them starting with the oldest, since each is sampled
from the one before. Here the belief keeps the belief states at the start of the last
``turns_back`` opponent turns (2 by default) and our observations since: a replacement is
drawn from the newest of them and, when k candidates from it are rejected in a row (it is
depleted), from the next older one, replaying the turns in between; an accepted
candidate from an older belief state also refills the newer belief states it went
through, replacing their oldest particles first (each particle records the observation
count at which it was made). Only when every kept belief state has failed k times in a
row does the singleton fallback apply. Past belief states are not themselves filtered by
new observations (that would need the possible boards of past turns, which the tracker
does not keep).

The opponent's set ``J`` follows the opponent's observations: our move is not shown to
it, so after our move every board of ``J`` is replaced by its children under our possible
moves that agree with the capture it is told of (``rules.taken_moves``; sampled down to ℓ
boards, the particle's true board always kept); its sense and its move result filter ``J``.

Counters (``BeliefStats``): candidates tried and rejected, singleton fallbacks, refills
(replacements of removed particles), particles removed by observations and accepted
candidates by how many turns back they started.
"""

import dataclasses
import logging
from typing import Dict, List, Optional, Protocol, Sequence, Tuple

import chess
import numpy as np

from azdb_jax.rbc import actions, rules, tracking

__all__ = ["Particle", "BeliefStats", "OpponentPolicy", "UniformPolicy", "AggressivePolicy", "Belief",
           "sense_observation", "DEFAULT_PARTICLES", "DEFAULT_SET_SIZE", "DEFAULT_PERSISTENCE"]

log = logging.getLogger(__name__)

DEFAULT_PARTICLES = 64
DEFAULT_SET_SIZE = 8  # ℓ: boards in an approximate information state
DEFAULT_PERSISTENCE = 32  # k: rejections in a row before the singleton fallback
SenseResult = Sequence[Tuple[int, Optional[chess.Piece]]]


def sense_observation(board: chess.Board, square: int) -> Tuple[Tuple[int, Optional[chess.Piece]], ...]:
    """What a sense centred on ``square`` shows on ``board``, in reconchess's order."""
    return tuple((s, board.piece_at(s)) for s in rules.sense_window(square))


def _piece_code(piece: Optional[chess.Piece]) -> int:
    return 0 if piece is None else piece.piece_type + (6 if piece.color == chess.BLACK else 0)


def _sense_code(result: SenseResult) -> Tuple[int, ...]:
    return tuple(s * 16 + _piece_code(p) for s, p in result)


def _move_code(move: Optional[chess.Move]) -> int:
    return -1 if move is None else actions.move_index(move) if move.promotion in (None, chess.QUEEN) else \
        actions.move_index(move) + 10_000


@dataclasses.dataclass(frozen=True)
class Particle:
    """One hypothesis of the opponent's information state (module docstring)."""

    board: chess.Board  # the true board in this hypothesis
    opponent_boards: Tuple[chess.Board, ...]  # J: what the opponent cannot rule out (holds ``board``)
    key: int  # hash of the opponent's observation history
    born: int = 0  # the belief's observation count when the particle was made
    singleton: bool = False  # made by the fallback


class OpponentPolicy(Protocol):
    """The opponent model guiding the rejection sampling: probabilities of ``choices`` (sense
    squares or move requests, None = pass) given the opponent's set ``boards`` (its colour is
    ``color``; ``move_stage`` False for a sense)."""

    def __call__(self, boards: Sequence[chess.Board], color: bool, move_stage: bool, choices: Sequence,
                 rng: np.random.Generator) -> np.ndarray:
        ...


class UniformPolicy:
    """Every sense and every move request (pass included) equally likely."""

    def __call__(self, boards, color, move_stage, choices, rng):
        return np.full(len(choices), 1.0 / len(choices))


class AggressivePolicy:
    """A simple heuristic opponent: senses uniform; each move request weighted ``1``, plus
    ``king`` when it captures the other king, ``capture`` when it captures another piece, and
    ``attack`` when the moved piece then attacks the other king, each judged on one board
    drawn uniformly from the opponent's set (what it may believe). Bots that go for the
    king (AttackerBot) or for material are far likelier under it than under the uniform
    model, so the particles hold their threats."""

    def __init__(self, capture: float = 4.0, attack: float = 4.0, king: float = 100.0):
        if min(capture, attack, king) < 0:
            raise ValueError(f"weights must be >= 0, got capture={capture}, attack={attack}, king={king}")
        self.capture, self.attack, self.king = capture, attack, king

    def __call__(self, boards, color, move_stage, choices, rng):
        if not move_stage:
            return np.full(len(choices), 1.0 / len(choices))
        board = boards[int(rng.integers(len(boards)))]
        target = board.king(not color)
        weights = np.ones(len(choices))
        for i, request in enumerate(choices):
            taken = rules.taken_move(board, request)
            if taken is None or target is None:
                continue
            if taken.to_square == target:
                weights[i] += self.king
                continue
            if rules.capture_square(board, taken) is not None:
                weights[i] += self.capture
            after = rules.play(board, taken)
            if after.attacks_mask(taken.to_square) & chess.BB_SQUARES[target]:
                weights[i] += self.attack
        return weights / weights.sum()


@dataclasses.dataclass
class BeliefStats:
    """What the particle filter did over a game."""

    candidates: int = 0  # candidate particles sampled (Algorithm 2's loop)
    rejections: int = 0  # ... rejected by one of our observations
    fallbacks: int = 0  # singleton particles taken after ``persistence`` rejections in a row
    refills: int = 0  # removed particles replaced
    removed: int = 0  # particles an observation removed
    accepted_by_depth: Dict[int, int] = dataclasses.field(default_factory=dict)  # turns back -> accepted

    def summary(self) -> Dict[str, float]:
        return {"candidates": self.candidates, "rejections": self.rejections, "fallbacks": self.fallbacks,
                "refills": self.refills, "removed": self.removed,
                "accepted_by_depth": dict(sorted(self.accepted_by_depth.items()))}


# One observation of ours, replayed on candidates: ("opponent", capture) for the opponent's
# turn and the capture it made (None: none), ("sense", result), ("move", requested, taken, capture).
Observation = Tuple


class Belief:
    """The particle filter over the opponent's information states (module docstring).

    Args:
      board: the starting board (White to move).
      color: our colour (the opponent is ``not color``).
      num_particles: particles kept.
      set_size: ℓ, boards in the opponent's set ``J`` of a particle.
      persistence: k, rejections in a row before falling back (to an older belief state,
        then to a singleton).
      turns_back: earlier belief states kept for refilling (1: only the last turn's).
      policy: the opponent model (default ``UniformPolicy``).
      seed: seed of the sampling.
    """

    def __init__(self, board: chess.Board, color: bool, *, num_particles: int = DEFAULT_PARTICLES,
                 set_size: int = DEFAULT_SET_SIZE, persistence: int = DEFAULT_PERSISTENCE, turns_back: int = 2,
                 policy: Optional[OpponentPolicy] = None, seed: int = 0):
        for name, value in (("num_particles", num_particles), ("set_size", set_size), ("persistence", persistence),
                            ("turns_back", turns_back)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        self.color = color
        self.num_particles = num_particles
        self.set_size = set_size
        self.persistence = persistence
        self.turns_back = turns_back
        self.policy = policy or UniformPolicy()
        self.stats = BeliefStats()
        self._rng = np.random.default_rng(seed)
        self._clock = 0  # observations so far (a particle's age)
        start = board.copy(stack=False)
        # Nobody has observed anything: every particle is the start with J = {start}.
        self.particles: List[Particle] = [Particle(start, (start,), 0)] * num_particles
        # Belief states at the start of the last turns (oldest first), each with the observations
        # made since it: candidates are replayed from one of them through its observations and
        # every later one's.
        self._anchors: List[List[Particle]] = []
        self._logs: List[List[Observation]] = []

    # ------------------------------------------------------------------ observations

    def opponent_moved(self, capture: Optional[int], tracker: tracking.PossibleStates) -> None:
        """The opponent's turn is over and it captured on ``capture`` (None: nothing). On White's
        first turn (no opponent move yet) nothing happens."""
        if self.particles[0].board.turn == self.color:
            return
        self._anchors.append(list(self.particles))
        self._logs.append([])
        if len(self._anchors) > self.turns_back:
            self._anchors.pop(0)
            self._logs.pop(0)
        # Every particle must live through the opponent's new turn: all are resampled.
        self.particles = []
        self._observe(("opponent", capture), tracker)

    def sensed(self, result: SenseResult, tracker: tracking.PossibleStates) -> None:
        self._observe(("sense", tuple(result)), tracker)

    def moved(self, requested: Optional[chess.Move], taken: Optional[chess.Move], capture: Optional[int],
              tracker: tracking.PossibleStates) -> None:
        self._observe(("move", requested, taken, capture), tracker)

    def _observe(self, observation: Observation, tracker: tracking.PossibleStates) -> None:
        self._clock += 1
        if self._logs:
            self._logs[-1].append(observation)
        kept = []
        for particle in self.particles:
            advanced = self._apply(particle, observation)
            if advanced is None:
                self.stats.removed += 1
            else:
                kept.append(advanced)
        missing = self.num_particles - len(kept)
        self.stats.refills += missing if observation[0] != "opponent" else 0
        possible = None
        for _ in range(missing):
            particle = self._sample() if self._anchors else None
            if particle is None:
                if possible is None:
                    possible = tracker.sample(max(self.num_particles, 256), self._rng)
                particle = self._singleton(possible)
            kept.append(particle)
        self.particles = kept

    # ------------------------------------------------------------------ Algorithm 2

    def _sample(self) -> Optional[Particle]:
        """A particle consistent with every observation since the oldest kept belief state,
        from the newest belief state first (module docstring); None when all fail."""
        for depth in range(1, len(self._anchors) + 1):
            anchor = self._anchors[-depth]
            if not anchor:
                continue
            for _ in range(self.persistence):
                self.stats.candidates += 1
                trail = self._replay(anchor[int(self._rng.integers(len(anchor)))], self._logs[-depth:])
                if trail is None:
                    self.stats.rejections += 1
                    continue
                self.stats.accepted_by_depth[depth] = self.stats.accepted_by_depth.get(depth, 0) + 1
                for level, state in zip(range(depth - 1, 0, -1), trail[:-1]):
                    self._refill_anchor(self._anchors[-level], state)
                return trail[-1]
        return None

    def _refill_anchor(self, anchor: List[Particle], particle: Particle) -> None:
        """Puts ``particle`` into an earlier belief state in place of its oldest particle."""
        if not anchor:
            anchor.append(particle)
            return
        oldest = min(range(len(anchor)), key=lambda i: anchor[i].born)
        if anchor[oldest].born < particle.born:
            anchor[oldest] = particle

    def _replay(self, particle: Particle, logs: Sequence[List[Observation]]) -> Optional[List[Particle]]:
        """``particle`` carried through ``logs`` (one list per turn); the particle at the start of
        each later turn and at the end, or None at the first observation it contradicts."""
        trail = []
        for index, turn in enumerate(logs):
            if index:
                trail.append(particle)
            for observation in turn:
                particle = self._apply(particle, observation)
                if particle is None:
                    return None
        trail.append(particle)
        return trail

    def _apply(self, particle: Particle, observation: Observation) -> Optional[Particle]:
        """``particle`` after one observation of ours (for ``"opponent"``: after the opponent's
        turn, sampled from the policy), or None when its board contradicts the observation."""
        kind = observation[0]
        board = particle.board
        if kind == "opponent":
            return self._opponent_turn(particle, observation[1])
        if kind == "sense":
            return particle if rules.sense_matches(board, observation[1]) else None
        _, requested, taken, capture = observation
        if rules.taken_move(board, requested) != taken or rules.capture_square(board, taken) != capture:
            return None
        after = rules.play(board, taken)
        boards = self._after_unseen_move(particle.opponent_boards, after, capture)
        return Particle(after, boards, hash((particle.key, 1, capture)), self._clock)

    def _opponent_turn(self, particle: Particle, capture: Optional[int]) -> Optional[Particle]:
        """The opponent senses and moves by the policy on its set; None unless its move captures
        on ``capture`` on the particle's board."""
        board, them = particle.board, not self.color
        senses = list(rules.INTERIOR_SQUARES)
        probs = self.policy(particle.opponent_boards, them, False, senses, self._rng)
        square = senses[int(self._rng.choice(len(senses), p=probs))]
        seen = sense_observation(board, square)
        boards = [b for b in particle.opponent_boards if rules.sense_matches(b, seen)]
        requests: List[Optional[chess.Move]] = rules.move_actions(board) + [None]
        probs = self.policy(boards, them, True, requests, self._rng)
        requested = requests[int(self._rng.choice(len(requests), p=probs))]
        taken = rules.taken_move(board, requested)
        if rules.capture_square(board, taken) != capture:
            return None
        their_capture = rules.capture_square(board, taken)
        after = rules.play(board, taken)
        kept = [rules.play(b, taken) for b in boards
                if rules.taken_move(b, requested) == taken and rules.capture_square(b, taken) == their_capture]
        key = hash((particle.key, 2, square, _sense_code(seen), _move_code(requested), _move_code(taken),
                    their_capture))
        return Particle(after, _with_truth(kept, after), key, self._clock)

    def _after_unseen_move(self, boards: Sequence[chess.Board], truth: chess.Board,
                           capture: Optional[int]) -> Tuple[chess.Board, ...]:
        """The opponent's set after our move, of which it learns only ``capture`` (where we took
        one of its pieces): children of its boards under our moves with that capture square,
        sampled down to ``set_size`` with ``truth`` kept."""
        return expand_unseen_move(boards, truth, capture, self.set_size, self._rng)

    def _singleton(self, possible: Sequence[chess.Board]) -> Particle:
        self.stats.fallbacks += 1
        log.debug("belief: %d rejections in a row from every kept belief state; a singleton particle",
                  self.persistence)
        board = possible[int(self._rng.integers(len(possible)))]
        return Particle(board, (board,), int(self._rng.integers(2 ** 62)), self._clock, singleton=True)

    # ------------------------------------------------------------------ reading

    def sample(self, rng: np.random.Generator) -> Particle:
        """A particle drawn uniformly."""
        return self.particles[int(rng.integers(len(self.particles)))]

    def distinct_keys(self) -> int:
        """How many distinct opponent information states the particles stand for."""
        return len({p.key for p in self.particles})


def _with_truth(boards: Sequence[chess.Board], truth: chess.Board) -> Tuple[chess.Board, ...]:
    key = rules.board_key(truth)
    return (truth,) + tuple(b for b in boards if rules.board_key(b) != key)


def expand_unseen_move(boards: Sequence[chess.Board], truth: chess.Board, capture: Optional[int], size: int,
                       rng: np.random.Generator) -> Tuple[chess.Board, ...]:
    """A player's set after its opponent moved unseen, learning only where the move captured
    one of its pieces (``capture``, None: nowhere): up to ``size`` distinct children of
    ``boards`` under the mover's possible moves (``rules.taken_moves``) with that capture
    square, ``truth`` (the board after the move actually made) first. Parents are taken in
    random order, a random consistent move of each, until ``size`` boards or every parent
    has given its moves."""
    chosen: Dict[rules.BoardKey, chess.Board] = {rules.board_key(truth): truth}
    if size <= 1:
        return (truth,)
    options: List[List[Optional[chess.Move]]] = []
    for board in boards:
        options.append([m for m in rules.taken_moves(board) if rules.capture_square(board, m) == capture])
    order = [i for i in rng.permutation(len(boards)) if options[i]]
    while order and len(chosen) < size:
        nxt = []
        for i in order:
            moves = options[i]
            move = moves.pop(int(rng.integers(len(moves))))
            child = rules.play(boards[i], move)
            chosen.setdefault(rules.board_key(child), child)
            if len(chosen) >= size:
                break
            if moves:
                nxt.append(i)
        order = nxt
    return tuple(chosen.values())

