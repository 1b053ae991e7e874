"""Chess puzzle suites: STS, bm/am suites, multi-step Lichess puzzles and the paper's value puzzles.

The runners implement the puzzle protocols of SPEC §2 (paper §4.3) for any *solver*
(``azdb_jax.evaluation.team.Solver``): a trained team through
``azdb_jax.evaluation.solvers.TeamSolver`` (one column per player, selection rule and
control copy) or a reference engine such as ``azdb_jax.evaluation.stockfish.StockfishSolver``.
They never touch JAX: they hand python-chess boards to the solver in batches and score
its UCI moves and values with the rules of ``azdb_jax.data``:

- ``run_sts``: STS, score ``points(move) / points(best)`` in [0, 1] (``data.sts_score``),
  mean over the set and per STS sub-suite;
- ``run_bm_am``: bm/am suites (WAC, Hard Talkchess, fortresses), solved if the move is a
  ``bm`` and not an ``am`` (``data.bm_am_solved``);
- ``run_lichess``: Lichess puzzles, multi-step: after the opponent's ``Moves[0]`` the
  solver must find ``Moves[1]``, after the reply ``Moves[2]`` it must find ``Moves[3]``,
  and so on; any mating move is correct and ends the puzzle solved
  (``data.is_correct_solver_move``); a column fails at its first wrong move;
- ``run_value_puzzles``: the paper's Penrose and Challenge positions, scored by value
  after search, ``(V + 1) / 2`` within a tolerance of the outcome (``data.paper_value_solved``).

Oracle groups of the solver (``solver.groups``, e.g. max-over-latents) are scored as
extra columns: solved if any member solved the position (STS: the best member's score).
The same runners score Gardner chess positions (``GardnerBoard``s, e.g. the engine-
labelled sets of ``azdb_jax.data.gardner``; ``game="gardner_chess"`` in ``load_suite``).
``run_suite`` loads a file with the strict loaders and dispatches on its kind. Every
runner returns a ``PuzzleReport`` (summary + one row per position) that writes itself as
JSON + CSV through ``reports.write_report`` (atomically).
"""

import collections
import dataclasses
import math
import pathlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import chess
import numpy as np
import tqdm

from azdb_jax import data
from azdb_jax.evaluation import reports
from azdb_jax.evaluation.team import Solver, SolverOutput

SUITES = ("sts", "epd", "lichess", "paper")
DEFAULT_THRESHOLDS = (0.25, 0.1)
CHALLENGE_NOTE = ("The Challenge set's move solutions are not published, so it is scored by value after search, "
                  "like the Penrose set.")
# Default data file of each suite under AZDB_DATA_DIR (None: the list packaged with azdb_jax).
DEFAULT_DATA = {
    "sts": ("sts", "STS1-STS15_LAN_v6.epd"),
    "epd": ("suites", "wac.epd"),
    "lichess": ("puzzles", "lichess_puzzles_kagi_1000_random.csv"),
    "paper": None,
}


@dataclasses.dataclass(frozen=True)
class PuzzleReport:
    """The result of a puzzle suite.

    Attributes:
      summary: suite-level numbers. Always holds ``suite``, ``num_positions``,
        ``columns`` (solver columns then oracle groups), ``groups`` and ``headline``
        (``{metric: {column: number}}``, what ``table`` prints); plus the suite's own
        breakdowns (see each runner).
      rows: one dict per position (per puzzle), in input order.
    """

    summary: Dict[str, Any]
    rows: List[Dict[str, Any]]

    def write(self, prefix) -> Tuple[pathlib.Path, pathlib.Path]:
        """Writes ``<prefix>.json`` and ``<prefix>.csv`` atomically; returns both paths."""
        return reports.write_report(prefix, self.summary, self.rows)

    def table(self) -> str:
        """The headline numbers as a text table, one line per column."""
        headline = self.summary["headline"]
        metrics = list(headline)
        columns = self.summary["columns"]
        width = max([len("column")] + [len(c) for c in columns])
        lines = ["  ".join([f"{'column':<{width}}"] + [f"{m:>{max(len(m), 7)}}" for m in metrics])]
        for column in columns:
            cells = [f"{headline[m].get(column, float('nan')):>{max(len(m), 7)}.3f}" for m in metrics]
            lines.append("  ".join([f"{column:<{width}}"] + cells))
        return "\n".join(lines)


