"""Connect four's ground truth: the solver against brute-force negamax (ours, and the
library's depth-limited one), the shipped solver-labelled positions, the ``perfect``
opponent in the arena, and the solved-position measures' bookkeeping."""

import functools

import jax
import numpy as np
import pytest

from azdb_jax import agent as agent_lib
from azdb_jax import arena, config as config_lib, games, opponents, policies, presets
from azdb_jax.data import DataFormatError, connect_four as c4
from azdb_jax.data import load_connect_four_positions
from azdb_jax.evaluation import solved_positions
from azdb_jax.games import connect_four_solver as solver_lib


def _move_outcome(cells: tuple, column: int, memo: dict):
    """+1/0/−1 for the side to move after it plays ``column`` (None: the column is full), by
    exhaustive negamax over the rest of the game."""
    mover = sum(c >= 0 for c in cells) % 2
    board = np.array(cells).reshape(6, 7)
    filled = int((board[:, column] >= 0).sum())
    if filled == 6:
        return None
    board[5 - filled, column] = mover
    child = tuple(int(x) for x in board.reshape(-1))
    if c4.winner(np.array(child)) is not None:
        return 1
    if all(c >= 0 for c in child):
        return 0
    return -_negamax_outcome(child, memo)


def _negamax_outcome(cells: tuple, memo: dict) -> int:
    """+1/0/−1 for the side to move on ``cells``."""
    if cells not in memo:
        best = -2
        for column in range(7):
            value = _move_outcome(cells, column, memo)
            best = max(best, -2 if value is None else value)
            if best == 1:
                break
        memo[cells] = best
    return memo[cells]


