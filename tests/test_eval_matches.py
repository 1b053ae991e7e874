"""Matches: recorded games replay, tallies and Elo, the specialisation lookup, PGN, engines, the CLI."""

import io
import json
import pathlib
import sys

import chess
import chess.pgn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import arena, networks, ratings  # noqa: E402
from azdb_jax.games.tic_tac_toe import tic_tac_toe_perfect_policy  # noqa: E402
from azdb_jax.policies import sample_by_visits, uniform_random_policy  # noqa: E402
from azdb_jax import games as games_lib  # noqa: E402
from azdb_jax import search as search_lib  # noqa: E402
from azdb_jax.envs import chess_interop, chess_pgn  # noqa: E402
from azdb_jax.evaluation import game_records, matches, specialisation  # noqa: E402
from azdb_jax.agent import Agent  # noqa: E402

RANDOM = uniform_random_policy()
TINY_NET = networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8)


def lowest_action_policy(params, rng_key, state):
    """Deterministic: the legal action with the lowest id."""
    del params, rng_key
    return jnp.argmax(state.legal_action_mask, axis=-1).astype(jnp.int32)


def _replay(env, starts, actions):
    """Steps games [G] from ``starts`` through their recorded actions [G, T] (-1: no move)."""

    def one(start, moves):
        def ply(state, action):
            return jax.lax.cond(action < 0, lambda: state, lambda: env.step(state, action)), None

        return jax.lax.scan(ply, start, moves)[0]

    return jax.jit(jax.vmap(one))(starts, jnp.asarray(actions, jnp.int32))


# ------------------------------------------------------------------ arena records


def test_recorded_moves_replay_to_the_same_games():
    env = games_lib.make("connect_four")
    key = jax.random.PRNGKey(7)
    results = jax.device_get(jax.jit(lambda k: arena.play_games(
        env, RANDOM, None, lowest_action_policy, None, k, num_games=16, max_plies=9))(key))
    assert results.actions.shape == (16, 9) and 0 < results.finished.sum() < 16
    init_keys = jax.vmap(lambda p: jax.random.split(jax.random.fold_in(key, p), 3)[0])(jnp.arange(8))
    starts = jax.tree.map(lambda x: jnp.concatenate([x, x]), jax.vmap(env.init)(init_keys))
    final = jax.device_get(_replay(env, starts, results.actions))
    for g in range(16):
        moves = results.actions[g]
        assert (moves[:results.length[g]] >= 0).all() and (moves[results.length[g]:] == -1).all()
        assert bool(final.terminated[g]) == bool(results.finished[g])
        mover = int(starts.current_player[g])
        a_seat = mover if results.a_first[g] else 1 - mover
        # pgx keeps the last step's rewards: the final reward is the game's result.
        assert float(final.rewards[g, a_seat]) == results.result[g]


# ------------------------------------------------------------------ play_match tallies


def test_perfect_player_never_loses_and_the_tally_is_exact():
    env = games_lib.make("tic_tac_toe")
    perfect = tic_tac_toe_perfect_policy()
    match = matches.play_match(env, perfect, None, RANDOM, None, seeds=range(5), max_plies=9, batch_pairs=3,
                               names=("perfect", "random"))
    assert match.num_games == 10 and match.finished.all()
    np.testing.assert_array_equal(match.seed, np.repeat(np.arange(5), 2))
    np.testing.assert_array_equal(match.a_first, np.tile([True, False], 5))
    assert (match.result >= 0).all()  # the perfect player never loses
    summary = matches.summarize_match(match)
    wins, draws, losses = [int(np.sum(match.result == v)) for v in (1, 0, -1)]
    assert (summary["wins"], summary["draws"], summary["losses"]) == (wins, draws, losses)
    assert summary["score"] == pytest.approx((wins + draws / 2) / 10)
    expected = ratings.elo_difference(wins, draws, losses)
    assert summary["elo"] == float(expected.elo) and summary["elo_stderr"] == float(expected.stderr)
    first = summary["by_colour"]["first"]
    assert first["games"] == 5 and first["wins"] == int(np.sum(match.result[match.a_first] == 1))
    # Every game replays to its recorded result (the initial position: X moves first).
    starts = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), match.num_games))
    final = jax.device_get(_replay(env, starts, match.actions))
    assert final.terminated.all()
    np.testing.assert_array_equal(final._step_count, match.length)
    record = game_records.match_record(match).splitlines()
    assert len(record) == 12 and record[2].split("\t")[3:5] == ["perfect", "random"]
    assert record[3].split("\t")[3:5] == ["random", "perfect"]


