"""Chess: pgx's chess environment with its known rule traps fixed.

`Chess` is a drop-in replacement for ``pgx.make("chess")``: same `State` type, same
action encoding (AlphaZero's 4672 = 64 squares x 73 planes), same observation, same
``init``/``step`` contract. It differs from pgx 2.6 where pgx disagrees with the FIDE
rules as implemented by python-chess:

1. Repetition after ``init``. pgx seeds the hash history with a constant Zobrist hash
   that no longer matches its own hash tables under current JAX, so the initial
   position counts once too few: its threefold repetition is missed and the game goes
   on (typically ending a ply later, when the next position repeats). `_init` stores
   the true hash of the initial position.
2. En passant and repetition. pgx keeps the en-passant square (and its hash key) after
   every double pawn push; FIDE (and python-chess, ``fen()``'s default) only count it when
   an en-passant capture is actually legal. `step` clears the square, before hashing,
   when no legal en-passant capture exists, so repetitions and FENs agree with
   python-chess.
3. Move generation limits. pgx's generator considers at most 16 of the mover's pieces
   and keeps at most 200 pseudo-legal candidate moves (before the check filter;
   underpromotions are added afterwards). Positions reachable from the standard start
   never have more than 16 pieces a side, and more than 200 pseudo-legal moves needs
   many promoted queens (e.g. the 218-move record position). But 6 of the
   paper's 68 positions (Penrose 30-35) give White 19-21 pieces, and pgx misses 4-11 of
   their 31-43 legal moves. ``Chess(max_pieces=32)`` switches to
   `extended_legal_action_mask`: up to ``max_pieces`` pieces, no cap on candidate moves,
   about 2x slower per step; the default (16) keeps pgx's faster generator.

Kept from pgx on purpose: the game is a draw after 512 plies counted from ``init`` or
from the loaded position (``MAX_TERMINATION_STEPS``, as in AlphaZero); insufficient
material follows OpenSpiel's rule (equal to python-chess's ``is_insufficient_material``);
the fifty-move rule and threefold repetition end the game automatically (no claim).
"""

import jax
import jax.numpy as jnp
from pgx._src.games import chess as pgx_game
from pgx._src.games.chess import (
    BETWEEN,
    EMPTY,
    KING,
    LEGAL_DEST,
    PAWN,
    ROOK,
    TO_PLANE,
    Action,
    GameState,
    _apply_move,
    _flip,
    _is_attacked,
    _update_history,
    _zobrist_hash,
)
from pgx.chess import Chess as _PgxChess
from pgx.chess import State

__all__ = [
    "Chess",
    "State",
    "GameState",
    "DEFAULT_MAX_PIECES",
    "MAX_TERMINATION_STEPS",
    "legal_action_mask",
    "extended_legal_action_mask",
    "clear_illegal_en_passant",
    "step_game_state",
    "zobrist_hash",
]

DEFAULT_MAX_PIECES = 16  # pgx's generator: exact for <= 16 pieces and <= 200 candidate moves
MAX_TERMINATION_STEPS = pgx_game.MAX_TERMINATION_STEPS  # 512-ply draw cap
NUM_ACTIONS = 64 * 73
_QUEEN_SIDE_CASTLE = 32 * 73 + 28  # e1 -> c1 from the mover's side
_KING_SIDE_CASTLE = 32 * 73 + 31  # e1 -> g1 from the mover's side


def zobrist_hash(x: GameState) -> jax.Array:
    """pgx's Zobrist hash of a position (board from the mover's side, colour, castling, ep)."""
    return _zobrist_hash(x)


def _check_max_pieces(max_pieces: int) -> int:
    if not isinstance(max_pieces, int) or not DEFAULT_MAX_PIECES <= max_pieces <= 64:
        raise ValueError(f"max_pieces must be an int in [16, 64], got {max_pieces!r}")
    return max_pieces


