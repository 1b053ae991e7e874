"""Skill-compatible team play: the two frameworks, the team compositions, the expectors
(against brute-force enumeration, and batched against per-game calls), the loss
statistics (against a hand replay) and the framework matches. The attuned senior and
the experiments' scripts are in tests/test_skill_experiment.py."""

import itertools
import pathlib
import sys

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import skill_stub  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax import arena  # noqa: E402
from azdb_jax import games as games_lib  # noqa: E402
from azdb_jax.envs import chess_interop, gardner_interop  # noqa: E402
from azdb_jax.policies import sample_uniform  # noqa: E402
from azdb_jax.skill import agents, frameworks, measures  # noqa: E402

PIECE_LETTERS = {"p": 1, "n": 2, "b": 3, "r": 4, "q": 5, "k": 6}


def _random_chess_boards(count: int, seed: int):
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(int(rng.integers(0, 40))):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(moves[int(rng.integers(len(moves)))])
        if not board.is_game_over():
            boards.append(board)
    return boards


def _batch(state):
    return jax.tree.map(lambda x: x[None], state)


# ------------------------------------------------------------------ piece types


def test_chess_piece_types_and_brain_options_match_python_chess():
    env = games_lib.make("chess")
    types_fn = jax.jit(lambda s: frameworks.action_piece_types(env, s))
    options_fn = jax.jit(lambda s: frameworks.brain_options(env, s))
    for board in _random_chess_boards(24, seed=0):
        state = _batch(chess_interop.state_from_board(board))
        types, options = np.asarray(types_fn(state))[0], np.asarray(options_fn(state))[0]
        expected_types = set()
        for move in board.legal_moves:
            piece = board.piece_type_at(move.from_square)
            assert types[chess_interop.move_to_action(move, board)] == piece, (board.fen(), move.uci())
            expected_types.add(piece)
        assert {int(t) for t in np.flatnonzero(options)} == expected_types, board.fen()


def _gardner_piece_at(fen: str, square: str) -> int:
    rows = fen.split()[0].split("/")  # rank 5 first
    row = "".join("." * int(c) if c.isdigit() else c for c in rows[5 - int(square[1])])
    return PIECE_LETTERS[row["abcde".index(square[0])].lower()]


def test_gardner_piece_types_match_the_fen():
    env = games_lib.make("gardner_chess")
    types_fn = jax.jit(lambda s: frameworks.action_piece_types(env, s))
    step = env.step
    state = env.init(jax.random.PRNGKey(0))
    rng = np.random.default_rng(1)
    for _ in range(30):
        if bool(state.terminated):
            break
        fen = gardner_interop.state_to_fen(state)
        types = np.asarray(types_fn(_batch(state)))[0]
        legal = gardner_interop.legal_actions(state)
        for action, uci in zip(legal, gardner_interop.decode_actions(legal, state)):
            assert types[action] == _gardner_piece_at(fen, uci[:2]), (fen, uci)
        state = step(state, int(rng.choice(legal)))


# ------------------------------------------------------------------ Stochastic Tag Team


def test_stt_coin_is_fair_and_reproducible():
    env = frameworks.StochasticTagTeam(games_lib.make("tic_tac_toe"))
    coins = np.stack([frameworks.senior_moves(env.init(jax.random.PRNGKey(k)).coin_key, 50) for k in range(80)])
    share = coins.mean()
    assert abs(share - 0.5) < 4 * np.sqrt(0.25 / coins.size), share  # 4,000 coins
    # Reproducible from the key, and independent of the moves played.
    step = jax.jit(env.step)
    for actions in ([0, 1, 2, 3], [8, 7, 6, 5]):
        state = env.init(jax.random.PRNGKey(7))
        seen = [bool(state.senior_to_move)]
        for a in actions:
            state = step(state, a)
            seen.append(bool(state.senior_to_move))
        np.testing.assert_array_equal(seen, frameworks.senior_moves(state.coin_key, 5))


