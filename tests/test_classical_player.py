"""Tests of the classical player in use: specs, AlphaBetaPlayer on boards, host matches, the
callback policy in jitted matches, and the UCI engine (python-chess's engine API, a real
Stockfish opponent, Gardner over the project's UCI client, bad input)."""

import pathlib
import subprocess
import sys
import time

import chess
import chess.engine
import jax
import pytest

from azdb_jax.classical import book as book_lib
from azdb_jax.classical import matches as host_matches
from azdb_jax.classical import player as player_lib
from azdb_jax.classical import uci as classical_uci
from azdb_jax.classical.gardner_position import GardnerPosition

UCI_COMMAND = [sys.executable, "-m", "azdb_jax.classical.uci"]


def test_specs_parse_and_bad_specs_name_the_field():
    spec = player_lib.parse_spec("alphabeta:nodes=20000:tt=0:quiescence=off:singular=1")
    assert spec.limits.nodes == 20000 and spec.limits.depth is None
    assert not spec.options.transposition_table and not spec.options.quiescence and spec.options.singular_extensions
    assert player_lib.parse_spec("alphabeta").limits.depth == 3
    for text, word in (("alphabeta:depth=0", "depth must be"), ("alphabeta:nodes=-3", "nodes must be"),
                       ("alphabeta:time=0", "time must be"), ("alphabeta:colour=red", "unknown field 'colour'"),
                       ("alphabeta:tt=maybe", "tt='maybe'"), ("alphabeta:depth", "not key=value"),
                       ("alphabeta:depth=2:depth=3", "twice"), ("alphabeta:id=0:nodes=10", "iterative deepening"),
                       ("minimax:depth=2", "not a classical player spec")):
        with pytest.raises(ValueError, match=word) as info:
            player_lib.parse_spec(text)
        assert text in str(info.value)


def test_player_plays_legal_moves_on_both_boards_and_refuses_finished_games():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    player = player_lib.player_from_spec("alphabeta:depth=2")
    board = chess.Board()
    for _ in range(4):
        board.push(player(board))
    assert player.searches == 4 and player.nodes_total > 0
    gardner = GardnerBoard()
    for _ in range(4):
        gardner.push(player(gardner))
    with pytest.raises(ValueError, match="already over"):
        player(chess.Board("7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"))
    with pytest.raises(ValueError, match="book"):
        player_lib.player_from_spec("alphabeta:depth=1:book=/nonexistent/book.bin")


def test_player_takes_book_moves_first(tmp_path):
    board = chess.Board()
    path = book_lib.write_book(tmp_path / "b.bin", [(chess.polyglot.zobrist_hash(board),
                                                     book_lib.encode_move(board, chess.Move.from_uci("a2a3")), 1)])
    player = player_lib.player_from_spec(f"alphabeta:depth=1:book={path}")
    assert player(board) == chess.Move.from_uci("a2a3") and player.last is None
    board.push_uci("a2a3")
    assert player(board) in board.legal_moves and player.last is not None


def test_host_match_between_depths():
    deep, shallow = (player_lib.player_from_spec(f"alphabeta:depth={d}") for d in (3, 1))
    starts = host_matches.gardner_starts(2, 4, seed=0)
    match = host_matches.play_host_match(deep, shallow, starts, env_id="gardner_chess", max_plies=120,
                                         names=(deep.name, shallow.name))
    assert match.num_games == 4 and list(match.a_first) == [True, False, True, False]
    assert set(match.a_colour) <= {"white", "black"} and (match.length > 0).all()
    record = host_matches.match_record(match)
    assert record["games"] == 4 and record["wins"] + record["draws"] + record["losses"] == 4


def test_classical_games_are_registry_ids_and_others_are_refused():
    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    assert set(host_matches.GAMES) <= set(games.BOARD_IDS)  # the --game choices of the classical scripts
    fens, positions = host_matches.fixed_positions("gardner_chess", 2)
    assert len(fens) == 2 and all(isinstance(p, GardnerPosition) for p in positions)
    with pytest.raises(ValueError, match="not 'gardner'"):
        host_matches.fixed_positions("gardner", 2)


def test_callback_policy_plays_inside_a_jitted_arena():
    from azdb_jax import arena, games, opponents  # pylint: disable=g-import-not-at-top
    from azdb_jax.policies import uniform_random_policy  # pylint: disable=g-import-not-at-top

    env = games.make("gardner_chess")
    classical = opponents.classical_opponents(env, ["random", "alphabeta:depth=1"])
    assert list(classical) == ["alphabeta:depth=1"]
    play = jax.jit(lambda key: arena.play_games(env, classical["alphabeta:depth=1"], None,
                                                uniform_random_policy(), None, key, num_games=2,
                                                max_plies=40))
    results = jax.device_get(play(jax.random.PRNGKey(0)))
    assert results.in_turn.all() and float(results.result.sum()) >= 1  # depth 1 takes what random leaves
    with pytest.raises(ValueError, match="no board interop"):
        opponents.classical_opponents(games.make("connect_four"), ["alphabeta:depth=1"])