def test_one_tally_with_the_trinomial_score_stderr_everywhere():
    # W/D/L = 3/2/1: p = 2/3, per-game variance (3·(1/3)² + 2·(1/6)² + 1·(2/3)²)/6 = 5/36.
    tally = arena.tally([1, 1, 1, 0, 0, -1, 1], [True] * 6 + [False])
    assert (tally["wins"], tally["draws"], tally["losses"], tally["unfinished"]) == (3, 2, 1, 1)
    assert tally["score"] == pytest.approx(2 / 3) and tally["score_stderr"] == pytest.approx((5 / 36 / 6) ** 0.5)
    assert np.isnan(arena.tally([0], [False])["score_stderr"])
    # win rate 3 of the 6 decided games; Elo from the score, with its standard error
    assert tally["win_rate"] == 0.5 and tally["elo_stderr"] > 0
    assert tally["elo"] == pytest.approx(-400 * np.log10(1 / (2 / 3) - 1))
    # Every report takes its standard error from the one tally: no other module computes it.
    package = pathlib.Path(arena.__file__).parent
    users = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if "score_stderr(" in p.read_text() and p.name != "ratings.py")
    assert users == ["arena.py"], users


@pytest.mark.slow
def test_games_do_not_depend_on_chunking_and_unfinished_are_counted():
    env = games_lib.make("connect_four")
    starts = matches.random_openings(env, 3, 2, jax.random.PRNGKey(1))
    kwargs = dict(starts=starts, seeds=(4, 9), max_plies=12)
    one = matches.play_match(env, RANDOM, None, RANDOM, None, batch_pairs=1, **kwargs)
    many = matches.play_match(env, RANDOM, None, RANDOM, None, batch_pairs=4, **kwargs)
    np.testing.assert_array_equal(one.actions, many.actions)
    np.testing.assert_array_equal(one.result, many.result)
    np.testing.assert_array_equal(one.start_index, np.tile(np.repeat(np.arange(3), 2), 2))
    summary = matches.summarize_match(one)
    assert summary["unfinished"] == int((~one.finished).sum()) > 0  # 12 plies: most games go on
    assert summary["finished"] + summary["unfinished"] == 12
    with pytest.raises(ValueError, match="seeds"):
        matches.play_match(env, RANDOM, None, RANDOM, None, seeds=(1, 1), max_plies=4)


# ------------------------------------------------------------------ the specialisation lookup


