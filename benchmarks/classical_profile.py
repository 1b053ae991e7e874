"""Where the classical search's time goes: a cProfile breakdown by component.

  python benchmarks/classical_profile.py --game=chess --depth=4 --positions=10
  python benchmarks/classical_profile.py --game=gardner_chess --depth=5 --positions=10

Searches the fixed positions of ``benchmarks/classical_nodes.py`` (``classical.matches.fixed_positions``) (all techniques on, no
endgame tables) under ``cProfile`` and sums each function's own time (``tottime``) into
components: ``evaluation`` (the feature terms), ``move generation`` (legal, noisy and
pseudo-legal moves, check and attack tests, python-chess's generators), ``make/unmake``
(push/pop, keys), ``ordering`` (move ranks, MVV/LVA, sorting), ``transposition table``,
and ``search`` (the negamax/quiescence bodies and the rest). Profiling slows Python
function calls, so the shares, not the seconds, are the result; CPU time is used, not
wall time, so other processes on the machine do not enter it.

``--board_speed`` instead times a Gardner move on ``GardnerBoard`` (the env's rules, a
jitted step) and on the search's ``GardnerPosition``.
"""

import cProfile
import json
import pstats
import pathlib
import sys
import time

from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.classical import matches as host_matches
from azdb_jax.classical import search

_GAME = common_flags.define_game("The game.", default="gardner_chess", choices=host_matches.GAMES)
_DEPTH = flags.DEFINE_integer("depth", 5, "Search depth.", lower_bound=1)
_POSITIONS = flags.DEFINE_integer("positions", 10, "Fixed positions searched.", lower_bound=1)
_BOARD_SPEED = flags.DEFINE_bool("board_speed", False, "Instead: CPU time of a move on GardnerBoard (the env's "
                                 "jitted step) and on the search's GardnerPosition.")


def board_speed():
    """CPU microseconds per push+pop on ``GardnerBoard`` (a jitted pgx step plus the new
    position's legal moves) and per legal-move generation and push+pop on ``GardnerPosition``."""
    from azdb_jax.classical.gardner_position import GardnerPosition  # pylint: disable=g-import-not-at-top
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    board = GardnerBoard()
    board.push(board.legal_moves[0])  # compiles
    board.pop()
    start, count = time.process_time(), 0
    for _ in range(100):
        for move in board.legal_moves[:5]:
            board.push(move)
            board.pop()
            count += 1
    board_us = 1e6 * (time.process_time() - start) / count
    position = GardnerPosition()
    moves = position.legal_moves()
    start = time.process_time()
    for _ in range(20_000):
        position.legal_moves()
    generate_us = 1e6 * (time.process_time() - start) / 20_000
    start = time.process_time()
    for _ in range(20_000):
        for move in moves:
            position.push(move)
            position.pop()
    push_us = 1e6 * (time.process_time() - start) / (20_000 * len(moves))
    return dict(gardner_board_push_pop_us=board_us, position_legal_moves_us=generate_us,
                position_push_pop_us=push_us)

COMPONENTS = (
    ("evaluation", ("evaluation.py",)),
    ("ordering", ("rank", "mvv_lva", "_ordered", "sort")),
    ("make/unmake", ("push", "pop", "_remove_piece_at", "_set_piece_at", "hash_castling", "_ep_key",
                     "hash_ep_square", "_push_capture", "clean_castling_rights", "_board_state", "restore")),
    ("move generation", ("legal_moves", "noisy_moves", "pseudo_moves", "has_legal_move", "_legal", "attacked",
                         "in_check", "generate_", "is_check", "attacks_mask", "attackers_mask", "_slider_blockers",
                         "_is_safe", "is_into_check", "checkers_mask", "_attacked_for_king", "is_pseudo_legal",
                         "scan_", "piece_type_at", "king", "is_en_passant", "is_capture", "is_castling",
                         "_ep_skewered", "_generate_evasions", "pin_mask", "is_zeroing", "is_legal")),
    ("transposition table", ("ttable.py",)),
)


def component(filename: str, name: str) -> str:
    for label, keys in COMPONENTS:
        if any(key in filename or name.startswith(key) or key == name for key in keys):
            return label
    return "search"


def main(argv):
    del argv
    if _BOARD_SPEED.value:
        print(json.dumps(board_speed(), indent=1))
        return
    _, boards = host_matches.fixed_positions(_GAME.value, _POSITIONS.value)
    options = search.SearchOptions(endgame_tables=False)
    profile = cProfile.Profile(timer=time.process_time)
    nodes = 0
    profile.enable()
    for position in boards:
        nodes += search.Searcher(options).search(position.copy(), search.Limits(depth=_DEPTH.value)).nodes
    profile.disable()
    stats = pstats.Stats(profile)
    totals, functions = {}, {}
    for (filename, _, name), (_, _, tottime, _, _) in stats.stats.items():  # pylint: disable=no-member
        label = component(pathlib.Path(filename).name, name)
        totals[label] = totals.get(label, 0.0) + tottime
        functions[f"{label}: {pathlib.Path(filename).name}:{name}"] = tottime
    total = sum(totals.values())
    top = sorted(functions.items(), key=lambda kv: -kv[1])[:12]
    report = dict(command=" ".join(sys.argv), nodes=nodes, profiled_cpu_seconds=total,
                  shares={k: round(v / total, 3) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])},
                  top_functions={k: round(v / total, 3) for k, v in top})
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