# ------------------------------------------------------------------ asking the solver


def _check_output(solver: Solver, out: SolverOutput, size: int) -> None:
    for column in solver.columns:
        if column not in out.moves or column not in out.values:
            raise ValueError(f"solver output lacks column {column!r}")
        if len(out.moves[column]) != size or len(out.values[column]) != size:
            raise ValueError(f"solver column {column!r} answered {len(out.moves[column])} moves and "
                             f"{len(out.values[column])} values for {size} positions")


def ask(solver: Solver, boards: Sequence[chess.Board], *, batch_size: Optional[int] = None,
        progress: bool = True, desc: str = "positions") -> SolverOutput:
    """Asks ``solver`` about ``boards`` in batches of ``batch_size`` (default: the solver's own
    ``batch_size``, else 32), with a tqdm progress bar; returns the concatenated answers."""
    batch_size = batch_size or getattr(solver, "batch_size", None) or 32
    moves: Dict[str, List[str]] = {c: [] for c in solver.columns}
    values: Dict[str, List[np.ndarray]] = {c: [] for c in solver.columns}
    with tqdm.tqdm(total=len(boards), desc=desc, unit="pos", disable=not progress, leave=False) as bar:
        for start in range(0, len(boards), batch_size):
            batch = list(boards[start:start + batch_size])
            out = solver(batch)
            _check_output(solver, out, len(batch))
            for column in solver.columns:
                moves[column] += [str(m) for m in out.moves[column]]
                values[column].append(np.asarray(out.values[column], np.float64))
            bar.update(len(batch))
    return SolverOutput(moves=moves, values={c: np.concatenate(v) if v else np.zeros(0) for c, v in values.items()})


def _columns(solver: Solver) -> List[str]:
    return list(solver.columns) + [g for g in solver.groups if g not in solver.columns]


def _rate(flags: Sequence[float]) -> float:
    return float(np.mean(flags)) if len(flags) else math.nan


def _mean_by(keys: Sequence[Any], per_column: Mapping[str, Sequence[float]]) -> Dict[Any, Dict[str, Any]]:
    """``{key: {"count": k, "mean": {column: mean}}}`` over the positions with each key."""
    positions: Dict[Any, List[int]] = collections.defaultdict(list)
    for index, key in enumerate(keys):
        positions[key].append(index)
    return {key: {"count": len(idx), "mean": {c: _rate([v[i] for i in idx]) for c, v in per_column.items()}}
            for key, idx in positions.items()}


def _with_groups(solver: Solver, per_column: Dict[str, List[float]]) -> Dict[str, List[float]]:
    """Adds each oracle group: the best member's result per position (any member solved it)."""
    for group, members in solver.groups.items():
        missing = [m for m in members if m not in per_column]
        if missing:
            raise ValueError(f"solver group {group!r} names unknown column(s) {missing}")
        per_column[group] = [max(per_column[m][i] for m in members) if members else math.nan
                             for i in range(len(next(iter(per_column.values()), [])))]
    return per_column


def _summary(suite: str, solver: Solver, num_positions: int, headline: Dict[str, Dict[str, float]],
             **extra: Any) -> Dict[str, Any]:
    return dict(suite=suite, num_positions=num_positions, columns=_columns(solver),
                groups={g: list(m) for g, m in solver.groups.items()}, headline=headline, **extra)


# ------------------------------------------------------------------ EPD suites


