"""What the evaluation code needs of a trained team, and the solver interface of the puzzle runners.

A ``Team`` is a network with its parameters, the game it plays, its size, the search
settings used to evaluate it and what its players' searches mix in (λ_i, ψ, ℓ0: by
default they search as in self-play; ``extrinsic_only`` is the paper's ablation).
``azdb_jax.evaluation.loading.load_team`` builds one from a run's checkpoint; tests build
one from any ``apply_fn`` (e.g. a stub network).

A *solver* answers chess positions (``chess.Board``; Gardner chess: ``GardnerBoard``, the
same board API) for the puzzle runners (``azdb_jax.evaluation.puzzles``):
``solver(boards) -> SolverOutput``, one UCI move and one value per position for each of
its *columns* (a team player, a selection rule, a control copy, a reference engine).
``groups`` names oracle columns scored as "solved if any member solved it"
(max-over-latents, the homogeneous control's max over copies).
"""

import dataclasses
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import features, planning
from azdb_jax import search as search_lib

Array = jax.Array


SEARCH_MODES: Dict[str, str] = {
    "selfplay": ("each player searches as in self-play: its own λ_i (λ_0 = 1), the intrinsic reward of "
                 "the checkpoint's ψ accumulated root to leaf and v_d at the leaves (paper §3; Fig. 8 solid)"),
    "extrinsic_only": ("ABLATION: extrinsic-only search, λ = 1 for every player: game result and value "
                       "only, no intrinsic reward, no v_d (paper Fig. 8 dashed)"),
}


SearchHook = search_lib.SearchHook  # the intrinsic-reward arguments of a search


