"""The record of one game: everything the library knows about it, in one place.

Each game's module (``azdb_jax.games.<game>``) defines one ``Game`` and the registry
(``azdb_jax.games``) lists them; the rest of the library reads the record and never
branches on a game's name. A field a game leaves at its default says the game does
without that part: no adjudication by material (``mover_board``), no FEN start
positions (``start_positions``), no host-side boards (``board``), no UCI name
(``uci_variant``), no puzzles (``puzzle_sets``).
"""

import dataclasses
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import jax
import pgx.core

from azdb_jax.envs.board_interop import BoardGame
from azdb_jax.games.positions import FenGame
from azdb_jax import policies
from azdb_jax.policies import Policy

Array = jax.Array
FeatureFn = Callable[[pgx.core.State], Array]  # one state -> φ [F] float32


def no_opponents(env: pgx.core.Env) -> Dict[str, Policy]:
    """A game without fixed opponents of its own (every game has "random")."""
    del env
    return {}


def no_opponent_spec(env: pgx.core.Env, name: str) -> Optional[Policy]:
    """A game without parameterised opponents: no name is a spec of its."""
    del env, name
    return None


def minimax_opponents(num_moves: int, depth: int = 2) -> Callable[[pgx.core.Env], Dict[str, Policy]]:
    """``Game.opponents`` of one player, "minimax<depth>": depth-limited negamax over a
    position's first ``num_moves`` legal moves (``policies.minimax_policy``; depth 2 wins
    in one and avoids moves that let the opponent win in one)."""

    def opponents(env: pgx.core.Env) -> Dict[str, Policy]:
        return {f"minimax{depth}": policies.minimax_policy(env, depth, num_moves=num_moves)}

    return opponents


def no_options(env_config: Any) -> Dict[str, Any]:
    """A game whose env takes no options."""
    del env_config
    return {}


