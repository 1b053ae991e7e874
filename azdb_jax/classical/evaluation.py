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
import pathlib
from typing import Dict, List, Sequence, Tuple

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
    """The terms of ``FEATURES`` (without tempo) of a chess board, White minus Black."""
    f = [0] * NUM_TERMS
    pawns_all = board.pawns
    popcount = chess.popcount
    for colour, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        own = board.occupied_co[colour]
        enemy_king = board.king(not colour)
        zone = _KING_ZONE[enemy_king] if enemy_king is not None else 0
        mobility = attack = centre = 0
        for kind in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
            pieces = board.pieces_mask(kind, colour)
            f[kind - 1] += sign * popcount(pieces)
            for square in chess.scan_forward(pieces):
                attacks = board.attacks_mask(square)
                mobility += popcount(attacks & ~own)
                attack += popcount(attacks & zone)
                centre += popcount(attacks & _CENTRE)
        pawns = pawns_all & own
        f[0] += sign * popcount(pawns)
        if colour:
            pawn_attacks = ((pawns & _NOT_A) << 7 | (pawns & _NOT_H) << 9) & chess.BB_ALL
        else:
            pawn_attacks = (pawns & _NOT_A) >> 9 | (pawns & _NOT_H) >> 7
        king = board.king(colour)
        attack += popcount(pawn_attacks & zone) + (popcount(chess.BB_KING_ATTACKS[king] & zone) if king is not None else 0)
        centre += popcount(pawn_attacks & _CENTRE)
        shield = popcount(pawns & _SHIELD[colour][king]) if king is not None else 0
        rooks = board.pieces_mask(chess.ROOK, colour)
        open_files = semi_open = 0
        for square in chess.scan_forward(rooks):
            file_mask = chess.BB_FILES[chess.square_file(square)]
            if not pawns_all & file_mask:
                open_files += 1
            elif not pawns & file_mask:
                semi_open += 1
        for index, value in ((5, mobility), (6, attack), (7, shield),
                             (8, popcount(board.pieces_mask(chess.BISHOP, colour)) >= 2),
                             (9, open_files), (10, semi_open), (11, centre)):
            f[index] += sign * int(value)
    return f


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
    total = sum(wi * fi for wi, fi in zip(w, features(position)))
    value = int(round((total if position.turn else -total) + w[-1]))
    return max(-EVAL_LIMIT, min(EVAL_LIMIT, value))