def test_lookup_on_a_hand_built_table():
    # result[player, opening, team's turn, seed]; seeds 0-1 train, seed 2 held out.
    result = np.zeros((2, 2, 2, 3))
    finished = np.ones_like(result, bool)
    result[0, 0, 0] = [1, 1, -1]     # player 0, opening 0, first: train mean score 1
    result[1, 0, 0] = [1, 0, 1]      # player 1: 0.75            -> table 0, held-out loss
    result[0, 0, 1] = [-1, -1, 1]    # player 0: 0
    result[1, 0, 1] = [0, 0, 0]      # player 1: 0.5             -> table 1, held-out draw
    result[0, 1, 0] = [0, 0, 1]      # tie at 0.5 -> lowest index 0, held-out win
    result[1, 1, 0] = [1, -1, -1]
    result[0, 1, 1] = [-1, -1, -1]   # 0
    result[1, 1, 1] = [-1, 0, 0]     # the unfinished second game counts ½: 0.25 -> table 1
    finished[1, 1, 1, 1] = False
    table = specialisation.lookup_table(result[..., :2], finished[..., :2])
    np.testing.assert_array_equal(table, [[0, 1], [0, 1]])
    report = specialisation.specialisation_report(result, finished, [0, 1], [2])
    lookup = report["lookup"]
    assert (lookup["wins"], lookup["draws"], lookup["losses"]) == (1, 2, 1)  # -1, 0, +1, 0
    assert lookup["score"] == 0.5
    # Held-out per player: player 0 -1, 1, 1, -1 -> 0.5; player 1: 1, 0, -1, 0 -> 0.5 (tie -> 0).
    assert [p["score"] for p in report["per_player"]] == [0.5, 0.5] and report["best_latent"]["player"] == 0
    mol = report["max_over_latents"]  # max(-1, 1), max(1, 0), max(1, -1), max(-1, 0)
    assert (mol["wins"], mol["draws"], mol["losses"]) == (3, 1, 0)
    # Leave one seed out, by hand: seed k scored with the table of the other two seeds.
    loso = report["leave_one_seed_out"]["lookup"]
    # cell (0, first): tables from {1,2}: p0 0.5 vs p1 1 -> 1; {0,2}: 0.5 vs 1 -> 1; {0,1}: 0
    #   results p1@0 = 1, p1@1 = 0, p0@2 = -1
    # cell (0, second): {1,2}: 0.5 vs 0.5 -> 0; {0,2}: 0.5 vs 0.5 -> 0; {0,1}: 1
    #   results p0@0 = -1, p0@1 = -1, p1@2 = 0
    # cell (1, first): {1,2}: 0.75 vs 0 -> 0; {0,2}: 0.75 vs 0.5 -> 0; {0,1}: 0
    #   results 0, 0, 1
    # cell (1, second): {1,2}: 0 vs 0.25 -> 1; {0,2}: 0 vs 0.25 -> 1; {0,1}: 1
    #   results -1, unfinished, 0
    assert (loso["wins"], loso["draws"], loso["losses"], loso["unfinished"]) == (2, 5, 4, 1)
    # Player 0 over all seeds, moving first: 1, 1, -1 and 0, 0, 1; second: -1, -1, 1 and -1, -1, -1.
    first, second = report["per_player_by_turn"][0]["first"], report["per_player_by_turn"][0]["second"]
    assert (first["wins"], first["draws"], first["losses"]) == (3, 2, 1)
    assert (second["wins"], second["draws"], second["losses"]) == (1, 0, 5)
    # Mean game scores per opening and turn (W 1, D ½, L 0; the unfinished game ½).
    np.testing.assert_allclose(report["opening_scores"][0], [[2 / 3, 1 / 3], [2 / 3, 0.0]])
    np.testing.assert_allclose(report["opening_scores"][1], [[5 / 6, 1 / 2], [1 / 3, 1 / 3]])
    with pytest.raises(ValueError, match="disjoint"):
        specialisation.specialisation_report(result, finished, [0, 1], [1])


def _tiny_team(env, num_players=2, seed=0, simulations=2):
    network = networks.make_network(TINY_NET, num_actions=env.num_actions, num_players=num_players)
    params = network.init(jax.random.PRNGKey(seed), env.init(jax.random.PRNGKey(0)).observation)
    return Agent(env=env, apply_fn=network.apply, params=params, num_players=num_players,
                search_config=search_lib.SearchConfig(num_simulations=simulations), name="tiny")


