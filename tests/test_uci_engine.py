"""The UCI engine with chess and Gardner checkpoints, driven by real clients.

python-chess's ``SimpleEngine.popen_uci`` (what GUIs and tournament managers do) talks
to ``python -m azdb_jax.uci``: the handshake, options, info lines, bad input, the first
move after ``readyok`` within its time, ``stop`` ending an infinite search, and full
games against Stockfish under a clock from two openings (no time losses, every move
legal, no crash); on Gardner chess the same client, with ``UCI_Variant gardner``, plays
the engine against Fairy-Stockfish. In process, the searcher compiles nothing after its
warm-up however a game goes. The checkpoints hold the initial weights of a tiny network:
the tests are about the engine, not its strength (the acceptance runs with trained
checkpoints are ``experiments/uci_match.py``; their numbers are in docs/results.md).
"""

import io
import logging
import pathlib
import subprocess
import sys
import time

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
    from azdb_jax import presets, runs, trainer  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(presets.get_preset(preset), overrides)
    state = trainer.init_trainer(runs.build_components(config), jax.random.PRNGKey(0))
    return runs.write_run(workdir, config, state)


@pytest.fixture(scope="module")
def chess_run(tmp_path_factory) -> pathlib.Path:
    return untrained_run(tmp_path_factory.mktemp("uci") / "chess", "demo_chess", TINY)


@pytest.fixture(scope="module")
def gardner_run(tmp_path_factory) -> pathlib.Path:
    return untrained_run(tmp_path_factory.mktemp("uci") / "gardner", "gardner_cpu",
                         TINY + ["search.max_num_considered_actions=4"])


