"""The UCI engine with chess and Gardner checkpoints, driven by real clients.

python-chess's ``SimpleEngine.popen_uci`` (what GUIs and tournament managers do) talks
to ``python -m azdb_jax.uci``: the handshake, options, info lines, bad input, and full
games against Stockfish under a clock from two openings (no time losses, every move
legal, no crash); on Gardner chess the same client, with ``UCI_Variant gardner``, plays
the engine against Fairy-Stockfish. The checkpoints hold the initial weights of a tiny
network: the tests are about the engine, not its strength (the acceptance run with a trained
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

TINY = ["network.channels=8", "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
        "run.eval_simulations=4", "team.num_players=2"]


def untrained_run(workdir: pathlib.Path, preset: str, overrides) -> pathlib.Path:
    """A run directory holding the initial network of ``preset`` (no training: the tests
    are about the engine, not its strength)."""
    import jax  # pylint: disable=g-import-not-at-top

    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runner, trainer  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(presets.get_preset(preset), overrides)
    state = trainer.init_trainer(runner.build_components(config), jax.random.PRNGKey(0))
    return runner.write_run(workdir, config, state)


@pytest.fixture(scope="module")
def chess_run(tmp_path_factory) -> pathlib.Path:
    return untrained_run(tmp_path_factory.mktemp("uci") / "chess", "demo_chess", TINY)


@pytest.fixture(scope="module")
def gardner_run(tmp_path_factory) -> pathlib.Path:
    return untrained_run(tmp_path_factory.mktemp("uci") / "gardner", "gardner_cpu",
                         TINY + ["search.max_num_considered_actions=4"])


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


def replay_gardner_pgn(pgn: str):
    """The board at the end of a Gardner PGN, each SAN word matched to exactly one legal move."""
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    headers = dict(line[1:-1].split(" ", 1) for line in pgn.splitlines() if line.startswith("["))
    headers = {key: value.strip('"') for key, value in headers.items()}
    assert headers["Variant"] == "gardner" and headers["SetUp"] == "1"
    board = GardnerBoard(headers["FEN"])
    movetext = " ".join(line for line in pgn.splitlines() if line and not line.startswith("["))
    for word in movetext.split()[:-1]:  # the last word is the result
        if word[0].isdigit():
            continue  # a move number
        matches = [move for move in board.legal_moves if board.san(move) == word]
        assert len(matches) == 1, (word, board.fen())
        board.push(matches[0])
    assert movetext.split()[-1] == headers["Result"]
    return board, headers


def test_gardner_engine_against_fairy_stockfish(gardner_run, fsf_path):
    """python-chess's client on GardnerBoards sends UCI_Variant gardner and FEN positions to
    both engines (it raises if an engine lacks the option)."""
    openings = {name: gauntlet.GARDNER_OPENINGS[name] for name in ("Knight c3", "Pawn d3")}
    records = gauntlet.play_match(
        engine_command(gardner_run), [fsf_path], games=4, base=20.0, increment=0.2, openings=openings,
        opponent_options={"Skill Level": 0, "Threads": 1}, opponent_limit={"nodes": 200}, max_plies=80,
        variant="gardner")
    summary = gauntlet.tally(records)
    assert summary["games"] == 4, summary
    assert summary["engine_time"] == summary["engine_illegal"] == summary["engine_crash"] == 0, summary
    assert summary["opponent_illegal"] == summary["opponent_crash"] == 0, summary
    assert {r.engine_white for r in records} == {True, False} and {r.opening for r in records} == set(openings)
    assert all(r.plies >= len(openings[r.opening]) + 2 for r in records), [r.plies for r in records]  # both moved
    for record in records:  # every game ended by the env's rules or by adjudication, and replays from its PGN
        assert record.termination not in gauntlet.FAULTS, record
        board, headers = replay_gardner_pgn(record.pgn)
        assert board.ply() == record.plies and headers["Termination"] == record.termination
        if record.termination != "adjudication":
            assert board.is_game_over() and board.result() == record.result
            assert board.termination() == record.termination
        assert record.engine_min_clock > 0


def test_gardner_openings_are_legal():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    for moves in gauntlet.GARDNER_OPENINGS.values():
        board = GardnerBoard()
        for move in moves:
            board.push_uci(move)