@pytest.mark.slow
def test_gap_lookup_rule_by_hand():
    # 3 players, 1 opening, 1 turn, 4 seeds; all games finished. Scores (W 1, D ½, L 0):
    #   player 0: 1, 1, 0, 0     mean 0.5,  SE = sqrt(1/3) / 2 = 0.2887
    #   player 1: 1, 1, 1, 0     mean 0.75, SE = 0.25
    #   player 2: 1, ½, ½, ½     mean 0.625, SE = 0.125
    # "best" picks player 1. GAP: G = 0.2887, candidates within G of 0.75 (>= 0.4613): all
    # three, and the lowest mean among them is player 0's.
    result = np.zeros((3, 1, 2, 4))
    result[0, 0, 0] = [1, 1, -1, -1]
    result[1, 0, 0] = [1, 1, 1, -1]
    result[2, 0, 0] = [1, 0, 0, 0]
    result[:, 0, 1] = result[:, 0, 0]
    result[0, 0, 1] = [-1, -1, -1, 1]  # turn 1: player 0 mean 0.25 (SE 0.25) is out of the gap
    finished = np.ones_like(result, bool)
    np.testing.assert_array_equal(specialisation.lookup_table(result, finished, "best"), [[1, 1]])
    # turn 1: G = max(0.25, 0.25, 0.125) = 0.25, candidates >= 0.5: players 1 (0.75) and 2 (0.625) -> 2
    np.testing.assert_array_equal(specialisation.lookup_table(result, finished, "gap"), [[0, 2]])
    # One seed: no spread, so GAP is "best".
    np.testing.assert_array_equal(specialisation.lookup_table(result[..., :1], finished[..., :1], "gap"),
                                  specialisation.lookup_table(result[..., :1], finished[..., :1], "best"))
    with pytest.raises(ValueError, match="unknown lookup rule"):
        specialisation.lookup_table(result, finished, "argmax")
    # Leave one seed out with GAP: seed 3 scored by the table of seeds 0-2, where on turn 0
    # player 0 scores 1, 1, 0 (0.667, SE 0.333), player 1 1, 1, 1 (1.0, SE 0), player 2 1, ½, ½
    # (0.667, SE 0.167): G = 0.333, candidates >= 0.667: all, lowest mean 0.667 -> player 0 (ties: lowest).
    games, done, tables = specialisation.leave_one_seed_out(result, finished, "gap")
    assert tables[3][0][0] == 0 and games[0, 0, 3] == result[0, 0, 0, 3] and done.all()
    with pytest.raises(ValueError, match="at least 2 seeds"):
        specialisation.leave_one_seed_out(result[..., :1], finished[..., :1])


def test_lookup_games_are_the_chosen_players_games():
    env = games_lib.make("tic_tac_toe")
    team = _tiny_team(env)
    starts = matches.random_openings(env, 2, 1, jax.random.PRNGKey(0))
    spec = specialisation.play_specialisation(env, team, RANDOM, None, starts=starts, train_seeds=[0, 1],
                                              heldout_seeds=[2], max_plies=9, batch_pairs=4)
    table = np.asarray(spec.report["table"])
    lookup = spec.lookup
    assert lookup.num_games == 4 and (lookup.seed == 2).all()
    for g in range(lookup.num_games):
        player = table[lookup.start_index[g], 0 if lookup.a_first[g] else 1]
        assert lookup.a_player[g] == player
        source = spec.per_player[player]
        same = (source.seed == 2) & (source.start_index == lookup.start_index[g]) & (source.a_first == lookup.a_first[g])
        np.testing.assert_array_equal(source.actions[same][0], lookup.actions[g])
    assert matches.summarize_match(lookup)["score"] == pytest.approx(spec.report["lookup"]["score"], nan_ok=True)
    # The single-player agent plays exactly the games of the shared latent policy.
    alone = matches.play_match(env, team.player_policy(1), team.params, RANDOM, None, starts=starts,
                               seeds=[0, 1, 2], max_plies=9, batch_pairs=4)
    np.testing.assert_array_equal(alone.actions, spec.per_player[1].actions)
    with pytest.raises(ValueError, match="valid rules: visit, value, lcb, gap"):
        team.rule_policy("best")
    with pytest.raises(ValueError, match="player"):
        team.player_policy(2)


