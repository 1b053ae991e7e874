"""Self-play from puzzle positions, reachable from a run (paper §4.2, Table 1, App. C.3).

The paper's splits (36/17 puzzles), solution-line positions checked move by move with
python-chess, the held-out files read back by the puzzle loaders, the manifest that pins
a run's positions, and a chess run whose recorded games start from the file's positions
with the configured half-move clocks and that resumes exactly.
"""

import dataclasses
import json
import pathlib
import sys

import chess
import jax
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import config as config_lib, data, runner, runs  # noqa: E402
from azdb_jax.envs import chess_interop  # noqa: E402
from azdb_jax import start_positions as sp  # noqa: E402
from azdb_jax.presets import get_preset  # noqa: E402

LICHESS = ("puzzles", "lichess_puzzles_kagi_1000_random.csv")


def _config(**kwargs) -> config_lib.StartPositionsConfig:
    return config_lib.StartPositionsConfig(**kwargs)


# ------------------------------------------------------------------ the paper's splits (Table 1 rows 3-4)


def test_ood_split_holds_out_the_original_penrose_position_and_its_variations(tmp_path):
    config = _config(sources=("paper:penrose",), split="group", heldout_group="penrose_variation_2")
    positions = sp.prepare("chess", config, tmp_path)
    assert len(positions.train) == 36 and len(positions.test) == 17  # App. C.3
    paper = {p.id: p for p in data.load_paper_positions("penrose")}
    assert {paper[p.puzzle_id].paper_table for p in positions.test} == {7, 8, 9, 10, 11}
    assert {paper[p.puzzle_id].paper_table for p in positions.train}.isdisjoint({7, 8, 9, 10, 11})
    # The held-out puzzles are written in the paper's layout: the suite runner reads them.
    heldout = data.load_paper_positions(path=tmp_path / sp.FOLDER / "heldout_0_paper_penrose_challenge.csv")
    assert [p.id for p in heldout] == [p.puzzle_id for p in positions.test]
    assert [p.fen for p in heldout] == [paper[p.id].fen for p in heldout]
    train = data.load_paper_positions(path=tmp_path / sp.FOLDER / "train_0_paper_penrose_challenge.csv")
    assert len(train) == 36
    manifest = json.loads((tmp_path / sp.FOLDER / sp.MANIFEST).read_text())
    assert [p["puzzle_id"] for p in manifest["test"]] == [p.id for p in heldout]


def test_random_split_is_seeded_and_disjoint():
    config = _config(sources=("paper:penrose",), split="random", test_count=17, split_seed=3)
    a, b = sp.load_start_positions("chess", config), sp.load_start_positions("chess", config)
    other = sp.load_start_positions("chess", dataclasses.replace(config, split_seed=4))
    ids = lambda ps: [p.puzzle_id for p in ps]  # noqa: E731
    assert len(a.train) == 36 and len(a.test) == 17 and ids(a.test) == ids(b.test) and ids(a.test) != ids(other.test)
    assert sorted(ids(a.train) + ids(a.test)) == sorted(p.id for p in data.load_paper_positions("penrose"))
    everything = sp.load_start_positions("chess", _config(sources=("paper",)))
    assert len(everything.train) == 68 and not everything.test


# ------------------------------------------------------------------ intermediate positions