def _uniform_model(params, state):
    del params
    return jnp.where(state.legal_action_mask, 0.0, -jnp.inf)


def _random_brain(env):
    def brain(params, key, state):
        del params
        return sample_uniform(key, frameworks.brain_options(env, state))

    return brain


def _first_legal(params, key, state):
    del params, key
    return jnp.argmax(state.legal_action_mask, axis=-1).astype(jnp.int32)


def _last_legal(params, key, state):
    del params, key
    n = state.legal_action_mask.shape[-1]
    return (n - 1 - jnp.argmax(state.legal_action_mask[:, ::-1], axis=-1)).astype(jnp.int32)


@pytest.mark.slow
def test_stt_team_moves_follow_the_coins_and_games_are_legal_chess():
    env = games_lib.make("chess")
    team = agents.tag_team(_first_legal, _last_legal)  # senior: lowest action id; junior: highest
    uniform = agents.sampling_policy(_uniform_model)
    alter = agents.tag_team(uniform, uniform)
    match = measures.play_match("stt", env, team, (None, None), alter, (None, None), jax.random.PRNGKey(0),
                                num_games=4, max_plies=40)
    games = match.games
    half = 2
    for g in range(4):
        board = chess.Board()
        coins = frameworks.senior_moves(match.start.coin_key[g % half], 40)
        focal_white = bool(games.a_first[g])
        for t, action in enumerate(games.actions[g][: games.length[g]]):
            move = chess_interop.action_to_move(int(action), board)
            assert move in board.legal_moves
            if board.turn == focal_white:  # the focal team moved
                legal = sorted(chess_interop.move_to_action(m, board) for m in board.legal_moves)
                assert int(action) == (legal[0] if coins[t] else legal[-1]), (g, t)
            board.push(move)
    # Both games of a pair share the coins, with colours swapped.
    assert match.summary["games"] == 4


# ------------------------------------------------------------------ Hand and Brain


def test_hand_plays_only_the_named_piece_type():
    env = games_lib.make("chess")
    boards = _random_chess_boards(32, seed=2)
    states = chess_interop.states_from_boards(boards)

    random_brain, hand = _random_brain(env), _uniform_model
    team = agents.hand_and_brain(env, random_brain, hand)
    brain = jax.jit(lambda k, s: random_brain(None, k, s))
    play = jax.jit(lambda k, s: team((None, None), k, s))
    for seed in range(4):
        key = jax.random.PRNGKey(seed)
        named = np.asarray(brain(jax.random.split(key)[0], states))
        moves = np.asarray(play(key, states))
        for board, piece, action in zip(boards, named, moves):
            move = chess_interop.action_to_move(int(action), board)
            assert move in board.legal_moves
            assert board.piece_type_at(move.from_square) == piece


def test_brain_from_policy_names_the_moved_piece():
    env = games_lib.make("chess")
    boards = _random_chess_boards(8, seed=3)
    states = chess_interop.states_from_boards(boards)
    named = np.asarray(agents.brain_from_policy(env, _last_legal)(None, jax.random.PRNGKey(0), states))
    moves = np.asarray(_last_legal(None, None, states))
    for board, piece, action in zip(boards, named, moves):
        assert board.piece_type_at(chess_interop.action_to_move(int(action), board).from_square) == piece


# ------------------------------------------------------------------ expectors vs brute force


def _single_model(model, params):
    return lambda state: np.asarray(model(params, _batch(state)))[0]


def _top(log_probs, k):
    order = [a for a in np.argsort(-log_probs, kind="stable") if np.isfinite(log_probs[a])][:k]
    weight = np.exp(log_probs[order] - log_probs[order].max())
    return list(zip(order, weight / weight.sum()))


