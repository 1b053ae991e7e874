"""Opening diversity: how many different moves the team's players choose in known openings.

SPEC §2 ("Opening diversity", paper §4.3): over the ECO openings (lichess
chess-openings, excluding the irregular ``A00`` lines), every latent of the team
searches the position reached by the opening's moves and picks a move — its LCB move
(``argmax_{a visited} Q − U``, the choice the paper reports) or its most-visited move.
The measure is the number of *distinct* moves across the ``n`` players per position,
averaged over positions: 1 when the team plays as one, ``n`` when every player differs.

The report adds the histogram of distinct counts, the mean per ECO letter (A..E),
each player's agreement with player 0 (plain AlphaZero, λ_0 = 1) and one row per
opening with every player's UCI move.

All positions are searched by one jitted program: batches are padded to a fixed size
(``batch_size``) with copies of their first position, and the padding is dropped on
the host.
"""

import collections
from typing import Any, Callable, Dict, List, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from azdb_jax import envs, planning
from azdb_jax.data import Opening
from azdb_jax.envs import chess_interop
from azdb_jax.envs.chess import DEFAULT_MAX_PIECES
from azdb_jax.evaluation.team import Team

Array = jax.Array

ECO_LETTERS = ("A", "B", "C", "D", "E")


# ------------------------------------------------------------------ pure measures


def player_moves(search: planning.TeamSearch, move: str = "lcb") -> Array:
    """Each player's chosen action, ``[B, n]``: its LCB move (``"lcb"``) or most-visited move (``"visits"``)."""
    if move not in planning.MOVES:
        raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
    return search.lcb_action if move == "lcb" else search.most_visited_action


def distinct_counts(actions) -> Array:
    """Number of distinct entries in each row of ``actions`` [B, n] (ids or any integer code), [B].

    Sort each row; the count is one plus the number of neighbours that differ.
    """
    actions = jnp.sort(jnp.asarray(actions), axis=-1)
    return 1 + jnp.sum(actions[:, 1:] != actions[:, :-1], axis=-1)


def agreement_with_first(actions) -> Array:
    """Share of positions where player ``j`` plays the same move as player 0, ``[n]`` (1 for player 0)."""
    actions = jnp.asarray(actions)
    return jnp.mean((actions == actions[:, :1]).astype(jnp.float32), axis=0)


def summarize(eco_codes: Sequence[str], counts, agreement, num_players: int) -> Dict[str, Any]:
    """The report's summary from per-position distinct counts [N] and per-player agreement [n].

    Keys: ``positions``, ``num_players``, ``mean_distinct_moves``, ``histogram``
    (``{k: number of positions with k distinct moves}`` for k = 1..n),
    ``mean_distinct_by_eco_letter`` (letters without positions are left out) and
    ``agreement_with_player_0`` ([n]).
    """
    counts = np.asarray(counts)
    if counts.shape != (len(eco_codes),):
        raise ValueError(f"{len(eco_codes)} ECO codes for {counts.shape} counts")
    letters = np.array([code[:1] for code in eco_codes])
    histogram = {k: int(np.sum(counts == k)) for k in range(1, num_players + 1)}
    by_letter = {letter: float(counts[letters == letter].mean()) for letter in ECO_LETTERS
                 if np.any(letters == letter)}
    return {
        "positions": int(counts.size),
        "num_players": num_players,
        "mean_distinct_moves": float(counts.mean()) if counts.size else float("nan"),
        "histogram": histogram,
        "mean_distinct_by_eco_letter": by_letter,
        "agreement_with_player_0": [float(x) for x in np.asarray(agreement)],
    }


# ------------------------------------------------------------------ searching the openings


def chess_team_for(team: Team, boards: Sequence[chess.Board]) -> Tuple[Team, int]:
    """``(team, max_pieces)``: the team on a chess env whose move generator is exact for ``boards``.

    The team keeps its env unless a position needs more pieces than it handles
    (``chess_interop.required_max_pieces``); states must be built with ``max_pieces``.
    """
    if team.env.id != "chess":
        raise ValueError(f"opening diversity needs a chess team, got env '{team.env.id}'")
    current = getattr(team.env, "max_pieces", DEFAULT_MAX_PIECES)
    max_pieces = max(chess_interop.required_max_pieces(boards), current)
    if max_pieces != current:
        team = team.with_env(envs.make("chess", max_pieces=max_pieces))
    return team, max_pieces