def run_sts(records: Sequence[data.EpdRecord], solver: Solver, *, batch_size: Optional[int] = None,
            progress: bool = True) -> PuzzleReport:
    """Strategic Test Suite: mean ``points(move) / points(best)`` per column.

    Summary: ``score`` ``{column: mean}`` and ``by_sts_suite``
    ``{suite number: {"theme", "count", "score": {column: mean}}}``.
    Rows: ``id``, ``fen``, ``sts_suite``, ``theme``, ``<column>_move``, ``<column>_value``,
    ``<column>_score`` (groups: score only).
    """
    for index, record in enumerate(records):
        if not record.scores:
            raise ValueError(f"STS record {record.id or index!r} ({record.fen}) has no c0 move=points scores; "
                             "use run_bm_am for bm/am suites")
    out = ask(solver, [r.board() for r in records], batch_size=batch_size, progress=progress, desc="STS")
    scores = {c: [data.sts_score(r, m) for r, m in zip(records, out.moves[c])] for c in solver.columns}
    scores = _with_groups(solver, scores)
    suites = [data.sts_suite(r) for r in records]
    themes: Dict[Any, str] = {}
    for record, number in zip(records, suites):
        themes.setdefault(number, data.sts_theme(record))
    by_suite = {str(k): {"theme": themes[k], "count": v["count"], "score": v["mean"]}
                for k, v in sorted(_mean_by(suites, scores).items(), key=lambda kv: (kv[0] is None, kv[0] or 0))}
    mean = {c: _rate(v) for c, v in scores.items()}
    rows = []
    for i, record in enumerate(records):
        row: Dict[str, Any] = {"id": record.id, "fen": record.fen, "sts_suite": suites[i],
                               "theme": data.sts_theme(record)}
        for c in _columns(solver):
            if c in out.moves:
                row[f"{c}_move"] = out.moves[c][i]
                row[f"{c}_value"] = float(out.values[c][i])
            row[f"{c}_score"] = scores[c][i]
        rows.append(row)
    return PuzzleReport(_summary("sts", solver, len(records), {"score": mean}, score=mean, by_sts_suite=by_suite),
                        rows)


def run_bm_am(records: Sequence[data.EpdRecord], solver: Solver, *, batch_size: Optional[int] = None,
              progress: bool = True) -> PuzzleReport:
    """bm/am suites: solved if the move is in ``bm`` (when given) and not in ``am``.

    Summary: ``solved`` ``{column: rate}``, ``num_solved`` ``{column: count}``.
    Rows: ``id``, ``fen``, ``bm``, ``am``, ``<column>_move``, ``<column>_value``, ``<column>_solved``
    (0/1; groups: solved only).
    """
    for index, record in enumerate(records):
        if not record.bm and not record.am:
            raise ValueError(f"EPD record {record.id or index!r} ({record.fen}) has neither bm nor am")
    out = ask(solver, [r.board() for r in records], batch_size=batch_size, progress=progress, desc="EPD")
    solved = {c: [float(data.bm_am_solved(r, m)) for r, m in zip(records, out.moves[c])] for c in solver.columns}
    solved = _with_groups(solver, solved)
    rate = {c: _rate(v) for c, v in solved.items()}
    rows = []
    for i, record in enumerate(records):
        row: Dict[str, Any] = {"id": record.id, "fen": record.fen, "bm": " ".join(record.bm),
                               "am": " ".join(record.am)}
        for c in _columns(solver):
            if c in out.moves:
                row[f"{c}_move"] = out.moves[c][i]
                row[f"{c}_value"] = float(out.values[c][i])
            row[f"{c}_solved"] = int(solved[c][i])
        rows.append(row)
    return PuzzleReport(_summary("epd", solver, len(records), {"solved": rate}, solved=rate,
                                 num_solved={c: int(sum(v)) for c, v in solved.items()}), rows)


# ------------------------------------------------------------------ Lichess puzzles


def filter_themes(puzzles: Sequence[data.LichessPuzzle], themes: Optional[Sequence[str]]
                  ) -> List[data.LichessPuzzle]:
    """The puzzles tagged with at least one of ``themes`` (all puzzles when ``themes`` is empty)."""
    if not themes:
        return list(puzzles)
    wanted = set(themes)
    return [p for p in puzzles if wanted.intersection(p.themes)]


