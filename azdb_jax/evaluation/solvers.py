"""The team as a puzzle solver: every player, every selection rule and the control, in one search.

``TeamSolver`` implements the ``Solver`` protocol of ``azdb_jax.evaluation.team`` for
chess positions (python-chess boards) and Gardner chess positions (``GardnerBoard``;
``azdb_jax.games.board_game`` converts either), so the puzzle runners of
``azdb_jax.evaluation.puzzles`` score a trained team exactly like a reference engine.
Each position is searched once per latent (``planning.team_search``: one batched search
for all ``n`` players, SPEC §1.10) and the answers come out as *columns*:

- ``player_<j>``: player j's most-visited move (or its LCB move, ``move="lcb"``) and its
  value ``V_j = max_{a visited} Q_j(s, a)`` for the side to move (SPEC §1.9);
- ``team_<rule>``: the team's move under a selection rule of Eq. 9 (``planning.team_move``)
  and the chosen player's ``V``;
- ``homogeneous_<c>`` and ``homogeneous_<rule>``: the homogeneous-team control, latent 0
  searched ``k`` times with different randomness (``planning.homogeneous_search``, with
  root noise so that the copies differ: paper §4.3, SPEC §1.10).

Oracle groups: ``max_over_latents`` (all player columns: solved if any player solved
it, an upper bound of every rule) and ``homogeneous_max`` (all control copies).

Every player searches as the ``Team`` says: by default as in self-play (its ``λ_i``,
the intrinsic reward of ψ, ``v_d``), or extrinsic-only (the ablation). Latent 0 has
``λ_0 = 1`` in both, so the homogeneous control is the same in both modes.

Every batch is padded to ``batch_size`` with the standard start position, so one
compiled program per move generator (``max_pieces``, SPEC §4) serves every batch. The
random key of a position is folded from the solver's seed and the position's FEN, so
an answer depends neither on the batch it came in nor on the order of the calls.
Positions that are already over (checkmate, stalemate, draw by rule) are not searched:
their move is ``""`` and their value the game's result for the side to move.
"""

import zlib
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import games, planning
from azdb_jax.envs.chess import DEFAULT_MAX_PIECES
from azdb_jax.evaluation.team import SolverOutput, Team

Array = jax.Array

DEFAULT_RULES = ("visit", "value", "lcb", "gap")
MAX_OVER_LATENTS = "max_over_latents"
HOMOGENEOUS_MAX = "homogeneous_max"


def position_index(board: chess.Board) -> int:
    """A 31-bit index of a position (CRC-32 of its FEN), folded into its search key."""
    return zlib.crc32(board.fen().encode()) & 0x7FFFFFFF


def _player_values(stats: planning.TeamRootStatistics, player: Array) -> Array:
    """``V`` of the chosen ``player`` [B] from ``stats.value`` [B, n]."""
    return planning.solved_by(stats.value, player)


def _answers(search: planning.TeamSearch, rules: Sequence[str], move: str) -> Dict[str, Array]:
    """Per-player and per-rule actions and values of a batch of team searches."""
    actions = search.lcb_action if move == "lcb" else search.most_visited_action  # [B, n]
    chosen = [planning.team_move(search.stats, rule, move=move) for rule in rules]
    batch = actions.shape[:1]
    return {
        "player_actions": actions,
        "player_values": search.stats.value,  # [B, n]
        "rule_actions": jnp.stack([a for _, a in chosen]) if rules else jnp.zeros((0,) + batch, jnp.int32),  # [R, B]
        "rule_values": (jnp.stack([_player_values(search.stats, p) for p, _ in chosen]) if rules
                        else jnp.zeros((0,) + batch, jnp.float32)),  # [R, B]
    }


