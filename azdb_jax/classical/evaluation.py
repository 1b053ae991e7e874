"""The classical evaluation: a weighted sum of hand-made terms, from the side to move.

Terms (``FEATURES``), each White's count minus Black's, so a position and its colour
mirror have opposite features:

- ``pawn`` .. ``queen``: material, the number of pieces of each kind;
- ``mobility``: squares attacked by knights, bishops, rooks and queens that are not
  occupied by their own side;
- ``king_attack``: attacks (by any piece or pawn, one per attacker and square) on the
  enemy king's square and the squares next to it;
- ``pawn_shield``: own pawns on the three squares in front of the king;
- ``bishop_pair``: 1 for a side with two bishops or more;
- ``rook_open_file`` / ``rook_semi_open_file``: rooks on a file without pawns / without
  own pawns but with enemy ones;
- ``centre_control``: attacks on the centre (d4, e4, d5, e5 on 8x8; the nine squares
  b2..d4 on Gardner's 5x5 board);

and ``tempo``, a constant 1 for the side to move. With features ``f`` (White minus
Black) and weights ``w``, the value for the side to move is

    eval = s · Σ_{i < tempo} w_i f_i + w_tempo,   s = +1 if White moves, −1 if Black,

in centipawns, clipped to ±``EVAL_LIMIT`` (below every mate score). The default weights
are the textbook ones (P 100, N 320, B 330, R 500, Q 900, ...); ``azdb_jax.classical.
learning`` fits them by least squares from game outcomes.
"""

import dataclasses
import json
import operator
import pathlib
from typing import Dict, List, Tuple

import chess

from azdb_jax.classical import gardner_position as gp

__all__ = ["FEATURES", "EvalWeights", "DEFAULT_WEIGHTS", "features", "evaluate", "EVAL_LIMIT"]

FEATURES = ("pawn", "knight", "bishop", "rook", "queen", "mobility", "king_attack", "pawn_shield", "bishop_pair",
            "rook_open_file", "rook_semi_open_file", "centre_control", "tempo")
NUM_TERMS = len(FEATURES) - 1  # without tempo
EVAL_LIMIT = 30_000  # |eval| cap; mate scores lie above (azdb_jax.classical.search.MATE_BOUND)


@dataclasses.dataclass(frozen=True)
class EvalWeights:
    """Weights of ``FEATURES`` in centipawns (one per feature, same order)."""

    values: Tuple[float, ...]
    name: str = "default"

    def __post_init__(self):
        if len(self.values) != len(FEATURES):
            raise ValueError(f"EvalWeights needs {len(FEATURES)} values ({', '.join(FEATURES)}), got {len(self.values)}")
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))

    def as_dict(self) -> Dict[str, float]:
        return dict(zip(FEATURES, self.values))

    @classmethod
    def from_dict(cls, weights: Dict[str, float], name: str = "custom") -> "EvalWeights":
        unknown = sorted(set(weights) - set(FEATURES))
        missing = [f for f in FEATURES if f not in weights]
        if unknown or missing:
            raise ValueError(f"evaluation weights: unknown {unknown}, missing {missing}; features: {', '.join(FEATURES)}")
        return cls(tuple(weights[f] for f in FEATURES), name)

    def save(self, path) -> None:
        pathlib.Path(path).write_text(json.dumps({"name": self.name, "weights": self.as_dict()}, indent=1))

    @classmethod
    def load(cls, path) -> "EvalWeights":
        """Weights written by `save`; ValueError naming the file and what is wrong."""
        try:
            record = json.loads(pathlib.Path(path).read_text())
            return cls.from_dict(record["weights"], record.get("name", pathlib.Path(path).stem))
        except (OSError, KeyError, TypeError, json.JSONDecodeError, ValueError) as e:
            raise ValueError(f"{path}: not an evaluation-weights file ({e})") from None


DEFAULT_WEIGHTS = EvalWeights((100, 320, 330, 500, 900, 4, 6, 10, 30, 25, 12, 5, 10), "default")

# ---------------------------------------------------------------------------- chess (8x8)

