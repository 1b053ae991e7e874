"""The typed, frozen configuration of a training run, and its JSON form.

A run's config nests one dataclass per concept (each validates itself on
construction, so a bad value fails with the field name and what is allowed). The
resolved config is written beside the run's checkpoints and metrics, and
``--resume`` reads it back. Overrides use dotted paths: ``search.num_simulations=64``.
"""

import dataclasses
import json
import typing
from typing import Any, Dict, Mapping, Sequence, Tuple

from azdb_jax import adjudication, games, start_positions
from azdb_jax.learner import LearnerConfig
from azdb_jax.matchmaking import GRAPHS
from azdb_jax.networks import NetworkConfig
from azdb_jax.replay import ReplayConfig
from azdb_jax.search import SearchConfig
from azdb_jax.selfplay import SelfPlayConfig


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Which game (``azdb_jax.games``) and its options; each option belongs to the games
    whose record reads it (``Game.config_fields``): ``nim_heaps`` and ``nim_encoding``
    ("one_hot" or Zhou & Riis's "unary" bitstring) to Nim, ``max_pieces`` to chess. The
    others must keep their defaults.

    ``max_pieces`` (0: pgx's 16) is how many of the mover's pieces chess's move
    generator considers: composed start positions with more pieces a side (seven of the
    paper's Penrose positions) need 32 (``chess_interop.required_max_pieces``).
    """

    name: str = "connect_four"
    nim_heaps: Tuple[int, ...] = (1, 3, 5, 7, 9)
    nim_encoding: str = "one_hot"
    max_pieces: int = 0

    def __post_init__(self):
        if self.name not in games.IDS:
            raise ValueError(f"env.name must be one of {games.IDS}, got {self.name!r}")
        if not self.nim_heaps or any(not isinstance(h, int) or h < 1 for h in self.nim_heaps):
            raise ValueError(f"env.nim_heaps must be positive ints, got {self.nim_heaps!r}")
        if not isinstance(self.max_pieces, int) or self.max_pieces < 0:
            raise ValueError(f"env.max_pieces must be an int >= 0 (0: the default 16), got {self.max_pieces!r}")
        game = games.get(self.name)
        for field in dataclasses.fields(self):
            if field.name != "name" and field.name not in game.config_fields and \
                    getattr(self, field.name) != field.default:
                raise ValueError(f"env.{field.name} is not an option of {self.name!r} (its options: "
                                 f"{', '.join(game.config_fields) or 'none'}); got {getattr(self, field.name)!r}")
        game.env_options(self)  # each game checks the values of its own options

    def make(self):
        return games.make_from_config(self)


SPLITS = ("none", "random", "group")


@dataclasses.dataclass(frozen=True)
class StartPositionsConfig:
    """Self-play from puzzle positions (paper §4.2, Table 1 and App. C.3; SPEC §1.12).

    Off while ``sources`` is empty: every game starts from the game's initial position.
    Otherwise a new game starts from the initial position with probability
    ``initial_prob`` (paper: 0.5), else from a start position drawn uniformly. The
    agent never sees a solution, only positions. See ``azdb_jax.start_positions``.

    Attributes:
      sources: where the positions come from: ``"paper"`` (the packaged Penrose and
        Challenge list; ``"paper:penrose"`` or ``"paper:challenge"`` for one set) or files
        any of our loaders read: EPD (``.epd``), Lichess puzzle CSV or the paper's CSV
        layout (``.csv``), FEN/EPD book lines (``.fen``, ``.txt``, ``.book``).
      initial_prob: probability of the game's usual initial position.
      intermediate: also start from the positions along each puzzle's solution line
        where the solver is to move (Lichess ``Moves``, EPD ``pv``); the paper's list
        has no published solutions.
      halfmove_clocks: a drawn position's half-move clock is set to one of these,
        uniformly (paper: 0 for rows 2-6, {0, 20, 40, 60, 80} for row 7); empty keeps
        each position's own clock.
      split: ``"none"`` (train on every position), ``"random"`` (hold out ``test_count``
        puzzles drawn with ``split_seed``: Table 1 row 3) or ``"group"`` (hold out the
        puzzles of ``heldout_group`` — a puzzle and its variations, e.g. the paper's
        ``"penrose_variation_2"``: row 4). Held-out positions are written into the
        run's directory (``start_positions/``) for evaluation.
      test_count: puzzles held out by the random split (paper: 17 of the 53 Penrose).
      heldout_group: the group held out by the group split.
      split_seed: seed of the random split.
    """

    sources: Tuple[str, ...] = ()
    initial_prob: float = 0.5
    intermediate: bool = False
    halfmove_clocks: Tuple[int, ...] = ()
    split: str = "none"
    test_count: int = 0
    heldout_group: str = ""
    split_seed: int = 0

    def __post_init__(self):
        if any(not isinstance(s, str) or not s.strip() for s in self.sources):
            raise ValueError(f"start_positions.sources must be non-empty strings, got {self.sources!r}")
        if not 0.0 <= self.initial_prob <= 1.0:
            raise ValueError(f"start_positions.initial_prob must be in [0, 1], got {self.initial_prob!r}")
        if self.sources and self.initial_prob == 1.0:
            raise ValueError("start_positions.initial_prob = 1 never uses the start positions; use 0 <= p < 1 "
                             "or no sources")
        if any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 100 for c in self.halfmove_clocks):
            raise ValueError(f"start_positions.halfmove_clocks must be ints in [0, 100), got {self.halfmove_clocks!r}")
        if self.split not in SPLITS:
            raise ValueError(f"start_positions.split must be one of {SPLITS}, got {self.split!r}")
        if self.split != "none" and not self.sources:
            raise ValueError("start_positions.split needs start_positions.sources")
        if not isinstance(self.test_count, int) or self.test_count < 0:
            raise ValueError(f"start_positions.test_count must be an int >= 0, got {self.test_count!r}")
        if (self.split == "random") != (self.test_count > 0):
            raise ValueError("start_positions.test_count (> 0) goes with split='random' and only with it")
        if (self.split == "group") != bool(self.heldout_group):
            raise ValueError("start_positions.heldout_group goes with split='group' and only with it")
        if not isinstance(self.split_seed, int) or self.split_seed < 0:
            raise ValueError(f"start_positions.split_seed must be an int >= 0, got {self.split_seed!r}")


@dataclasses.dataclass(frozen=True)
class TeamConfig:
    """The team: n players in one network (AZ is n = 1), λ for players i > 0 (λ_0 = 1)."""

    num_players: int = 1
    lam: float = 1.0  # reward mix (Eq. 6); 1 = no diversity reward
    matchmaker: str = "selfplay"  # an interaction graph of azdb_jax.matchmaking

    def __post_init__(self):
        if not isinstance(self.num_players, int) or self.num_players < 1:
            raise ValueError(f"team.num_players must be an int >= 1, got {self.num_players!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"team.lam must be in [0, 1], got {self.lam!r}")
        if self.matchmaker not in GRAPHS:
            raise ValueError(f"team.matchmaker must be one of {sorted(GRAPHS)}, got {self.matchmaker!r}")

    @property
    def lambdas(self) -> Tuple[float, ...]:
        """``λ_i`` per player: ``λ_0 = 1`` (player 0 is plain AlphaZero), ``λ_i = λ`` for
        i > 0 (paper §3). Every part of a run (self-play, populations, agents, summaries)
        reads its λ_i here."""
        return (1.0,) + (float(self.lam),) * (self.num_players - 1)


OPPONENT_LEAVES = ("drop", "predict")


@dataclasses.dataclass(frozen=True)
class DiversityConfig:
    """Behavioural diversity (paper §3, Eq. 6-8; SPEC §1.2-1.8); active when team.lam < 1.

    Defaults were chosen from the runs in docs/results.md.
    """

    l0: float = 1.5  # ℓ0: the nearest-neighbour distance the reward drives players towards
    ema_rate: float = 0.1  # α of ψ ← (1 − α) ψ + α ψ_batch, per self-play window
    n_td: int = 8  # N_TD of the intrinsic value target z_d (even)
    in_search: bool = True  # add (1 − λ_i) r_d to the root player's transitions in search
    # Leaves where the root player's opponent is to move (docs/method.md): "drop" values them
    # λ v; "predict" adds the root player's intrinsic return there from a second v_d head
    # (only a team with λ < 1 has it). The comparison there keeps "drop" the default.
    opponent_leaves: str = "drop"

    def __post_init__(self):
        if not self.l0 > 0:
            raise ValueError(f"diversity.l0 must be > 0, got {self.l0!r}")
        if not 0.0 < self.ema_rate <= 1.0:
            raise ValueError(f"diversity.ema_rate must be in (0, 1], got {self.ema_rate!r}")
        if not isinstance(self.n_td, int) or self.n_td < 2 or self.n_td % 2:
            raise ValueError(f"diversity.n_td must be an even int >= 2, got {self.n_td!r}")
        if self.opponent_leaves not in OPPONENT_LEAVES:
            raise ValueError(f"diversity.opponent_leaves must be one of {OPPONENT_LEAVES}, got {self.opponent_leaves!r}")


@dataclasses.dataclass(frozen=True)
class PayoffConfig:
    """How the matchmakers estimate the payoff matrix from self-play games (paper App. B.1).

    The paper tracks "the outcome of matchups in a payoff matrix" and says no more. With
    per-pair sums ``S`` and counts ``C`` of results (White's view), decayed by ``decay``
    per self-play iteration, the estimate is

        M[w, b] = (S + prior_games · prior) / (C + prior_games),   prior where C + prior_games = 0.

    The defaults (``decay = 1``, ``prior = 0``, ``prior_games = 0``) are the all-time mean
    with unplayed pairs at 0 (a draw); docs/method.md says why they stay the default.

    Attributes:
      decay: weight of a game one iteration older, in (0, 1]; 1 = all-time mean.
      prior: the payoff of a pair before its games (and what few games are shrunk
        towards), in [-1, 1].
      prior_games: the prior's weight in games; 0 = the prior only fills unplayed pairs.
    """

    decay: float = 1.0
    prior: float = 0.0
    prior_games: float = 0.0

    def __post_init__(self):
        if not 0.0 < self.decay <= 1.0:
            raise ValueError(f"payoff.decay must be in (0, 1], got {self.decay!r}")
        if not -1.0 <= self.prior <= 1.0:
            raise ValueError(f"payoff.prior must be in [-1, 1], got {self.prior!r}")
        if not self.prior_games >= 0.0:
            raise ValueError(f"payoff.prior_games must be >= 0, got {self.prior_games!r}")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """The loop around the iterations: length, learner budget, logging, evaluation, checkpoints."""

    num_iterations: int = 100
    learner_steps: int = 8  # gradient steps per self-play iteration
    batch_size: int = 256  # learner batch
    store_fraction: float = 1.0  # share of trainable positions stored (paper full runs: 0.1)
    seed: int = 0
    eval_every: int = 25  # iterations between evaluations (0: never)
    eval_games: int = 64  # games per fixed opponent (half with each colour)
    eval_simulations: int = 32  # search budget of the agent in evaluation
    eval_players: int = 0  # evaluate the first k team players (0: every player)
    eval_max_plies: int = 0  # evaluation games stop here (0: the game's own cap)
    eval_adjudication: str = "none"  # how games stopped at eval_max_plies score (azdb_jax.adjudication)
    # Opponents of the in-training evaluation, by name: the game's fixed opponents
    # (azdb_jax.opponents.opponents_for), "previous" (the previous evaluation's
    # network), on chess and Gardner chess classical alpha-beta specs such as
    # "alphabeta:depth=2", on connect four the solver, "perfect[:random=R][,depth=D]"
    # (both searched on the host at every ply); empty: the fixed opponents and "previous".
    eval_opponents: Tuple[str, ...] = ()
    checkpoint_every: int = 25  # iterations between checkpoints (0: only at the end)
    keep_checkpoints: int = 3
    checkpoint_replay: bool = True  # needed for an exact --resume; large for chess runs
    # Checkpoints written in the background while training goes on (the state is copied to
    # host memory first); False: each save blocks until it is on disk.
    checkpoint_async: bool = True
    num_devices: int = 0  # devices for the game/batch axis; 0 = all local devices

    def __post_init__(self):
        for name in ("num_iterations", "learner_steps", "batch_size", "eval_games", "eval_simulations",
                     "keep_checkpoints"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"run.{name} must be an int >= 1, got {value!r}")
        for name in ("eval_every", "checkpoint_every", "num_devices", "seed", "eval_players", "eval_max_plies"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"run.{name} must be an int >= 0, got {value!r}")
        if not 0.0 < self.store_fraction <= 1.0:
            raise ValueError(f"run.store_fraction must be in (0, 1], got {self.store_fraction!r}")
        if not (isinstance(self.eval_opponents, tuple) and all(isinstance(o, str) and o for o in self.eval_opponents)
                and len(set(self.eval_opponents)) == len(self.eval_opponents)):
            raise ValueError(f"run.eval_opponents must be distinct opponent names, got {self.eval_opponents!r}")
        if self.eval_adjudication not in adjudication.RULES:
            raise ValueError(f"run.eval_adjudication must be one of {adjudication.RULES}, "
                             f"got {self.eval_adjudication!r}")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """A whole run."""

    env: EnvConfig = EnvConfig()
    team: TeamConfig = TeamConfig()
    diversity: DiversityConfig = DiversityConfig()
    network: NetworkConfig = NetworkConfig()
    search: SearchConfig = SearchConfig()
    selfplay: SelfPlayConfig = SelfPlayConfig()
    replay: ReplayConfig = ReplayConfig()
    learner: LearnerConfig = LearnerConfig()
    run: RunConfig = RunConfig()
    start_positions: StartPositionsConfig = StartPositionsConfig()
    payoff: PayoffConfig = PayoffConfig()

    def __post_init__(self):
        if self.run.eval_adjudication == "material" and self.env.name not in adjudication.material_games():
            raise ValueError(f"run.eval_adjudication='material' needs a game with material "
                             f"({' or '.join(adjudication.material_games())}), not {self.env.name!r}")
        if self.selfplay.fast_simulations >= self.search.num_simulations:
            raise ValueError(f"selfplay.fast_simulations ({self.selfplay.fast_simulations}) must be below "
                             f"search.num_simulations ({self.search.num_simulations}), the full searches' budget")
        if self.learner.mirror_augment and games.get(self.env.name).mirror is None:
            raise ValueError(f"learner.mirror_augment: {self.env.name} has no mirror symmetry (Game.mirror); "
                             f"the games with one: {', '.join(g for g in games.IDS if games.get(g).mirror)}")
        if self.run.batch_size > self.replay.capacity:
            raise ValueError(f"run.batch_size ({self.run.batch_size}) exceeds replay.capacity ({self.replay.capacity})")
        if self.start_positions.sources:
            try:
                positions = start_positions.fen_game(self.env.name)
            except ValueError as e:
                raise ValueError(f"start_positions.sources: {e}") from None
            if self.start_positions.halfmove_clocks and not positions.has_clock:
                raise ValueError(f"start_positions.halfmove_clocks: {self.env.name} has no half-move clock")


# ------------------------------------------------------------------ JSON and overrides


def to_dict(config: Any) -> Dict[str, Any]:
    """Nested plain dict (tuples become lists in JSON)."""
    return dataclasses.asdict(config)


def to_json(config: TrainConfig) -> str:
    return json.dumps(to_dict(config), indent=2, sort_keys=True)


def _coerce(value: Any, annotation: Any, where: str) -> Any:
    origin = typing.get_origin(annotation)
    if dataclasses.is_dataclass(annotation):
        return from_dict(annotation, value, where=where)
    if origin in (tuple, Tuple):
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{where}: expected a list, got {value!r}")
        (item_type, *_) = typing.get_args(annotation) or (Any,)
        return tuple(_coerce(v, item_type, where) for v in value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation in (int, float, str, bool) and not isinstance(value, annotation):
        raise ValueError(f"{where}: expected {annotation.__name__}, got {value!r}")
    if annotation is int and isinstance(value, bool):
        raise ValueError(f"{where}: expected int, got {value!r}")
    return value


def from_dict(cls: type, data: Mapping[str, Any], *, where: str = "config") -> Any:
    """Builds ``cls`` from a nested mapping; unknown keys and wrong types are errors."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; known: {sorted(names)}")
    kwargs = {name: _coerce(value, hints[name], f"{where}.{name}") for name, value in data.items()}
    return cls(**kwargs)


def from_json(text: str, *, source: str = "config") -> TrainConfig:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{source}: not valid JSON ({e})") from None
    return from_dict(TrainConfig, data, where=source)


def _parse_scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # a bare string such as connect_four


def apply_overrides(config: TrainConfig, overrides: Sequence[str]) -> TrainConfig:
    """Applies ``section.field=value`` overrides (values in JSON syntax; bare strings allowed)."""
    data = to_dict(config)
    for item in overrides:
        path, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"override {item!r}: expected section.field=value")
        keys = path.strip().split(".")
        node = data
        for key in keys[:-1]:
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"override {item!r}: no config section {key!r}")
            node = node[key]
        if not isinstance(node, dict) or keys[-1] not in node:
            raise ValueError(f"override {item!r}: unknown field {path!r}")
        node[keys[-1]] = _parse_scalar(text.strip())
    return from_dict(TrainConfig, data)
