r"""Generate the engine-labelled Gardner chess puzzle sets (and score Fairy-Stockfish on them).

Positions come from two kinds of games, both with a fixed seed (``--seed``), played
with the env's rules (``GardnerBoard``, so no puzzle starts in a position our env has
already ended):

- random play: uniformly random legal moves from the start;
- Fairy-Stockfish play: both sides by Fairy-Stockfish at ``--game_nodes`` nodes a move,
  with a uniformly random move instead with probability ``--random_rate``.

Every position after the first ply is screened by Fairy-Stockfish 11.1
(``UCI_Variant gardner``, 1 thread, ``Contempt 0``) at depth ``--screen_depth`` (8),
MultiPV 2; candidates are labelled at depth ``--label_depth`` (14), MultiPV 2, each
position sent as ``position fen <previous position> moves <previous move> ...`` with a
new game (cleared hash) per search. Each position is used once across all sets, and
each game gives at most ``--per_game`` positions to a set.

Sets (``azdb_jax/data/gardner_puzzles/``, loaded by ``azdb_jax.data.gardner``):

- ``mate_in_N.csv`` (N = 1, 2, 3; Lichess layout): the side to move mates in exactly N
  at the labelling depth. The line is built step by step: the solver's move is the
  engine's best (at each non-final step the second-best line must not mate as fast:
  a unique solution, as Lichess requires), the defender's reply is the engine's best
  defence; the line is replayed with the env and must end in checkmate. At the last
  step any mating move is correct (the runner's rule).
- ``only_move.csv`` (Lichess layout, one solver move): not a mate in <= 3, at least two
  legal moves, and the best move's expected score is at least ``--only_move_gap`` (0.3)
  above the second best's, with python-chess's ``lichess`` model ``E = 1 / (1 +
  exp(-0.00368208 cp))`` (a mate counts as E = 1 or 0): e.g. +50 cp against -400 cp.
  Themes: ``onlyMove`` plus ``mate`` (a longer forced mate), ``crushing`` (>= 600 cp),
  ``advantage`` (>= 200 cp) or ``equality``.
- ``values.csv`` (the paper's value layout): set ``draw``: the score is exactly 0 at
  the labelling depth and at depth ``--label_depth + 4``, while the material differs by
  at least 3 pawns (P 1, N 3, B 3, R 5, Q 9) or a depth-2 search says |score| >= 300 cp
  ("looks decisive"); set ``decisive``: a forced mate (either way, longer than 3 moves
  for the side to move, so it is in no mate set) where the material or the depth-2
  search points the other way (the losing side is not behind by 3 pawns, or the depth-2
  score is below 100 cp for the winner). Scored by value like the Penrose set.

Sizes are capped by ``--max_per_set`` (mates, only-move) and ``--max_values``; the
script stops when every set is full or after ``--max_positions`` screened positions.

Regenerate the shipped sets (27 minutes on a busy 2-core machine: 25,000 positions screened) and score Fairy-Stockfish
on them (solve rates at depths 2, 4, 8 and the labelling depth, through the puzzle
runners of ``azdb_jax.evaluation.puzzles``)::

  python experiments/make_gardner_puzzles.py --seed=0 --out_dir=azdb_jax/data/gardner_puzzles \
      --report=gardner_puzzles_report.json
  python experiments/make_gardner_puzzles.py --solve_rates_only --report=gardner_solve_rates.json
"""

import collections
import json
import math
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import chess.engine
import numpy as np
import tqdm
from absl import app, flags

from azdb_jax import referee
from azdb_jax.cli import common_flags
from azdb_jax.data import gardner as gardner_data
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import fairy_stockfish, puzzles
from azdb_jax.files import write_atomic

PIECE_VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0}
LICHESS_HEADER = ("PuzzleId", "FEN", "Moves", "Rating", "Themes", "Source", "Label")
VALUE_HEADER = ("id", "set", "paper_table", "fen", "to_move", "outcome", "value", "legal", "source", "label")
MATE_THEMES = {1: "mateIn1 mate oneMove", 2: "mateIn2 mate short", 3: "mateIn3 mate long"}


# ------------------------------------------------------------------ scores


def expectation(score: chess.engine.Score) -> float:
    """Expected score in [0, 1] for the side to move (lichess model; a mate is 1 or 0)."""
    if score.is_mate():
        return 1.0 if score.mate() > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-0.00368208 * score.score()))


