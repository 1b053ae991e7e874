"""Training examples as arrays: the ``Examples`` table, its ``.npz`` files, packed move masks
and the split of held-out games (paper §5.3).

``data.game_examples`` makes the examples (one per decision of a recorded game, module
``data`` lists the fields and how each is made); this module holds them as arrays
(synopses as 104 ``uint64`` each, 832 bytes; the legal move requests as a mask packed in
``MASK_WORDS`` ``uint64`` words) and saves / loads ``.npz`` files, for the training
(``training``) and the scripts; ``split_by_game`` holds out a fraction of the games by a
hash of their names (§5.3: "10% of the games were used as validation data based on game
filename hashes"), so no game is in both sets.
"""

import dataclasses
import hashlib
import os
import pathlib
import zipfile
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy as np

from azdb_jax.rbc import actions, synopsis

__all__ = ["Examples", "MASK_WORDS", "NUM_PIECE_COUNTS", "pack_mask", "unpack_mask", "split_by_game",
           "game_in_validation"]

NUM_PIECE_COUNTS = 12  # own pawns .. king, then the opponent's (data.PIECE_COUNT_NAMES)
MASK_WORDS = (actions.NUM_MOVES + 63) // 64  # uint64 words of a packed move mask


_FIELDS = {  # name -> (dtype, shape after the example axis)
    "synopses": (np.uint64, (synopsis.NUM_PLANES,)), "stage": (np.uint8, ()), "action": (np.int32, ()),
    "legal": (np.uint64, (MASK_WORDS,)), "result": (np.int8, ()), "soon_win": (np.bool_, ()),
    "soon_lose": (np.bool_, ()), "pieces": (np.uint8, (NUM_PIECE_COUNTS,)), "tracked": (np.bool_, ()),
    "boards": (np.int32, ()), "game": (np.int32, ()), "group": (np.int32, ()), "color": (np.bool_, ()),
    "turn": (np.int32, ()),
}