def make_search_fn(team: Team, move: str = "lcb") -> Callable[[Array, Any], Array]:
    """Jitted ``(rng_key, states [B]) -> actions [B, n]``: every player's move, no root noise."""
    if move not in planning.MOVES:
        raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")

    def search(params, rng_key, states):
        out = planning.team_search(team.env, team.apply_fn, params, rng_key, states, num_players=team.num_players,
                                   lam=team.lam, config=team.search_config)
        return player_moves(out, move)

    jitted = jax.jit(search)
    return lambda rng_key, states: jitted(team.params, rng_key, states)


def team_opening_moves(team: Team, rng_key: Array, boards: Sequence[chess.Board], *, move: str = "lcb",
                       batch_size: int = 64, progress: bool = False) -> List[List[str]]:
    """Every player's move (UCI) in each position: ``[N][n]``.

    Args:
      team: a chess team.
      rng_key: consumed; batch ``k`` searches with ``fold_in(rng_key, k)``.
      boards: the positions (none may be over).
      move: ``"lcb"`` (default, the paper's choice) or ``"visits"``.
      batch_size: positions per search call; the last batch is padded to this size so
        one compiled program serves every batch.
      progress: show a tqdm bar.
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    boards = list(boards)
    for board in boards:
        if board.is_game_over():
            raise ValueError(f"position {board.fen()} is already over: no move to choose")
    if not boards:
        return []
    team, max_pieces = chess_team_for(team, boards)
    search = make_search_fn(team, move)
    moves: List[List[str]] = []
    starts = range(0, len(boards), batch_size)
    for index, start in enumerate(tqdm.tqdm(starts, desc="openings", unit="batch", disable=not progress)):
        chunk = boards[start:start + batch_size]
        padded = chunk + [chunk[0]] * (batch_size - len(chunk))
        states = chess_interop.states_from_boards(padded, max_pieces=max_pieces)
        actions = np.asarray(jax.device_get(search(jax.random.fold_in(rng_key, index), states)))
        for board, row in zip(chunk, actions):
            moves.append([chess_interop.action_to_uci(int(a), board) for a in row])
    return moves


def opening_diversity(team: Team, openings: Sequence[Opening], rng_key: Array, *, move: str = "lcb",
                      batch_size: int = 64, progress: bool = False) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The opening-diversity report of ``team`` over ``openings``: ``(summary, rows)``.

    ``rows`` hold ``eco``, ``name``, ``fen``, ``player_<j>`` (UCI) and ``distinct``;
    ``summary`` is ``summarize``'s plus the move rule. Write both with
    ``reports.write_report``.
    """
    openings = list(openings)
    if not openings:
        raise ValueError("no openings to evaluate")
    boards = [opening.board() for opening in openings]
    moves = team_opening_moves(team, rng_key, boards, move=move, batch_size=batch_size, progress=progress)
    # Distinct moves are counted on UCI strings: the same move has the same text for every player.
    _, codes = np.unique(np.array(moves, dtype=str), return_inverse=True)
    codes = codes.reshape(len(moves), team.num_players)
    counts = np.asarray(distinct_counts(codes))
    agreement = np.asarray(agreement_with_first(codes))
    summary = summarize([o.eco for o in openings], counts, agreement, team.num_players)
    summary["move"] = move
    summary["team"] = team.name
    summary["num_simulations"] = team.search_config.num_simulations
    rows = []
    for opening, row, count in zip(openings, moves, counts):
        record: Dict[str, Any] = {"eco": opening.eco, "name": opening.name, "fen": opening.fen}
        record.update({f"player_{j}": uci for j, uci in enumerate(row)})
        record["distinct"] = int(count)
        rows.append(record)
    return summary, rows


def top_moves(rows: Sequence[Dict[str, Any]], num_players: int, k: int = 5) -> Dict[str, List[Tuple[str, int]]]:
    """Most frequent first choices per player over the report's rows (for a quick look)."""
    return {f"player_{j}": collections.Counter(r[f"player_{j}"] for r in rows).most_common(k)
            for j in range(num_players)}


__all__ = [
    "ECO_LETTERS", "player_moves", "distinct_counts", "agreement_with_first", "summarize", "chess_team_for",
    "make_search_fn", "team_opening_moves", "opening_diversity", "top_moves",
]