def _late_positions(count: int, empties: int, seed: int, max_open: int = 7):
    """Random-play positions with ``empties`` empty cells (at most ``max_open`` open
    columns), not over."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        moves = []
        cells = c4.cells_from_moves(moves)
        while (cells < 0).sum() > empties:
            legal = np.flatnonzero((cells.reshape(6, 7) < 0).any(axis=0))
            moves.append(int(rng.choice(legal)))
            cells = c4.cells_from_moves(moves)
            if c4.winner(cells) is not None:
                break
        open_columns = int((cells.reshape(6, 7) < 0).any(axis=0).sum())
        if c4.winner(cells) is None and (cells < 0).sum() == empties and open_columns <= max_open:
            out.append(moves)
    return out


def test_the_solvers_outcomes_are_brute_force_negamaxs(connect_four_solver):
    memo = {}
    for moves in _late_positions(12, empties=12, seed=1):
        cells = c4.cells_from_moves(moves)
        scores = connect_four_solver.move_scores(cells)
        for column in range(7):
            expected = _move_outcome(tuple(int(x) for x in cells), column, memo)
            if expected is None:
                assert scores[column] == solver_lib.ILLEGAL
                continue
            assert np.sign(scores[column]) == expected, (moves, column, scores)
        assert connect_four_solver.value(cells) == max(
            np.sign(s) for s in scores if s != solver_lib.ILLEGAL)


def test_the_librarys_negamax_keeps_the_solved_outcome_near_the_end(connect_four_solver):
    env = games.make("connect_four")
    positions = _late_positions(8, empties=5, seed=2, max_open=3)
    minimax = policies.minimax_policy(env, 5, num_moves=3)
    states = solved_positions.states(env, [c4.SolvedPosition("p", "late", "random", tuple(m), (0,) * 7)
                                           for m in positions])
    actions = np.asarray(jax.jit(minimax)(None, jax.random.PRNGKey(0), states))
    for moves, action in zip(positions, actions):
        keeping = connect_four_solver.keeping_moves(c4.cells_from_moves(moves))
        assert keeping[action], (moves, int(action), connect_four_solver.move_scores(c4.cells_from_moves(moves)))


def test_the_shipped_positions_are_the_solvers_labels(connect_four_solver):
    positions = load_connect_four_positions()
    assert len(positions) == 600
    assert {p.phase for p in positions} == set(c4.PHASES)
    assert len({c4.cells_from_moves(p.moves).tobytes() for p in positions}) == len(positions)  # each once
    for position in positions[::30]:  # 20 of them, from every phase and source
        scores = connect_four_solver.move_scores(c4.cells_from_moves(position.moves))
        assert tuple(None if s == solver_lib.ILLEGAL else int(s) for s in scores) == position.scores


@pytest.mark.parametrize("line, reason", [
    ("c4_0,opening,random,4312,1 2 2 4 2 2 0,extra", "expected 5 fields"),
    ("c4_0,endgame,random,431200015,-1 2 2 4 2 2 0", "unknown phase"),
    ("c4_0,opening,random,43x,-1 2 2 4 2 2 0", "column digits"),
    ("c4_0,opening,random,43120001566,-1 2 2 4 2 2 0", "not in the opening phase"),
    ("c4_0,opening,random,9312,-1 2 2 4 2 2 0", "column 9 is not in 0-6"),
    ("c4_0,opening,random,000000,-1 2 2 4 2 2 0", "column 0 is full"),
    ("c4_0,opening,random,431200015,-1 2 2 4 2 2", "expected 7 scores"),
    ("c4_0,opening,random,431200015,-1 2 2 4 2 2 a", "integers"),
    ("c4_0,opening,random,000001,x 2 2 4 2 2 0", "column 0 is open"),
    ("c4_0,opening,random,00000012,1 2 2 4 2 2 0", "column 0 is full but its score is 1"),
])
def test_a_bad_position_line_names_the_file_the_line_and_the_reason(tmp_path, line, reason):
    path = tmp_path / "positions.csv"
    path.write_text(",".join(c4.FIELDS) + "\nc4_1,opening,random,3333,0 1 0 -3 0 0 -2\n" + line + "\n")
    with pytest.raises(DataFormatError, match=reason) as raised:
        load_connect_four_positions(path)
    assert raised.value.line == 3 and raised.value.path == str(path)
    lenient = load_connect_four_positions(path, strict=False)
    assert len(lenient) == 1 and lenient.skipped[0].line == 3


def test_a_won_game_cannot_be_a_position():
    with pytest.raises(ValueError, match="move 7: the game was already won"):
        c4.cells_from_moves([0, 1, 0, 1, 0, 1, 0, 1])


@functools.lru_cache(maxsize=None)
def _play(name_a, name_b, num_games=16):
    env = games.make("connect_four")
    available = opponents.named_opponents(env, [name_a, name_b])
    play = jax.jit(functools.partial(arena.play_games, env, available[name_a], None, available[name_b], None,
                                     num_games=num_games, max_plies=42))
    return arena.summarize(play(jax.random.PRNGKey(0)))


@pytest.mark.slow
def test_perfect_play_wins_every_game_it_starts_and_loses_none(connect_four_solver):
    against_random = _play("perfect", "random")
    assert against_random["as_first"]["wins"] == against_random["as_first"]["games"] == 8
    assert against_random["losses"] == 0
    against_minimax = _play("perfect", "minimax2")
    assert against_minimax["as_first"]["wins"] == 8 and against_minimax["losses"] == 0
    # Perfect against perfect: the first player wins (the solved game), every time.
    itself = _play("perfect", "perfect:depth=42")
    assert itself["as_first"]["wins"] == 8 and itself["as_second"]["losses"] == 8


@pytest.mark.slow
def test_a_perfect_player_with_random_moves_is_weaker(connect_four_solver):
    noisy = _play("perfect:random=1", "perfect")
    assert noisy["wins"] == 0 and noisy["losses"] >= 12  # a random player against the solver


@pytest.mark.parametrize("name, message", [
    ("perfect:noise=0.1", "unknown option"), ("perfect:random=2", "random must be in"),
    ("perfect:depth=0", "depth must be >= 1"), ("perfect:random=a", "random must be a number")])
def test_a_bad_perfect_spec_is_refused(name, message):
    with pytest.raises(ValueError, match=message):
        solver_lib.parse_spec(name)


def test_other_names_are_not_perfect_specs():
    assert solver_lib.parse_spec("minimax2") is None
    assert solver_lib.parse_spec("perfectly") is None
    assert opponents.spec_opponents(games.make("connect_four"), ["minimax2", "random"]) == {}


def test_the_measures_count_the_moves_the_search_plays():
    config = config_lib.apply_overrides(presets.get_preset("demo"), [
        "team.num_players=2", "network.channels=4", "network.num_blocks=1", "network.value_hidden=4",
        "search.num_simulations=4"])
    env = games.make("connect_four")
    network = agent_lib.make_network(config, env)
    params = network.init(jax.random.PRNGKey(0), env.init(jax.random.PRNGKey(0)).observation[None])
    team = agent_lib.Agent.from_config(config, params, env=env)
    base = [c4.SolvedPosition(f"p{i}", "opening", "random", moves, (0,) * 7)
            for i, moves in enumerate([(3, 3, 2, 4), (0, 1, 2, 3, 4), (6, 6, 6, 5, 5)])]
    key = jax.random.PRNGKey(1)
    search = team.search(params, key, solved_positions.states(env, base))
    chosen = np.asarray(search.most_visited_action)  # [P, n]
    # Label the positions so that player 0's move (and only it) keeps a win.
    won = [c4.SolvedPosition(p.id, p.phase, p.source, p.moves,
                             tuple(1 if c == chosen[i, 0] else -1 for c in range(7))) for i, p in enumerate(base)]
    report = solved_positions.evaluate(team, won, key)
    assert report["not_lost"] == 3 and report["random_keeps"] == pytest.approx(1 / 7)
    measures = report["players"][0]["all"]
    assert measures["search_keeps"]["rate"] == 1.0 and measures["search_best"]["rate"] == 1.0
    other = (chosen[:, 1] == chosen[:, 0]).mean()
    assert report["players"][1]["all"]["search_keeps"]["rate"] == pytest.approx(other)
    value = np.asarray(search.network_value)
    assert measures["value_sign"]["rate"] == pytest.approx((value[:, 0] > solved_positions.DRAW_BAND).mean())
    # The same positions lost for the mover: no move measure counts them.
    lost = [c4.SolvedPosition(p.id, p.phase, p.source, p.moves, (-1,) * 7) for p in base]
    report = solved_positions.evaluate(team, lost, key)
    assert report["not_lost"] == 0 and report["players"][0]["all"]["search_keeps"]["n"] == 0


def test_in_training_evaluation_and_play_match_take_perfect_specs(connect_four_solver, tmp_path):
    from azdb_jax import runner, runs  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import agent_match  # pylint: disable=g-import-not-at-top
    from conftest import trained_run_config  # pylint: disable=g-import-not-at-top,g-bad-import-order

    config = config_lib.apply_overrides(trained_run_config("connect_four"),
                                        ['run.eval_opponents=["minimax2","perfect:random=0.5"]'])
    assert runner.Evaluator(config, runs.build_components(config)).opponents == ("minimax2", "perfect:random=0.5")
    bad = config_lib.apply_overrides(config, ['run.eval_opponents=["perfect:depth=0"]'])
    with pytest.raises(ValueError, match="depth must be >= 1"):
        runner.Evaluator(bad, runs.build_components(bad))
    summary = agent_match.run_match(a="perfect", b="random", env_name="connect_four", out=tmp_path / "m",
                                    opening_plies=2, progress=False)
    assert summary["a"] == "perfect" and summary["losses"] == 0 and summary["wins"] > summary["games"] // 2


@pytest.mark.slow
def test_a_training_run_evaluates_against_the_solver(connect_four_solver, tmp_path):
    from azdb_jax import runner, runs  # pylint: disable=g-import-not-at-top
    from conftest import trained_run_config  # pylint: disable=g-import-not-at-top,g-bad-import-order

    config = config_lib.apply_overrides(trained_run_config("connect_four"), ['run.eval_opponents=["perfect"]'])
    runner.train(config, tmp_path / "run", progress=False)
    evals = [r for r in runs.read_metrics(tmp_path / "run", wall_clock=False) if r["kind"] == "eval"]
    assert evals and all(r["opponent"] == "perfect" for r in evals)
    # a barely trained network against the solver: it never wins
    assert all(r["wins"] == 0 and r["wins"] + r["draws"] + r["losses"] + r["unfinished"] == config.run.eval_games
               for r in evals)


@pytest.mark.slow
def test_playing_on_against_the_solver_scores_a_perfect_player_as_keeping_every_result(connect_four_solver):
    import types  # pylint: disable=g-import-not-at-top

    positions = [p for p in load_connect_four_positions() if p.value >= 0][::10]
    lost = [p for p in load_connect_four_positions() if p.value < 0][:3]

    def stand_in(spec):  # the protocol's agent, played by the solver itself (or a random mover)
        policy = opponents.spec_opponents(games.make("connect_four"), [spec])[spec]
        return types.SimpleNamespace(env=games.make("connect_four"), params=None, player_policy=lambda j: policy)

    perfect = solved_positions.against_perfect(stand_in("perfect"), positions + lost, jax.random.PRNGKey(0))
    assert perfect["keeps_result"] == {"rate": 1.0, "stderr": 0.0, "n": len(positions)}  # lost ones left out
    won = sum(p.value > 0 for p in positions)
    assert perfect["wins"] == won and perfect["draws"] == len(positions) - won and perfect["losses"] == 0
    randomly = solved_positions.against_perfect(stand_in("perfect:random=1"), positions, jax.random.PRNGKey(0))
    assert randomly["keeps_result"]["rate"] < 0.5
