"""Synopses: fixed-size bitboard summaries of a set of possible boards (paper §5.1, Appendix A).

For binary features ``f_j`` of one board (a bitboard: one bit per square), the synopsis
of a set ``S`` of possible boards combines each over the set as (paper Eq. 1)

    definitely_j(S) = AND_{b ∈ S} f_j(b),      possibly_j(S) = OR_{b ∈ S} f_j(b),

so ``definitely_j ⊆ possibly_j``, with equality when ``|S| = 1``; if the true board is in
``S``, ``definitely_j ⊆ f_j(truth) ⊆ possibly_j``. A synopsis is 104 planes (Penumbra's
Tables 9-10), each one ``uint64`` bitboard (bit ``s`` = python-chess square ``s``, a1 = 0;
``unpack`` gives ``[104, 8, 8]`` booleans, rank-major): 832 bytes.

Planes, by the paper's index (``PLANES`` names each; orientation is absolute, White's
first rank is rank 1):

- 0-9 constants: east (files e-h), west (a-d), south (ranks 1-4), north (5-8), rank 1,
  rank 8, a-file, h-file, dark squares, light squares;
- 10 stage (all ones when choosing a move, zeros when choosing a sense);
- 11-17 and 79: not own piece; own P N B R Q K; all own pieces (known exactly);
- 18-24 definitely / 25-31 possibly: not an opposing piece, opposing P N B R Q K;
- 32-35 the player's last taken move's from / to squares, its last capture square and
  the opponent's last capture square (from ``Context``);
- 36-50 squares the player's pieces attack on the board: definitely / possibly
  attackable, doubly (by two or more pieces), by pawns, knights, bishops, rooks, and
  possibly attackable without the king / without pawns. "Attackable somehow" (37, 40)
  is not defined in the paper; here it is a square that one (two) of the player's
  possible taken moves end on (``rules.taken_moves``: pushes and castles too);
- 51-64 the same for the opponent's pieces (definitely / possibly);
- 65 possibly safe opposing king: the opposing king's square when none of the player's
  pieces attacks it (OR);
- 66 squares the opponent may move to (its taken moves' destinations, OR);
- 67 the opponent's castling rights (its rooks' squares, OR);
- 68 known squares: the same piece (or none) on every board of the set;
- 69, 70, 73, 76: the own king's king-, knight-, bishop- and rook-neighbours (bishop and
  rook rays from the king square, stopped by the player's own pieces only, so they are
  known); 71-72, 74-75, 77-78 definitely / possibly opposing knights, bishops, rooks on
  them;
- 80 definitely empty squares;
- 81 the player's castling rights (its rooks' squares); 82-83 possibly / definitely
  may castle now (the king's destination of each castle RBC allows on the board);
- 84, 85 own queens' rook- and bishop-neighbours (rays stopped by own pieces);
- 86-103 previous: planes 18-35 of the synopsis the player made before (``previous``),
  zeros for the first (``carried`` makes just those 18 planes, without the rest).

``ContextTracker`` keeps one player's context through a game (its last taken move and
capture square, the opponent's last capture square, its previous synopsis) the way the
training examples read it (``data.game_examples``) and the player keeps it in play
(``player.DSMCPPlayer``), so both make the same synopsis of the same boards.

Every plane the paper lists is included; 37 and 40 are our reading of an undefined name,
and the ray neighbourhoods (73, 76, 84, 85) stop at own pieces because the paper does not
say how they treat unknown opposing pieces.
"""

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import chess
import numpy as np

from azdb_jax.rbc import rules

__all__ = ["Context", "ContextTracker", "PLANES", "NUM_PLANES", "NUM_CARRIED", "CARRIED", "PAIRS", "board_features",
           "synopsis", "carried", "board_planes", "unpack"]

NUM_PLANES = 104
CARRIED = slice(18, 36)  # the planes a synopsis hands to the next one as its previous planes (86-103)
NUM_CARRIED = CARRIED.stop - CARRIED.start
_ALL = chess.BB_ALL
_KINDS = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
_KIND_NAMES = ("pawns", "knights", "bishops", "rooks", "queens", "king")