@pytest.mark.slow
def test_members_play_their_own_matches_in_one_program():
    """``play_match(members=K)``: member k's stacked parameters play the match its own
    parameters play (every game, move for move), with a list of K results; a host player
    or a bad K is refused."""
    env = games_lib.make("tic_tac_toe")
    teams = [_tiny_team(env, seed=s) for s in (0, 1, 2)]
    opponents_ = [_tiny_team(env, num_players=1, seed=s) for s in (3, 4, 5)]
    agent, opponent = teams[0].latent_policy(sample_plies=1), opponents_[0].player_policy(0)
    starts = matches.random_openings(env, 2, 1, jax.random.PRNGKey(0))
    common = dict(starts=starts, seeds=[0, 1], max_plies=9, batch_pairs=3)  # 4 pairs in 2 chunks, one padded
    stack = lambda trees: jax.tree.map(lambda *xs: jnp.stack(xs), *trees)  # noqa: E731
    params = stack([(t.params, jnp.int32(1)) for t in teams])
    together = matches.play_match(env, agent, params, opponent, stack([o.params for o in opponents_]),
                                  members=3, **common)
    assert isinstance(together, list) and len(together) == 3
    for team, other, match in zip(teams, opponents_, together):
        alone = matches.play_match(env, agent, (team.params, jnp.int32(1)), opponent, other.params, **common)
        for field in ("actions", "length", "result", "finished", "a_first", "start_index", "seed"):
            np.testing.assert_array_equal(getattr(match, field), getattr(alone, field), err_msg=field)
    assert len({together[k].actions.tobytes() for k in range(3)}) > 1  # the members' games differ
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="members"):
            matches.play_match(env, agent, params, opponent, None, members=bad, **common)


def test_sample_by_visits_matches_the_visit_distribution():
    from scipy import stats

    visits = jnp.array([[0.0, 1.0, 3.0, 0.0, 4.0]])
    draws = jax.jit(jax.vmap(lambda k: sample_by_visits(k, visits)[0]))(
        jax.random.split(jax.random.PRNGKey(0), 4000))
    counts = np.bincount(np.asarray(draws), minlength=5)
    assert counts[0] == counts[3] == 0  # unvisited actions are never drawn
    assert stats.chisquare(counts[[1, 2, 4]], 4000 * np.array([1, 3, 4]) / 8).pvalue > 1e-3


@pytest.mark.slow
def test_sampled_opening_plies_vary_by_seed_then_play_greedily():
    env = games_lib.make("connect_four")
    team = _tiny_team(env, simulations=16)
    greedy_players = [team.player_policy(0), team.rule_policy("visit")]
    sampled_players = [team.player_policy(0, sample_plies=4), team.rule_policy("visit", sample_plies=4)]
    start = env.init(jax.random.PRNGKey(1))
    later = start.replace(_step_count=jnp.int32(4))  # the sampling window is over
    keys = jax.random.split(jax.random.PRNGKey(2), 24)
    for greedy, sampled in zip(greedy_players, sampled_players):
        def moves(policy, state):
            batch = jax.tree.map(lambda x: x[None], state)
            return np.asarray(jax.jit(jax.vmap(lambda k: policy(team.params, k, batch)[0]))(keys))

        np.testing.assert_array_equal(moves(sampled, later), moves(greedy, later))
        assert len(set(moves(greedy, start).tolist())) == 1  # a noiseless search: one move whatever the key
        assert len(set(moves(sampled, start).tolist())) > 1  # sampled ∝ visits: the keys disagree
    with pytest.raises(ValueError, match="sample_plies"):
        team.rule_policy("visit", sample_plies=-1)


# ------------------------------------------------------------------ chess: PGN and engines

# Short endgames, so that random play finishes some games within the ply limit.
ENDGAMES = [
    "6k1/8/5QK1/8/8/8/8/8 w - - 0 1",         # White mates in one (Qd8#)
    "8/8/8/8/8/8/6q1/4k2K w - - 0 60",        # Kxg2, the only move, draws (insufficient material)
    "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",        # Kxd2 draws by insufficient material
    "rnbqk1nr/p1p2ppp/1p2p3/3pP3/1b1P4/2N5/PPP2PPP/R1BQKBNR w KQkq - 0 5",
    None,                                     # the standard start
]