@pytest.mark.parametrize("junior_top_k,opening", [(3, (4, 0)), (2, (4, 0, 2, 1)), (9, (4, 0, 2))])
@pytest.mark.slow
def test_stt_expector_equals_enumeration_of_the_coin_strings(junior_top_k, opening):
    # (4, 0): X to move, wins reachable two plies on; (4, 0, 2, 1): X wins at once with
    # 6; (4, 0, 2): O to move, most replies let X win on the next ply (every move of
    # every junior counted: top 9 of at most 6).
    env = games_lib.make("tic_tac_toe")
    apply, weights = skill_stub.stub_network(env, seed=0)
    models = agents.STTModels(
        value=agents.network_value(apply, player=0),
        own_junior=agents.network_move_model(apply, player=1, temperature=2.0),
        own_senior=agents.network_move_model(apply, player=0),
        opponent_junior=agents.network_move_model(apply, player=2, temperature=2.0),
        opponent_senior=agents.network_move_model(apply, player=0))
    params = agents.STTModels(*([weights] * 5))
    step = jax.jit(env.step)
    state = env.init(jax.random.PRNGKey(0))
    for a in opening:
        state = step(state, a)
    moves, win = jax.jit(lambda s: agents.stt_move_values(env, models, params, s, junior_top_k=junior_top_k,
                                                          senior_top_k=1))(_batch(state))
    moves, win = np.asarray(moves)[0], np.asarray(win)[0]

    me = int(state.current_player)
    value = lambda s: float(np.asarray(models.value(weights, _batch(s)))[0])  # noqa: E731
    model = {name: _single_model(getattr(models, name), weights) for name in models._fields[1:]}

    def outcome(s):  # my result if s just ended
        return float(s.rewards[me])

    expected = {}
    for m in np.flatnonzero(np.asarray(state.legal_action_mask)):
        s1 = step(state, int(m))
        if bool(s1.terminated):
            expected[int(m)] = (1 + outcome(s1)) / 2
            continue
        total = 0.0
        for b1, b2 in itertools.product((0, 1), repeat=2):  # the four coin strings
            opponent = model["opponent_senior" if b1 else "opponent_junior"]
            for o, p_o in _top(opponent(s1), 1 if b1 else junior_top_k):
                s2 = step(s1, int(o))
                if bool(s2.terminated):
                    total += 0.25 * p_o * outcome(s2)
                    continue
                own = model["own_senior" if b2 else "own_junior"]
                for r, p_r in _top(own(s2), 1 if b2 else junior_top_k):
                    s3 = step(s2, int(r))
                    w = outcome(s3) if bool(s3.terminated) else -value(s3)
                    total += 0.25 * p_o * p_r * w
        expected[int(m)] = (1 + total) / 2
    got = {int(a): float(w) for a, w in zip(moves, win) if a >= 0}
    assert got.keys() == expected.keys()
    for a in expected:
        assert got[a] == pytest.approx(expected[a], abs=1e-5), a
    # The expector plays an argmax.
    choice = int(agents.stt_expector(env, models, junior_top_k=junior_top_k)(params, jax.random.PRNGKey(1),
                                                                            _batch(state))[0])
    assert expected[choice] == pytest.approx(max(expected.values()), abs=1e-5)


