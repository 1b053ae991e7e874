"""Self-play from puzzle positions (paper §4.2, Table 1, Appendix C.3; SPEC §1.12).

New games start from the game's initial position with probability ``initial_prob``,
otherwise from a position drawn uniformly from a set of start positions (puzzles, book
positions — never their solutions). Optionally:

- *intermediate positions*: the positions along a puzzle's solution line where the
  solver is to move again (Lichess ``Moves``, an EPD ``pv``), so self-play also starts at
  the later steps of multi-step puzzles (Table 1 row 5);
- *half-move clock augmentation*: a drawn position's half-move clock is set to one of a
  few values, e.g. {0, 20, 40, 60, 80} (row 7), so the agent sees the same position at
  different distances from the 50-move rule;
- *train/test splits*: a random split of the puzzles (row 3) or an out-of-distribution
  split that holds out one puzzle family — a puzzle and its variations (row 4).

Positions are read on the host by the game's ``FenGame`` (its record's
``start_positions`` in ``azdb_jax.games``: chess and Gardner chess) and become one
stacked pgx State; sampling is a pure function of a key (``make_start_sampler``), so
a resumed run draws exactly what an uninterrupted one would. ``prepare`` writes what a
run trained on and what it held out into the run's directory (``start_positions/``:
a manifest plus the held-out puzzles in their source format, for the puzzle runners),
and later reads the manifest back instead of the sources.
"""

import dataclasses
import hashlib
import json
import pathlib
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from absl import logging
import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import games
from azdb_jax.envs.autoreset import InitFn
from azdb_jax.files import write_atomic
from azdb_jax.games.positions import FenGame, PuzzleRecord

Array = jax.Array
HALFMOVE_CLOCKS = (0, 20, 40, 60, 80)
FOLDER = "start_positions"
MANIFEST = "manifest.json"


class StartPosition(NamedTuple):
    """One position self-play may start from."""

    fen: str
    puzzle_id: str
    group: str
    step: int  # 0: the puzzle's position; k: after k of the solver's moves along its line


# ------------------------------------------------------------------ sampling (jittable)


def make_start_sampler(
    env: pgx.core.Env,
    positions: pgx.core.State,
    *,
    initial_prob: float,
    halfmove_clocks: Sequence[int] = (),
) -> InitFn:
    """Returns ``init_fn(key) -> State`` drawing start positions as described above.

    Args:
      env: the env the positions belong to.
      positions: a stacked State [N, ...] (e.g. ``chess_interop.states_from_fens``),
        built once on the host; its pytree must match ``env.init``'s.
      initial_prob: probability of the game's usual initial position.
      halfmove_clocks: games with a half-move clock only: if non-empty, a drawn
        position's clock is replaced by one of these values, uniformly (e.g.
        ``HALFMOVE_CLOCKS``).
    """
    if not 0.0 <= initial_prob <= 1.0:
        raise ValueError(f"initial_prob must be in [0, 1], got {initial_prob}")
    if positions.current_player.ndim != 1:
        raise ValueError("positions must be a stacked State [N, ...] (e.g. chess_interop.states_from_fens)")
    num_positions = int(positions.current_player.shape[0])
    if num_positions == 0:
        raise ValueError("the start-position set is empty")
    reference = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    if jax.tree.structure(reference) != jax.tree.structure(jax.tree.map(lambda x: x[0], positions)):
        raise ValueError(f"start positions are not states of env '{env.id}'")
    clocks = jnp.int32(list(halfmove_clocks))
    game = games.get(env).start_positions
    if clocks.size and (game is None or not game.has_clock):
        raise ValueError(f"half-move clock augmentation is only defined for chess-like games, not '{env.id}'")
    if clocks.size and not bool(jnp.all((clocks >= 0) & (clocks < 100))):
        raise ValueError(f"half-move clocks must be in [0, 100), got {list(halfmove_clocks)}")

    def init_fn(key: Array) -> pgx.core.State:
        init_key, coin_key, index_key, clock_key = jax.random.split(key, 4)
        drawn = jax.tree.map(lambda x: x[jax.random.randint(index_key, (), 0, num_positions)], positions)
        if clocks.size:
            clock = clocks[jax.random.randint(clock_key, (), 0, clocks.size)]
            drawn = game.set_halfmove_clock(env, drawn, clock)
        use_initial = jax.random.bernoulli(coin_key, initial_prob)
        return jax.tree.map(lambda a, b: jnp.where(use_initial, a, b), env.init(init_key), drawn)

    return init_fn