class Context(NamedTuple):
    """What a synopsis needs besides the boards (squares are python-chess's, None: none)."""

    move_stage: bool  # True when choosing a move, False when choosing a sense
    last_from: Optional[int] = None  # the player's last taken move
    last_to: Optional[int] = None
    last_own_capture: Optional[int] = None  # where the player last captured
    last_opponent_capture: Optional[int] = None  # where the opponent last captured


def _bb(square: Optional[int]) -> int:
    return 0 if square is None else chess.BB_SQUARES[square]


def _attacks(board: chess.Board, color: bool) -> Dict[str, int]:
    """Attack maps of ``color``'s pieces on ``board``: any, doubly, per kind, without king / pawns."""
    once = twice = once_no_king = once_no_pawns = 0
    by_kind = {kind: 0 for kind in _KINDS}
    for square in chess.scan_reversed(board.occupied_co[color]):
        attacks = board.attacks_mask(square)
        kind = board.piece_type_at(square)
        twice |= once & attacks
        once |= attacks
        by_kind[kind] |= attacks
        if kind != chess.KING:
            once_no_king |= attacks
        if kind != chess.PAWN:
            once_no_pawns |= attacks
    return {"any": once, "double": twice, "pawns": by_kind[chess.PAWN], "knights": by_kind[chess.KNIGHT],
            "bishops": by_kind[chess.BISHOP], "rooks": by_kind[chess.ROOK], "no_king": once_no_king,
            "no_pawns": once_no_pawns}


def _move_targets(board: chess.Board, color: bool) -> Tuple[int, int]:
    """Squares one / two or more of ``color``'s possible taken moves end on (``color`` to move)."""
    if board.turn != color:
        board = board.copy(stack=False)
        board.turn = color
        board.ep_square = None
    once = twice = 0
    for move in rules.taken_moves(board):
        if move is not None:
            bit = chess.BB_SQUARES[move.to_square]
            twice |= once & bit
            once |= bit
    return once, twice


def _rays(square: int, occupied: int, diagonal: bool) -> int:
    if diagonal:
        return chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
    return (chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
            | chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied])


def _castle_targets(board: chess.Board, color: bool) -> int:
    board = board.copy(stack=False)
    board.turn = color
    return sum(chess.BB_SQUARES[m.to_square] for m in rules.taken_moves(board)
               if m is not None and board.is_castling(m))


def board_features(board: chess.Board, color: bool) -> Dict[str, int]:
    """The per-board features ``f_j`` (bitboards) that the synopsis combines over a set."""
    theirs = board.occupied_co[not color]
    features = {"not_opposing": _ALL & ~theirs, "empty": _ALL & ~board.occupied}
    for kind, name in zip(_KINDS, _KIND_NAMES):
        features[f"opposing_{name}"] = board.pieces_mask(kind, not color)
    for side, attacks in (("own", _attacks(board, color)), ("opp", _attacks(board, not color))):
        for name, mask in attacks.items():
            features[f"{side}_attacks_{name}"] = mask
    features["own_moves_any"], features["own_moves_double"] = _move_targets(board, color)
    features["opp_moves_any"], _ = _move_targets(board, not color)
    king = board.king(not color)
    safe = king is not None and not features["own_attacks_any"] & chess.BB_SQUARES[king]
    features["safe_opposing_king"] = chess.BB_SQUARES[king] if safe else 0
    features["opp_castling"] = board.clean_castling_rights() & (chess.BB_RANK_8 if color else chess.BB_RANK_1)
    features["may_castle"] = _castle_targets(board, color)
    return features


def _known(boards: Sequence[chess.Board]) -> int:
    codes = rules.piece_bitboards(boards)  # [N, 12]: a square is known if no piece bitboard differs there
    differ = np.bitwise_or.reduce(codes ^ codes[:1], axis=0)  # [12]
    return _ALL & ~int(np.bitwise_or.reduce(differ))