_CENTRE = chess.BB_D4 | chess.BB_E4 | chess.BB_D5 | chess.BB_E5
_NOT_A, _NOT_H = ~chess.BB_FILE_A & chess.BB_ALL, ~chess.BB_FILE_H & chess.BB_ALL


def _shield(square: int, white: bool) -> int:
    rank = chess.square_rank(square) + (1 if white else -1)
    if not 0 <= rank < 8:
        return 0
    files = [f for f in (chess.square_file(square) - 1, chess.square_file(square), chess.square_file(square) + 1)
             if 0 <= f < 8]
    return sum(chess.BB_SQUARES[chess.square(f, rank)] for f in files)


_SHIELD = [[_shield(s, white) for s in range(64)] for white in (False, True)]
_KING_ZONE = [chess.BB_KING_ATTACKS[s] | chess.BB_SQUARES[s] for s in range(64)]


def chess_features(board: chess.Board) -> List[int]:
    """The terms of ``FEATURES`` (without tempo) of a chess board, White minus Black.

    Attack sets come from python-chess's precomputed tables (its ``attacks_mask``,
    inlined: on chess this function is the search's largest single function in the profile of
    ``docs/performance.md``, "Where the classical search's time goes")."""
    occupied = board.occupied
    pawns_all, knights, bishops, rooks, queens = board.pawns, board.knights, board.bishops, board.rooks, board.queens
    diagonal = bishops | queens
    straight = rooks | queens
    out = [0] * NUM_TERMS
    for colour, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        own = board.occupied_co[colour]
        enemy_king = board.king(not colour)
        king = board.king(colour)
        zone = _KING_ZONE[enemy_king] if enemy_king is not None else 0
        mobility = attack = centre = 0
        pieces = (knights | diagonal | straight) & own
        while pieces:
            bit = pieces & -pieces
            square = bit.bit_length() - 1
            pieces ^= bit
            if bit & knights:
                attacks = _KNIGHT[square]
            else:
                attacks = 0
                if bit & diagonal:
                    attacks = _DIAG[square][_DIAG_MASK[square] & occupied]
                if bit & straight:
                    attacks |= _RANK[square][_RANK_MASK[square] & occupied] | _FILE[square][_FILE_MASK[square] & occupied]
            mobility += (attacks & ~own).bit_count()
            attack += (attacks & zone).bit_count()
            centre += (attacks & _CENTRE).bit_count()
        pawns = pawns_all & own
        if colour:
            pawn_attacks = ((pawns & _NOT_A) << 7 | (pawns & _NOT_H) << 9) & chess.BB_ALL
        else:
            pawn_attacks = (pawns & _NOT_A) >> 9 | (pawns & _NOT_H) >> 7
        attack += (pawn_attacks & zone).bit_count()
        centre += (pawn_attacks & _CENTRE).bit_count()
        shield = 0
        if king is not None:
            attack += (chess.BB_KING_ATTACKS[king] & zone).bit_count()
            shield = (pawns & _SHIELD[colour][king]).bit_count()
        open_files = semi_open = 0
        own_rooks = rooks & own
        while own_rooks:
            bit = own_rooks & -own_rooks
            own_rooks ^= bit
            file_mask = chess.BB_FILES[(bit.bit_length() - 1) & 7]
            if not pawns_all & file_mask:
                open_files += 1
            elif not pawns & file_mask:
                semi_open += 1
        own_bishops = (bishops & own).bit_count()
        values = (pawns.bit_count(), (knights & own).bit_count(), own_bishops, (rooks & own).bit_count(),
                  (queens & own).bit_count(), mobility, attack, shield, int(own_bishops >= 2), open_files, semi_open,
                  centre)
        for index, value in enumerate(values):
            out[index] += sign * value
    return out


_KNIGHT = chess.BB_KNIGHT_ATTACKS
_DIAG, _DIAG_MASK = chess.BB_DIAG_ATTACKS, chess.BB_DIAG_MASKS
_RANK, _RANK_MASK = chess.BB_RANK_ATTACKS, chess.BB_RANK_MASKS
_FILE, _FILE_MASK = chess.BB_FILE_ATTACKS, chess.BB_FILE_MASKS