@pytest.mark.slow
def test_batched_expector_and_team_play_each_game_as_alone():
    # The expector's batched form (one look-ahead batch for all games, chunks of pairs,
    # rows outside ``active`` skipped) gives every game the move its per-game call gives.
    env = games_lib.make("tic_tac_toe")
    apply, weights = skill_stub.stub_network(env, seed=1)
    models = agents.STTModels(agents.network_value(apply), agents.network_move_model(apply, player=1),
                              agents.network_move_model(apply), agents.network_move_model(apply, player=2),
                              agents.network_move_model(apply))
    params = agents.STTModels(*([weights] * 5))
    step = jax.jit(env.step)
    positions = []
    for opening in [(), (4,), (4, 0), (4, 0, 2), (4, 0, 2, 1), (0, 3, 1, 4, 2)]:  # the last game is over
        state = env.init(jax.random.PRNGKey(0))
        for a in opening:
            state = step(state, a)
        positions.append(state)
    states = jax.tree.map(lambda *x: jnp.stack(x), *positions)
    alone = [jax.jit(lambda s: agents.stt_move_values(env, models, params, s, junior_top_k=2))(_batch(p))
             for p in positions]
    active = jnp.asarray([True, False, True, True, True, True])
    for chunk in (1, 7, 1000):
        moves, win = jax.jit(lambda s, a, c=chunk: agents.stt_move_values(
            env, models, params, s, junior_top_k=2, active=a, pairs_per_chunk=c))(states, active)
        for g, (alone_moves, alone_win) in enumerate(alone):
            np.testing.assert_array_equal(np.asarray(moves)[g], np.asarray(alone_moves)[0])
            if g == len(positions) - 1:  # the finished game: nothing to look ahead from
                assert np.all(np.asarray(win)[g] == -np.inf) and np.all(np.asarray(alone_win)[0] == -np.inf)
            elif bool(active[g]):
                np.testing.assert_allclose(np.asarray(win)[g], np.asarray(alone_win)[0], atol=1e-6)
            else:
                assert np.all(np.asarray(win)[g] == -np.inf)

    expector = agents.stt_expector(env, models, junior_top_k=2, pairs_per_chunk=3)
    keys = jax.random.split(jax.random.PRNGKey(5), len(positions))
    per_game = jax.jit(jax.vmap(lambda k, s: expector(params, k, _batch(s))[0]))(keys, states)
    batched = jax.jit(expector.rows)(params, keys, states)
    assert arena.per_game_policy(expector) is expector.rows
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(per_game))

    # The tag team hands the expector only the games whose coin gives it the move.
    stt = frameworks.StochasticTagTeam(env)
    team_states = jax.vmap(stt.wrap)(states, jax.random.split(jax.random.PRNGKey(6), len(positions)))
    assert 0 < int(team_states.senior_to_move.sum()) < len(positions)
    junior = agents.sampling_policy(models.own_junior)
    team = agents.tag_team(expector, junior)
    team_params = (params, weights)
    per_game = jax.jit(jax.vmap(lambda k, s: team(team_params, k, _batch(s))[0]))(keys, team_states)
    batched = jax.jit(arena.per_game_policy(team))(team_params, keys, team_states)
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(per_game))


@pytest.mark.slow
def test_hb_expector_equals_enumeration_over_the_hands_moves():
    env = games_lib.make("gardner_chess")
    apply, weights = skill_stub.stub_network(env, seed=1)
    models = agents.HBModels(value=agents.network_value(apply), hand=agents.network_move_model(apply, player=1))
    params = agents.HBModels(weights, weights)
    step = jax.jit(env.step)
    state = gardner_interop.state_from_fen("rnbqk/pp1pp/2p2/PPPP1/RNBQK w - - 0 2")
    values = np.asarray(jax.jit(lambda s: agents.hb_piece_values(env, models, params, s))(_batch(state)))[0]

    hand = _single_model(models.hand, weights)(state)
    types = np.asarray(frameworks.action_piece_types(env, _batch(state)))[0]
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    for piece in range(7):
        mine = [a for a in legal if types[a] == piece]
        if not mine:
            assert values[piece] == -np.inf
            continue
        p = np.exp(hand[mine] - hand[mine].max())
        p /= p.sum()
        w = []
        for a in mine:
            child = step(state, int(a))
            v = float(child.rewards[int(state.current_player)]) if bool(child.terminated) else \
                -float(np.asarray(models.value(weights, _batch(child)))[0])
            w.append((1 + v) / 2)
        assert values[piece] == pytest.approx(float(np.dot(p, w)), abs=1e-5), piece
    brain = agents.hb_expector(env, models)
    assert int(brain(params, jax.random.PRNGKey(0), _batch(state))[0]) == int(np.argmax(values))