def run_lichess(puzzles: Sequence[data.LichessPuzzle], solver: Solver, *, batch_size: Optional[int] = None,
                progress: bool = True, by_theme: bool = True) -> PuzzleReport:
    """Multi-step Lichess puzzles (the line is fixed; the solver plays every other move).

    Step ``s`` (1-based) asks for ``solution[s-1]`` on ``puzzle.board_at(s-1)``. A column
    keeps going while its moves are correct; a correct move that mates (expected or not)
    ends the puzzle solved, as does the last expected move; the first wrong move fails
    the puzzle at that step. Every surviving column of a puzzle stands on the same
    position, so each step asks the solver once about the puzzles still open.

    Summary: ``solved`` ``{column: rate}``, ``num_solved``, and with ``by_theme``
    ``{theme: {"count", "solved": {column: rate}}}``.
    Rows: ``puzzle_id``, ``rating``, ``themes``, ``num_steps``, per column ``<column>_solved``
    (0/1), ``<column>_failed_step`` (1-based, empty when solved) and ``<column>_moves``
    (the moves it played, space-separated; not for groups).
    """
    columns = list(solver.columns)
    count = len(puzzles)
    open_columns = [set(columns) for _ in range(count)]
    played: List[Dict[str, List[str]]] = [{c: [] for c in columns} for _ in range(count)]
    failed: List[Dict[str, Optional[int]]] = [{c: None for c in columns} for _ in range(count)]
    step = 0
    total_steps = sum(len(p.solution) for p in puzzles)
    with tqdm.tqdm(total=total_steps, desc="Lichess steps", unit="pos", disable=not progress) as bar:
        while True:
            todo = [i for i in range(count) if open_columns[i] and step < len(puzzles[i].solution)]
            if not todo:
                break
            out = ask(solver, [puzzles[i].board_at(step) for i in todo], batch_size=batch_size,
                      progress=progress, desc=f"move {step + 1}")
            for k, i in enumerate(todo):
                puzzle = puzzles[i]
                last = step == len(puzzle.solution) - 1
                board = puzzle.board_at(step)
                for c in sorted(open_columns[i]):
                    move = out.moves[c][k]
                    played[i][c].append(move)
                    if not data.is_correct_solver_move(puzzle, step, move):
                        failed[i][c] = step + 1
                        open_columns[i].discard(c)
                    elif last or _gives_mate(board, move):
                        open_columns[i].discard(c)
            bar.update(len(todo))
            step += 1
    solved = {c: [float(failed[i][c] is None) for i in range(count)] for c in columns}
    solved = _with_groups(solver, solved)
    failed_at = {c: [failed[i][c] for i in range(count)] for c in columns}
    for group, members in solver.groups.items():
        # A group fails where its furthest-reaching member failed.
        failed_at[group] = [None if solved[group][i] or not members else max(failed[i][m] for m in members)
                            for i in range(count)]
    rate = {c: _rate(v) for c, v in solved.items()}
    summary = _summary("lichess", solver, count, {"solved": rate}, solved=rate,
                       num_solved={c: int(sum(v)) for c, v in solved.items()},
                       mean_rating=_rate([p.rating for p in puzzles if p.rating is not None]))
    if by_theme:
        per_theme: Dict[str, List[int]] = collections.defaultdict(list)
        for i, puzzle in enumerate(puzzles):
            for theme in puzzle.themes:
                per_theme[theme].append(i)
        summary["by_theme"] = {t: {"count": len(idx), "solved": {c: _rate([v[i] for i in idx])
                                                                  for c, v in solved.items()}}
                               for t, idx in sorted(per_theme.items())}
    rows = []
    for i, puzzle in enumerate(puzzles):
        row: Dict[str, Any] = {"puzzle_id": puzzle.puzzle_id, "rating": puzzle.rating,
                               "themes": " ".join(puzzle.themes), "num_steps": len(puzzle.solution)}
        for c in _columns(solver):
            row[f"{c}_solved"] = int(solved[c][i])
            row[f"{c}_failed_step"] = failed_at[c][i]
            if c in played[i]:
                row[f"{c}_moves"] = " ".join(played[i][c])
        rows.append(row)
    return PuzzleReport(summary, rows)


