"""How long the packaged Gardner puzzle sets take to become start positions.

  python benchmarks/puzzle_loading.py

Every puzzle-start run (Table 1's arms) and every puzzle evaluation reads the four packaged
Gardner sets: each puzzle's moves are checked legal one by one on a ``GardnerBoard`` (the
env's rules, a jitted step per move), and the intermediate-position arms step each solution
line again. Times, in one process: the first load of the four sets, a second load of the same
files (as the next run of the same process reads them), and the solution lines' positions twice
(a ``GardnerBoard`` move alone: ``benchmarks/classical_profile.py --board_speed``). Wall and
CPU seconds; the first load includes compiling the board's jitted step. Prints one JSON line.
"""

import json
import time

from absl import app

from azdb_jax import cli
from azdb_jax.games import gardner_positions

SETS = ("mate_in_1", "mate_in_2", "mate_in_3", "only_move")


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, round(time.perf_counter() - wall, 3), round(time.process_time() - cpu, 3)


def _load():
    return [r for name in SETS for r in gardner_positions.load_records(f"gardner:{name}")]


def _lines(records):
    return sum(len(gardner_positions.line_positions(r.fen, r.line)) for r in records)


def main(argv):
    del argv
    records, first_wall, first_cpu = _timed(_load)
    _, second_wall, second_cpu = _timed(_load)
    positions, lines_wall, lines_cpu = _timed(lambda: _lines(records))
    _, lines_again_wall, lines_again_cpu = _timed(lambda: _lines(records))
    print(json.dumps(dict(
        puzzles=len(records), line_positions=positions,
        first_load_s=first_wall, first_load_cpu_s=first_cpu, second_load_s=second_wall, second_load_cpu_s=second_cpu,
        lines_s=lines_wall, lines_cpu_s=lines_cpu, lines_again_s=lines_again_wall, lines_again_cpu_s=lines_again_cpu)))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
