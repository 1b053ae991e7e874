"""The game registry: every record complete and consistent, and the Othello module
checked against an Othello written here from the rules."""

import dataclasses
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import adjudication, data, features, games, opponents, search, search_state
from azdb_jax.config import EnvConfig
from azdb_jax.games import othello
from conftest import counted_compiles  # pylint: disable=g-bad-import-order


@pytest.mark.parametrize("game", games.REGISTRY, ids=lambda g: g.id)
def test_every_record_describes_its_env(game):
    env = games.make(game.id)
    assert env.id == game.id and games.get(env) is game and games.get(game.id) is game
    state = env.init(jax.random.PRNGKey(0))
    phi = np.asarray(game.features(state))
    assert phi.dtype == np.float32 and phi.ndim == 1 and set(np.unique(phi)) <= {0.0, 1.0}
    assert features.num_features(env) == phi.shape[0]
    assert 1 <= search.num_slots_for(env) <= env.num_actions
    assert games.max_plies(env) >= 1
    assert set(opponents.opponents_for(game.id, env)) >= {"random"}
    if game.mover_board is not None:
        assert float(adjudication.material_balance(env, jax.tree.map(lambda x: x[None], state))[0]) == 0.0
    if game.board is not None:
        assert games.board_game(env) is game.board
    else:
        with pytest.raises(ValueError, match="no board interop"):
            games.board_game(env)
    packed = search_state.codec(env).pack(state)
    assert jax.tree.structure(search_state.codec(env).unpack(packed)) == jax.tree.structure(state)
    assert EnvConfig(name=game.id).make().id == game.id


def test_registry_keeps_the_values_the_games_had():
    # The per-game tables the registry replaced (search.NUM_SLOTS, runner.MAX_PLIES, ...).
    expected = {"chess": (512, 64), "gardner_chess": (256, 48), "connect_four": (42, 7), "tic_tac_toe": (9, 9)}
    for env_id, (plies, slots) in expected.items():
        env = games.make(env_id)
        assert (games.max_plies(env), search.num_slots_for(env)) == (plies, slots), env_id
    nim = games.make("nim", heaps=(1, 3, 5))
    assert (games.max_plies(nim), search.num_slots_for(nim)) == (9, nim.num_actions)
    assert adjudication.material_games() == ("chess", "gardner_chess")
    assert [g.id for g in games.REGISTRY if g.compact_state] == ["chess", "gardner_chess"]
    assert list(opponents.opponents_for("tic_tac_toe")) == ["random", "perfect", "minimax2"]
    assert list(opponents.opponents_for("othello")) == ["random", "greedy"]


def test_records_name_their_uci_variant_books_and_puzzles():
    # The facts the library once read off a game's name, now fields of its record.
    assert {g.id: g.uci_variant for g in games.REGISTRY if g.uci_variant} == {"chess": "chess",
                                                                              "gardner_chess": "gardner"}
    assert games.UCI_VARIANTS == ("chess", "gardner")
    assert games.by_uci_variant("gardner") is games.get("gardner_chess")
    assert games.by_uci_variant("chess") is games.get("chess")
    with pytest.raises(ValueError, match="unknown UCI variant 'gardner_chess'; variants: chess, gardner"):
        games.by_uci_variant("gardner_chess")  # the library's name is not the protocol's
    assert {g.id: (g.board.board_size, g.board.reference_engine, g.board.pgn) for g in games.REGISTRY if g.board} == {
        "chess": (8, "stockfish", True), "gardner_chess": (5, "fairy_stockfish", False)}
    assert [g.id for g in games.REGISTRY if g.opening_book] == ["chess"]
    assert [g.id for g in games.REGISTRY if g.eco_openings] == ["chess"]
    assert games.get("chess").puzzle_start_overrides == ("env.max_pieces=32",)
    assert {g.id: g.puzzle_sets for g in games.REGISTRY if g.puzzle_sets} == {
        "chess": ("lichess",), "gardner_chess": ("mate_in_1", "mate_in_2", "mate_in_3", "only_move")}
    assert [g.id for g in games.REGISTRY if not g.from_pgx] == ["nim"]
    # Every game with boards has its data files' format under the same name.
    assert set(data.board_format(game_id).game for game_id in games.BOARD_IDS) == set(games.BOARD_IDS)
    with pytest.raises(ValueError, match="unknown game 'gardner'; games with data files: chess, gardner_chess"):
        data.board_format("gardner")
    with pytest.raises(ValueError, match="uci_variant needs host-side boards"):
        dataclasses.replace(games.get("connect_four"), uci_variant="connect4")
    with pytest.raises(ValueError, match="puzzle_sets and load_puzzles go together"):
        dataclasses.replace(games.get("connect_four"), puzzle_sets=("mates",))


def test_config_options_belong_to_their_games():
    with pytest.raises(ValueError, match="env.max_pieces is not an option of 'othello'"):
        EnvConfig(name="othello", max_pieces=32)
    with pytest.raises(ValueError, match=r"env.max_pieces must be in \[16, 64\]"):
        EnvConfig(name="chess", max_pieces=8)
    with pytest.raises(ValueError, match="env.nim_heaps is not an option of 'chess'"):
        EnvConfig(name="chess", nim_heaps=(2, 2))
    assert EnvConfig(name="nim", nim_heaps=(2, 2)).make().initial_heaps == (2, 2)
    assert EnvConfig(name="chess", max_pieces=32).make().max_pieces == 32


