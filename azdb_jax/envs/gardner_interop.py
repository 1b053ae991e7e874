"""Host-side Gardner chess interop: FEN <-> pgx `State`, action id <-> UCI move, a text board.

python-chess cannot hold a 5x5 board, so the FEN parser is ours; it is strict and its
errors name the FEN and the reason. A Gardner FEN is a chess FEN with five ranks of five
files (``rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1`` is the start), ``-`` for castling and en
passant (the game has neither), then the half-move clock and the move number (both may
be left out, as in EPD: ``0 1``).

pgx stores a position from the side to move: ``_board[file * 5 + rank]`` with the
mover's pieces positive (1..6 = P N B R Q K), the opponent's negative, ranks mirrored
when Black is to move. An action is ``from_square * 49 + plane`` in those mover-side
squares: planes 0..8 are underpromotions (plane // 3: rook, bishop, knight; plane % 3:
straight, towards the e-file, towards the a-file), planes 9..48 queen-like and knight
moves; a pawn reaching the last rank by a plane >= 9 becomes a queen. UCI squares are
``a1``..``e5`` and promotions carry the piece letter (``a4a5q``, ``b4a5n``), as
Fairy-Stockfish writes them.

States are built by one jitted, vmapped call from pgx's own position routines (piece
lists, legal moves, hash, terminal flags, observation), with an empty history: unlike
``pgx.gardner_chess.State._from_fen``, whose history also holds pgx's initial board and
its stale hash (the observation then shows the start position as the previous one), which
makes the side to move player 0, and which runs several compiled calls per position.
White is player 0, as in ``chess_interop``.
"""

import functools
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from pgx._src.gardner_chess_utils import TO_MAP
from pgx.gardner_chess import (  # pylint: disable=protected-access
    MAX_TERMINATION_STEPS,
    _check_termination,
    _is_checking,
    _observe,
    _possible_piece_positions,
)

from azdb_jax.envs.gardner import NUM_ACTIONS, State, in_check, position_legal_mask, zobrist_hash

__all__ = [
    "STARTING_FEN",
    "NUM_ACTIONS",
    "MAX_PIECES_PER_SIDE",
    "ParsedFen",
    "parse_fen",
    "fen_of",
    "state_from_fen",
    "states_from_fens",
    "state_to_fen",
    "action_to_uci",
    "uci_to_action",
    "decode_actions",
    "legal_actions",
    "legal_uci_moves",
    "legal_mask",
    "is_in_check",
    "board_text",
    "square_name",
]

STARTING_FEN = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
MAX_PIECES_PER_SIDE = 10  # pgx's move generator follows at most 10 pieces a side
FILES = "abcde"
_PIECE_CODES = {letter: code for code, letter in enumerate("pnbrqk", start=1)}
_PIECE_LETTERS = " PNBRQK"
_TO_MAP = np.asarray(TO_MAP)  # [25, 49] mover-side destination square, -1 off the board
_UNDERPROMOTION = "rbn"


class ParsedFen(NamedTuple):
    """A validated Gardner FEN in absolute orientation."""

    board: np.ndarray  # [5, 5] int32, [file, rank] from White's side: +code White, -code Black, 0 empty
    white_to_move: bool
    halfmove_clock: int
    fullmove_number: int


# --------------------------------------------------------------------------- squares


def square_name(file: int, rank: int) -> str:
    """UCI name of a square, e.g. ``square_name(4, 0) == "e1"``."""
    return f"{FILES[file]}{rank + 1}"


def _relative_index(file: int, rank: int, white: bool) -> int:
    """pgx square index of an absolute (file, rank) seen by the side to move."""
    return file * 5 + (rank if white else 4 - rank)


def _absolute(index: np.ndarray, white: bool) -> tuple[np.ndarray, np.ndarray]:
    """(file, rank) of pgx square indices seen by the side to move."""
    file, rank = np.divmod(np.asarray(index), 5)
    return file, (rank if white else 4 - rank)


_SQUARE_NAMES = np.array([square_name(f, r) for f in range(5) for r in range(5)])  # by file * 5 + rank


def _names(index: np.ndarray, white: bool) -> np.ndarray:
    file, rank = _absolute(index, white)
    return _SQUARE_NAMES[file * 5 + rank]


def _parse_square(text: str) -> tuple[int, int]:
    if len(text) != 2 or text[0] not in FILES or text[1] not in "12345":
        raise ValueError(f"{text!r} is not a square of the 5x5 board (a1..e5)")
    return FILES.index(text[0]), int(text[1]) - 1