def _neighbours(board: chess.Board, color: bool) -> Dict[str, int]:
    own = board.occupied_co[color]
    king = board.king(color)
    out = {"king_king": 0, "king_knight": 0, "king_bishop": 0, "king_rook": 0, "queen_rook": 0, "queen_bishop": 0}
    if king is not None:
        out.update(king_king=chess.BB_KING_ATTACKS[king], king_knight=chess.BB_KNIGHT_ATTACKS[king],
                   king_bishop=_rays(king, own, True), king_rook=_rays(king, own, False))
    for queen in chess.scan_reversed(board.pieces_mask(chess.QUEEN, color)):
        out["queen_rook"] |= _rays(queen, own, False)
        out["queen_bishop"] |= _rays(queen, own, True)
    return out


# (name, how) for planes 0..85; 86..103 repeat 18..35 of the previous synopsis.
_CONSTANTS = [("east_side", chess.BB_FILE_E | chess.BB_FILE_F | chess.BB_FILE_G | chess.BB_FILE_H),
              ("west_side", chess.BB_FILE_A | chess.BB_FILE_B | chess.BB_FILE_C | chess.BB_FILE_D),
              ("south_side", chess.BB_RANK_1 | chess.BB_RANK_2 | chess.BB_RANK_3 | chess.BB_RANK_4),
              ("north_side", chess.BB_RANK_5 | chess.BB_RANK_6 | chess.BB_RANK_7 | chess.BB_RANK_8),
              ("rank_1", chess.BB_RANK_1), ("rank_8", chess.BB_RANK_8), ("a_file", chess.BB_FILE_A),
              ("h_file", chess.BB_FILE_H), ("dark_squares", chess.BB_DARK_SQUARES),
              ("light_squares", chess.BB_LIGHT_SQUARES)]
_OPPOSING = ["not_opposing"] + [f"opposing_{n}" for n in _KIND_NAMES]
_AND, _OR = "definitely", "possibly"
_PLAN: List[Tuple[str, str, str]] = (
    [(name, "constant", name) for name, _ in _CONSTANTS] + [("stage", "context", "stage")]
    + [("not_own_piece", "own", "not_own")] + [(f"own_{n}", "own", n) for n in _KIND_NAMES]
    + [(f"{_AND}_{f}", "and", f) for f in _OPPOSING] + [(f"{_OR}_{f}", "or", f) for f in _OPPOSING]
    + [(n, "context", n) for n in ("last_from", "last_to", "last_own_capture", "last_opponent_capture")]
    + [(f"{_AND}_attackable", "and", "own_attacks_any"), (f"{_AND}_attackable_somehow", "and", "own_moves_any"),
       (f"{_OR}_attackable", "or", "own_attacks_any"), (f"{_AND}_doubly_attackable", "and", "own_attacks_double"),
       (f"{_AND}_doubly_attackable_somehow", "and", "own_moves_double"),
       (f"{_OR}_doubly_attackable", "or", "own_attacks_double"),
       (f"{_AND}_attackable_by_pawns", "and", "own_attacks_pawns"), (f"{_OR}_attackable_by_pawns", "or",
                                                                      "own_attacks_pawns"),
       (f"{_AND}_attackable_by_knights", "and", "own_attacks_knights"),
       (f"{_AND}_attackable_by_bishops", "and", "own_attacks_bishops"),
       (f"{_OR}_attackable_by_bishops", "or", "own_attacks_bishops"),
       (f"{_AND}_attackable_by_rooks", "and", "own_attacks_rooks"), (f"{_OR}_attackable_by_rooks", "or",
                                                                      "own_attacks_rooks"),
       (f"{_OR}_attackable_without_king", "or", "own_attacks_no_king"),
       (f"{_OR}_attackable_without_pawns", "or", "own_attacks_no_pawns")]
    + [(f"{how}_attackable_by_opponent{suffix}", {"definitely": "and", "possibly": "or"}[how], feature)
       for suffix, feature in (("", "opp_attacks_any"), ("_doubly", "opp_attacks_double"),
                               ("_pawns", "opp_attacks_pawns"), ("_knights", "opp_attacks_knights"),
                               ("_bishops", "opp_attacks_bishops"), ("_rooks", "opp_attacks_rooks"))
       for how in (_AND, _OR)]
    + [(f"{_OR}_attackable_by_opponent_without_king", "or", "opp_attacks_no_king"),
       (f"{_OR}_attackable_by_opponent_without_pawns", "or", "opp_attacks_no_pawns"),
       (f"{_OR}_safe_opposing_king", "or", "safe_opposing_king"), ("opponent_may_move_to", "or", "opp_moves_any"),
       ("opponent_castling_rights", "or", "opp_castling"), ("known_squares", "known", "known")]
    + [("own_king_king_neighbours", "own", "king_king"), ("own_king_knight_neighbours", "own", "king_knight"),
       (f"{_AND}_opposing_knights_near_king", "and_near", "opposing_knights:king_knight"),
       (f"{_OR}_opposing_knights_near_king", "or_near", "opposing_knights:king_knight"),
       ("own_king_bishop_neighbours", "own", "king_bishop"),
       (f"{_AND}_opposing_bishops_near_king", "and_near", "opposing_bishops:king_bishop"),
       (f"{_OR}_opposing_bishops_near_king", "or_near", "opposing_bishops:king_bishop"),
       ("own_king_rook_neighbours", "own", "king_rook"),
       (f"{_AND}_opposing_rooks_near_king", "and_near", "opposing_rooks:king_rook"),
       (f"{_OR}_opposing_rooks_near_king", "or_near", "opposing_rooks:king_rook"),
       ("all_own_pieces", "own", "own"), (f"{_AND}_empty", "and", "empty"),
       ("own_castling_rights", "own", "castling"), (f"{_OR}_may_castle", "or", "may_castle"),
       (f"{_AND}_may_castle", "and", "may_castle"), ("own_queens_rook_neighbours", "own", "queen_rook"),
       ("own_queens_bishop_neighbours", "own", "queen_bishop")])