# ------------------------------------------------------------------ positions of a run (host side)


@dataclasses.dataclass(frozen=True)
class StartPositionSet:
    """The positions a run trains from and the puzzles it holds out."""

    train: Tuple[StartPosition, ...]
    test: Tuple[StartPosition, ...]  # every held-out position (puzzle positions and their line)
    heldout_records: Tuple[PuzzleRecord, ...]  # the held-out puzzles, in source order
    train_records: Tuple[PuzzleRecord, ...]


def fen_games() -> Tuple[str, ...]:
    """The games with FEN-like start positions."""
    return tuple(game_id for game_id in games.IDS if games.get(game_id).start_positions is not None)


def fen_game(env_id: str) -> FenGame:
    """The ``FenGame`` of ``env_id``; ValueError for a game without start positions."""
    game = games.get(env_id).start_positions
    if game is None:
        raise ValueError(f"env '{env_id}' has no FEN-like start positions; games with them: {list(fen_games())}")
    return game


def _positions(game: FenGame, records: Sequence[PuzzleRecord], intermediate: bool) -> List[StartPosition]:
    out = []
    for record in records:
        out.append(StartPosition(record.fen, record.puzzle_id, record.group, 0))
        if intermediate:
            for step, fen in enumerate(game.line_positions(record.fen, record.line), start=1):
                out.append(StartPosition(fen, record.puzzle_id, record.group, step))
    return out