def _gives_mate(board: chess.Board, uci: str) -> bool:
    try:
        move = board.parse_uci(uci)
    except ValueError:
        return False
    board = board.copy(stack=False)
    board.push(move)
    return board.is_checkmate()


# ------------------------------------------------------------------ value puzzles


def run_value_puzzles(positions: Sequence[data.PaperPosition], solver: Solver, *,
                      thresholds: Sequence[float] = DEFAULT_THRESHOLDS, batch_size: Optional[int] = None,
                      progress: bool = True) -> PuzzleReport:
    """The paper's Penrose / Challenge positions, scored by value after search.

    A column solves a position if ``|(V + 1) / 2 − target| <= threshold`` (``V`` its value
    for the side to move; a missing value, NaN, never solves). Summary: ``solved``
    ``{threshold: {column: rate}}`` over all positions and ``by_set``
    ``{"penrose"|"challenge": {"count", "solved": {threshold: {column: rate}}}}``, plus
    ``note`` (the Challenge set is scored by value: its move solutions are not published).
    Rows: ``id``, ``set``, ``fen``, ``target``, per column ``<column>_move``,
    ``<column>_value`` (V), ``<column>_score`` ((V + 1) / 2) and ``<column>_solved@<t>``.
    """
    thresholds = tuple(float(t) for t in thresholds)
    if not thresholds or any(not (math.isfinite(t) and 0 <= t <= 1) for t in thresholds):
        raise ValueError(f"thresholds must be numbers in [0, 1], got {thresholds}")
    out = ask(solver, [p.board() for p in positions], batch_size=batch_size, progress=progress, desc="value puzzles")
    key = {t: f"{t:g}" for t in thresholds}
    solved: Dict[float, Dict[str, List[float]]] = {}
    for t in thresholds:
        per_column = {c: [float(math.isfinite(v) and data.paper_value_solved(p, float(v), tolerance=t))
                          for p, v in zip(positions, out.values[c])] for c in solver.columns}
        solved[t] = _with_groups(solver, per_column)
    columns = _columns(solver)
    overall = {key[t]: {c: _rate(solved[t][c]) for c in columns} for t in thresholds}
    by_set: Dict[str, Any] = {}
    headline: Dict[str, Dict[str, float]] = {}
    for name in sorted({p.set for p in positions}, key=lambda s: (s != "penrose", s)):
        idx = [i for i, p in enumerate(positions) if p.set == name]
        rates = {key[t]: {c: _rate([solved[t][c][i] for i in idx]) for c in columns} for t in thresholds}
        by_set[name] = {"count": len(idx), "solved": rates}
        headline.update({f"{name}@{key[t]}": rates[key[t]] for t in thresholds})
    rows = []
    for i, position in enumerate(positions):
        row: Dict[str, Any] = {"id": position.id, "set": position.set, "fen": position.fen, "target": position.value}
        for c in columns:
            if c in out.values:
                value = float(out.values[c][i])
                row[f"{c}_move"] = out.moves[c][i]
                row[f"{c}_value"] = value
                row[f"{c}_score"] = (value + 1.0) / 2.0
            for t in thresholds:
                row[f"{c}_solved@{key[t]}"] = int(solved[t][c][i])
        rows.append(row)
    summary = _summary("paper", solver, len(positions), headline, thresholds=list(thresholds), solved=overall,
                       by_set=by_set, note=CHALLENGE_NOTE)
    return PuzzleReport(summary, rows)


# ------------------------------------------------------------------ files


def default_data_path(kind: str) -> Optional[pathlib.Path]:
    """The shared data file of a suite under ``AZDB_DATA_DIR`` (None for the packaged paper list)."""
    _check_kind(kind)
    parts = DEFAULT_DATA[kind]
    return None if parts is None else data.data_path(*parts)