def material_balance(fen: str) -> int:
    """Material of the side to move minus the opponent's, in pawns (P 1, N 3, B 3, R 5, Q 9)."""
    placement, side = fen.split()[:2]
    white = sum(PIECE_VALUES[c.lower()] for c in placement if c.isupper())
    black = sum(PIECE_VALUES[c] for c in placement if c.islower())
    return (white - black) if side == "w" else (black - white)


def score_text(score: chess.engine.Score) -> str:
    return f"mate {score.mate()}" if score.is_mate() else f"cp {score.score()}"


# ------------------------------------------------------------------ games


class Labeller:
    """Fairy-Stockfish searches at fixed depths, one new game per search."""

    def __init__(self, engine: fairy_stockfish.FairyStockfish):
        self.engine = engine
        self.searches = 0

    def search(self, board: GardnerBoard, depth: int, multipv: int = 2):
        self.searches += 1
        return self.engine.analyse_board(board, limit=chess.engine.Limit(depth=depth), multipv=multipv)


def play_games(engine: fairy_stockfish.FairyStockfish, rng: np.random.Generator, *, random_games: int,
               engine_games: int, game_nodes: int, random_rate: float, max_plies: int = 120):
    """Yields (game index, source, board) for every position after the first ply of each game.

    ``board`` holds the game from the start; the puzzle of a position starts one ply
    before it.
    """
    kinds = rng.permutation(["random"] * random_games + ["engine"] * engine_games).tolist()
    for game, kind in enumerate(kinds):

        def mover(board: GardnerBoard, kind=kind) -> chess.Move:
            legal = [m.uci() for m in board.legal_moves]
            if kind == "engine" and rng.random() >= random_rate:
                move = engine.analyse_board(board, limit=chess.engine.Limit(nodes=game_nodes), multipv=1,
                                            new_game=not board.move_stack).bestmove
            else:
                move = legal[int(rng.integers(len(legal)))]
            return board.parse_uci(move)

        played = referee.play_host_game(GardnerBoard(), {chess.WHITE: mover, chess.BLACK: mover}, max_plies=max_plies)
        if played.faulty is not None:
            raise ValueError(f"game {game}: {played.termination}: {played.message}")
        board = GardnerBoard()
        for move in played.board.move_stack:  # every position of the game but its end
            board.push(move)
            if not board.is_game_over():
                yield game, kind, board


def puzzle_board(board: GardnerBoard) -> GardnerBoard:
    """The position one ply before ``board``, with the last move played on it (the puzzle's view)."""
    previous = board.copy()
    last = previous.pop()
    puzzle = GardnerBoard(previous.fen())
    puzzle.push(last)
    return puzzle


# ------------------------------------------------------------------ labels


def mate_line(labeller: Labeller, board: GardnerBoard, mate_in: int, depth: int) -> Optional[List[str]]:
    """The solver's and defender's moves of a unique forced mate in ``mate_in``, or None."""
    board = board.copy()
    line: List[str] = []
    for step in range(mate_in):
        left = mate_in - step
        result = labeller.search(board, depth, multipv=2)
        if not result.lines or result.lines[0].score.mate() != left or result.bestmove is None:
            return None
        if step < mate_in - 1 and len(result.lines) > 1:
            second = result.lines[1].score.mate()
            if second is not None and 0 < second <= left:
                return None  # another move mates as fast: not a unique solution
        board.push_uci(result.bestmove)
        line.append(result.bestmove)
        if step == mate_in - 1:
            return line if board.is_checkmate() else None
        if board.is_game_over():
            return None  # our env's draw rules end the line first
        reply = labeller.search(board, depth, multipv=1)
        if reply.bestmove is None or not reply.lines or reply.lines[0].score.mate() != -(left - 1):
            return None
        board.push_uci(reply.bestmove)
        line.append(reply.bestmove)
    return None