@dataclasses.dataclass
class Examples:
    """Training examples as arrays (one row per decision; module docstring).

    ``game`` indexes ``games`` (game names, e.g. history file names) and ``group`` indexes
    ``groups`` (headset names). ``boards``: how many possible boards the synopsis read.
    """

    synopses: np.ndarray  # [N, 104] uint64
    stage: np.ndarray  # [N] uint8: 0 sense, 1 move
    action: np.ndarray  # [N] int32: sense index or move index
    legal: np.ndarray  # [N, MASK_WORDS] uint64: packed legal move requests (zeros at senses)
    result: np.ndarray  # [N] int8: +1 / 0 / -1 from the player's side
    soon_win: np.ndarray  # [N] bool
    soon_lose: np.ndarray  # [N] bool
    pieces: np.ndarray  # [N, 12] uint8 (data.PIECE_COUNT_NAMES)
    tracked: np.ndarray  # [N] bool
    boards: np.ndarray  # [N] int32
    game: np.ndarray  # [N] int32 into games
    group: np.ndarray  # [N] int32 into groups
    color: np.ndarray  # [N] bool: the player's colour (True: White)
    turn: np.ndarray  # [N] int32: the player's turn number (0-based)
    games: List[str] = dataclasses.field(default_factory=list)
    groups: List[str] = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        return int(self.stage.shape[0])

    @classmethod
    def empty(cls) -> "Examples":
        return cls(**{k: np.zeros((0,) + shape, dtype) for k, (dtype, shape) in _FIELDS.items()})

    @classmethod
    def from_rows(cls, rows: Sequence[Dict], games: List[str], groups: List[str]) -> "Examples":
        if not rows:
            out = cls.empty()
            out.games, out.groups = list(games), list(groups)
            return out
        arrays = {k: np.asarray([r[k] for r in rows], dtype).reshape((len(rows),) + shape)
                  for k, (dtype, shape) in _FIELDS.items()}
        return cls(**arrays, games=list(games), groups=list(groups))

    def subset(self, index: np.ndarray) -> "Examples":
        """The rows ``index`` (a boolean mask or indices), same game and group names."""
        return Examples(**{k: getattr(self, k)[index] for k in _FIELDS}, games=list(self.games),
                        groups=list(self.groups))

    @staticmethod
    def concatenate(parts: Sequence["Examples"]) -> "Examples":
        """One set from several, game and group names merged (indices remapped)."""
        games: List[str] = []
        groups: List[str] = []
        arrays: Dict[str, List[np.ndarray]] = {k: [] for k in _FIELDS}
        for part in parts:
            for names, attr in ((games, "games"), (groups, "groups")):
                for name in getattr(part, attr):
                    if name not in names:
                        names.append(name)
            game_map = np.asarray([games.index(g) for g in part.games] or [0], np.int32)
            group_map = np.asarray([groups.index(g) for g in part.groups] or [0], np.int32)
            for k in _FIELDS:
                value = getattr(part, k)
                if k == "game":
                    value = game_map[value]
                elif k == "group":
                    value = group_map[value]
                arrays[k].append(value)
        if not parts:
            return Examples.empty()
        return Examples(**{k: np.concatenate(v) for k, v in arrays.items()}, games=games, groups=groups)

    def save(self, path) -> pathlib.Path:
        """Writes a compressed ``.npz`` (through a temporary file and a rename)."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        np.savez_compressed(tmp, **{k: getattr(self, k) for k in _FIELDS},
                            games=np.asarray(self.games, dtype=str), groups=np.asarray(self.groups, dtype=str))
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, paths) -> "Examples":
        """Reads and concatenates ``.npz`` files written by ``save``; ValueError (or
        FileNotFoundError) names a missing, unreadable or malformed file."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        parts = []
        for path in paths:
            path = pathlib.Path(path)
            if not path.is_file():
                raise FileNotFoundError(f"examples file {path} does not exist")
            try:
                with np.load(path, allow_pickle=False) as data:
                    arrays = {k: data[k] for k in list(_FIELDS) + ["games", "groups"]}
            except (KeyError, ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
                raise ValueError(f"examples file {path} is unreadable or not an examples file: "
                                 f"{type(e).__name__}: {e}") from e
            n = arrays["stage"].shape[0]
            for k, (dtype, shape) in _FIELDS.items():
                if arrays[k].shape != (n,) + shape:
                    raise ValueError(f"examples file {path}: {k} has shape {arrays[k].shape}, expected "
                                     f"{(n,) + shape}")
                arrays[k] = arrays[k].astype(dtype, copy=False)
            games, groups = [str(g) for g in arrays.pop("games")], [str(g) for g in arrays.pop("groups")]
            if n and (arrays["game"].max() >= len(games) or arrays["group"].max() >= len(groups)):
                raise ValueError(f"examples file {path}: game or group indices outside its name lists")
            parts.append(cls(**arrays, games=games, groups=groups))
        return cls.concatenate(parts)


def pack_mask(indices: Iterable[int]) -> np.ndarray:
    """``[MASK_WORDS]`` uint64 with bit ``i`` set for each move index ``i``."""
    bits = np.zeros(MASK_WORDS * 64, np.uint8)
    bits[list(indices)] = 1
    return np.packbits(bits, bitorder="little").view("<u8").astype(np.uint64)


def unpack_mask(words: np.ndarray) -> np.ndarray:
    """``[..., NUM_MOVES]`` bool from ``[..., MASK_WORDS]`` packed masks."""
    words = np.ascontiguousarray(words, dtype="<u8")
    bits = np.unpackbits(words.view(np.uint8).reshape(*words.shape[:-1], MASK_WORDS * 8), axis=-1,
                         bitorder="little")
    return bits[..., :actions.NUM_MOVES].astype(bool)


def game_in_validation(game: str, fraction: float, salt: str = "") -> bool:
    """Whether the game named ``game`` is held out: a hash of its name below ``fraction``."""
    digest = hashlib.sha256(f"{salt}{game}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2 ** 64 < fraction


def split_by_game(examples: Examples, fraction: float = 0.1, salt: str = "") -> Tuple[Examples, Examples]:
    """(training, validation): every example of a game goes where its name's hash says
    (``game_in_validation``), so no game is in both; ValueError for a fraction outside (0, 1)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation fraction must be in (0, 1), got {fraction}")
    held = np.asarray([game_in_validation(g, fraction, salt) for g in examples.games] or [False], bool)
    in_validation = held[examples.game] if len(examples) else np.zeros(0, bool)
    return examples.subset(~in_validation), examples.subset(in_validation)