def _check_kind(kind: str) -> None:
    if kind not in SUITES:
        raise ValueError(f"unknown puzzle suite {kind!r}; valid suites: {', '.join(SUITES)}")


def load_suite(kind: str, path=None, *, limit: Optional[int] = None, themes: Optional[Sequence[str]] = None,
               game: str = "chess") -> List[Any]:
    """The records of a suite file, loaded strictly (errors name the file, line and reason).

    ``path=None`` takes the suite's default file (``default_data_path``); ``themes``
    keeps the Lichess puzzles with any of those themes; ``limit`` keeps the first N
    records (after the theme filter). ``game`` is the positions' game (a game id):
    ``"gardner_chess"`` reads Gardner chess files (``lichess`` and ``paper`` layouts;
    ``path`` required, e.g. ``azdb_jax.data.gardner.packaged_path("mate_in_2")``).
    """
    _check_kind(kind)
    if not data.board_format(game).python_chess:  # the suites' own files are chess positions
        if kind not in ("lichess", "paper"):
            raise ValueError(f"{kind!r} suites hold chess positions (SAN moves); {game} files use the lichess "
                             "or paper layouts")
        if path is None:
            raise ValueError(f"give the path of a {game} {kind} file (the packaged Gardner sets: "
                             "azdb_jax.data.gardner.packaged_path(name))")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an int >= 1, got {limit!r}")
    if themes and kind != "lichess":
        raise ValueError(f"themes filter Lichess puzzles only, not the {kind!r} suite")
    if path is None:
        path = default_data_path(kind)
    elif not pathlib.Path(path).is_file():
        raise FileNotFoundError(f"{kind} data file not found: {path}")
    loaders: Dict[str, Callable[[], Sequence[Any]]] = {
        "sts": lambda: data.load_epd(path, c0="scores"),
        "epd": lambda: data.load_epd(path),
        "lichess": lambda: filter_themes(data.load_lichess_puzzles(path, game=game), themes),
        "paper": lambda: data.load_paper_positions(path=path, game=game),
    }
    records = list(loaders[kind]())
    return records[:limit] if limit is not None else records


def run_suite(kind: str, path, solver: Solver, *, limit: Optional[int] = None,
              themes: Optional[Sequence[str]] = None, thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
              batch_size: Optional[int] = None, progress: bool = True, game: str = "chess") -> PuzzleReport:
    """Loads a suite file (``load_suite``) and runs its runner; the summary names the file.

    ``kind`` is ``"sts"`` (``run_sts``), ``"epd"`` (``run_bm_am``), ``"lichess"``
    (``run_lichess``) or ``"paper"`` (``run_value_puzzles``; ``path=None`` is the list
    packaged with azdb_jax); ``game`` as in ``load_suite``.
    """
    records = load_suite(kind, path, limit=limit, themes=themes, game=game)
    if not records:
        raise ValueError(f"no {kind} records to evaluate in {path or 'the default file'}"
                         + (f" with themes {list(themes)}" if themes else ""))
    common = dict(batch_size=batch_size, progress=progress)
    if kind == "sts":
        report = run_sts(records, solver, **common)
    elif kind == "epd":
        report = run_bm_am(records, solver, **common)
    elif kind == "lichess":
        report = run_lichess(records, solver, **common)
    else:
        report = run_value_puzzles(records, solver, thresholds=thresholds, **common)
    source = "packaged paper list" if path is None and kind == "paper" else str(path or default_data_path(kind))
    report.summary["data"] = source
    if limit is not None:
        report.summary["limit"] = limit
    if themes:
        report.summary["themes"] = list(themes)
    if not data.board_format(game).python_chess:
        report.summary["game"] = game
    return report


__all__ = [
    "PuzzleReport", "SUITES", "DEFAULT_THRESHOLDS", "DEFAULT_DATA", "CHALLENGE_NOTE", "ask", "filter_themes",
    "run_sts", "run_bm_am", "run_lichess", "run_value_puzzles", "default_data_path", "load_suite", "run_suite",
]
