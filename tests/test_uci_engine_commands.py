"""azdb_jax/uci/engine: the team engine's command handling, on a scripted searcher.

The engine runs in this process with ``uci_session.ScriptedSearcher`` (no network; its
simulations cost a fixed time each), so every command, option, time limit and error path is
checked in milliseconds. tests/test_uci_engine.py plays the real engine through python-chess.
"""

import json
import time

import chess

from uci_session import ScriptedSearcher, Session  # pylint: disable=g-bad-import-order


def test_uci_handshake_lists_the_options():
    s = Session()
    s.send("uci")
    s.wait_for("uciok")
    names = [line.split(" type ")[0][len("option name "):] for line in s.lines if line.startswith("option")]
    assert names == ["Checkpoint", "UCI_Variant", "Rule", "Player", "Lookup", "LookupFallback", "Move", "Hash",
                     "Reuse", "Threads", "Move Overhead", "Seed"]
    assert s.lines[0] == "id name azdb_jax"
    assert "option name Reuse type check default true" in s.lines
    assert "option name Hash type spin default 256 min 16 max 65536" in s.lines
    s.close()


def test_the_load_is_done_and_reported_before_readyok_and_kept_by_ucinewgame():
    s = Session()
    s.engine.preload()  # what azdb-uci does when it starts with a checkpoint
    s.send("uci")
    s.wait_for("uciok")
    s.send("isready")
    report = s.wait_for("info string loaded run in ")
    assert "(compile 0.2 s" in report and "2 players, trees of 100000 nodes each" in report
    s.wait_for("readyok")
    assert s.script.warm_ups == 1
    s.send("ucinewgame", "isready")
    s.wait_for("readyok")
    assert s.script.warm_ups == 1 and s.script.forgets == 1 and len(s.loads) == 1  # nothing thrown away
    s.send("setoption name Reuse value false", "isready")
    s.wait_for("readyok")
    assert s.script.reuse is False and len(s.loads) == 1  # applied without a reload
    s.send("setoption name Hash value 64", "isready")  # the trees' size: compiled again
    s.wait_for("info string loaded")
    s.wait_for("readyok")
    assert len(s.loads) == 2 and s.loads[-1]["Hash"] == 64 and s.script.warm_ups == 2
    s.close()


def test_go_searches_until_its_limit_with_info_and_a_legal_bestmove():
    s = Session().ready()
    s.send("position startpos moves e2e4", "go wtime 60000 btime 60000 winc 1000 binc 1000")
    start = time.monotonic()
    info = s.wait_for("info depth")
    move = s.wait_for("bestmove").split()[1]
    # Budget 60/30 + 0.75 - 0.1 = 2.65 s: searched until the deadline, not past it.
    assert 2.0 < time.monotonic() - start < 2.9
    assert " seldepth 5 " in info and " hashfull " in info and " score cp " in info and " pv " in info
    assert "string player 0 (rule visit; players" in info
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    assert s.script.starts[-1] == (chess.STARTING_FEN, ("e2e4",))  # the game, for subtree reuse
    s.lines.clear()  # the search's earlier info lines
    s.send("go nodes 6")  # 6 nodes / 2 players = 3 simulations each
    s.wait_for("bestmove")
    assert s.script.count == 3 and s.script.budgets[-1] == 3  # Gumbel's plan: the node limit
    s.send("go movetime 300")
    start = time.monotonic()
    info = s.wait_for("info depth")
    s.wait_for("bestmove")
    assert 0.12 < time.monotonic() - start < 0.3 and int(info.split(" time ")[1].split()[0]) <= 300
    s.send("go wtime 10 btime 10")  # almost no time: one simulation, at once
    s.wait_for("bestmove")
    assert s.script.count == 1
    s.close()


def test_a_move_that_cost_more_than_its_budget_makes_the_next_ones_shorter():
    s = Session().ready("setoption name Move Overhead value 0", "debug on")
    s.send("position startpos", "go wtime 3000 btime 3000")  # 3 s / 30: 100 ms
    assert "budget 100 ms" in s.wait_for("info string timing:")
    s.wait_for("bestmove")
    assert s.script.count > 1
    s.send("position startpos moves e2e4 e7e5", "go wtime 2000 btime 3000")  # the GUI charged a whole second
    assert "budget 0 ms; measured lag up to 900 ms" in s.wait_for("info string timing:")
    s.wait_for("bestmove")
    assert s.script.count == 1  # no time to spare: one simulation
    s.close()


def test_info_comes_every_second_and_stop_ends_an_infinite_search_at_once():
    s = Session().ready()
    s.send("position startpos", "go infinite")
    time.sleep(2.3)
    assert sum(line.startswith("info depth") for line in s.lines) >= 2
    s.send("isready")
    s.wait_for("readyok", timeout=0.5)  # answered while searching
    sent = time.monotonic()
    s.send("stop")
    s.wait_for("bestmove", timeout=1.0)
    assert time.monotonic() - sent < 0.3  # a chunk (50 ms) and the answer; measured latencies: docs/results.md
    assert s.script.budgets[0] == s.script.capacity  # an infinite search plans on the whole tree
    s.close()