PLANES: Tuple[str, ...] = tuple([name for name, _, _ in _PLAN] + [f"previous_{name}" for name, _, _ in _PLAN[18:36]])
assert len(PLANES) == NUM_PLANES, len(PLANES)
# (definitely, possibly) plane indices of the same feature: definitely ⊆ possibly.
PAIRS: Tuple[Tuple[int, int], ...] = tuple(
    (i, j) for i, (a, how_a, fa) in enumerate(_PLAN) for j, (b, how_b, fb) in enumerate(_PLAN)
    if fa == fb and (how_a, how_b) in (("and", "or"), ("and_near", "or_near")))


def synopsis(boards: Sequence[chess.Board], color: bool, context: Context,
             previous: Optional[np.ndarray] = None) -> np.ndarray:
    """``[104]`` uint64: the synopsis of the possible ``boards`` for the player ``color``
    (module docstring); ``previous`` is its synopsis before (``[104]``) or that synopsis's
    carried planes (``[18]``, ``carried``), giving planes 86-103; None for none."""
    if not boards:
        raise ValueError("a synopsis needs at least one board")
    features = [board_features(b, color) for b in boards]
    names = list(features[0])
    table = np.asarray([[f[n] for n in names] for f in features], dtype=np.uint64)  # [N, F]
    definitely = dict(zip(names, (int(x) for x in np.bitwise_and.reduce(table, axis=0))))
    possibly = dict(zip(names, (int(x) for x in np.bitwise_or.reduce(table, axis=0))))
    first = boards[0]  # own pieces, rights and neighbourhoods are the same on every board of the set
    own = {"own": first.occupied_co[color], "not_own": _ALL & ~first.occupied_co[color],
           "castling": first.clean_castling_rights() & (chess.BB_RANK_1 if color else chess.BB_RANK_8)}
    own.update({n: first.pieces_mask(k, color) for k, n in zip(_KINDS, _KIND_NAMES)})
    own.update(_neighbours(first, color))
    constants = dict(_CONSTANTS)
    ctx = {"stage": _ALL if context.move_stage else 0, "last_from": _bb(context.last_from),
           "last_to": _bb(context.last_to), "last_own_capture": _bb(context.last_own_capture),
           "last_opponent_capture": _bb(context.last_opponent_capture)}
    out = []
    for _, how, source in _PLAN:
        if how == "constant":
            out.append(constants[source])
        elif how == "context":
            out.append(ctx[source])
        elif how == "own":
            out.append(own[source])
        elif how == "known":
            out.append(_known(boards))
        elif how in ("and", "or"):
            out.append((definitely if how == "and" else possibly)[source])
        else:  # opposing pieces on an own-king neighbourhood
            pieces, near = source.split(":")
            out.append((definitely if how == "and_near" else possibly)[pieces] & own[near])
    return np.concatenate([np.asarray(out, dtype=np.uint64), _carried_from(previous)])