# --------------------------------------------------------------------------- FEN -> state


def _parse_placement(placement: str) -> np.ndarray:
    ranks = placement.split("/")
    if len(ranks) != 5:
        raise ValueError(f"the board has {len(ranks)} ranks, expected 5")
    board = np.zeros((5, 5), np.int32)
    for row, text in enumerate(ranks):
        rank, file, previous_digit = 4 - row, 0, False
        for char in text:
            if char.isdigit():
                if previous_digit or not "1" <= char <= "5":
                    raise ValueError(f"rank {rank + 1} ({text!r}): bad empty-square count {char!r}")
                file += int(char)
            elif char.lower() in _PIECE_CODES:
                if file < 5:
                    board[file, rank] = _PIECE_CODES[char.lower()] * (1 if char.isupper() else -1)
                file += 1
            else:
                raise ValueError(f"rank {rank + 1} ({text!r}): {char!r} is not a piece letter (PNBRQK, pnbrqk)")
            previous_digit = char.isdigit()
        if file != 5:
            raise ValueError(f"rank {rank + 1} ({text!r}) has {file} squares, expected 5")
    return board


def _clock(text: str, name: str, low: int) -> int:
    if not text.isdigit() or int(text) < low:
        raise ValueError(f"{name} {text!r} is not an integer >= {low}")
    return int(text)


def parse_fen(fen: str) -> ParsedFen:
    """Validates a Gardner FEN; ValueError ``"invalid Gardner FEN '...': <reason>"`` if bad.

    Checks: 6 fields (or 4 without clocks), a 5x5 board of piece letters and digits, one
    king a side, at most 10 pieces a side (pgx's move generator), no pawn on the first
    or last rank, ``w``/``b`` to move, ``-`` for castling and en passant, clocks that are
    integers (half-move >= 0, move number >= 1). Whether the side not to move is in check
    needs the move generator: `states_from_fens` checks it.
    """
    if not isinstance(fen, str):
        raise ValueError(f"invalid Gardner FEN {fen!r}: not a string")
    try:
        fields = fen.split()
        if len(fields) not in (4, 6):
            raise ValueError(f"{len(fields)} fields, expected 6 (board, side, castling, en passant, clocks) "
                             "or 4 (without clocks)")
        placement, side, castling, en_passant = fields[:4]
        board = _parse_placement(placement)
        if side not in ("w", "b"):
            raise ValueError(f"side to move {side!r} is not 'w' or 'b'")
        if castling != "-":
            raise ValueError(f"castling field {castling!r}: Gardner chess has no castling, expected '-'")
        if en_passant != "-":
            raise ValueError(f"en passant field {en_passant!r}: Gardner pawns never move two squares, expected '-'")
        halfmove, fullmove = (fields[4], fields[5]) if len(fields) == 6 else ("0", "1")
        halfmove_clock = _clock(halfmove, "half-move clock", 0)
        fullmove_number = _clock(fullmove, "move number", 1)
        for sign, colour in ((1, "White"), (-1, "Black")):
            kings = int((board == sign * 6).sum())
            if kings != 1:
                raise ValueError(f"{colour} has {kings} kings, expected 1")
            pieces = int((np.sign(board) == sign).sum())
            if pieces > MAX_PIECES_PER_SIDE:
                raise ValueError(f"{colour} has {pieces} pieces; pgx's move generator follows at most "
                                 f"{MAX_PIECES_PER_SIDE} a side")
        if (np.abs(board[:, [0, 4]]) == 1).any():
            raise ValueError("a pawn stands on the first or last rank")
    except ValueError as error:
        raise ValueError(f"invalid Gardner FEN {fen!r}: {error}") from None
    return ParsedFen(board, side == "w", halfmove_clock, fullmove_number)


def _mover_board(parsed: ParsedFen) -> np.ndarray:
    """pgx's ``_board`` [25] of a parsed FEN: mover-side squares, mover's pieces positive."""
    board = parsed.board if parsed.white_to_move else -parsed.board[:, ::-1]
    return board.reshape(25).astype(np.int32)