# ---------------------------------------------------------------------------- UCI


def test_uci_engine_through_python_chess_against_stockfish(stockfish_path):
    with chess.engine.SimpleEngine.popen_uci(UCI_COMMAND) as ours, \
            chess.engine.SimpleEngine.popen_uci(stockfish_path) as stockfish:
        assert ours.id["name"] == classical_uci.ENGINE_NAME
        info = ours.analyse(chess.Board("6k1/8/6K1/8/8/8/8/R6R w - - 0 1"), chess.engine.Limit(depth=3))
        assert info["score"].relative == chess.engine.Mate(1) and info["pv"][0] in (
            chess.Move.from_uci("a1a8"), chess.Move.from_uci("h1h8"))
        stockfish.configure({"Skill Level": 0})
        board = chess.Board()
        while len(board.move_stack) < 16 and not board.is_game_over():
            engine = ours if board.turn == chess.WHITE else stockfish
            limit = chess.engine.Limit(depth=2) if engine is ours else chess.engine.Limit(nodes=200)
            board.push(engine.play(board, limit).move)
        assert len(board.move_stack) == 16 or board.is_game_over()
        start = time.monotonic()
        result = ours.play(board, chess.engine.Limit(time=0.3))
        assert result.move in board.legal_moves and time.monotonic() - start < 2.0


def test_uci_engine_plays_gardner_through_the_project_client():
    from azdb_jax.evaluation import uci  # pylint: disable=g-import-not-at-top

    engine = uci.UciEngine(UCI_COMMAND, name="alphabeta", timeout=60)
    try:
        engine.set_option("UCI_Variant", "gardner")
        engine.is_ready()
        engine.send("position startpos moves e2e3 d4e3")
        result = engine.go(depth=3)
        position = GardnerPosition()
        for uci_move in ("e2e3", "d4e3"):
            position.push(position.from_chess(chess.Move.from_uci(uci_move)))
        assert result.bestmove in [position.uci(m) for m in position.legal_moves()]
        assert result.lines and result.lines[0].depth == 3
    finally:
        engine.close()


def _engine():
    lines = []
    engine = classical_uci.ClassicalEngine(lines.append)
    return engine, lines


def _wait_for(lines, prefix, count=1, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(line.startswith(prefix) for line in lines) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"no {prefix!r} in {lines}")


def test_uci_bad_input_is_answered_and_the_engine_keeps_serving(tmp_path):
    engine, lines = _engine()
    engine.handle("position fen not/a/fen w - - 0 1")
    engine.handle("go depth 1")
    _wait_for(lines, "bestmove")
    assert lines[-1] == "bestmove (none)" and any("error" in l and "not/a/fen" in l for l in lines)
    engine.handle("position startpos moves e2e4 e7e9")
    assert "e7e9" in lines[-1] and lines[-1].startswith("info string error")
    engine.handle("position fen 7k/5QQ1/8/8/8/8/8/K7 b - - 0 1")  # checkmated: nothing to search
    engine.handle("go depth 2")
    _wait_for(lines, "bestmove", 2)
    assert lines[-1] == "bestmove (none)" and any("game is over" in l for l in lines)
    engine.handle("go depth 0")
    _wait_for(lines, "bestmove", 3)
    assert any("depth 0 must be >= 1" in l for l in lines)
    bad_book = tmp_path / "bad.bin"
    bad_book.write_bytes(b"x" * 10)
    engine.handle(f"setoption name BookFile value {bad_book}")
    engine.handle("setoption name OwnBook value true")
    engine.handle("isready")
    _wait_for(lines, "readyok")
    assert any("bad.bin" in l and "16-byte" in l for l in lines)
    engine.handle("setoption name OwnBook value false")
    engine.handle("setoption name Hash value 0")
    assert "outside" in lines[-1]
    engine.handle("position startpos")
    engine.handle("go depth 2")
    _wait_for(lines, "bestmove", 4)
    assert lines[-1].split()[1] in [m.uci() for m in chess.Board().legal_moves]
    engine.handle("quit")


def test_uci_infinite_search_answers_after_stop():
    engine, lines = _engine()
    engine.handle("position startpos")
    engine.handle("go infinite")
    time.sleep(0.3)
    assert not any(line.startswith("bestmove") for line in lines)
    engine.handle("isready")
    assert "readyok" in lines
    engine.handle("stop")
    _wait_for(lines, "bestmove")
    assert any(line.startswith("info depth") for line in lines)