def load_start_positions(env_id: str, config: Any) -> StartPositionSet:
    """Reads ``config.sources`` (a ``config.StartPositionsConfig``) and splits the puzzles.

    Raises:
      ValueError: a source the game cannot read, no solution line anywhere while
        ``intermediate`` is asked for, an unknown held-out group, or a split that leaves
        either side empty (file errors name the file and line).
    """
    game = fen_game(env_id)
    records: List[PuzzleRecord] = []
    for source in config.sources:
        loaded = game.load_records(source)
        if not loaded:
            raise ValueError(f"start_positions.sources: {source!r} holds no positions")
        records.extend(loaded)
    ids = [f"{r.path}|{r.puzzle_id}" for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError("start_positions.sources: a puzzle is listed twice (the same source given twice?)")
    if config.intermediate and not any(r.line for r in records):
        raise ValueError("start_positions.intermediate needs solution lines (Lichess CSV Moves, EPD pv), but no "
                         f"record of {list(config.sources)} has one (the paper's list publishes no solutions)")
    held = np.zeros(len(records), bool)
    if config.split == "random":
        if not 0 < config.test_count < len(records):
            raise ValueError(f"start_positions.test_count must be in [1, {len(records) - 1}] for "
                             f"{len(records)} puzzles, got {config.test_count}")
        held[np.random.default_rng(config.split_seed).permutation(len(records))[:config.test_count]] = True
    elif config.split == "group":
        groups = sorted({r.group for r in records})
        if config.heldout_group not in groups:
            raise ValueError(f"start_positions.heldout_group {config.heldout_group!r} is not a group of the "
                             f"sources; groups: {groups[:20]}{' ...' if len(groups) > 20 else ''}")
        held = np.array([r.group == config.heldout_group for r in records])
        if held.all():
            raise ValueError(f"start_positions.heldout_group {config.heldout_group!r} holds every puzzle")
    train_records = tuple(r for r, h in zip(records, held) if not h)
    test_records = tuple(r for r, h in zip(records, held) if h)
    return StartPositionSet(train=tuple(_positions(game, train_records, config.intermediate)),
                            test=tuple(_positions(game, test_records, config.intermediate)),
                            heldout_records=test_records, train_records=train_records)


def _sha256(path: str) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def _write_records(path: pathlib.Path, records: Sequence[PuzzleRecord]) -> None:
    """The records' own lines, after their file's leading comments and header row, so that
    the same loader reads the file (e.g. ``eval_puzzles.py --suite=paper --data=...``)."""
    sources = {record.path for record in records}
    if len(sources) != 1:
        raise ValueError(f"records of one source file expected, got {sorted(sources)}")
    lines = pathlib.Path(sources.pop()).read_text(encoding="utf-8-sig").splitlines()
    first = next(i for i, text in enumerate(lines) if text.strip() and not text.strip().startswith("#"))
    header = [lines[records[0].header_line - 1]] if records[0].header_line else []
    kept = lines[:first] + header + [lines[n - 1] for n in sorted(r.line_number for r in records)]
    write_atomic(path, "\n".join(kept) + "\n")


def _manifest(env_id: str, config: Any, positions: StartPositionSet, files: Dict[str, str]) -> Dict[str, Any]:
    return {
        "env": env_id,
        "config": dataclasses.asdict(config),
        "sources": sorted({r.path for r in positions.train_records + positions.heldout_records}),
        "sha256": {p: _sha256(p) for p in sorted({r.path for r in positions.train_records
                                                  + positions.heldout_records})},
        "train": [p._asdict() for p in positions.train],
        "test": [p._asdict() for p in positions.test],
        "heldout_files": files,
    }


def prepare(env_id: str, config: Any, workdir=None) -> Optional[StartPositionSet]:
    """The run's start positions; None when ``config.sources`` is empty.

    With a ``workdir``, the first call writes ``<workdir>/start_positions/``: the
    manifest (config, source checksums, every train and test position) and, with a
    split, the held-out puzzles (``heldout_<k>_<file>``) and the training puzzles
    (``train_<k>_<file>``) in their source format. Later calls (resume, evaluation)
    read the manifest, not the sources, so the run keeps exactly its positions even if
    a source file changes or moves; a manifest written for another config is an error.
    """
    if not config.sources:
        return None
    folder = pathlib.Path(workdir) / FOLDER if workdir is not None else None
    if folder is not None and (folder / MANIFEST).is_file():
        return read_manifest(folder, env_id, config)
    positions = load_start_positions(env_id, config)
    if folder is None:
        return positions
    files: Dict[str, str] = {}
    if config.split != "none":
        for kind, records in (("heldout", positions.heldout_records), ("train", positions.train_records)):
            for k, source in enumerate(sorted({r.path for r in records})):
                name = f"{kind}_{k}_{pathlib.Path(source).name}"
                _write_records(folder / name, [r for r in records if r.path == source])
                files[name] = source
    write_atomic(folder / MANIFEST, json.dumps(_manifest(env_id, config, positions, files), indent=1) + "\n")
    logging.info("start positions: %d train, %d held out (%s)", len(positions.train), len(positions.test), folder)
    return positions


def read_manifest(folder, env_id: str, config: Any) -> StartPositionSet:
    """The positions recorded in ``folder/manifest.json``; it must be for ``env_id`` and ``config``."""
    path = pathlib.Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        train = tuple(StartPosition(**p) for p in manifest["train"])
        test = tuple(StartPosition(**p) for p in manifest["test"])
        saved_config, saved_env = manifest["config"], manifest["env"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a start-positions manifest ({e})") from None
    asked = json.loads(json.dumps(dataclasses.asdict(config)))
    if saved_env != env_id or saved_config != asked:
        raise ValueError(f"{path} was written for env {saved_env!r} with start_positions {saved_config}, "
                         f"not {env_id!r} with {asked}")
    if not train:
        raise ValueError(f"{path}: no training positions")
    return StartPositionSet(train=train, test=test, heldout_records=(), train_records=())


def make_init_fn(env: pgx.core.Env, config: Any, workdir=None) -> Optional[InitFn]:
    """The start-position sampler of a run (``trainer.Components.init_fn``); None when off.

    ``config`` is the run's ``StartPositionsConfig``; see ``prepare`` for ``workdir``.
    """
    positions = prepare(env.id, config, workdir)
    if positions is None:
        return None
    states = fen_game(env.id).states_from_fens(env, [p.fen for p in positions.train])
    return make_start_sampler(env, states, initial_prob=config.initial_prob, halfmove_clocks=config.halfmove_clocks)

