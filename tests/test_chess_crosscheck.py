"""Acceptance cross-check of `azdb_jax.envs.chess` against python-chess.

Every position is compared on: the legal move set (through the UCI mapping), the FEN
(state -> FEN equals python-chess's ``board.fen()``; FEN-loaded positions also FEN ->
state -> FEN), the game-end decision (terminated iff checkmate, stalemate, half-move
clock >= 100, threefold repetition or insufficient material, or pgx's documented
512-ply cap) and the rewards (side to move -1 / other +1 on mate, else 0).

Positions: random playouts of our env from the start (jitted, vmapped, uniform legal
moves; replayed move by move in python-chess so repetition and the fifty-move rule
are judged with history), the STS suite, the Lichess puzzles (start positions and every
position along their solution lines), and the paper's 68 positions (and every move
from the 6 positions with more than 16 pieces a side, with ``max_pieces=32``).
"""

import collections
import csv

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax.envs.chess import MAX_TERMINATION_STEPS, Chess, GameState, State
from azdb_jax.envs.chess_interop import (
    action_to_uci,
    legal_uci_moves,
    state_to_fen,
    states_from_boards,
    states_from_fens,
    uci_to_action,
)

NUM_GAMES = 64  # random playouts with the default move generator
NUM_GAMES_EXTENDED = 16  # the same with Chess(max_pieces=32)
END_REASONS = ("checkmate", "stalemate", "fifty_moves", "threefold", "insufficient_material")


# --------------------------------------------------------------------------- comparison


def end_reasons(board: chess.Board) -> set[str]:
    """Which of the rules that end a pgx game hold in python-chess (with history)."""
    flags = {
        "checkmate": board.is_checkmate(),
        "stalemate": board.is_stalemate(),
        "fifty_moves": board.halfmove_clock >= 100,
        "threefold": board.is_repetition(3),
        "insufficient_material": board.is_insufficient_material(),
    }
    return {name for name, flag in flags.items() if flag}


def compare(state: State, board: chess.Board, counts: collections.Counter) -> list[str]:
    """Mismatch categories between a single state and python-chess; tallies end reasons."""
    problems = []
    if sorted(legal_uci_moves(state)) != sorted(move.uci() for move in board.legal_moves):
        problems.append("legal_moves")
    if state_to_fen(state) != board.fen():
        problems.append("fen")
    reasons = end_reasons(board)
    capped = int(state._x.step_count) >= MAX_TERMINATION_STEPS
    if bool(state.terminated) != (bool(reasons) or capped):
        problems.append("terminated")
    expected = np.zeros(2, np.float32)
    if "checkmate" in reasons:
        expected[:] = 1.0
        expected[int(state.current_player)] = -1.0
    if not np.array_equal(np.asarray(state.rewards), expected):
        problems.append("rewards")
    if bool(state.terminated):
        counts.update(reasons or {"ply_cap"})
    return problems


def host_tree(tree):
    """Device pytree -> numpy pytree (one transfer, cheap host indexing afterwards)."""
    return jax.tree.map(np.asarray, tree)


def host_states(states: State) -> State:
    """Host copy of a batch of states without the fields `compare` never reads (~35 KB each)."""
    empty = jnp.zeros((states.terminated.shape[0], 0))
    x = states._x._replace(hash_history=empty, board_history=empty)
    return host_tree(states.replace(observation=empty, _x=x))


def index(tree, i):
    return jax.tree.map(lambda leaf: leaf[i], tree)


def report(mismatches: dict, total: int) -> str:
    return f"{sum(len(v) for v in mismatches.values())} mismatches in {total} positions: " + repr(
        {k: v[:5] for k, v in mismatches.items()}
    )


# --------------------------------------------------------------------------- random playouts