class SetBuilder:
    """Collects the rows of every set, one position per set at most, ``per_game`` per game."""

    def __init__(self, max_per_set: int, max_values: int, per_game: int):
        self.rows: Dict[str, List[Dict[str, Any]]] = collections.defaultdict(list)
        self.used: set = set()
        self.per_game: Dict[Tuple[str, int], int] = collections.Counter()
        self.limits = {name: max_per_set for name in gardner_data.PUZZLE_SETS}
        self.limits.update(values_draw=max_values * 2 // 3, values_decisive=max_values - max_values * 2 // 3)
        self.max_game = per_game

    def wants(self, name: str, game: int) -> bool:
        return len(self.rows[name]) < self.limits[name] and self.per_game[(name, game)] < self.max_game

    def full(self) -> bool:
        return all(len(self.rows[name]) >= limit for name, limit in self.limits.items())

    def add(self, name: str, game: int, key: str, row: Dict[str, Any]) -> None:
        self.rows[name].append(row)
        self.used.add(key)
        self.per_game[(name, game)] += 1


def label_position(labeller: Labeller, builder: SetBuilder, game: int, source: str, board: GardnerBoard, *,
                   screen_depth: int, label_depth: int, only_move_gap: float) -> None:
    """Screens one position and adds it to the first set it qualifies for."""
    fen = board.fen()
    key = " ".join(fen.split()[:2])
    if key in builder.used:
        return
    puzzle = puzzle_board(board)
    screen = labeller.search(puzzle, screen_depth)
    if not screen.lines:
        return
    best = screen.lines[0].score
    mate = best.mate()
    if mate is not None and 0 < mate <= 3:
        name = f"mate_in_{mate}"
        if not builder.wants(name, game):
            return
        line = mate_line(labeller, puzzle, mate, label_depth)
        if line is None:
            return
        builder.add(name, game, key, dict(FEN=puzzle.root().fen(), Moves=" ".join([puzzle.move_stack[0].uci()] + line),
                                          Rating="", Themes=MATE_THEMES[mate], Source=source,
                                          Label=f"fairy-stockfish depth={label_depth} score=mate {mate}"))
        return
    if len(screen.lines) >= 2 and expectation(best) - expectation(screen.lines[1].score) >= only_move_gap / 2:
        if builder.wants("only_move", game):
            label = labeller.search(puzzle, label_depth)
            if len(label.lines) >= 2 and label.bestmove is not None:
                first, second = label.lines[0].score, label.lines[1].score
                first_mate = first.mate()
                if (first_mate is None or first_mate > 3 or first_mate < 0) and \
                        expectation(first) - expectation(second) >= only_move_gap:
                    cp = first.score(mate_score=100_000)
                    theme = ("mate" if first.is_mate() and first_mate > 0 else "crushing" if cp >= 600
                             else "advantage" if cp >= 200 else "equality")
                    builder.add("only_move", game, key, dict(
                        FEN=puzzle.root().fen(), Moves=f"{puzzle.move_stack[0].uci()} {label.bestmove}", Rating="",
                        Themes=f"onlyMove {theme} oneMove", Source=source,
                        Label=(f"fairy-stockfish depth={label_depth} multipv=2 best={score_text(first)} "
                               f"second={score_text(second)}")))
                    return
    balance = material_balance(fen)
    if mate is None and abs(best.score()) <= 50 and builder.wants("values_draw", game):
        label = labeller.search(puzzle, label_depth, multipv=1)
        shallow = labeller.search(puzzle, 2, multipv=1)
        if not (label.lines and shallow.lines) or label.lines[0].score != chess.engine.Cp(0):
            return
        looks = abs(shallow.lines[0].score.score(mate_score=100_000))
        if abs(balance) < 3 and looks < 300:
            return
        deeper = labeller.search(puzzle, label_depth + 4, multipv=1)
        if not deeper.lines or deeper.lines[0].score != chess.engine.Cp(0):
            return
        builder.add("values_draw", game, key, _value_row("draw", fen, "draw", source, (
            f"fairy-stockfish depth={label_depth} and {label_depth + 4} score=cp 0; material {balance:+d}; "
            f"depth 2 {score_text(shallow.lines[0].score)}")))
    elif mate is not None and abs(mate) > 3 and builder.wants("values_decisive", game):
        label = labeller.search(puzzle, label_depth, multipv=1)
        shallow = labeller.search(puzzle, 2, multipv=1)
        if not (label.lines and shallow.lines) or abs(label.lines[0].score.mate() or 0) <= 3:
            return  # no forced mate, or a short one (those belong to the mate sets)
        sign = 1 if label.lines[0].score.mate() > 0 else -1
        winner_balance, shallow_cp = sign * balance, sign * shallow.lines[0].score.score(mate_score=100_000)
        if winner_balance > -3 and shallow_cp >= 100:
            return  # the material or a shallow search already shows who wins
        outcome = "win" if sign > 0 else "loss"
        builder.add("values_decisive", game, key, _value_row("decisive", fen, outcome, source, (
            f"fairy-stockfish depth={label_depth} score={score_text(label.lines[0].score)}; material {balance:+d}; "
            f"depth 2 {score_text(shallow.lines[0].score)}")))


def _value_row(set_name: str, fen: str, outcome: str, source: str, label: str) -> Dict[str, Any]:
    return dict(set=set_name, paper_table="", fen=fen, to_move="white" if fen.split()[1] == "w" else "black",
                outcome=outcome, value={"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome], legal="true",
                source=source, label=label)


# ------------------------------------------------------------------ files


def _csv_line(values: Sequence[Any]) -> str:
    out = []
    for value in values:
        text = "" if value is None else str(value)
        out.append(f'"{text}"' if any(c in text for c in ',"') else text)
    return ",".join(out)


def write_sets(builder: SetBuilder, out_dir: str, *, header_note: str) -> Dict[str, int]:
    """Writes every set as CSV (atomically); returns the sizes."""
    os.makedirs(out_dir, exist_ok=True)
    sizes: Dict[str, int] = {}
    prefixes = {"mate_in_1": "gm1", "mate_in_2": "gm2", "mate_in_3": "gm3", "only_move": "gom"}
    for name in gardner_data.PUZZLE_SETS:
        rows = builder.rows[name]
        lines = [f"# {header_note}", _csv_line(LICHESS_HEADER)]
        for index, row in enumerate(rows):
            row = dict(row, PuzzleId=f"{prefixes[name]}{index + 1:04d}")
            lines.append(_csv_line([row[c] for c in LICHESS_HEADER]))
        write_atomic(os.path.join(out_dir, f"{name}.csv"), "\n".join(lines) + "\n")
        sizes[name] = len(rows)
    values = builder.rows["values_draw"] + builder.rows["values_decisive"]
    lines = [f"# {header_note}", "# outcome and value are for the side to move (win 1, draw 0.5, loss 0).",
             _csv_line(VALUE_HEADER)]
    for index, row in enumerate(values):
        row = dict(row, id=f"gv-{row['set']}-{index + 1:03d}")
        lines.append(_csv_line([row[c] for c in VALUE_HEADER]))
    write_atomic(os.path.join(out_dir, f"{gardner_data.VALUE_SET}.csv"), "\n".join(lines) + "\n")
    for name in ("values_draw", "values_decisive"):
        sizes[name] = len(builder.rows[name])
    return sizes


# ------------------------------------------------------------------ solve rates


def solve_rates(path: Optional[str], depths: Sequence[int], out_dir: Optional[str] = None) -> Dict[str, Any]:
    """Fairy-Stockfish's solve rate per set and depth, through the puzzle runners."""
    rates: Dict[str, Any] = {}
    for depth in depths:
        with fairy_stockfish.FairyStockfishSolver(path, depth=depth, name=f"fairy_stockfish_d{depth}") as solver:
            for name in gardner_data.PUZZLE_SETS:
                records = gardner_data.load_gardner_puzzles(name, path=_set_path(out_dir, name))
                if not records:
                    continue
                report = puzzles.run_lichess(records, solver, progress=False, by_theme=False)
                rates.setdefault(name, {"count": len(records)})[f"depth_{depth}"] = report.summary["solved"][
                    solver.columns[0]]
            values = gardner_data.load_gardner_values(path=_set_path(out_dir, gardner_data.VALUE_SET))
            if values:
                report = puzzles.run_value_puzzles(values, solver, progress=False)
                for set_name, block in report.summary["by_set"].items():
                    entry = rates.setdefault(f"values_{set_name}", {"count": block["count"]})
                    for threshold, columns in block["solved"].items():
                        entry[f"depth_{depth}@{threshold}"] = columns[solver.columns[0]]
    return rates


def _set_path(out_dir: Optional[str], name: str) -> Optional[str]:
    return None if out_dir is None else os.path.join(out_dir, f"{name}.csv")


# ------------------------------------------------------------------ main


def generate(flags_) -> Dict[str, Any]:
    rng = np.random.default_rng(flags_.seed)
    builder = SetBuilder(flags_.max_per_set, flags_.max_values, flags_.per_game)
    began = time.time()
    positions = 0
    options = {"Contempt": 0}
    with fairy_stockfish.FairyStockfish(flags_.fairy_stockfish, options=options) as player, \
            fairy_stockfish.FairyStockfish(flags_.fairy_stockfish, options=options, hash_mb=64) as engine:
        labeller = Labeller(engine)
        games = play_games(player, rng, random_games=flags_.random_games, engine_games=flags_.engine_games,
                           game_nodes=flags_.game_nodes, random_rate=flags_.random_rate)
        bar = tqdm.tqdm(games, desc="positions", unit="pos")
        for game, source, board in bar:
            positions += 1
            label_position(labeller, builder, game, source, board, screen_depth=flags_.screen_depth,
                           label_depth=flags_.label_depth, only_move_gap=flags_.only_move_gap)
            if positions % 200 == 0:
                bar.set_postfix({k: len(v) for k, v in builder.rows.items()})
            if builder.full() or positions >= flags_.max_positions:
                break
        engine_name = engine.name
    note = (f"Generated by experiments/make_gardner_puzzles.py --seed={flags_.seed}: labelled by {engine_name} "
            f"(UCI_Variant gardner) at depth {flags_.label_depth}; see the script's docstring")
    sizes = write_sets(builder, flags_.out_dir, header_note=note)
    sources = {name: dict(collections.Counter(r.get("Source", r.get("source")) for r in rows))
               for name, rows in builder.rows.items()}
    return dict(seed=flags_.seed, engine=engine_name, label_depth=flags_.label_depth,
                screen_depth=flags_.screen_depth, positions_screened=positions, searches=labeller.searches,
                sizes=sizes, sources=sources, seconds=round(time.time() - began, 1), out_dir=flags_.out_dir)


def main(argv):
    del argv
    flags_ = flags.FLAGS
    report: Dict[str, Any] = {}
    try:
        if not flags_.solve_rates_only:
            report["generation"] = generate(flags_)
            print(json.dumps(report["generation"], indent=2))
        depths = sorted(set(flags_.solve_depths + [flags_.label_depth]))
        out_dir = None if flags_.out_dir == _DEFAULT_OUT else flags_.out_dir
        report["solve_rates"] = dict(depths=depths, rates=solve_rates(flags_.fairy_stockfish, depths, out_dir))
    except (fairy_stockfish.FairyStockfishNotFound, fairy_stockfish.FairyStockfishError, ValueError,
            FileNotFoundError) as error:
        sys.exit(f"make_gardner_puzzles: {error}")
    print(json.dumps(report["solve_rates"], indent=2))
    if flags_.report:
        write_atomic(flags_.report, json.dumps(report, indent=2) + "\n")


_DEFAULT_OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "azdb_jax", "data",
                            gardner_data.FOLDER)

if __name__ == "__main__":
    common_flags.define_seed("Seed of the games.")
    flags.DEFINE_string("out_dir", _DEFAULT_OUT, "Folder of the CSV files (default: the packaged sets).")
    flags.DEFINE_integer("random_games", 3000, "Games of random moves (at most; generation stops when sets are full).")
    flags.DEFINE_integer("engine_games", 1500, "Games played by Fairy-Stockfish.")
    flags.DEFINE_integer("game_nodes", 2000, "Fairy-Stockfish nodes per move in its games.")
    flags.DEFINE_float("random_rate", 0.2, "Probability of a random move in Fairy-Stockfish's games.")
    flags.DEFINE_integer("screen_depth", 8, "Depth of the screening search (MultiPV 2).")
    flags.DEFINE_integer("label_depth", 14, "Depth of the labelling searches.")
    flags.DEFINE_float("only_move_gap", 0.3, "Expected-score gap between the best and second-best move.")
    flags.DEFINE_integer("max_per_set", 200, "Positions per mate / only-move set at most.")
    flags.DEFINE_integer("max_values", 150, "Value positions at most (2/3 draws, 1/3 decisive).")
    flags.DEFINE_integer("max_positions", 25_000, "Stop after screening this many positions (sets may be smaller).")
    flags.DEFINE_integer("per_game", 2, "Positions a game gives to one set at most.")
    flags.DEFINE_multi_integer("solve_depths", [2, 4, 8], "Depths of Fairy-Stockfish's solve rates (plus the "
                               "labelling depth).")
    flags.DEFINE_bool("solve_rates_only", False, "Only score Fairy-Stockfish on existing sets in --out_dir.")
    flags.DEFINE_string("fairy_stockfish", None, "Fairy-Stockfish binary (default: $AZDB_FAIRY_STOCKFISH, PATH, "
                        "/usr/games/fairy-stockfish).")
    flags.DEFINE_string("report", None, "Write the JSON report (sizes, sources, solve rates) here.")
    app.run(main)
