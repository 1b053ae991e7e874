"""Host-side chess interop with python-chess: FEN <-> pgx `State`, action id <-> UCI.

pgx stores a position from the side to move: ``board[file * 8 + rank]`` with the mover's
pieces positive (1..6 = P N B R Q K), the opponent's negative, and ranks mirrored when
Black is to move. An action is ``from_square * 73 + plane`` in those mover-side squares:
planes 0..8 are underpromotions (plane // 3: rook, bishop, knight; plane % 3: straight,
towards the h-file, towards the a-file), planes 9..72 queen-like and knight moves. A
pawn reaching the last rank with a normal plane promotes to a queen; castling is the
king moving two files. Everything here runs on the host (numpy / python-chess); the
only jitted call builds a whole batch of states at once.
"""

import functools
from typing import Iterable, Sequence

import chess
import jax
import jax.numpy as jnp
import numpy as np
from pgx._src.games.chess import FROM_PLANE, MAX_TERMINATION_STEPS, TO_PLANE, GameState

from azdb_jax.envs.chess import DEFAULT_MAX_PIECES, NUM_ACTIONS, Chess, State, legal_action_mask, zobrist_hash

__all__ = [
    "Position",
    "required_max_pieces",
    "state_from_fen",
    "state_from_board",
    "states_from_fens",
    "states_from_boards",
    "state_to_board",
    "state_to_fen",
    "action_to_uci",
    "action_to_move",
    "uci_to_action",
    "move_to_action",
    "legal_uci_moves",
    "action_squares",
]

Position = chess.Board | State
_FROM_PLANE = np.asarray(FROM_PLANE)  # [64, 73] mover-side destination, -1 off board
_TO_PLANE = np.asarray(TO_PLANE)  # [64, 64] plane of a non-underpromotion move, -1 if none
_PROMOTION_LETTER = np.array(["r", "b", "n"])
_UNDERPROMOTION_KIND = {chess.ROOK: 0, chess.BISHOP: 1, chess.KNIGHT: 2}
# Positions pgx's rules cannot play: no king to attack, or a king already capturable.
_UNPLAYABLE = {
    chess.STATUS_EMPTY: "empty board",
    chess.STATUS_NO_WHITE_KING: "no white king",
    chess.STATUS_NO_BLACK_KING: "no black king",
    chess.STATUS_TOO_MANY_KINGS: "more than one king of a colour",
    chess.STATUS_PAWNS_ON_BACKRANK: "pawns on the first or last rank",
    chess.STATUS_OPPOSITE_CHECK: "the side not to move is in check",
}


# --------------------------------------------------------------------------- squares


def _relative_square(square: np.ndarray | int, color: int) -> np.ndarray | int:
    """python-chess square (rank * 8 + file) -> pgx square seen by ``color`` (0 = White)."""
    file, rank = square % 8, square // 8
    return file * 8 + np.where(color == 0, rank, 7 - rank)


def _absolute_square(relative: np.ndarray | int, color: int) -> np.ndarray | int:
    """pgx square seen by ``color`` -> python-chess square."""
    file, rank = relative // 8, relative % 8
    return np.where(color == 0, rank, 7 - rank) * 8 + file


# --------------------------------------------------------------------------- FEN -> state


def _parse_board(fen: str) -> chess.Board:
    """python-chess board for ``fen``; ValueError naming the FEN unless pgx can play it."""
    try:
        board = chess.Board(fen)
    except ValueError as error:
        raise ValueError(f"invalid FEN {fen!r}: {error}") from None
    return _playable(board, fen)


def _playable(board: chess.Board, fen: str | None = None) -> chess.Board:
    """Reject positions pgx cannot play; keep merely unusual ones (e.g. > 16 pieces a side).

    Returns ``board``, or a copy without the castling rights python-chess would ignore
    and without an en-passant square that no double pawn push can have left (python-chess
    still generates captures onto such a square).
    """
    status = board.status()
    reasons = [text for flag, text in _UNPLAYABLE.items() if status & flag]
    if reasons:
        raise ValueError(f"invalid FEN {fen or board.fen()!r}: {'; '.join(reasons)}")
    bad_ep = bool(status & chess.STATUS_INVALID_EP_SQUARE)
    if bad_ep or board.castling_rights != board.clean_castling_rights():
        board = board.copy(stack=False)
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None if bad_ep else board.ep_square
    return board