def engine_command(run: pathlib.Path, *extra: str):
    return [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={run}", "--hash=16", "--threads=1", *extra]


def test_the_engine_offers_the_planning_rules_and_loads_without_jax():
    """``Rule``'s choices are ``planning.SELECTION_RULES``' names, a fixed player and the lookup;
    the engine's module (imported before ``uci`` is answered) pulls in no JAX."""
    code = ("import sys; from azdb_jax.uci import engine; print('jax' in sys.modules); "
            "from azdb_jax import planning; print(engine.RULE_CHOICES == (*planning.SELECTION_RULES, 'player', 'lookup'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"], out


@pytest.mark.slow
def test_handshake_info_and_bad_input_through_python_chess(chess_run):
    engine = chess.engine.SimpleEngine.popen_uci(engine_command(chess_run, "--rule=gap"), timeout=None, cwd=REPO)
    try:
        assert engine.id["name"] == "azdb_jax"
        assert {"Checkpoint", "Rule", "Player", "Lookup", "Move", "Hash", "Reuse", "Threads"} <= set(engine.options)
        assert engine.options["Rule"].var == ["visit", "value", "lcb", "gap", "player", "lookup"]
        engine.ping()  # isready: loads and compiles
        board = chess.Board()
        board.push_uci("e2e4")
        result = engine.play(board, chess.engine.Limit(nodes=8), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        info = result.info
        assert info["nodes"] == 8  # 4 simulations x 2 players
        assert 1 <= info["depth"] <= info["seldepth"] <= 4 and 0 <= info["hashfull"] <= 1000
        assert info["pv"][0] == result.move and isinstance(info["score"].relative.score(), int)
        replay = board.copy()
        for move in info["pv"]:  # the line is legal all the way
            assert move in replay.legal_moves
            replay.push(move)
        assert info["string"].startswith("player ") and "rule gap" in info["string"]
        engine.configure({"Rule": "player", "Player": 1})
        result = engine.play(board, chess.engine.Limit(time=0.5), info=chess.engine.INFO_ALL)
        assert result.info["string"].startswith("player 1 ") and result.move in board.legal_moves
        assert result.info["nodes"] > 8  # it searched for its time
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


ALPHABETA_COMMAND = [sys.executable, "-m", "azdb_jax.classical.uci"]


@pytest.fixture(params=["alphabeta", "team"])
def any_engine(request):
    """Each of the project's UCI engines (the team's on the module's chess checkpoint)."""
    if request.param == "alphabeta":
        return ALPHABETA_COMMAND
    return engine_command(request.getfixturevalue("chess_run"))


@pytest.mark.slow
def test_the_server_core_through_python_chess(any_engine, caplog):
    """What azdb_jax/uci/server.py does for both engines, seen by python-chess's client:
    the options every engine has, bad commands answered with an error and the engine
    still playing, an infinite search ended by stop, a move within its time."""
    caplog.set_level(logging.DEBUG, logger="chess.engine")
    engine = chess.engine.SimpleEngine.popen_uci(any_engine, timeout=None, cwd=REPO)

    def answers(*lines):
        """What the engine writes in answer to raw ``lines`` (up to readyok)."""
        caplog.clear()
        for line in lines:
            engine.protocol.loop.call_soon_threadsafe(engine.protocol.send_line, line)
        engine.ping()
        return [record.getMessage().split(": >> ", 1)[1] for record in caplog.records
                if ": >> " in record.getMessage()]

    try:
        assert engine.options["UCI_Variant"].var == ["chess", "gardner"] and "Move Overhead" in engine.options
        engine.ping()
        for line, error in (("flip the board", "unknown command 'flip'"),
                            ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
                             "position fen: malformed FEN"),
                            ("position startpos moves e2e4 e2e4", "position: move 2 'e2e4' is illegal"),
                            ("setoption name Nope value 1", "setoption: unknown option 'Nope'"),
                            ("setoption name Move Overhead value -5", "is outside [0, 10000]"),
                            ("setoption name UCI_Variant value shogi", "is not one of chess, gardner")):
            out = answers(line)
            assert any(text.startswith("info string error: ") and error in text for text in out), (line, out)
            assert out[-1] == "readyok"
        board = chess.Board()
        board.push_uci("e2e4")
        with engine.analysis(board) as analysis:  # go infinite
            for info in analysis:
                if "depth" in info:
                    break
        assert analysis.wait().move in board.legal_moves  # stop, then bestmove
        start = time.monotonic()
        result = engine.play(board, chess.engine.Limit(time=0.3))
        assert result.move in board.legal_moves and time.monotonic() - start < 2.0
    finally:
        engine.quit()


class Pipes:
    """The engine on its own pipes, each line timed as it arrives."""

    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1, cwd=REPO)

    def send(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return time.monotonic()

    def wait_for(self, prefix):
        lines = []
        for line in self.process.stdout:
            lines.append(line.strip())
            if line.startswith(prefix):
                return time.monotonic(), lines
        raise AssertionError(f"the engine ended before {prefix!r}: {lines}")

    def close(self):
        self.send("quit")
        self.process.wait(timeout=60)


@pytest.mark.slow
def test_after_readyok_the_first_movetime_200_answers_within_a_second(chess_run):
    engine = Pipes(engine_command(chess_run))
    try:
        engine.send("uci")
        engine.wait_for("uciok")
        engine.send("isready")
        _, lines = engine.wait_for("readyok")
        assert any(line.startswith("info string loaded") for line in lines)  # the load, timed, before readyok
        engine.send("position startpos moves e2e4")
        sent = engine.send("go movetime 200")
        answered, lines = engine.wait_for("bestmove")
        assert answered - sent < 1.0, lines
        assert any(line.startswith("info depth") for line in lines)
        sent = engine.send("go infinite")
        time.sleep(1.5)
        stopped = engine.send("stop")
        answered, lines = engine.wait_for("bestmove")
        assert answered - stopped < 0.5, lines  # the search stops at its next chunk (docs/results.md has the numbers)
        assert sum(line.startswith("info depth") for line in lines) >= 2  # one a second and the final one
    finally:
        engine.close()


@pytest.mark.slow
def test_the_searcher_compiles_nothing_after_its_warm_up(chess_run):
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci import protocol  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci.searcher import TeamSearcher  # pylint: disable=g-import-not-at-top

    searcher = TeamSearcher(loading.load_team(chess_run), hash_mb=16)
    searcher.warm_up()
    compiled = searcher.compiled_programs()
    assert compiled == 4  # begin, restart, grow, answers: once each
    moves, reused = [], []
    for _ in range(4):  # the engine's moves and the replies its line expects
        position = protocol.parse_position(["startpos", "moves", *moves])
        reused.append(searcher.start(protocol.searchable(position.board()),
                                     (position.start_fen, position.moves)))
        for size in (3, 17, 1):
            searcher.grow(size, budget=21)
        result = searcher.result(rule="gap")
        assert chess.Move.from_uci(result.move) in position.board().legal_moves
        assert result.nodes >= 2 * 21 and len(result.player_moves) == 2 and result.pv[0] == result.move
        assert len(result.pv) >= 2, result  # 21 simulations see a reply
        moves += list(result.pv[:2])
    assert searcher.compiled_programs() == compiled
    assert reused[0] is False and all(reused[1:])  # the chosen player's tree holds its own line (a PUCT team)


@pytest.mark.slow
def test_games_against_stockfish_under_a_clock(chess_run, stockfish_path):
    openings = {name: gauntlet.OPENINGS[name] for name in ("Sicilian", "Queen's Gambit Declined")}
    records = gauntlet.play_match(
        engine_command(chess_run, "--move_overhead=30"), [stockfish_path], games=4, clock=(5.0, 0.05),
        openings=openings, opponent_options={"Skill Level": 0, "Threads": 1}, opponent_limit={"nodes": 200},
        max_plies=60)
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
    # The engine spends a good part of its allotment (the old fixed-level engine spent a
    # twentieth); how much on an idle and on a loaded machine is in docs/results.md.
    assert summary["budget_share"] > 0.3, summary


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


@pytest.mark.slow
def test_gardner_engine_against_fairy_stockfish(gardner_run, fsf_path):
    """python-chess's client on GardnerBoards sends UCI_Variant gardner and FEN positions to
    both engines (it raises if an engine lacks the option)."""
    openings = {name: gauntlet.GARDNER_OPENINGS[name] for name in ("Knight c3", "Pawn d3")}
    records = gauntlet.play_match(
        engine_command(gardner_run, "--move_overhead=30"), [fsf_path], games=4, clock=(5.0, 0.05),
        openings=openings, opponent_options={"Skill Level": 0, "Threads": 1}, opponent_limit={"nodes": 200},
        max_plies=50, variant="gardner")
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


@pytest.mark.slow
def test_without_flags_the_engine_plays_the_shipped_gardner_team(tmp_path):
    """``azdb-uci`` with no flags loads ``pretrained:gardner`` (azdb_jax.pretrained) at launch and
    answers uci / isready / go with a legal Gardner move."""
    from azdb_jax import pretrained  # pylint: disable=g-import-not-at-top
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    assert "gardner" in pretrained.names()
    engine = Pipes([sys.executable, "-m", "azdb_jax.uci", f"--jit_cache={tmp_path / 'jit'}"])
    try:
        engine.send("uci")
        _, lines = engine.wait_for("uciok")
        variant = [line for line in lines if line.startswith("option name UCI_Variant")]
        checkpoint = [line for line in lines if line.startswith("option name Checkpoint")]
        assert variant and "default gardner" in variant[0], lines
        assert checkpoint and "default pretrained:gardner" in checkpoint[0], lines
        engine.send("isready")
        engine.wait_for("readyok")
        board = GardnerBoard()
        board.push(next(m for m in board.legal_moves if board.san(m) == "d3"))
        engine.send(f"position startpos moves {board.move_stack[0].uci()}")
        engine.send("go movetime 300")
        _, lines = engine.wait_for("bestmove")
        move = lines[-1].split()[1]
        assert move in {m.uci() for m in board.legal_moves}, (move, board.fen())
    finally:
        engine.close()