@dataclasses.dataclass(frozen=True)
class Game:
    """One game.

    Attributes:
      id: the env's id (``env.id``, pgx's name where pgx has the game).
      make: ``make(**options) -> env``, a pgx ``Env`` (pgx's contract: ``init``, ``step``,
        batched with ``jax.vmap``).
      features: φ for one state: the position after a move, in absolute orientation
        (SPEC §1.2), a float32 vector of fixed length; vmap it for batches.
      max_plies: the longest game, an int or ``env -> int`` (when it depends on the env's
        options); evaluation games are capped there.
      num_slots: K, the tree slots per search node: a bound on the legal moves of a
        position (``azdb_jax.tree_search`` keeps the K highest-prior moves beyond it);
        0 means every action.
      opponents: ``env -> {name: policy}``, the game's fixed opponents besides "random"
        (``azdb_jax.opponents.opponents_for`` adds it): known-strength players for the
        in-training evaluation.
      opponent_spec: ``(env, name) -> policy or None``: the game's parameterised fixed
        opponents, asked for by name and not part of ``opponents``' default set
        (connect four: ``perfect[:random=R][,depth=D]``, the solver; None for a name that
        is not one of its specs, ValueError for a bad one).
      env_options: ``EnvConfig -> make()'s keyword options``; raises ValueError naming a
        bad field.
      config_fields: the ``config.EnvConfig`` fields ``env_options`` reads; the others
        must keep their defaults for this game.
      start_positions: how FEN-like start positions are read and turned into states
        (``azdb_jax.start_positions``), or None.
      mover_board: ``state [G] -> [G, squares]`` pgx piece codes from the side to move's
        view (positive: its pieces; 1-6 P N B R Q K) for adjudication by material
        (``azdb_jax.adjudication``), or None.
      board: host-side boards with python-chess's API (``envs.board_interop.BoardGame``)
        for puzzles, engine matches and the UCI engine, or None.
      compact_state: search trees may store this game's states packed
        (``azdb_jax.search_state``: int8 boards, the repetition history cut to what a
        repetition can span, legal-action masks dropped); False keeps every field but the
        observation.
      uci_variant: the game's name in the UCI protocol: the ``UCI_Variant`` value that
        Fairy-Stockfish and the UCI engines take (``chess``, ``gardner``), or None for a
        game not played over UCI. Only the protocol speaks it; the library names the game
        by ``id`` (``azdb_jax.games.by_uci_variant`` translates).
      opening_book: the FEN/EPD book of start positions that matches of the game start
        from by default (path parts under ``azdb_jax.data.data_path``), or None: its
        matches start from the initial position or after random plies.
      eco_openings: the ECO openings table (path parts under ``data.data_path``, read by
        ``data.load_openings``) the opening groups take their positions from, or None:
        they take positions after random plies.
      puzzle_sets: the names of the game's move-puzzle sets (the puzzle groups of
        ``azdb_jax.reproduction`` solve them), empty for a game without puzzles.
      load_puzzles: ``set name -> puzzles`` (``data.LichessPuzzle`` records) of one of
        ``puzzle_sets``, or None.
      puzzle_start_overrides: config overrides (``section.field=value``) the training
        arms that start from the game's puzzles need (chess: the move generator of the
        Penrose positions with more than 16 pieces a side).
      from_pgx: pgx ships the game (the plain pgx + mctx AlphaZero of
        ``benchmarks/reference.py`` plays it as a reference); False for a game of the
        library's own.
      mirror: ``(observation [..., *obs], policy [..., A]) -> the same of the position
        mirrored left to right``, where mirroring is a symmetry of the rules that maps the
        start position to itself (so a mirrored position is one play reaches, with the same
        value): the learner's augmentation (``learner.mirror_augment``). None where the game
        has none: chess (castling), Gardner chess (the mirror swaps the king's and queen's
        files of the start), Othello (the left-right mirror swaps the centre discs' colours),
        Nim (no board).
    """

    id: str
    make: Callable[..., pgx.core.Env]
    features: FeatureFn
    max_plies: Union[int, Callable[[pgx.core.Env], int]]
    num_slots: int = 0
    opponents: Callable[[pgx.core.Env], Dict[str, Policy]] = no_opponents
    opponent_spec: Callable[[pgx.core.Env, str], Optional[Policy]] = no_opponent_spec
    env_options: Callable[[Any], Dict[str, Any]] = no_options
    config_fields: Tuple[str, ...] = ()
    start_positions: Optional[FenGame] = None
    mover_board: Optional[Callable[[pgx.core.State], Array]] = None
    board: Optional[BoardGame] = None
    compact_state: bool = False
    uci_variant: Optional[str] = None
    opening_book: Optional[Tuple[str, ...]] = None
    eco_openings: Optional[Tuple[str, ...]] = None
    puzzle_sets: Tuple[str, ...] = ()
    load_puzzles: Optional[Callable[[str], Sequence[Any]]] = None
    puzzle_start_overrides: Tuple[str, ...] = ()
    from_pgx: bool = False
    mirror: Optional[Callable[[Array, Array], Tuple[Array, Array]]] = None

    def __post_init__(self):
        if not (isinstance(self.num_slots, int) and self.num_slots >= 0):
            raise ValueError(f"game {self.id!r}: num_slots must be an int >= 0, got {self.num_slots!r}")
        if self.board is not None and self.board.env_id != self.id:
            raise ValueError(f"game {self.id!r}: its board interop is for {self.board.env_id!r}")
        for field in ("uci_variant", "opening_book", "eco_openings"):
            if getattr(self, field) is not None and self.board is None:
                raise ValueError(f"game {self.id!r}: {field} needs host-side boards (board)")
        if bool(self.puzzle_sets) != (self.load_puzzles is not None):
            raise ValueError(f"game {self.id!r}: puzzle_sets and load_puzzles go together")


def pgx_factory(env_id: str) -> Callable[..., pgx.core.Env]:
    """``make`` for a game pgx has as it is: ``pgx.make(env_id)``, which takes no options."""

    def factory(**options) -> pgx.core.Env:
        if options:
            raise ValueError(f"env '{env_id}' takes no options, got {sorted(options)}")
        return pgx.make(env_id)

    return factory


__all__ = ["Game", "FeatureFn", "minimax_opponents", "no_opponent_spec", "no_opponents", "no_options", "pgx_factory"]