def required_max_pieces(boards: Iterable[chess.Board | str]) -> int:
    """Smallest ``Chess(max_pieces=...)`` whose move generator is exact for these positions.

    16 (pgx's fast generator) unless a side has more than 16 pieces or the side to move
    has more than 200 pseudo-legal moves (counting a promotion once); otherwise the
    largest piece count of a side, at least 32. Piece counts never grow during a game;
    move counts can, so a composed start position may still need 32 later on.
    """
    most, extended = DEFAULT_MAX_PIECES, False
    for board in boards:
        board = _parse_board(board) if isinstance(board, str) else board
        pieces = max(chess.popcount(side) for side in board.occupied_co)
        moves = sum(1 for m in board.pseudo_legal_moves if m.promotion in (None, chess.QUEEN))
        extended |= pieces > DEFAULT_MAX_PIECES or moves > 200
        most = max(most, pieces)
    return max(most, 32) if extended else DEFAULT_MAX_PIECES


def _game_fields(board: chess.Board) -> dict[str, np.ndarray]:
    """The numpy fields of pgx's `GameState` for one python-chess position (no history)."""
    color = 0 if board.turn == chess.WHITE else 1
    squares = np.zeros(64, np.int32)
    for square, piece in board.piece_map().items():
        sign = 1 if piece.color == board.turn else -1
        squares[_relative_square(square, color)] = sign * piece.piece_type  # same 1..6 codes
    sides = [board.turn, not board.turn]  # [mover, opponent]
    castling = np.array(
        [[board.has_queenside_castling_rights(s), board.has_kingside_castling_rights(s)] for s in sides]
    )
    ep = _relative_square(board.ep_square, color) if board.has_legal_en_passant() else -1
    board_history = np.zeros((8, 64), np.int32)
    board_history[0] = squares
    return dict(
        color=np.int32(color),
        board=squares,
        castling_rights=castling,
        en_passant=np.int32(ep),
        halfmove_count=np.int32(board.halfmove_clock),
        fullmove_count=np.int32(board.fullmove_number),
        board_history=board_history,
        step_count=np.int32(0),
    )


@functools.lru_cache(maxsize=None)
def _build_batch_fn(max_pieces: int):
    """Jitted, vmapped: GameState fields without legal moves/hash -> complete `State`s."""
    env = Chess(max_pieces=max_pieces)

    def build(x: GameState) -> State:
        x = x._replace(legal_action_mask=legal_action_mask(x, max_pieces))
        x = x._replace(hash_history=x.hash_history.at[0].set(zobrist_hash(x)))
        terminated = env.game.is_terminal(x)
        order = jnp.int32([0, 1])  # White is player 0
        state = State(  # type: ignore[call-arg]
            current_player=order[x.color],
            rewards=env.game.rewards(x)[order],
            terminated=terminated,
            # pgx's contract: every action is "legal" at a terminal state.
            legal_action_mask=jnp.where(terminated, True, x.legal_action_mask),
            _player_order=order,
            _x=x,
        )
        return state.replace(observation=env.observe(state))  # type: ignore[attr-defined]

    return jax.jit(jax.vmap(build))