def test_intermediate_positions_follow_lichess_and_epd_solution_lines(tmp_path, data_dir):
    lines = data_dir.joinpath(*LICHESS).read_text().splitlines()
    picked = [lines[0]] + [line for line in lines[1:] if line.split(",")[0] in ("tewjc", "y0ld9")]
    lichess = tmp_path / "few.csv"
    lichess.write_text("\n".join(picked) + "\n")
    epd = tmp_path / "lines.epd"
    epd.write_text('8/8/8/4k3/8/8/4P3/4K3 w - - id "pawn"; pv Kd2 Kd5 Kd3 Ke5 Ke3;\n'
                   '8/8/8/4k3/8/8/8/R3K3 w - - id "rook";\n')
    config = _config(sources=(str(lichess), str(epd)), intermediate=True)
    positions = sp.load_start_positions("chess", config)
    expected = []
    for puzzle in data.load_lichess_puzzles(lichess):
        board = chess.Board(puzzle.fen)
        board.push_uci(puzzle.moves[0])  # the opponent's move: the puzzle starts after it
        expected.append((board.fen(), puzzle.puzzle_id, 0))
        for step, k in enumerate(range(1, len(puzzle.moves) - 1, 2), start=1):
            board.push_uci(puzzle.moves[k])
            board.push_uci(puzzle.moves[k + 1])
            if not board.is_game_over():
                expected.append((board.fen(), puzzle.puzzle_id, step))
    board = chess.Board("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")
    expected.append((board.fen(), "pawn", 0))
    for step, pair in enumerate([("Kd2", "Kd5"), ("Kd3", "Ke5")], start=1):
        for san in pair:
            board.push_san(san)
        expected.append((board.fen(), "pawn", step))
    expected.append((chess.Board("8/8/8/4k3/8/8/8/R3K3 w - - 0 1").fen(), "rook", 0))
    assert [(p.fen, p.puzzle_id, p.step) for p in positions.train] == expected
    assert sum(p.step > 0 for p in positions.train) == 2 + 2 + 2  # two per 6-move Lichess line, two in the pv
    without = sp.load_start_positions("chess", dataclasses.replace(config, intermediate=False))
    assert [p.step for p in without.train] == [0, 0, 0, 0]


# ------------------------------------------------------------------ bad input


def test_bad_sources_and_configs_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="solution lines"):
        sp.load_start_positions("chess", _config(sources=("paper",), intermediate=True))
    with pytest.raises(ValueError, match="heldout_group 'nope' is not a group"):
        sp.load_start_positions("chess", _config(sources=("paper:penrose",), split="group", heldout_group="nope"))
    with pytest.raises(ValueError, match="test_count must be in"):
        sp.load_start_positions("chess", _config(sources=("paper:penrose",), split="random", test_count=53))
    with pytest.raises(FileNotFoundError, match="missing.epd"):
        sp.load_start_positions("chess", _config(sources=(str(tmp_path / "missing.epd"),)))
    odd = tmp_path / "positions.pgn"
    odd.write_text("1. e4 *\n")
    with pytest.raises(ValueError, match="unknown file type"):
        sp.load_start_positions("chess", _config(sources=(str(odd),)))
    bad = tmp_path / "bad.epd"
    bad.write_text("8/8/8/4k3/8/8/4P3/4K3 w - - id \"ok\";\n8/8/8/9/8/8/8/8 w - - id \"bad\";\n")
    with pytest.raises(data.DataFormatError, match=r"bad.epd:2:"):
        sp.load_start_positions("chess", _config(sources=(str(bad),)))
    illegal_line = tmp_path / "line.epd"
    illegal_line.write_text('8/8/8/4k3/8/8/4P3/4K3 w - - id "x"; pv Kd2 Kd5 Kd3 Kd5;\n')
    with pytest.raises(data.DataFormatError, match=r"line.epd:1:"):
        sp.load_start_positions("chess", _config(sources=(str(illegal_line),), intermediate=True))
    for bad_config in (dict(split="random"), dict(split="group"), dict(test_count=3), dict(initial_prob=1.5),
                       dict(halfmove_clocks=(100,)), dict(split="random", test_count=2, sources=()),
                       dict(sources=("",)), dict(initial_prob=1.0)):
        with pytest.raises(ValueError, match="start_positions"):
            _config(**{"sources": ("paper",), **bad_config})
    with pytest.raises(ValueError, match="FEN-like start positions"):
        config_lib.apply_overrides(get_preset("demo"), ['start_positions.sources=["paper"]'])
    with pytest.raises(ValueError, match="env.max_pieces=32"):
        runs.build_components(config_lib.apply_overrides(get_preset("demo_chess"),
                                                           ['start_positions.sources=["paper:penrose"]']))