class TeamSolver:
    """A team answering chess positions per player, per selection rule and per control copy.

    Args:
      team: a chess team (``Team.env`` is chess; a 32-piece move generator is switched in
        for positions that need it) or a Gardner chess team (positions are ``GardnerBoard``s).
      rules: selection rules of ``planning.SELECTION_RULES`` (columns ``team_<rule>``).
      move: the move a player plays, ``"visits"`` (most visited) or ``"lcb"``.
      homogeneous_copies: ``k`` searches of latent 0 for the control; default ``n``
        (the team's size), 0 turns the control off.
      batch_size: positions per search; every batch is padded to this size.
      seed: base of every position's random key.

    Attributes:
      columns: ``player_<j>``, ``team_<rule>``, then ``homogeneous_<c>`` and
        ``homogeneous_<rule>`` (report order).
      groups: ``{"max_over_latents": player columns, "homogeneous_max": copy columns}``.
    """

    def __init__(self, team: Team, *, rules: Sequence[str] = DEFAULT_RULES, move: str = "visits",
                 homogeneous_copies: Optional[int] = None, batch_size: int = 16, seed: int = 0):
        if getattr(team.env, "id", None) not in games.BOARD_IDS:
            raise ValueError(f"TeamSolver answers {' or '.join(games.BOARD_IDS)} positions; team "
                             f"{team.name!r} plays {getattr(team.env, 'id', team.env)!r}")
        self._game = games.board_game(team.env)
        if isinstance(rules, str):
            rules = tuple(name.strip() for name in rules.split(",") if name.strip())
        rules = tuple(rules)
        for rule in rules:
            planning.get_rule(rule)  # ValueError listing the valid rules
        if len(set(rules)) != len(rules):
            raise ValueError(f"rules lists a rule twice: {rules}")
        if move not in planning.MOVES:
            raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
        copies = team.num_players if homogeneous_copies is None else homogeneous_copies
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 0:
            raise ValueError(f"homogeneous_copies must be an int >= 0 (0: no control), got {homogeneous_copies!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.team = team
        self.rules: Tuple[str, ...] = rules
        self.move = move
        self.homogeneous_copies = copies
        self.batch_size = batch_size
        self.seed = int(seed)
        players = tuple(f"player_{j}" for j in range(team.num_players))
        control = tuple(f"homogeneous_{c}" for c in range(copies))
        self.columns: Tuple[str, ...] = (players + tuple(f"team_{r}" for r in rules) + control
                                         + (tuple(f"homogeneous_{r}" for r in rules) if copies else ()))
        self.groups: Dict[str, Tuple[str, ...]] = {MAX_OVER_LATENTS: players}
        if copies:
            self.groups[HOMOGENEOUS_MAX] = control
        self._programs: Dict[int, Callable] = {}

    # ---------------------------------------------------------------- compiled search

    def _program(self, max_pieces: int) -> Callable:
        """The jitted search of one padded batch on the ``max_pieces`` move generator."""
        if max_pieces in self._programs:
            return self._programs[max_pieces]
        team = team_for_pieces(self.team, max_pieces)
        rules, move, copies = self.rules, self.move, self.homogeneous_copies

        def one_position(params, key, state):
            # Searched alone (a batch of one) so that its randomness is its own key's.
            single = jax.tree.map(lambda x: x[None], state)
            team_key, control_key = jax.random.split(key)
            searched = team.search(params, team_key, single)
            out = _answers(searched, rules, move)
            if copies:
                # Latent 0 has λ_0 = 1: the control searches alike in both modes.
                control = planning.homogeneous_search(team.env, team.apply_fn, params, control_key, single,
                                                      num_copies=copies, config=team.search_config)
                out.update({f"homogeneous_{name}": value for name, value in _answers(control, rules, move).items()})
            return _squeeze_batch(out)

        program = per_position_program(one_position)
        self._programs[max_pieces] = program
        return program

    # ---------------------------------------------------------------- the Solver protocol

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        """Moves (UCI) and values (side to move) of every column for ``boards``."""
        return solve_in_batches(self._solve_batch, self.columns, boards, self.batch_size)

    def _solve_batch(self, boards: List[chess.Board]) -> Tuple[Dict[str, List[str]], Dict[str, List[float]]]:
        batch = prepare_batch(self._game, boards, self.batch_size, self.team.env)
        out = jax.device_get(self._program(batch.max_pieces)(self.team.params, jax.random.PRNGKey(self.seed),
                                                             batch.indices, batch.states))
        columns: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}  # column -> (actions [B], values [B])
        for j in range(self.team.num_players):
            columns[f"player_{j}"] = out["player_actions"][:, j], out["player_values"][:, j]
        for r, rule in enumerate(self.rules):
            columns[f"team_{rule}"] = out["rule_actions"][:, r], out["rule_values"][:, r]
        if self.homogeneous_copies:
            for c in range(self.homogeneous_copies):
                columns[f"homogeneous_{c}"] = (out["homogeneous_player_actions"][:, c],
                                               out["homogeneous_player_values"][:, c])
            for r, rule in enumerate(self.rules):
                columns[f"homogeneous_{rule}"] = (out["homogeneous_rule_actions"][:, r],
                                                  out["homogeneous_rule_values"][:, r])
        return batch_answers(self._game, batch, columns, self.columns)


def _squeeze_batch(out: Dict[str, Array]) -> Dict[str, Array]:
    """Drops the batch-of-one axis of one position's answers: player fields [1, n] -> [n],
    rule fields [R, 1] -> [R]."""
    return {name: (value[0] if "player" in name else value[:, 0]) for name, value in out.items()}