def random_playouts(env, num_games: int, seed: int) -> tuple[dict, np.ndarray]:
    """Host copies of every state of ``num_games`` uniformly random games, and the actions.

    One jitted ``lax.scan`` of a vmapped step over ``MAX_TERMINATION_STEPS`` plies; the
    legal masks are bit-packed to keep the record small.
    """

    def play(key):
        state = jax.vmap(env.init)(jax.random.split(key, num_games))

        def ply(state, key):
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)
            x = state._x
            record = dict(
                board=x.board, color=x.color, castling_rights=x.castling_rights,
                en_passant=x.en_passant, halfmove_count=x.halfmove_count,
                fullmove_count=x.fullmove_count, step_count=x.step_count,
                mask=jnp.packbits(x.legal_action_mask, axis=-1),
                terminated=state.terminated, rewards=state.rewards,
                current_player=state.current_player,
            )
            return jax.vmap(env.step)(state, action), (record, action)

        keys = jax.random.split(key, MAX_TERMINATION_STEPS + 1)
        _, (records, actions) = jax.lax.scan(ply, state, keys)
        return records, actions

    records, actions = jax.jit(play)(jax.random.PRNGKey(seed))
    return host_tree(records), np.asarray(actions)


def recorded_state(records: dict, t: int, g: int) -> State:
    """A single `State` (numpy leaves) from the playout record at ply t of game g."""
    r = {k: v[t, g] for k, v in records.items()}
    mask = np.unpackbits(r["mask"])[: 64 * 73].astype(bool)
    x = GameState(  # type: ignore[call-arg]
        color=r["color"], board=r["board"], castling_rights=r["castling_rights"],
        en_passant=r["en_passant"], halfmove_count=r["halfmove_count"],
        fullmove_count=r["fullmove_count"], legal_action_mask=mask, step_count=r["step_count"],
    )
    return State(  # type: ignore[call-arg]
        current_player=r["current_player"], rewards=r["rewards"], terminated=r["terminated"],
        legal_action_mask=mask, _x=x,
    )


def replay_and_compare(records: dict, actions: np.ndarray):
    """Replay every game in python-chess; returns (positions, mismatches, end counts)."""
    mismatches, counts, positions = collections.defaultdict(list), collections.Counter(), 0
    for g in range(actions.shape[1]):
        board = chess.Board()
        for t in range(actions.shape[0]):
            state = recorded_state(records, t, g)
            positions += 1
            for problem in compare(state, board, counts):
                mismatches[problem].append((g, t, board.fen()))
            if bool(state.terminated):
                counts["games"] += 1
                break
            board.push_uci(action_to_uci(int(actions[t, g]), state))
    return positions, mismatches, counts


@pytest.mark.parametrize("max_pieces,num_games,seed", [(16, NUM_GAMES, 0), (32, NUM_GAMES_EXTENDED, 1)])
@pytest.mark.slow
def test_random_playouts_match_python_chess(max_pieces, num_games, seed):
    records, actions = random_playouts(Chess(max_pieces=max_pieces), num_games, seed)
    positions, mismatches, counts = replay_and_compare(records, actions)
    assert not mismatches, report(mismatches, positions)
    assert counts.pop("games") == num_games  # every game ended (at the latest at the cap)
    print(f"max_pieces={max_pieces}: {positions} positions, game ends {dict(counts)}")
    if max_pieces == 16:
        # Each end rule actually occurred, so the comparison above could have failed on it.
        assert set(END_REASONS) <= set(counts), dict(counts)
        assert positions >= 5000


# --------------------------------------------------------------------------- FEN-loaded positions


def load_fen_sets(data_dir) -> dict[str, list[chess.Board]]:
    """STS (EPD), Lichess puzzle start positions (before Moves[0]) and the paper's 68."""
    with open(data_dir / "sts" / "STS1-STS15_LAN_v6.epd") as f:
        sts = [chess.Board.from_epd(line)[0] for line in f if line.strip()]
    with open(data_dir / "puzzles" / "lichess_puzzles_kagi_1000_random.csv", newline="") as f:
        lichess = [chess.Board(row["FEN"]) for row in csv.DictReader(f)]
    with open(data_dir / "puzzles" / "paper_penrose_challenge.csv", newline="") as f:
        paper = [chess.Board(row["fen"]) for row in csv.DictReader(f)]
    assert (len(sts), len(lichess), len(paper)) == (1188, 1000, 68)
    return {"sts+lichess": sts + lichess, "paper": paper}