@pytest.mark.slow
def test_made_envs_step_as_pgx_in_one_program_outside_jit():
    """``games.make``'s env is one instance per game and options whose ``init``/``step`` run
    as one compiled program each when called outside ``jax.jit`` (pgx's methods compile
    every primitive on its own there), with pgx's states."""
    env = games.make("connect_four")
    assert games.make("connect_four") is env and games.make("nim", heaps=(1, 2)) is games.make("nim", heaps=(1, 2))
    assert games.make("nim", heaps=[1, 2]).initial_heaps == (1, 2)  # an unhashable option: an env of its own
    raw = games.get("connect_four").make()
    batch = 7  # a batch no other test steps, so no primitive is compiled for it yet
    keys = jax.random.split(jax.random.PRNGKey(5), batch)
    actions = jnp.arange(batch, dtype=jnp.int32)
    raw_states, states = jax.vmap(raw.init)(keys), jax.vmap(env.init)(keys)
    with counted_compiles() as raw_compiles:
        raw_next = jax.vmap(raw.step)(raw_states, actions)
    with counted_compiles() as compiles:
        nxt = jax.vmap(env.step)(states, actions)
    assert len(compiles) <= 1 < len(raw_compiles), (len(compiles), len(raw_compiles))
    for ours, theirs in zip(jax.tree.leaves((states, nxt)), jax.tree.leaves((raw_states, raw_next))):
        np.testing.assert_array_equal(ours, theirs)
    single = env.step(env.init(keys[0]), 3)  # a single game and a Python int action, as with pgx
    for ours, theirs in zip(jax.tree.leaves(single), jax.tree.leaves(raw.step(raw.init(keys[0]), 3))):
        np.testing.assert_array_equal(ours, theirs)


# ------------------------------------------------------------------ Othello from the rules

_DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def _flips(board, square, colour):
    """Squares flipped by ``colour`` (1 Black, −1 White) placing on ``square`` (row-major 8x8)."""
    if board[square]:
        return []
    row, col = divmod(square, 8)
    flipped = []
    for dr, dc in _DIRECTIONS:
        r, c, line = row + dr, col + dc, []
        while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == -colour:
            line.append(r * 8 + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == colour:
            flipped += line
    return flipped


def _start_board():
    board = [0] * 64
    board[27] = board[36] = -1  # d4, e5 White
    board[28] = board[35] = 1  # e4, d5 Black
    return board


def _random_positions(count, seed):
    """(pgx state, Black/White board, colour to move) along random legal games, played in
    pgx and in the rules above side by side (their legal moves must agree)."""
    env = games.make("othello")
    step = jax.jit(env.step)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        state, board, colour = env.init(jax.random.PRNGKey(len(out))), _start_board(), 1
        while not bool(state.terminated) and len(out) < count:
            legal = [sq for sq in range(64) if _flips(board, sq, colour)]
            np.testing.assert_array_equal(np.flatnonzero(np.asarray(state.legal_action_mask)),
                                          legal or [othello.PASS])
            out.append((state, list(board), colour))
            action = rng.choice(legal) if legal else othello.PASS
            if legal:
                for sq in _flips(board, action, colour) + [action]:
                    board[sq] = colour
            state, colour = step(state, action), -colour
    return out


def test_othello_features_are_black_then_white_whoever_moves():
    positions = _random_positions(120, seed=1)
    assert {colour for _, _, colour in positions} == {1, -1}
    phi = jax.jit(othello.features)
    for state, board, _ in positions:
        expected = np.concatenate([np.asarray(board) == 1, np.asarray(board) == -1]).astype(np.float32)
        np.testing.assert_array_equal(phi(state), expected)


def test_othello_start_features_by_hand():
    env = games.make("othello")
    state = env.init(jax.random.PRNGKey(0))
    phi = np.asarray(othello.features(state))
    assert phi.shape == (128,) and np.flatnonzero(phi).tolist() == [28, 35, 64 + 27, 64 + 36]
    after = env.step(state, 19)  # Black d3 flips d4: Black d3 d4 e4 d5, White e5 (White to move)
    assert np.flatnonzero(np.asarray(othello.features(after))).tolist() == [19, 27, 28, 35, 64 + 36]


def test_othello_greedy_plays_a_move_with_the_most_discs():
    env = games.make("othello")
    positions = [p for p in _random_positions(60, seed=2) if not bool(p[0].legal_action_mask[othello.PASS])]
    states = jax.tree.map(lambda *xs: jnp.stack(xs), *[s for s, _, _ in positions])
    policy = jax.jit(othello.greedy_policy(env))
    for seed in range(3):
        actions = np.asarray(policy(None, jax.random.PRNGKey(seed), states))
        for action, (_, board, colour) in zip(actions, positions):
            counts = {sq: len(_flips(board, sq, colour)) for sq in range(64) if _flips(board, sq, colour)}
            assert counts[int(action)] == max(counts.values())


def test_othello_games_end_within_its_ply_cap():
    env = games.make("othello")

    def length(key):
        def body(carry):
            state, key, plies = carry
            key, sub = jax.random.split(key)
            action = jax.random.categorical(sub, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
            return env.step(state, action), key, plies + 1

        state, _, plies = jax.lax.while_loop(lambda c: ~c[0].terminated, body, (env.init(key), key, 0))
        return plies

    plies = np.asarray(jax.jit(jax.vmap(length))(jax.random.split(jax.random.PRNGKey(0), 256)))
    assert plies.max() <= othello.MAX_PLIES and plies.min() >= 9  # the shortest possible game is 9 plies