def _bucket(size: int) -> int:
    """Padded batch size, so that a few compiled shapes serve any number of positions."""
    if size <= 256:
        return 1 << max(size - 1, 0).bit_length()
    return -(-size // 256) * 256


def states_from_boards(boards: Sequence[chess.Board], *, max_pieces: int | None = None) -> State:
    """Stacked `State` [B, ...] for python-chess positions (no history: a puzzle's view).

    Fields are assembled in numpy; one jitted, vmapped call computes legal moves, hashes,
    terminal flags, rewards and observations for the whole batch. ``max_pieces=None``
    picks `required_max_pieces` (step these states with ``Chess(max_pieces=...)`` of
    the same value to stay exact).
    """
    if not boards:
        raise ValueError("states_from_boards needs at least one position")
    boards = [_playable(board) for board in boards]
    max_pieces = required_max_pieces(boards) if max_pieces is None else max_pieces
    fields = [_game_fields(board) for board in boards]
    fields += [fields[0]] * (_bucket(len(fields)) - len(fields))
    stacked = {name: np.stack([f[name] for f in fields]) for name in fields[0]}
    batch = len(fields)
    x = GameState(  # type: ignore[call-arg]
        **stacked,
        hash_history=np.zeros((batch, MAX_TERMINATION_STEPS + 1, 2), np.uint32),
        legal_action_mask=np.zeros((batch, NUM_ACTIONS), bool),
    )
    states = _build_batch_fn(max_pieces)(x)
    return jax.tree.map(lambda leaf: leaf[: len(boards)], states)


def states_from_fens(fens: Sequence[str], *, max_pieces: int | None = None) -> State:
    """Stacked `State` [B, ...] from FENs; ValueError names the first bad FEN and why."""
    return states_from_boards([_parse_board(fen) for fen in fens], max_pieces=max_pieces)


def state_from_board(board: chess.Board, *, max_pieces: int | None = None) -> State:
    """Single `State` for a python-chess position (White is player 0)."""
    return jax.tree.map(lambda leaf: leaf[0], states_from_boards([board], max_pieces=max_pieces))


def state_from_fen(fen: str, *, max_pieces: int | None = None) -> State:
    """Single `State` from a FEN (clocks included); ValueError on a bad or unplayable FEN.

    Positions that are illegal in standard chess but playable (more than 16 pieces or 8
    pawns a side, impossible checks) load; missing kings, extra kings, pawns on the back
    ranks and a capturable king do not. Castling rights without king and rook at home
    and en-passant squares without a legal capture are dropped, as python-chess does.
    """
    return state_from_board(_parse_board(fen), max_pieces=max_pieces)


# --------------------------------------------------------------------------- state -> FEN


def _mover_view(position: Position) -> tuple[np.ndarray, int]:
    """(pgx board from the mover's side [64], mover colour 0/1) of a state or board."""
    if isinstance(position, chess.Board):
        return _game_fields(position)["board"], 0 if position.turn == chess.WHITE else 1
    x = position._x
    if np.ndim(x.color) != 0:
        raise ValueError(f"expected a single state, got a batch of shape {np.shape(x.color)}")
    return np.asarray(x.board), int(x.color)


def state_to_board(state: State) -> chess.Board:
    """python-chess board of a single state (raw castling rights and en-passant square)."""
    squares, color = _mover_view(state)
    x = state._x
    board = chess.Board(None)
    for relative in np.flatnonzero(squares):
        code = int(squares[relative])
        white = (code > 0) == (color == 0)
        board.set_piece_at(int(_absolute_square(relative, color)), chess.Piece(abs(code), white))
    board.turn = chess.WHITE if color == 0 else chess.BLACK
    rights = np.asarray(x.castling_rights)  # [[mover q, mover k], [opp q, opp k]]
    white_rights, black_rights = (rights[0], rights[1]) if color == 0 else (rights[1], rights[0])
    corners = [chess.BB_A1, chess.BB_H1, chess.BB_A8, chess.BB_H8]
    flags = [white_rights[0], white_rights[1], black_rights[0], black_rights[1]]
    board.castling_rights = sum(bb for bb, flag in zip(corners, flags) if flag)
    ep = int(x.en_passant)
    board.ep_square = None if ep < 0 else int(_absolute_square(ep, color))
    board.halfmove_clock = int(x.halfmove_count)
    board.fullmove_number = int(x.fullmove_count)
    return board


def state_to_fen(state: State) -> str:
    """FEN of a single state, written from the state's own fields.

    Castling rights and the en-passant square are written as stored (not re-derived by
    python-chess), so the FEN shows exactly what the state hashes for repetitions.
    """
    board = state_to_board(state)
    castling = "".join(
        letter for letter, bb in zip("KQkq", [chess.BB_H1, chess.BB_A1, chess.BB_H8, chess.BB_A8])
        if board.castling_rights & bb
    )
    ep = "-" if board.ep_square is None else chess.square_name(board.ep_square)
    turn = "w" if board.turn == chess.WHITE else "b"
    return f"{board.board_fen()} {turn} {castling or '-'} {ep} {board.halfmove_clock} {board.fullmove_number}"


# --------------------------------------------------------------------------- actions <-> UCI


def _decode(actions: np.ndarray, squares: np.ndarray, color: int) -> list[str]:
    """UCI strings for action ids [N] moved by ``color`` on a mover-side board; ValueError if off board."""
    actions = np.asarray(actions, np.int64).reshape(-1)
    bad = (actions < 0) | (actions >= NUM_ACTIONS)
    if bad.any():
        raise ValueError(f"action ids must be in [0, {NUM_ACTIONS}), got {actions[bad].tolist()}")
    origin, plane = actions // 73, actions % 73
    target = _FROM_PLANE[origin, plane]
    if (target < 0).any():
        raise ValueError(f"action ids {actions[target < 0].tolist()} move off the board")
    names = np.array(chess.SQUARE_NAMES)
    uci = np.char.add(names[_absolute_square(origin, color)], names[_absolute_square(target, color)])
    queen = (plane >= 9) & (squares[origin] == chess.PAWN) & (target % 8 == 7)
    suffix = np.where(plane < 9, _PROMOTION_LETTER[np.minimum(plane // 3, 2)], np.where(queen, "q", ""))
    return np.char.add(uci, suffix).tolist()


def action_squares(action: int, mover: chess.Color) -> tuple[chess.Square, chess.Square]:
    """(from, to) python-chess squares of action id ``action`` played by ``mover`` (True: White)."""
    if not 0 <= action < NUM_ACTIONS or _FROM_PLANE[action // 73, action % 73] < 0:
        raise ValueError(f"{action} is not a pgx chess action id (or it moves off the board)")
    color = 0 if mover == chess.WHITE else 1
    target = _FROM_PLANE[action // 73, action % 73]
    return int(_absolute_square(action // 73, color)), int(_absolute_square(target, color))


def _encode(move: chess.Move, squares: np.ndarray, color: int) -> int:
    """pgx action id of ``move`` (ValueError when pgx has no such action)."""
    origin = int(_relative_square(move.from_square, color))
    target = int(_relative_square(move.to_square, color))
    if move.promotion is not None:
        if squares[origin] != chess.PAWN or target % 8 != 7 or origin % 8 != 6:
            raise ValueError(f"{move.uci()} is not a pawn promotion")
    if move.promotion in _UNDERPROMOTION_KIND:
        file_step = target // 8 - origin // 8
        direction = {0: 0, 1: 1, -1: 2}.get(file_step)
        if direction is None:
            raise ValueError(f"{move.uci()} is not a pawn move")
        return origin * 73 + _UNDERPROMOTION_KIND[move.promotion] * 3 + direction
    plane = int(_TO_PLANE[origin, target])
    if plane < 0 or move.promotion not in (None, chess.QUEEN):
        raise ValueError(f"{move.uci()} has no pgx action (not a queen-like or knight move)")
    return origin * 73 + plane


def _legal_mask(state: State) -> np.ndarray:
    """The position's own legal moves (pgx sets every action legal at terminal states)."""
    return np.asarray(state._x.legal_action_mask)


def action_to_move(action: int, position: Position) -> chess.Move:
    """python-chess move of a legal pgx action id; ValueError if unknown or illegal."""
    squares, color = _mover_view(position)
    uci = _decode(np.array([action]), squares, color)[0]
    move = chess.Move.from_uci(uci)
    if isinstance(position, chess.Board):
        legal = position.is_legal(move)
    else:
        legal = bool(_legal_mask(position)[action])
    if not legal:
        raise ValueError(f"action {action} ({uci}) is not legal in {_fen_of(position)}")
    return move


def action_to_uci(action: int, position: Position) -> str:
    """UCI string (e.g. 'e7e8q', 'e1g1') of a legal pgx action id in ``position``."""
    return action_to_move(action, position).uci()


def move_to_action(move: chess.Move, position: Position) -> int:
    """pgx action id of a legal python-chess move; ValueError if it is not legal."""
    squares, color = _mover_view(position)
    if isinstance(position, chess.Board) and not position.is_legal(move):
        raise ValueError(f"move {move.uci()} is not legal in {position.fen()}")
    try:
        action = _encode(move, squares, color)
    except ValueError as error:
        raise ValueError(f"move {move.uci()} is not legal in {_fen_of(position)}: {error}") from None
    if not isinstance(position, chess.Board):
        if not _legal_mask(position)[action]:
            raise ValueError(f"move {move.uci()} (action {action}) is not legal in {_fen_of(position)}")
        if squares[action // 73] == chess.PAWN and (action // 73) % 8 == 6 and move.promotion is None:
            raise ValueError(f"move {move.uci()} reaches the last rank without a promotion piece")
    return action


def uci_to_action(uci: str, position: Position) -> int:
    """pgx action id of a UCI move string; ValueError if malformed or illegal."""
    try:
        move = chess.Move.from_uci(uci)
    except ValueError as error:
        raise ValueError(f"bad UCI move {uci!r}: {error}") from None
    return move_to_action(move, position)


def legal_uci_moves(state: State) -> list[str]:
    """UCI strings of every legal move of a single state, in action-id order."""
    squares, color = _mover_view(state)
    return _decode(np.flatnonzero(_legal_mask(state)), squares, color)


def _fen_of(position: Position) -> str:
    return position.fen() if isinstance(position, chess.Board) else state_to_fen(position)