def test_a_full_tree_ends_a_timed_search_but_not_an_infinite_one():
    script = ScriptedSearcher(seconds_per_simulation=0.00001)
    script.capacity = 50
    s = Session(script=script).ready()
    s.send("position startpos", "go movetime 5000")
    start = time.monotonic()
    s.wait_for("bestmove")
    assert time.monotonic() - start < 1.0 and script.count == 50
    s.send("go infinite")
    assert s.wait_for("info string the search trees are full")
    time.sleep(0.2)
    assert not any(line.startswith("bestmove") for line in s.lines)
    s.send("stop")
    s.wait_for("bestmove")
    s.close()


def test_bad_input_is_an_info_string_and_the_engine_carries_on():
    s = Session().ready()
    for command in ("flip", "position fen not/a/fen w - - 0 1", "setoption name Nope value 1",
                    "setoption name Threads value 999", "setoption name Rule value best",
                    "setoption name Reuse value maybe", "setoption name Hash value 8"):
        s.send(command)
        assert s.wait_for("info string error:")
    s.send("position startpos moves e2e4 e2e4", "go movetime 100")  # the bad position is not searched
    assert "move 2 'e2e4' is illegal" in s.wait_for("info string error:")
    assert "no valid position" in s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.send("position startpos", "go movetime 100")
    assert s.wait_for("bestmove") != "bestmove (none)"
    s.close()


def test_options_rule_and_player():
    s = Session().ready("setoption name Rule value player", "setoption name Player value 1")
    s.send("position startpos", "go movetime 100")
    assert "string player 1 (Rule=player;" in s.wait_for("info depth")
    s.wait_for("bestmove")
    assert s.script.results[-1] == ("visit", 1)
    s.send("setoption name Player value 5", "go movetime 100")  # beyond the team: error, then the fallback rule
    assert "Player 5" in s.wait_for("info string error:")
    s.wait_for("bestmove")
    assert s.script.results[-1] == ("visit", None)
    s.lines.clear()
    s.send("setoption name Rule value gap", "go nodes 4")
    assert "(rule gap;" in s.wait_for("info depth")
    s.close()


def test_missing_checkpoint_is_reported_and_go_answers_none():
    s = Session(Checkpoint="missing")
    s.send("isready")
    assert "no such run" in s.wait_for("info string error:")
    s.wait_for("readyok")
    s.send("go movetime 10")
    s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_no_legal_move_answers_none():
    s = Session()
    s.send("position fen 7k/5QQ1/8/8/8/8/8/K7 b - - 0 1", "go movetime 50")  # Black is checkmated
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_the_engine_plays_the_game_of_its_checkpoint():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    plays = {"run": "chess", "mini": "gardner"}
    s = Session(scripts={"run": ScriptedSearcher(), "mini": ScriptedSearcher(variant="gardner")},
                variant_of=plays.get, Checkpoint="mini")
    s.send("uci")
    s.wait_for("uciok")
    assert "option name UCI_Variant type combo default gardner var chess var gardner" in s.lines
    s.send("setoption name UCI_Variant value chess")
    assert "the checkpoint 'mini' plays gardner" in s.wait_for("info string error:")
    s.send("setoption name UCI_Variant value gardner", "setoption name Rule value lookup")  # same game: fine
    assert "chess openings" in s.wait_for("info string error:")
    s.send("isready")
    s.wait_for("readyok")
    s.send("position startpos moves b1c3", "go movetime 50")
    board = GardnerBoard()
    board.push_uci("b1c3")
    assert board.is_legal(chess.Move.from_uci(s.wait_for("bestmove").split()[1]))
    s.send("position startpos moves e2e4")  # a chess move: pawns step one square in Gardner chess
    assert "move 1 'e2e4' is illegal" in s.wait_for("info string error:")
    s.send("setoption name Checkpoint value run")  # a chess checkpoint: the game follows
    assert s.wait_for("info string UCI_Variant") == "info string UCI_Variant chess: the game of the checkpoint"
    s.send("position startpos moves e2e4", "go movetime 50")
    move = s.wait_for("bestmove").split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    s.close()


def test_a_checkpoint_of_unknown_game_sets_it_at_load_and_a_mismatch_is_refused():
    s = Session(script=ScriptedSearcher(variant="gardner"))  # no config to read: the load tells
    s.send("isready")
    assert s.wait_for("info string UCI_Variant") == "info string UCI_Variant gardner: the game of the checkpoint"
    s.wait_for("readyok")
    s.send("position startpos", "go nodes 2")
    assert s.wait_for("bestmove") != "bestmove (none)"
    s.send("setoption name UCI_Variant value chess", "isready")  # the GUI insists on chess: the team cannot play it
    assert "plays gardner, UCI_Variant is chess" in s.wait_for("info string error:")
    s.wait_for("readyok")
    s.send("position startpos moves e2e4", "go nodes 2")
    assert "cannot search" in s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_checkpoint_variant_reads_the_game_from_the_run_config(tmp_path):
    from azdb_jax.uci.main import checkpoint_variant  # pylint: disable=g-import-not-at-top

    for env, variant in (("chess", "chess"), ("gardner_chess", "gardner"), ("connect_four", None)):
        run = tmp_path / env
        run.mkdir()
        (run / "config.json").write_text(json.dumps({"env": {"name": env}}))
        assert checkpoint_variant(str(run)) == variant
        assert checkpoint_variant(f"{run}@20") == variant
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{not json")
    for spec in ("", str(tmp_path / "missing"), str(tmp_path / "bad"), f"{tmp_path / 'chess'}@x"):
        assert checkpoint_variant(spec) is None  # unreadable: loading reports why