def extended_legal_action_mask(x: GameState, max_pieces: int = 32) -> jax.Array:
    """Legal-move mask [4672] over up to ``max_pieces`` of the mover's pieces, uncapped.

    Every (piece, destination) pair the piece's geometry allows is a candidate; a
    candidate is pseudo-legal when the destination holds no own piece, the path between
    is empty and pawns push onto empty squares and capture diagonally; it is legal when
    the mover's king is not attacked on the board after the move. En passant, castling
    (king, rook and empty squares in place; e-, d/f- and c/g-file not attacked) and
    underpromotions (legal exactly when the queen promotion along the same line is) are
    added on top. All candidates are kept, so positions with more than 200 pseudo-legal
    moves are exact. Written for one position; vmap for batches.
    """
    board = x.board
    from_sq = jnp.nonzero(board > 0, size=max_pieces, fill_value=-1)[0]  # [P]
    piece = jnp.where(from_sq >= 0, board[from_sq], EMPTY)  # EMPTY rows of LEGAL_DEST are -1
    to_sq = LEGAL_DEST[piece, from_sq]  # [P, 27]
    from_sq = jnp.broadcast_to(from_sq[:, None], to_sq.shape).reshape(-1)
    piece = jnp.broadcast_to(piece[:, None], to_sq.shape).reshape(-1)
    to_sq = to_sq.reshape(-1)

    # En-passant candidates: pawns beside the pawn that just moved two squares.
    ep = x.en_passant
    ep_from = jnp.stack([ep - 9, ep + 7])  # from file-1 / file+1, rank 5 (mover's side)
    ep_ok = (ep >= 0) & (ep_from >= 0) & (ep_from < 64)
    ep_ok &= (board[jnp.clip(ep_from, 0, 63)] == PAWN) & (board[jnp.clip(ep - 1, 0, 63)] == -PAWN)
    from_sq = jnp.concatenate([from_sq, jnp.where(ep_ok, ep_from, -1)])
    to_sq = jnp.concatenate([to_sq, jnp.where(ep_ok, ep, -1)])
    piece = jnp.concatenate([piece, jnp.where(ep_ok, PAWN, EMPTY)])
    is_ep = jnp.concatenate([jnp.zeros(to_sq.shape[0] - 2, bool), ep_ok])
    king_sq = jnp.argmax(board == KING)

    def candidate(from_, to, p, en_passant):
        valid = (from_ >= 0) & (to >= 0)
        f, t = jnp.clip(from_, 0, 63), jnp.clip(to, 0, 63)
        target = board[t]
        between = BETWEEN[f, t]
        ok = valid & (target <= 0) & ((between < 0) | (board[between] == EMPTY)).all()
        straight = f // 8 == t // 8
        pawn_ok = jnp.where(straight, target == EMPTY, (target < 0) | en_passant)
        ok &= (p != PAWN) | pawn_ok
        after = board.at[f].set(EMPTY).at[t].set(p)
        after = jnp.where(en_passant, after.at[t - 1].set(EMPTY), after)
        king_after = jnp.where(p == KING, t, king_sq)
        ok &= ~_is_attacked(x._replace(board=after), king_after)
        label = f * 73 + TO_PLANE[f, t]
        # Underpromotion planes: piece kind (rook, bishop, knight) x direction (up, right, left).
        promotes = (p == PAWN) & (f % 8 == 6)
        direction = jnp.where(straight, 0, jnp.where(t // 8 > f // 8, 1, 2))
        under = f * 73 + jnp.arange(3) * 3 + direction
        labels = jnp.concatenate([label[None], under])
        oks = jnp.concatenate([ok[None], jnp.broadcast_to(ok & promotes, (3,))])
        return jnp.where(oks, labels, NUM_ACTIONS)

    labels = jax.vmap(candidate)(from_sq, to_sq, piece, is_ep).reshape(-1)
    mask = jnp.zeros(NUM_ACTIONS + 1, dtype=jnp.bool_).at[labels].set(True)  # last: sentinel

    attacked = jax.vmap(_is_attacked, in_axes=(None, 0))(x, jnp.int32([16, 24, 32, 40, 48]))
    home = (board[32] == KING) & ~attacked[2]
    queen_side = x.castling_rights[0, 0] & home & (board[0] == ROOK)
    queen_side &= (board[8] == EMPTY) & (board[16] == EMPTY) & (board[24] == EMPTY)
    queen_side &= ~attacked[0] & ~attacked[1]
    king_side = x.castling_rights[0, 1] & home & (board[56] == ROOK)
    king_side &= (board[40] == EMPTY) & (board[48] == EMPTY) & ~attacked[3] & ~attacked[4]
    mask = mask.at[_QUEEN_SIDE_CASTLE].set(mask[_QUEEN_SIDE_CASTLE] | queen_side)
    mask = mask.at[_KING_SIDE_CASTLE].set(mask[_KING_SIDE_CASTLE] | king_side)
    return mask[:-1]


def legal_action_mask(x: GameState, max_pieces: int = DEFAULT_MAX_PIECES) -> jax.Array:
    """Legal-move mask [4672]: pgx's generator for 16 pieces, `extended_legal_action_mask` above."""
    if _check_max_pieces(max_pieces) == DEFAULT_MAX_PIECES:
        return pgx_game._legal_action_mask(x)
    return extended_legal_action_mask(x, max_pieces)


def clear_illegal_en_passant(x: GameState) -> GameState:
    """Drop the en-passant square when no en-passant capture is legal (FIDE, python-chess).

    Needs ``x.legal_action_mask`` of the position. The capturing pawn stands on the file
    left (square ep-9) or right (ep+7) of the target square; a diagonal move onto the
    empty target square can only be a pawn's en-passant capture.
    """
    ep = x.en_passant
    froms = jnp.stack([ep - 9, ep + 7])
    on_board = (ep >= 0) & (froms >= 0) & (froms < 64)
    froms = jnp.clip(froms, 0, 63)
    labels = froms * 73 + TO_PLANE[froms, jnp.clip(ep, 0, 63)]
    legal = on_board & (x.board[froms] == PAWN) & x.legal_action_mask[jnp.clip(labels, 0, NUM_ACTIONS - 1)]
    return x._replace(en_passant=jnp.where(legal.any(), ep, -1))


def step_game_state(x: GameState, action: jax.Array, max_pieces: int = DEFAULT_MAX_PIECES) -> GameState:
    """One ply of pgx's game step with the en-passant fix, for one position.

    Same order as ``pgx._src.games.chess.Game.step`` (move, flip to the new mover, legal
    moves, history, ply count), except that the en-passant square is cleaned before the
    new position is hashed into the history.
    """
    x = _apply_move(x, Action._from_label(action))
    x = _flip(x)
    x = x._replace(legal_action_mask=legal_action_mask(x, max_pieces))
    x = clear_illegal_en_passant(x)
    x = _update_history(x)
    return x._replace(step_count=x.step_count + 1)


class Chess(_PgxChess):
    """pgx chess with exact repetition/en-passant rules and an optional exact move generator.

    Args:
      max_pieces: how many of the mover's pieces the move generator considers. 16 (the
        default) uses pgx's generator, exact for every position with at most 16 pieces per
        side and at most 200 pseudo-legal moves. Larger values (up to 64) use
        `extended_legal_action_mask`: exact for composed positions with more pieces or
        moves (e.g. 6 of the paper's Penrose positions), about 2x slower per step.
        ``chess_interop.required_max_pieces(fens)`` says which value a set of
        positions needs.
    """

    def __init__(self, max_pieces: int = DEFAULT_MAX_PIECES):
        super().__init__()
        self.max_pieces = _check_max_pieces(max_pieces)

    def _init(self, key: jax.Array) -> State:
        """pgx's initial state with the true Zobrist hash of the start position in the history."""
        state = super()._init(key)
        x = state._x
        x = x._replace(hash_history=x.hash_history.at[0].set(zobrist_hash(x)))
        return state.replace(_x=x)  # type: ignore[attr-defined]

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        """Apply ``action``; terminal flags and rewards come from the corrected position."""
        del key
        x = step_game_state(state._x, action, self.max_pieces)
        return state.replace(  # type: ignore[attr-defined]
            _x=x,
            legal_action_mask=x.legal_action_mask,
            terminated=self.game.is_terminal(x),
            rewards=self.game.rewards(x)[state._player_order],
            current_player=state._player_order[x.color],
        )