def test_manifest_pins_the_positions_of_a_run(tmp_path):
    source = tmp_path / "book.fen"
    source.write_text("8/8/8/4k3/8/8/4P3/4K3 w - - 0 40\nr3k2r/8/8/8/8/8/8/R3K2R b KQkq - 7 30\n")
    config = _config(sources=(str(source),))
    first = sp.prepare("chess", config, tmp_path / "run")
    source.write_text("8/8/8/8/8/8/8/K6k w - - 0 1\n")  # the file changes after the run started
    again = sp.prepare("chess", config, tmp_path / "run")
    assert [p.fen for p in again.train] == [p.fen for p in first.train]
    assert [p.fen for p in sp.prepare("chess", config).train] == ["8/8/8/8/8/8/8/K6k w - - 0 1"]
    with pytest.raises(ValueError, match="was written for"):
        sp.prepare("chess", dataclasses.replace(config, initial_prob=0.25), tmp_path / "run")


# ------------------------------------------------------------------ a chess run from the positions

START_FENS = ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1", "8/8/8/8/3k4/8/8/K2R4 b - - 0 1")
CLOCKS = (20, 99)  # a game from clock 99 is drawn by the 50-move rule on its first move: many restarts
TINY_CHESS = [
    "network.channels=4", "network.num_blocks=1", "network.value_hidden=4", "search.num_simulations=2",
    "selfplay.num_games=8", "selfplay.num_plies=3", "selfplay.sample_plies=0", "replay.capacity=256",
    "run.batch_size=8", "run.learner_steps=1", "run.num_iterations=2", "run.eval_every=0",
    "run.checkpoint_every=1", "run.checkpoint_replay=true",  # exact resume needs the replay buffer
    "start_positions.initial_prob=0.0", f"start_positions.halfmove_clocks={list(CLOCKS)}",
]


@pytest.fixture(scope="module")
def chess_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("chess_runs")
    book = root / "starts.fen"
    book.write_text("\n".join(START_FENS) + "\n")
    config = config_lib.apply_overrides(get_preset("demo_chess"), TINY_CHESS + [
        f'start_positions.sources=["{book}"]'])
    runner.train(config, root / "straight", progress=False)
    runner.train(config, root / "resumed", stop_after=1, progress=False)
    runner.train(config, root / "resumed", resume=True, progress=False)
    return root


@pytest.mark.slow
def test_recorded_games_start_from_the_file_positions_with_the_configured_clocks(chess_runs):
    # Reference observations from FENs carrying the clock, built independently of the sampler.
    allowed = {}
    for fen in START_FENS:
        for clock in CLOCKS:
            fields = fen.split()
            fields[4] = str(clock)
            state = chess_interop.state_from_fen(" ".join(fields))
            allowed[np.asarray(state.observation).tobytes()] = (fen, clock)
    windows = [jax.device_get(runs.load_run(chess_runs / "straight", step)[2].pending) for step in (1, 2)]
    stream = jax.tree.map(lambda *w: np.concatenate(w), *windows)  # [2T, B]
    starts = [stream.observation[0, b] for b in range(stream.observation.shape[1])]
    t, b = np.nonzero(stream.terminated[:-1])
    starts += [stream.observation[ti + 1, bi] for ti, bi in zip(t, b)]
    assert len(t) > 0  # games from clock 99 ended and new ones were drawn
    seen = [allowed.get(np.asarray(o).tobytes()) for o in starts]
    assert None not in seen
    assert {clock for _, clock in seen} == set(CLOCKS) and {fen for fen, _ in seen} == set(START_FENS)


@pytest.mark.slow
def test_run_with_start_positions_resumes_exactly(chess_runs):
    def records(name):
        return runs.read_metrics(chess_runs / name, wall_clock=False)

    assert records("straight") == records("resumed") and len(records("straight")) == 2
    straight, resumed = (runs.load_run(chess_runs / name)[2] for name in ("straight", "resumed"))
    for a, b in zip(jax.tree.leaves(straight.train_state.params), jax.tree.leaves(resumed.train_state.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    manifest = json.loads((chess_runs / "straight" / sp.FOLDER / sp.MANIFEST).read_text())
    assert [p["fen"] for p in manifest["train"]] == [chess.Board(f).fen() for f in START_FENS]