@dataclasses.dataclass(frozen=True)
class Team:
    """A trained team ready to search.

    By default a team searches as its players did in self-play (SPEC §2, paper §3 and
    Fig. 8): player i with its own ``λ_i`` (``λ_0 = 1``: player 0 is plain AlphaZero),
    the intrinsic reward ``r_d^i`` of the checkpoint's expected features ψ on its own
    moves in the tree, and ``λ_i v + (1 − λ_i) v_d`` at the leaves; no root noise.
    ``extrinsic_only=True`` is the paper's ablation (Fig. 8 dashed): λ = 1 for every
    player, so every search scores positions by the game's outcome only. A team without
    ``lambdas`` (an AlphaZero run, or a hand-built team) searches with λ = 1 in both modes.

    Attributes:
      env: the game.
      apply_fn: ``(params, observation [B, ...], player [B]) -> NetOutput``.
      params: the network parameters.
      num_players: n, the number of latents the network was trained with.
      search_config: the evaluation search (no noise is added in evaluation).
      lambdas: ``λ_i`` per player as trained (``diversity.lambdas``; ``λ_0`` must be 1),
        or None for λ = 1 everywhere.
      psi: ``[n, F]`` expected features ψ of the checkpoint (the intrinsic reward's
        input), or None for no intrinsic reward.
      l0: ℓ0 of the intrinsic reward (Eq. 8), the run's ``diversity.l0``.
      intrinsic_in_search: the run's ``diversity.in_search``: whether its self-play
        searches added the intrinsic reward to the root player's moves.
      extrinsic_only: search with λ = 1 for every player (the ablation).
      name: a label for reports and PGN headers.
      step: the checkpoint step the parameters come from, when loaded from a run.
    """

    env: pgx.core.Env
    apply_fn: search_lib.ApplyFn
    params: Any
    num_players: int
    search_config: search_lib.SearchConfig
    lambdas: Optional[Tuple[float, ...]] = None
    psi: Any = None
    l0: float = 1.0
    intrinsic_in_search: bool = True
    extrinsic_only: bool = False
    name: str = "team"
    step: Optional[int] = None

    def __post_init__(self):
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int) or self.num_players < 1:
            raise ValueError(f"num_players must be an int >= 1, got {self.num_players!r}")
        if self.lambdas is not None:
            lambdas = tuple(float(x) for x in np.asarray(self.lambdas, np.float64).reshape(-1))
            if len(lambdas) != self.num_players or not all(0.0 <= x <= 1.0 for x in lambdas):
                raise ValueError(f"lambdas must be {self.num_players} values in [0, 1] (one per player), "
                                 f"got {self.lambdas!r}")
            if lambdas[0] != 1.0:
                raise ValueError(f"lambdas[0] must be 1: player 0 is plain AlphaZero (paper §3), got {lambdas[0]}")
            object.__setattr__(self, "lambdas", lambdas)
        if self.psi is not None:
            shape = tuple(np.shape(self.psi))
            if len(shape) != 2 or shape[0] != self.num_players:
                raise ValueError(f"psi must be [num_players={self.num_players}, F] expected features, got {shape}")
        if not (isinstance(self.l0, (int, float)) and self.l0 > 0):
            raise ValueError(f"l0 must be > 0, got {self.l0!r}")

    # ---------------------------------------------------------------- how the team searches

    @property
    def search_mode(self) -> str:
        """``"selfplay"`` (the default: as in self-play) or ``"extrinsic_only"`` (the ablation)."""
        return "extrinsic_only" if self.extrinsic_only else "selfplay"

    @property
    def search_lambdas(self) -> np.ndarray:
        """``[n]`` λ of each player's search: the trained ``λ_i``, or 1 for all in the ablation."""
        if self.extrinsic_only or self.lambdas is None:
            return np.ones(self.num_players, np.float32)
        return np.asarray(self.lambdas, np.float32)

    @property
    def uses_intrinsic_terms(self) -> bool:
        """Whether some player's search mixes in intrinsic terms (some searched λ_i < 1)."""
        return bool(np.any(self.search_lambdas < 1.0))

    def search_hook(self) -> SearchHook:
        """The intrinsic reward of the team's searches, the hook self-play uses
        (``search.intrinsic_hook`` with ψ and ℓ0): ``r_d^i(s, a)`` of Eq. 8.

        All None when no player searches with λ_i < 1, without ψ, or when the run's
        self-play kept the reward out of its searches (``diversity.in_search``).
        """
        if not self.uses_intrinsic_terms or self.psi is None or not self.intrinsic_in_search:
            return search_lib.NO_HOOK
        return search_lib.intrinsic_hook(features.feature_fn(self.env), jnp.asarray(self.psi, jnp.float32),
                                         l0=float(self.l0))

    def player_hook(self, player: int) -> SearchHook:
        """``search_hook()`` for player ``player`` alone: none at ``λ_i = 1``, where the
        intrinsic reward is dropped exactly (so its features are not computed)."""
        return self.search_hook() if self.search_lambdas[int(player)] < 1.0 else search_lib.NO_HOOK

    def search(self, params: Any, rng_key: Array, positions: pgx.core.State, *,
               players: Optional[Array] = None) -> planning.TeamSearch:
        """Every position searched once per player, each as ``search_mode`` says: the one
        team search of every solver, match, engine and report (``planning.team_search``
        with this team's env, network, search settings, λ_i and ``search_hook()``).

        Args:
          params: the network parameters (``self.params``, or a traced copy).
          rng_key: consumed.
          positions: batched pgx State [B]; none terminal.
          players: [k] latent ids to search (default every player, in order).
        """
        return planning.team_search(self.env, self.apply_fn, params, rng_key, positions,
                                    num_players=self.num_players, lam=self.search_lambdas,
                                    config=self.search_config, players=players, **self.search_hook()._asdict())

    def search_description(self) -> Dict[str, Any]:
        """How the team searches, for reports: ``search`` (the mode), ``search_note``, λ_i, ℓ0."""
        return {"search": self.search_mode, "search_note": SEARCH_MODES[self.search_mode],
                "search_lambdas": [float(x) for x in self.search_lambdas],
                "intrinsic_reward": self.search_hook().intrinsic_reward_fn is not None,
                "l0": float(self.l0) if self.uses_intrinsic_terms else None}

    def as_extrinsic_only(self, extrinsic_only: bool = True) -> "Team":
        """The same team searching extrinsic-only (the ablation), or back to the default."""
        return dataclasses.replace(self, extrinsic_only=extrinsic_only)

    # ---------------------------------------------------------------- variants

    def with_simulations(self, num_simulations: int) -> "Team":
        """The same team searching with ``num_simulations`` simulations per move."""
        if not isinstance(num_simulations, int) or num_simulations < 1:
            raise ValueError(f"num_simulations must be an int >= 1, got {num_simulations!r}")
        return dataclasses.replace(
            self, search_config=dataclasses.replace(self.search_config, num_simulations=num_simulations))

    def with_env(self, env: pgx.core.Env) -> "Team":
        """The same team on another env with the same observations and actions (e.g. chess
        with the 32-piece move generator)."""
        return dataclasses.replace(self, env=env)


def label_rows(rows: Sequence[Mapping[str, Any]], team: Team) -> List[Dict[str, Any]]:
    """``rows`` with a ``search`` column (the team's search mode), so that a CSV of the
    ablation says so on every line."""
    return [{**row, "search": team.search_mode} for row in rows]


class SolverOutput(NamedTuple):
    """A solver's answers to a batch of ``B`` positions, per column."""

    moves: Mapping[str, List[str]]  # column -> [B] UCI move for the side to move
    values: Mapping[str, np.ndarray]  # column -> [B] value for the side to move in [-1, 1] (NaN: none)


class Solver(Protocol):
    """Answers chess or Gardner chess positions (see the module docstring)."""

    columns: Tuple[str, ...]  # every column of the output, in report order
    groups: Dict[str, Tuple[str, ...]]  # oracle column -> member columns (solved if any member is)

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        ...


def check_num_players(team: Team, expected: Optional[int], *, source: str = "checkpoint") -> None:
    """Raises ``ValueError`` when ``expected`` is given and differs from the team's size."""
    if expected is not None and expected != team.num_players:
        raise ValueError(f"{source} holds a team of {team.num_players} player(s), but {expected} were asked for; "
                         f"pass num_players={team.num_players} (or leave it unset)")


__all__ = ["Team", "SearchHook", "SEARCH_MODES", "Solver", "SolverOutput", "check_num_players", "label_rows"]