def _game_over_value(board: chess.Board) -> Optional[float]:
    """The result for the side to move if the game is over (no search needed), else None.

    Uses the rules the search plays by: checkmate, stalemate, insufficient material and
    the fifty-move rule end the game (pgx ends it automatically, no claim). A
    ``GardnerBoard`` answers the same questions by the Gardner env's rules.
    """
    if board.is_checkmate():
        return -1.0
    if board.is_stalemate() or board.is_insufficient_material() or board.halfmove_clock >= 100:
        return 0.0
    return None


# ------------------------------------------------------------------ batching shared by the solvers


class Batch(NamedTuple):
    """A batch of positions ready to search: padded to the solver's batch size with the
    start position, positions already over replaced by it (and answered by their result)."""

    boards: List[chess.Board]  # the real positions (no padding)
    outcomes: List[Optional[float]]  # the result for the side to move of a finished position, else None
    max_pieces: int  # the move generator the batch needs (chess; Gardner's fixed one otherwise)
    states: Any  # the padded positions as env states [batch_size, ...]
    indices: Array  # [batch_size] uint32 each position's key index (``position_index``)


def prepare_batch(game, boards: Sequence[chess.Board], batch_size: int, env) -> Batch:
    """``boards`` (at most ``batch_size``) as a ``Batch`` for ``game`` (``board_interop``)."""
    boards = list(boards)
    start = game.new_board(None)
    outcomes = [_game_over_value(board) for board in boards]
    padded = [board if outcome is None else start for board, outcome in zip(boards, outcomes)]
    padded += [start] * (batch_size - len(boards))
    max_pieces = max(game.required_max_pieces(padded), getattr(env, "max_pieces", DEFAULT_MAX_PIECES))
    states = game.states_from_boards(padded, max_pieces=max_pieces)
    indices = jnp.asarray([position_index(board) for board in padded], jnp.uint32)
    return Batch(boards, outcomes, max_pieces, states, indices)


def team_for_pieces(team: Team, max_pieces: int) -> Team:
    """``team`` on the chess move generator for ``max_pieces`` (itself when it already is)."""
    if max_pieces != getattr(team.env, "max_pieces", DEFAULT_MAX_PIECES):
        return team.with_env(games.board_game(team.env).make_env(max_pieces))
    return team


def per_position_program(one_position: Callable) -> Callable:
    """``jit((params, base_key, indices, states) -> one_position(params, key_b, state_b)
    for every b)``: each position searched with the key folded from ``base_key`` and its index."""

    def search(params, base_key, indices, states):
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(base_key, indices)
        return jax.vmap(one_position, in_axes=(None, 0, 0))(params, keys, states)

    return jax.jit(search)


def batch_answers(game, batch: Batch, columns: Dict[str, Tuple[np.ndarray, np.ndarray]], names: Sequence[str]
                  ) -> Tuple[Dict[str, List[str]], Dict[str, List[float]]]:
    """UCI moves and values of the columns ``names`` for the batch's real positions, from
    ``columns[name] = (actions [B], values [B])``; a finished position gets ``""`` and its result."""
    moves: Dict[str, List[str]] = {}
    values: Dict[str, List[float]] = {}
    for name in names:
        actions, column_values = columns[name]
        moves[name] = [game.action_to_uci(int(actions[b]), board) if outcome is None else ""
                       for b, (board, outcome) in enumerate(zip(batch.boards, batch.outcomes))]
        values[name] = [float(column_values[b]) if outcome is None else outcome
                        for b, outcome in enumerate(batch.outcomes)]
    return moves, values


def solve_in_batches(solve_batch: Callable, names: Sequence[str], boards: Sequence[chess.Board], batch_size: int
                     ) -> SolverOutput:
    """Runs ``solve_batch(boards) -> (moves, values)`` over ``boards`` in batches of
    ``batch_size`` and concatenates the columns ``names``."""
    moves: Dict[str, List[str]] = {name: [] for name in names}
    values: Dict[str, List[float]] = {name: [] for name in names}
    for start in range(0, len(boards), batch_size):
        batch_moves, batch_values = solve_batch(list(boards[start:start + batch_size]))
        for name in names:
            moves[name] += batch_moves[name]
            values[name] += batch_values[name]
    return SolverOutput(moves=moves, values={name: np.asarray(v, np.float64) for name, v in values.items()})


__all__ = ["TeamSolver", "DEFAULT_RULES", "MAX_OVER_LATENTS", "HOMOGENEOUS_MAX", "position_index", "Batch",
           "prepare_batch", "team_for_pieces", "per_position_program", "batch_answers", "solve_in_batches"]