def _check_pgn(pgn_text, match, fens):
    handle = io.StringIO(pgn_text)
    for g in range(match.num_games):
        game = chess.pgn.read_game(handle)
        assert game is not None and not game.errors, f"game {g} does not parse: {game and game.errors}"
        fen = fens[match.start_index[g]]
        standard = fen is None or chess.Board(fen) == chess.Board()
        assert game.headers.get("FEN") == (None if standard else chess.Board(fen).fen())
        board = game.board()  # from the FEN tag; the mainline replays legally from it
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)
        assert len(board.move_stack) == match.length[g]
        a_white = match.a_colour[g] == "white"
        expected = "*" if not match.finished[g] else {0.0: "1/2-1/2", 1.0: "1-0" if a_white else "0-1",
                                                       -1.0: "0-1" if a_white else "1-0"}[match.result[g]]
        assert game.headers["Result"] == expected == chess_pgn.game_result(board, num_plies=len(board.move_stack))
        assert game.headers["Round"] == str(match.seed[g])
        assert game.headers["White" if a_white else "Black"] == match.names[0]
    assert chess.pgn.read_game(handle) is None


@pytest.mark.slow
def test_chess_match_pgn_parses_and_results_agree():
    env = games_lib.make("chess")
    boards = [chess.Board() if f is None else chess.Board(f) for f in ENDGAMES]
    starts, fens = matches.book_starts(boards)
    fens[-1] = None
    match = matches.play_match(env, RANDOM, None, lowest_action_policy, None, starts=starts, seeds=(0, 1),
                               max_plies=30, batch_pairs=5, names=("random", "lowest"))
    assert match.finished.any() and (~match.finished).any()
    assert (match.result[match.start_index == 1] == 0).all() and match.finished[match.start_index == 1].all()
    np.testing.assert_array_equal(match.a_colour[:2], ["white", "black"])
    _check_pgn(game_records.match_pgn(match, fens), match, fens)


class FirstLegalMove:
    """Stand-in engine: the legal move with the lowest pgx action id (python-chess side)."""

    name = "first-legal"

    def __call__(self, board):
        return min(board.legal_moves, key=lambda m: chess_interop.move_to_action(m, board))


@pytest.mark.slow
def test_engine_loop_plays_the_same_games_as_the_arena():
    # The stand-in engine is the host-side twin of ``lowest_action_policy``, so the host loop
    # and the jitted arena (same pair keys) must play identical games.
    env = games_lib.make("chess")
    starts, fens = matches.book_starts([chess.Board() if f is None else chess.Board(f) for f in ENDGAMES])
    kwargs = dict(seeds=(3,), max_plies=30, batch_pairs=5)  # the same program as the PGN test's
    hosted = matches.play_engine_match(RANDOM, None, FirstLegalMove(), fens, agent_name="random", **kwargs)
    jitted = matches.play_match(env, RANDOM, None, lowest_action_policy, None, starts=starts,
                                names=("random", "first-legal"), **kwargs)
    for field in ("start_index", "seed", "a_first", "a_colour", "result", "finished", "length", "actions"):
        np.testing.assert_array_equal(getattr(hosted, field), getattr(jitted, field), err_msg=field)
    assert hosted.names == ("random", "first-legal") and hosted.finished.any()
    _check_pgn(game_records.match_pgn(hosted, fens), hosted, fens)


@pytest.mark.slow
def test_engine_match_with_stockfish(stockfish_path):  # skipped with the install hint without Stockfish
    from azdb_jax.evaluation import stockfish  # pylint: disable=g-import-not-at-top

    with stockfish.StockfishPlayer(stockfish_path, nodes=1000) as engine:
        # White to move mates in one (Qg7#); Stockfish finds it, random play rarely does.
        match = matches.play_engine_match(RANDOM, None, engine, [ENDGAMES[0]], seeds=(0,), max_plies=6)
    assert match.a_colour.tolist() == ["white", "black"]
    assert match.finished[1] and match.result[1] == -1 and match.length[1] == 1  # Stockfish as White mates
    _check_pgn(game_records.match_pgn(match, [ENDGAMES[0]]), match, [ENDGAMES[0]])