def test_fen_positions_match_python_chess(data_dir):
    total, mismatches, counts = 0, collections.defaultdict(list), collections.Counter()
    for name, boards in load_fen_sets(data_dir).items():
        states = host_states(states_from_boards(boards))
        fens = []
        for i, board in enumerate(boards):
            state = index(states, i)
            for problem in compare(state, board, counts):
                mismatches[problem].append((name, board.fen()))
            fens.append(state_to_fen(state))
        again = host_states(states_from_fens(fens))  # FEN -> state -> FEN
        for i, fen in enumerate(fens):
            if state_to_fen(index(again, i)) != fen:
                mismatches["fen_round_trip"].append((name, fen))
            if not np.array_equal(again._x.legal_action_mask[i], states._x.legal_action_mask[i]):
                mismatches["round_trip_moves"].append((name, fen))
        total += len(boards)
    assert not mismatches, report(mismatches, total)


@pytest.mark.slow
def test_lichess_solution_lines_match_python_chess(data_dir):
    """Every position along the 1,000 puzzle lines, stepped by our env in one batch."""
    with open(data_dir / "puzzles" / "lichess_puzzles_kagi_1000_random.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    boards = [chess.Board(row["FEN"]) for row in rows]
    lines = [row["Moves"].split() for row in rows]
    env = Chess()
    step = jax.jit(jax.vmap(env.step))
    states = states_from_boards(boards, max_pieces=16)
    mismatches, counts, positions = collections.defaultdict(list), collections.Counter(), 0
    for ply in range(max(len(line) for line in lines)):
        host = host_states(states)
        actions = np.zeros(len(rows), np.int32)
        for i, line in enumerate(lines):
            if ply < len(line):
                actions[i] = uci_to_action(line[ply], index(host, i))
        states = step(states, jnp.asarray(actions))
        host = host_states(states)
        for i, line in enumerate(lines):
            if ply < len(line):
                boards[i].push_uci(line[ply])
                positions += 1
                for problem in compare(index(host, i), boards[i], counts):
                    mismatches[problem].append((rows[i]["PuzzleId"], ply, boards[i].fen()))
    print(f"{positions} puzzle-line positions, game ends {dict(counts)}")
    assert positions == sum(len(line) for line in lines)
    assert counts["checkmate"] > 100  # mating lines end in mate: rewards were checked
    assert not mismatches, report(mismatches, positions)


def test_moves_from_crowded_paper_positions_match_python_chess(data_dir):
    """Every legal move from the paper's positions with > 16 pieces a side, max_pieces=32."""
    boards = [b for b in load_fen_sets(data_dir)["paper"] if max(map(chess.popcount, b.occupied_co)) > 16]
    assert len(boards) == 6
    parents, children = [], []
    for board in boards:
        for move in board.legal_moves:
            parents.append(board)
            child = board.copy()
            child.push(move)
            children.append((child, move.uci()))
    states = states_from_boards(parents, max_pieces=32)
    host = host_states(states)
    actions = np.array([uci_to_action(uci, index(host, i)) for i, (_, uci) in enumerate(children)], np.int32)
    after = host_states(jax.jit(jax.vmap(Chess(max_pieces=32).step))(states, jnp.asarray(actions)))
    mismatches, counts = collections.defaultdict(list), collections.Counter()
    for i, (child, _) in enumerate(children):
        for problem in compare(index(after, i), child, counts):
            mismatches[problem].append(child.fen())
    assert len(children) > 200
    assert not mismatches, report(mismatches, len(children))