def _carried_from(previous: Optional[np.ndarray]) -> np.ndarray:
    if previous is None:
        return np.zeros(NUM_CARRIED, np.uint64)
    previous = np.asarray(previous, np.uint64)
    if previous.shape == (NUM_PLANES,):
        return previous[CARRIED]
    if previous.shape != (NUM_CARRIED,):
        raise ValueError(f"a previous synopsis has {NUM_PLANES} planes (or its {NUM_CARRIED} carried ones), got "
                         f"shape {list(previous.shape)}")
    return previous


def carried(boards: Sequence[chess.Board], color: bool, context: Context) -> np.ndarray:
    """``[18]`` uint64: planes 18-35 of ``synopsis(boards, color, context)`` (definitely / possibly
    opposing pieces and the context), the part the next synopsis carries, without the rest."""
    if not boards:
        raise ValueError("a synopsis needs at least one board")
    masks = np.asarray([[_ALL & ~b.occupied_co[not color]] + [b.pieces_mask(k, not color) for k in _KINDS]
                        for b in boards], dtype=np.uint64)  # [N, 7]: not opposing, opposing P N B R Q K
    context_planes = [_bb(context.last_from), _bb(context.last_to), _bb(context.last_own_capture),
                      _bb(context.last_opponent_capture)]
    return np.concatenate([np.bitwise_and.reduce(masks, axis=0), np.bitwise_or.reduce(masks, axis=0),
                           np.asarray(context_planes, np.uint64)])


def board_planes(board: chess.Board, color: bool, context: Context,
                 previous: Optional[np.ndarray] = None) -> np.ndarray:
    """The planes of one board (the synopsis of the set holding only it: definitely = possibly)."""
    return synopsis([board], color, context, previous)


class ContextTracker:
    """One player's synopsis context through a game (module docstring): the convention of
    the training examples, for anything that makes synopses along a game.

    Call ``opponent_moved`` with the capture square of each opponent move (None: nothing
    captured), ``decided`` with each synopsis the player makes (every sense that names a
    square and every move), ``moved`` with each of its move results; ``context`` and
    ``previous`` are then what the next synopsis reads.
    """

    def __init__(self):
        self.last_from: Optional[int] = None  # the player's last taken move (None after a pass)
        self.last_to: Optional[int] = None
        self.last_own_capture: Optional[int] = None  # where that move captured (None: nothing)
        self.last_opponent_capture: Optional[int] = None  # where the opponent's last move captured
        self.previous: Optional[np.ndarray] = None  # [104] the player's last synopsis

    def context(self, move_stage: bool) -> Context:
        return Context(move_stage, self.last_from, self.last_to, self.last_own_capture, self.last_opponent_capture)

    def opponent_moved(self, capture: Optional[int]) -> None:
        self.last_opponent_capture = capture

    def moved(self, taken: Optional[chess.Move], capture: Optional[int]) -> None:
        self.last_from, self.last_to = (None, None) if taken is None else (taken.from_square, taken.to_square)
        self.last_own_capture = capture

    def decided(self, planes: np.ndarray) -> None:
        self.previous = np.asarray(planes, np.uint64)

    def synopsis(self, boards: Sequence[chess.Board], color: bool, move_stage: bool) -> np.ndarray:
        """The synopsis of a decision on ``boards`` (then ``decided`` with it)."""
        planes = synopsis(boards, color, self.context(move_stage), self.previous)
        self.decided(planes)
        return planes


def unpack(planes: np.ndarray) -> np.ndarray:
    """``[..., 8, 8]`` bool from ``[...]`` uint64 planes: ``[..., rank, file]``, a1 at ``[0, 0]``."""
    bits = rules.unpack_bitboards(planes)
    return bits.reshape(*bits.shape[:-1], 8, 8)