# ------------------------------------------------------------------ the CLI


@pytest.mark.slow
def test_cli_match_between_checkpoints(tmp_path, trained_run):
    from azdb_jax import runs  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import agent_match  # pylint: disable=g-import-not-at-top

    run = trained_run("connect_four")  # the shared tiny run (tests/conftest.py): checkpoints 1 and 2, 3 players
    config = runs.load_run_config(run)
    assert config.run.num_iterations == 2 and config.run.checkpoint_every == 1
    players = config.team.num_players
    out = tmp_path / "out"
    summary = agent_match.run_match(a=f"{run}@2", b=f"{run}@1", b_player=1, out=out, num_openings=2,
                                   opening_plies=2, seeds=2, simulations=2, progress=False)
    assert summary["games"] == 8 and summary["a"] == f"{run.name}@2/visit" and summary["b"] == f"{run.name}@1/player1"
    saved = json.loads((out / "match.json").read_text())
    assert saved["summary"]["wins"] == summary["wins"] and len(saved["rows"]) == 8
    record = (out / "games.txt").read_text().splitlines()
    assert len(record) == 10 and (out / "match.csv").read_text().count("\n") == 9
    expected = ratings.elo_difference(summary["wins"], summary["draws"], summary["losses"])
    assert summary["elo_stderr"] == pytest.approx(float(expected.stderr), nan_ok=True)
    # The lookup team (played in test_lookup_games_are_the_chosen_players_games) needs held-out seeds.
    with pytest.raises(ValueError, match="heldout_seeds"):
        agent_match.run_match(a=str(run), a_rule="lookup", b="random", out=tmp_path / "x", seeds=2)
    with pytest.raises(ValueError, match=f"team of {players} player"):
        agent_match.run_match(a=str(run), b="random", num_players_a=players + 1, out=tmp_path / "x")
    with pytest.raises(ValueError, match="fixed opponent of connect_four"):
        agent_match.run_match(a=str(run), b="oracle", out=tmp_path / "x")
    with pytest.raises(ValueError, match="unknown --a_rule"):
        agent_match.run_match(a=str(run), a_rule="best", b="random", out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_cli_crowded_book_positions_switch_the_runs_to_the_exact_move_generator(tmp_path, monkeypatch):
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import agent_match  # pylint: disable=g-import-not-at-top

    # 218 legal moves: more than pgx's 200-move list, so the 32-piece generator is required.
    fen = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"
    assert chess.Board(fen).legal_moves.count() == 218 and chess_interop.required_max_pieces([fen]) == 32
    book = tmp_path / "book.epd"
    book.write_text(fen + "\n")
    run = tmp_path / "chess_run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    team = _tiny_team(games_lib.make("chess"))  # built on the default 16-piece generator
    monkeypatch.setattr(loading, "load_team", lambda *args, **kwargs: team)
    searched_on = []  # the move generator of every agent built, in order
    build_agent = Agent.player_policy

    def spy(agent_team, player, **kwargs):
        searched_on.append(agent_team.env.max_pieces)
        return build_agent(agent_team, player, **kwargs)

    monkeypatch.setattr(Agent, "player_policy", spy)
    summary = agent_match.run_match(a=str(run), a_player=0, b="random", book=str(book), seeds=1, max_plies=2,
                                   out=tmp_path / "out", progress=False)
    assert summary["games"] == 2
    assert searched_on[-1] == 32  # the agent that played searches with the exact generator
    games = io.StringIO((tmp_path / "out" / "games.pgn").read_text())
    for _ in range(2):  # every move, the team's among them, is legal in python-chess
        game = chess.pgn.read_game(games)
        board = game.board()
        assert board.fen() == fen and not game.errors
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)