# ---------------------------------------------------------------------------- Gardner (5x5)

_G_CENTRE = tuple(1 <= s % gp.SIZE <= 3 and 1 <= s // gp.SIZE <= 3 for s in range(gp.SIZE ** 2))


def _g_shield(square: int, side: int) -> Tuple[int, ...]:
    file, rank = square % gp.SIZE, square // gp.SIZE + side
    if not 0 <= rank < gp.SIZE:
        return ()
    return tuple(gp.square_of(f, rank) for f in (file - 1, file, file + 1) if 0 <= f < gp.SIZE)


_G_SHIELD = {side: [_g_shield(s, side) for s in range(gp.SIZE ** 2)] for side in (1, -1)}
# _G_ZONE[k][t]: square t is the king's square k or next to it
_G_ZONE = [tuple(t == s or t in gp.KING_TARGETS[s] for t in range(gp.SIZE ** 2)) for s in range(gp.SIZE ** 2)]


def gardner_features(position: gp.GardnerPosition) -> List[int]:
    """The terms of ``FEATURES`` (without tempo) of a Gardner position, White minus Black."""
    board = position.board
    kings = position.kings
    zones = {1: _G_ZONE[kings[-1]], -1: _G_ZONE[kings[1]]}  # the zone each side attacks
    material = [0] * 6
    mobility = attack = centre = 0
    file_pawns = {1: [0] * gp.SIZE, -1: [0] * gp.SIZE}
    bishops = {1: 0, -1: 0}
    rooks = []
    centre_flags = _G_CENTRE
    for square in range(gp.SIZE ** 2):
        piece = board[square]
        if not piece:
            continue
        side = 1 if piece > 0 else -1
        kind = piece * side
        zone = zones[side]
        if kind == gp.PAWN:
            material[0] += side
            file_pawns[side][square % gp.SIZE] += 1
            targets = gp.PAWN_ATTACKS[side > 0][square]
        elif kind == gp.KNIGHT or kind == gp.KING:
            targets = gp.LEAPER_TARGETS[kind][square]
            if kind == gp.KNIGHT:
                material[1] += side
                for t in targets:
                    if board[t] * side <= 0:
                        mobility += side
        else:
            targets = []
            for ray in gp.SLIDER_RAYS[kind][square]:
                for t in ray:
                    targets.append(t)
                    occupant = board[t] * side
                    if occupant:
                        if occupant < 0:
                            mobility += side
                        break
                    mobility += side
            material[kind - 1] += side
            if kind == gp.BISHOP:
                bishops[side] += 1
            elif kind == gp.ROOK:
                rooks.append((square, side))
        for t in targets:
            if zone[t]:
                attack += side
            if centre_flags[t]:
                centre += side
    shield = pair = open_files = semi_open = 0
    for side in (1, -1):
        for t in _G_SHIELD[side][kings[side]]:
            if board[t] == side * gp.PAWN:
                shield += side
        if bishops[side] >= 2:
            pair += side
    for square, side in rooks:
        file = square % gp.SIZE
        if not file_pawns[1][file] and not file_pawns[-1][file]:
            open_files += side
        elif not file_pawns[side][file]:
            semi_open += side
    return material[:5] + [mobility, attack, shield, pair, open_files, semi_open, centre]


# ---------------------------------------------------------------------------- both games


def features(position) -> List[int]:
    """White-minus-Black terms of a `ChessPosition` or `GardnerPosition` (without tempo)."""
    if isinstance(position, gp.GardnerPosition):
        return gardner_features(position)
    return chess_features(position.board)


def side_features(position) -> List[int]:
    """The full feature vector from the side to move: ``s · f`` then tempo 1."""
    sign = 1 if position.turn else -1
    return [sign * x for x in features(position)] + [1]


def evaluate(position, weights: EvalWeights = DEFAULT_WEIGHTS) -> int:
    """The value for the side to move in centipawns (module docstring)."""
    w = weights.values
    total = sum(map(operator.mul, w, features(position)))  # zip stops before tempo
    value = int(round((total if position.turn else -total) + w[-1]))
    return max(-EVAL_LIMIT, min(EVAL_LIMIT, value))