def test_uci_command_line_rejects_bad_flags():
    done = subprocess.run(UCI_COMMAND + ["--hash=0"], capture_output=True, text=True, timeout=60, input="quit\n")
    assert done.returncode == 2 and "hash" in done.stderr.lower()


# ---------------------------------------------------------------------------- in-training evaluation

GARDNER_TINY = [
    "env.name=gardner_chess", "team.num_players=1", "team.lam=1.0", "team.matchmaker=uniform",
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
    "selfplay.num_games=4", "selfplay.num_plies=4", "replay.capacity=256", "run.batch_size=16",
    "run.learner_steps=1", "run.num_iterations=1", "run.eval_every=1", "run.eval_games=2",
    "run.eval_simulations=2", "run.eval_max_plies=12", "run.checkpoint_every=1",
]


def _gardner_config(*extra):
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax.presets import get_preset  # pylint: disable=g-import-not-at-top

    return config_lib.apply_overrides(get_preset("demo"), GARDNER_TINY + list(extra))


def test_in_training_evaluation_takes_classical_specs():
    from azdb_jax import runner, runs  # pylint: disable=g-import-not-at-top

    config = _gardner_config('run.eval_opponents=["random","alphabeta:depth=1"]')
    evaluator = runner.Evaluator(config, runs.build_components(config))
    assert evaluator.opponents == ("random", "alphabeta:depth=1")
    with pytest.raises(ValueError, match="run.eval_opponents: player spec 'alphabeta:depth=0'"):
        runner.Evaluator(_gardner_config('run.eval_opponents=["alphabeta:depth=0"]'), runs.build_components(config))


@pytest.mark.slow
def test_a_training_run_evaluates_against_the_classical_searcher(tmp_path):
    from azdb_jax import runner, runs  # pylint: disable=g-import-not-at-top

    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from conftest import trained_run_config  # pylint: disable=g-import-not-at-top,g-bad-import-order

    # Gardner's shared tiny configuration (tests/conftest.py), evaluated against the classical
    # searcher only: its self-play and learner programs are those of Gardner's shared run.
    config = config_lib.apply_overrides(trained_run_config("gardner_chess"), ['run.eval_opponents=["alphabeta:depth=1"]'])
    runner.train(config, tmp_path / "run", progress=False)
    evals = [r for r in runs.read_metrics(tmp_path / "run", wall_clock=False) if r["kind"] == "eval"]
    assert evals and all(r["opponent"] == "alphabeta:depth=1" for r in evals)
    assert {r["iteration"] for r in evals} == set(range(1, config.run.num_iterations + 1))
    assert all(r["wins"] + r["draws"] + r["losses"] + r["unfinished"] == config.run.eval_games for r in evals)


def test_play_match_script_takes_classical_specs(tmp_path):
    from azdb_jax.evaluation import agent_match  # pylint: disable=g-import-not-at-top

    summary = agent_match.run_match(a="alphabeta:depth=2", b="alphabeta:depth=1", env_name="gardner_chess",
                                   num_openings=2, opening_plies=2, max_plies=60, out=tmp_path / "m", progress=False)
    assert summary["games"] == 4 and summary["a"] == "alphabeta:depth=2"
    assert all(pathlib.Path(f).exists() for f in summary["files"])
    with pytest.raises(ValueError, match="plays chess and gardner_chess"):
        agent_match.run_match(a="alphabeta:depth=1", b="random", env_name="connect_four", out=tmp_path / "x",
                             progress=False)


@pytest.mark.slow
def test_ladder_script_places_the_reference_engine_with_extra_pairs(tmp_path, fsf_path):
    import json  # pylint: disable=g-import-not-at-top

    script = pathlib.Path(__file__).resolve().parents[1] / "experiments" / "classical_ladder.py"
    out = tmp_path / "ladder.json"
    run = subprocess.run([sys.executable, str(script), "--game=gardner_chess", "--depths=1", "--starts=1",
                          "--max_plies=80", "--extra_pairs=alphabeta:depth=1~engine:depth=1", f"--out={out}"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    (match,) = json.loads(out.read_text())["matches"]
    assert match["a"] == "alphabeta:depth=1" and match["games"] == 2 == len(match["results"])
    assert match["b"].startswith("Fairy-Stockfish") and match["b"].endswith(" depth=1")
    assert match["wins"] + match["draws"] + match["losses"] == 2
    bad = subprocess.run([sys.executable, str(script), "--extra_pairs=alphabeta:depth=1", f"--out={tmp_path / 'x'}"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--extra_pairs: 'alphabeta:depth=1' is not A~B" in bad.stderr