def _build(board, turn, halfmove, fullmove):
    """A complete `State` of one position (no history); plus whether the mover gives check."""
    state = State(  # type: ignore[call-arg]
        current_player=turn, _board=board, _turn=turn, _halfmove_count=halfmove, _fullmove_count=fullmove)
    state = state.replace(_possible_piece_positions=_possible_piece_positions(state))  # type: ignore
    state = state.replace(legal_action_mask=position_legal_mask(state))  # type: ignore
    position_hash = zobrist_hash(state)
    state = state.replace(  # type: ignore
        _zobrist_hash=position_hash,
        _hash_history=jnp.zeros_like(state._hash_history).at[0].set(position_hash),
        _board_history=jnp.zeros_like(state._board_history).at[0].set(board),
    )
    state = _check_termination(state)
    state = state.replace(  # type: ignore
        terminated=state.terminated | (state._step_count >= MAX_TERMINATION_STEPS),
        # pgx's contract: every action is "legal" at a terminal state.
        legal_action_mask=jnp.where(state.terminated, True, state.legal_action_mask),
    )
    state = state.replace(observation=_observe(state, state.current_player))  # type: ignore
    return state, _is_checking(state)


@functools.lru_cache(maxsize=None)
def _build_batch_fn():
    return jax.jit(jax.vmap(_build))


