"""The UCI engine with a trained chess checkpoint, driven by real clients.

python-chess's ``SimpleEngine.popen_uci`` (what GUIs and tournament managers do) talks
to ``python -m azdb_jax.uci``: the handshake, options, info lines, bad input, and full
games against Stockfish under a clock from two openings (no time losses, every move
legal, no crash). The checkpoint is a one-iteration chess run of a tiny network: the
test is about the engine, not its strength (the acceptance run with a trained
checkpoint is ``experiments/uci_match.py``; its numbers are in docs/results.md).
"""

import io
import pathlib
import subprocess
import sys

import chess
import chess.engine
import chess.pgn
import pytest

from azdb_jax.uci import gauntlet

REPO = pathlib.Path(__file__).resolve().parents[1]

TINY_CHESS = [
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
    "search.num_simulations=4", "selfplay.num_games=4", "selfplay.num_plies=4", "selfplay.sample_plies=4",
    "replay.capacity=256", "run.batch_size=16", "run.learner_steps=1", "run.num_iterations=1",
    "run.eval_every=0", "run.eval_simulations=4", "run.checkpoint_every=1",
]


@pytest.fixture(scope="module")
def chess_run(tmp_path_factory) -> pathlib.Path:
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runner  # pylint: disable=g-import-not-at-top

    workdir = tmp_path_factory.mktemp("uci") / "chess"
    runner.train(config_lib.apply_overrides(presets.get_preset("demo_chess"), TINY_CHESS), workdir, progress=False)
    return workdir


def engine_command(run: pathlib.Path, *extra: str):
    return [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={run}", "--simulations=4", "--min_simulations=1",
            *extra]


def test_handshake_info_and_bad_input_through_python_chess(chess_run):
    engine = chess.engine.SimpleEngine.popen_uci(engine_command(chess_run, "--rule=gap"), timeout=None, cwd=REPO)
    try:
        assert engine.id["name"] == "azdb_jax"
        assert {"Checkpoint", "Rule", "Player", "Lookup", "Move", "Simulations", "Threads"} <= set(engine.options)
        assert engine.options["Rule"].var == ["visit", "value", "lcb", "gap", "player", "lookup"]
        engine.ping()  # isready: loads and compiles
        board = chess.Board()
        board.push_uci("e2e4")
        result = engine.play(board, chess.engine.Limit(nodes=8), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        info = result.info
        assert info["depth"] == 1 and info["nodes"] == 8  # 4 simulations x 2 players
        assert info["pv"] == [result.move] and isinstance(info["score"].relative.score(), int)
        assert info["string"].startswith("player ") and "rule gap" in info["string"]
        engine.configure({"Rule": "player", "Player": 1})
        result = engine.play(board, chess.engine.Limit(time=0.5), info=chess.engine.INFO_ALL)
        assert result.info["string"].startswith("player 1 ") and result.move in board.legal_moves
        # Bad input: answered, never fatal.
        for line in ("position fen this/is/not/a/fen w - - 0 1", "flip the board", "setoption name Player value 7"):
            engine.protocol.loop.call_soon_threadsafe(engine.protocol.send_line, line)
        engine.ping()
        result = engine.play(board, chess.engine.Limit(nodes=8))  # the next position command is good again
        assert result.move in board.legal_moves
        with pytest.raises(chess.engine.EngineError):
            engine.configure({"Rule": "best"})  # python-chess checks combo values itself
    finally:
        engine.quit()


def test_games_against_stockfish_under_a_clock(chess_run, stockfish_path):
    openings = {name: gauntlet.OPENINGS[name] for name in ("Sicilian", "Queen's Gambit Declined")}
    records = gauntlet.play_match(
        engine_command(chess_run), [stockfish_path], games=4, base=20.0, increment=0.2, openings=openings,
        opponent_options={"Skill Level": 0, "Threads": 1}, opponent_limit={"nodes": 200}, max_plies=120)
    summary = gauntlet.tally(records)
    assert summary["games"] == 4, summary
    assert summary["engine_time"] == summary["engine_illegal"] == summary["engine_crash"] == 0, summary
    assert {r.engine_white for r in records} == {True, False}
    assert {r.opening for r in records} == set(openings)
    for record in records:  # every game ended by the rules or by adjudication, and replays legally
        assert record.termination not in gauntlet.FAULTS, record
        game = chess.pgn.read_game(io.StringIO(record.pgn))
        board = game.board()
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)
        assert record.engine_min_clock > 0


def test_module_and_bad_flag_exit_cleanly():
    result = subprocess.run([sys.executable, "-m", "azdb_jax.uci", "--rule=best"], capture_output=True, text=True,
                            cwd=REPO, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "rule" in result.stderr and "Traceback" not in result.stderr