# ------------------------------------------------------------------ loss statistics


def test_move_losses_match_a_hand_replay():
    env = games_lib.make("tic_tac_toe")
    apply, weights = skill_stub.stub_network(env, seed=2)
    value = agents.network_value(apply)
    uniform = agents.sampling_policy(_uniform_model)
    team = agents.tag_team(_first_legal, uniform)
    match = measures.play_match("stt", env, team, (None, None), agents.tag_team(uniform, uniform), (None, None),
                                jax.random.PRNGKey(3), num_games=4, max_plies=9)
    moves = measures.move_losses(match, env, value, weights)
    step = jax.jit(env.step)
    v = lambda s: float(np.asarray(value(weights, _batch(s)))[0])  # noqa: E731
    expected = []
    for g in range(4):
        state = jax.tree.map(lambda x: x[g % 2], match.start.game)
        coins = frameworks.senior_moves(match.start.coin_key[g % 2], 9)
        focal_seat = int(state.current_player) if match.games.a_first[g] else 1 - int(state.current_player)
        for t, action in enumerate(match.games.actions[g][: match.games.length[g]]):
            mover = int(state.current_player)
            before = (1 + v(state)) / 2
            nxt = step(state, int(action))
            after = (1 + float(nxt.rewards[mover])) / 2 if bool(nxt.terminated) else (1 - v(nxt)) / 2
            if bool(nxt.terminated) or t < 8:
                agent = (0 if coins[t] else 1) if mover == focal_seat else (2 if coins[t] else 3)
                expected.append((g, t, agent, 100 * max(0.0, before - after)))
            state = nxt
    got = sorted(zip(moves["game"].tolist(), moves["ply"].tolist(), moves["agent"].tolist(), moves["loss"].tolist()))
    assert [r[:3] for r in got] == [r[:3] for r in sorted(expected)]
    np.testing.assert_allclose([r[3] for r in got], [r[3] for r in sorted(expected)], atol=1e-4)
    rows = measures.loss_table(moves, num_games=4)
    focal_junior = [r for r in rows if r["agent"] == "focal_junior" and r["condition"] == "*"][0]
    mine = [e[3] for e in expected if e[2] == 1]
    assert focal_junior["loss"] == pytest.approx(np.mean(mine), abs=1e-4)
    assert focal_junior["moves"] == len(mine)


@pytest.mark.slow
def test_hb_games_are_legal_chess_and_scored_from_the_focal_side():
    env = games_lib.make("chess")

    random_brain, hand = _random_brain(env), _uniform_model
    team = agents.hand_and_brain(env, random_brain, hand)
    match = measures.play_match("hb", env, team, (None, None), team, (None, None), jax.random.PRNGKey(5),
                                num_games=4, max_plies=60)
    games = match.games
    wins = draws = losses = 0
    for g in range(4):
        board = chess.Board()
        for action in games.actions[g][: games.length[g]]:
            move = chess_interop.action_to_move(int(action), board)
            assert move in board.legal_moves
            board.push(move)
        if games.finished[g]:
            result = float(games.result[g])
            wins, draws, losses = wins + (result > 0), draws + (result == 0), losses + (result < 0)
            focal_white = bool(games.a_first[g])
            outcome = board.outcome(claim_draw=True)
            assert outcome is not None
            expected = 0.0 if outcome.winner is None else (1.0 if outcome.winner == focal_white else -1.0)
            assert result == expected
    assert (match.summary["wins"], match.summary["draws"], match.summary["losses"]) == (wins, draws, losses)
    with pytest.raises(ValueError, match="unknown framework"):
        measures.play_match("tag", env, team, (None, None), team, (None, None), jax.random.PRNGKey(0),
                            num_games=2, max_plies=2)