def _bucket(size: int) -> int:
    """Padded batch size, so that a few compiled shapes serve any number of positions."""
    if size <= 256:
        return 1 << max(size - 1, 0).bit_length()
    return -(-size // 256) * 256


def states_from_fens(fens: Sequence[str]) -> State:
    """Stacked `State` [B, ...] from Gardner FENs (clocks kept, no history), ready for jit/vmap.

    Raises:
      ValueError: naming the first bad FEN and why (see `parse_fen`; also a side not to
        move that is in check, whose king could be captured).
    """
    fens = list(fens)
    if not fens:
        raise ValueError("states_from_fens needs at least one position")
    parsed = [parse_fen(fen) for fen in fens]
    padded = parsed + [parsed[0]] * (_bucket(len(parsed)) - len(parsed))
    boards = np.stack([_mover_board(p) for p in padded])
    turn = np.array([0 if p.white_to_move else 1 for p in padded], np.int32)
    halfmove = np.array([p.halfmove_clock for p in padded], np.int32)
    fullmove = np.array([p.fullmove_number for p in padded], np.int32)
    states, gives_check = _build_batch_fn()(boards, turn, halfmove, fullmove)
    gives_check = np.asarray(gives_check)[: len(fens)]
    if gives_check.any():
        bad = int(np.argmax(gives_check))
        raise ValueError(f"invalid Gardner FEN {fens[bad]!r}: the side not to move is in check")
    if len(padded) == len(fens):
        return states
    return jax.tree.map(lambda leaf: leaf[: len(fens)], states)


def state_from_fen(fen: str) -> State:
    """Single `State` of a Gardner FEN (White is player 0), on the host (numpy leaves);
    ValueError on a bad FEN."""
    return jax.tree.map(lambda leaf: leaf[0], jax.device_get(states_from_fens([fen])))


# --------------------------------------------------------------------------- state -> FEN


def _single(state: State) -> tuple[np.ndarray, bool]:
    """(mover-side board [25], White to move) of a single state."""
    if np.ndim(state._turn) != 0:
        raise ValueError(f"expected a single state, got a batch of shape {np.shape(state._turn)}")
    return np.asarray(state._board), int(state._turn) == 0


def _absolute_board(state: State) -> np.ndarray:
    """[5, 5] [file, rank] board from White's side, White positive."""
    board, white = _single(state)
    board = board.reshape(5, 5)
    return board if white else -board[:, ::-1]


def fen_of(board: np.ndarray, white_to_move: bool, halfmove_clock: int = 0, fullmove_number: int = 1) -> str:
    """The FEN of an absolute [5, 5] [file, rank] board (White positive)."""
    rows = []
    for rank in range(4, -1, -1):
        text, empty = "", 0
        for file in range(5):
            code = int(board[file, rank])
            if code == 0:
                empty += 1
                continue
            letter = _PIECE_LETTERS[code] if code > 0 else _PIECE_LETTERS[-code].lower()
            text += (str(empty) if empty else "") + letter
            empty = 0
        rows.append(text + (str(empty) if empty else ""))
    return f"{'/'.join(rows)} {'w' if white_to_move else 'b'} - - {halfmove_clock} {fullmove_number}"


def state_to_fen(state: State) -> str:
    """The FEN of a single state, clocks included."""
    _, white = _single(state)
    return fen_of(_absolute_board(state), white, int(state._halfmove_count), int(state._fullmove_count))


def board_text(position: State | str) -> str:
    """A plain-text diagram (rank 5 on top, ``.`` for empty squares) with the side to move."""
    state = state_from_fen(position) if isinstance(position, str) else position
    board = _absolute_board(state)
    lines = []
    for rank in range(4, -1, -1):
        cells = [(_PIECE_LETTERS[c] if c > 0 else _PIECE_LETTERS[-c].lower()) if c else "." for c in board[:, rank]]
        lines.append(f"{rank + 1} {' '.join(cells)}")
    lines.append("  " + " ".join(FILES))
    lines.append(f"{'White' if int(state._turn) == 0 else 'Black'} to move")
    return "\n".join(lines)


# --------------------------------------------------------------------------- actions <-> UCI


@functools.lru_cache(maxsize=None)
def _position_fn():
    return jax.jit(lambda s: (position_legal_mask(s), in_check(s)))


def legal_mask(state: State) -> np.ndarray:
    """The position's legal moves [1225] (recomputed at terminal states, where pgx sets all)."""
    _single(state)
    if not bool(state.terminated):
        return np.asarray(state.legal_action_mask)
    return np.asarray(_position_fn()(state)[0])


def is_in_check(state: State) -> bool:
    """Whether the side to move of a single state is in check."""
    _single(state)
    return bool(_position_fn()(state)[1])


def decode_actions(actions: np.ndarray, state: State) -> list[str]:
    """UCI strings of action ids [N] in ``state`` (pure mapping: legality is not checked)."""
    board, white = _single(state)
    actions = np.asarray(actions, np.int64).reshape(-1)
    bad = (actions < 0) | (actions >= NUM_ACTIONS)
    if bad.any():
        raise ValueError(f"Gardner action ids must be in [0, {NUM_ACTIONS}), got {actions[bad].tolist()}")
    origin, plane = np.divmod(actions, 49)
    target = _TO_MAP[origin, plane]
    if (target < 0).any():
        raise ValueError(f"Gardner action ids {actions[target < 0].tolist()} move off the board")
    uci = np.char.add(_names(origin, white), _names(target, white))
    queen = (plane >= 9) & (board[origin] == 1) & (target % 5 == 4)
    suffix = np.where(plane < 9, np.array(list(_UNDERPROMOTION))[np.minimum(plane // 3, 2)],
                      np.where(queen, "q", ""))
    return np.char.add(uci, suffix).tolist()


def legal_actions(state: State) -> np.ndarray:
    """Action ids of the position's legal moves, ascending."""
    return np.flatnonzero(legal_mask(state))


def legal_uci_moves(state: State) -> list[str]:
    """UCI strings of every legal move of a single state, in action-id order."""
    return decode_actions(legal_actions(state), state)


def action_to_uci(action: int, state: State) -> str:
    """UCI string (e.g. ``'b1c3'``, ``'a4a5q'``) of a legal action id; ValueError if illegal."""
    uci = decode_actions(np.array([action]), state)[0]
    if not legal_mask(state)[int(action)]:
        raise ValueError(f"action {action} ({uci}) is not legal in {state_to_fen(state)}")
    return uci


def uci_to_action(uci: str, state: State) -> int:
    """pgx action id of a UCI move string; ValueError if malformed or illegal in ``state``."""
    board, white = _single(state)
    text = str(uci).strip()
    if len(text) not in (4, 5) or (len(text) == 5 and text[4] not in "qrbn"):
        raise ValueError(f"bad UCI move {uci!r}: expected e.g. 'b1c3' or 'a4a5q'")
    try:
        (f0, r0), (f1, r1) = _parse_square(text[:2]), _parse_square(text[2:4])
    except ValueError as error:
        raise ValueError(f"bad UCI move {uci!r}: {error}") from None
    origin, target = _relative_index(f0, r0, white), _relative_index(f1, r1, white)
    promotes = board[origin] == 1 and target % 5 == 4
    promotion = text[4] if len(text) == 5 else ""
    where = f"in {state_to_fen(state)}"
    if promotes != bool(promotion):
        reason = "needs a promotion piece (q, r, b or n)" if promotes else "is not a promotion"
        raise ValueError(f"move {uci!r} {reason} {where}")
    planes = np.flatnonzero(_TO_MAP[origin] == target)
    if promotion and promotion in _UNDERPROMOTION:
        planes = planes[(planes < 9) & (planes // 3 == _UNDERPROMOTION.index(promotion))]
    else:
        planes = planes[planes >= 9]
    if planes.size != 1 or not legal_mask(state)[origin * 49 + int(planes[0])]:
        raise ValueError(f"move {uci!r} is not legal {where}")
    return origin * 49 + int(planes[0])
