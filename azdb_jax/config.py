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

from azdb_jax import adjudication, envs
from azdb_jax.learner import LearnerConfig
from azdb_jax.matchmaking import GRAPHS
from azdb_jax.networks import NetworkConfig
from azdb_jax.replay import ReplayConfig
from azdb_jax.search import SearchConfig
from azdb_jax.selfplay import SelfPlayConfig


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Which game; ``nim_heaps`` only for Nim."""

    name: str = "connect_four"
    nim_heaps: Tuple[int, ...] = (1, 3, 5, 7, 9)

    def __post_init__(self):
        if self.name not in envs.ENV_IDS:
            raise ValueError(f"env.name must be one of {envs.ENV_IDS}, got {self.name!r}")
        if not self.nim_heaps or any(not isinstance(h, int) or h < 1 for h in self.nim_heaps):
            raise ValueError(f"env.nim_heaps must be positive ints, got {self.nim_heaps!r}")

    def make(self):
        return envs.make(self.name, heaps=self.nim_heaps) if self.name == "nim" else envs.make(self.name)


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
    # λ v; "predict" adds the root player's intrinsic return there from a second v_d head.
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
    checkpoint_every: int = 25  # iterations between checkpoints (0: only at the end)
    keep_checkpoints: int = 3
    checkpoint_replay: bool = True  # needed for an exact --resume; large for chess runs
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

    def __post_init__(self):
        if self.run.eval_adjudication == "material" and self.env.name not in ("chess", "gardner_chess"):
            raise ValueError(f"run.eval_adjudication='material' needs chess or gardner_chess, not {self.env.name!r}")
        if self.run.batch_size > self.replay.capacity:
            raise ValueError(f"run.batch_size ({self.run.batch_size}) exceeds replay.capacity ({self.replay.capacity})")


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
