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

The positions are searched by the puzzle runners' ``solvers.TeamSolver`` (players'
columns only), so a position's moves do not depend on the batch it came in; each player
searches as the team says (by default as in self-play, with its λ_i and the intrinsic
reward of its ψ — the paper's Fig. 3 teams — or extrinsic-only, the ablation).
``evaluate`` reads the openings from a file or folder and writes the report
(``experiments/opening_diversity.py``).
"""

import pathlib
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import data, games, planning
from azdb_jax.agent import Agent
from azdb_jax.data import Opening
from azdb_jax.evaluation import puzzles, reports, solvers
from azdb_jax.evaluation.team import label_rows

Array = jax.Array

ECO_LETTERS = ("A", "B", "C", "D", "E")
EXCLUDED_ECO = ("A00",)  # the irregular openings
ECO_IDS = tuple(game.id for game in games.REGISTRY if game.eco_openings is not None)  # games with ECO openings


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


def team_opening_moves(team: Agent, boards: Sequence[chess.Board], *, move: str = "lcb", batch_size: int = 64,
                       seed: int = 0, progress: bool = False) -> List[List[str]]:
    """Every player's move (UCI) in each position: ``[N][n]``.

    The positions are searched by ``solvers.TeamSolver`` (one batched search of all
    latents, no root noise, a position's randomness keyed by ``seed`` and its FEN; the
    32-piece move generator where a position needs it).

    Args:
      team: a chess team.
      boards: the positions (none may be over).
      move: ``"lcb"`` (default, the paper's choice) or ``"visits"``.
      batch_size: positions per search call (one compiled program serves every batch).
      seed: base of the search randomness.
      progress: show a tqdm bar.
    """
    env_id = getattr(team.env, "id", team.env)
    if env_id not in ECO_IDS:
        raise ValueError(f"opening diversity needs a {' or '.join(ECO_IDS)} team, got env '{env_id}'")
    if move not in planning.MOVES:
        raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
    boards = list(boards)
    for board in boards:
        if board.is_game_over():
            raise ValueError(f"position {board.fen()} is already over: no move to choose")
    if not boards:
        return []
    solver = solvers.TeamSolver(team, rules=(), move=move, homogeneous_copies=0, batch_size=batch_size, seed=seed)
    out = puzzles.ask(solver, boards, progress=progress, desc="openings")
    return [[out.moves[f"player_{j}"][b] for j in range(team.num_players)] for b in range(len(boards))]


def opening_diversity(team: Agent, openings: Sequence[Opening], *, move: str = "lcb", batch_size: int = 64,
                      seed: int = 0, progress: bool = False) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The opening-diversity report of ``team`` over ``openings``: ``(summary, rows)``.

    ``rows`` hold ``eco``, ``name``, ``fen``, ``player_<j>`` (UCI), ``distinct`` and
    ``search`` (the team's search mode); ``summary`` is ``summarize``'s plus the move rule
    and how the team searched (``Agent.search_description``: ``search`` is
    ``"extrinsic_only"`` for the ablation). Write both with ``reports.write_report``.
    """
    openings = list(openings)
    if not openings:
        raise ValueError("no openings to evaluate")
    boards = [opening.board() for opening in openings]
    moves = team_opening_moves(team, boards, move=move, batch_size=batch_size, seed=seed, progress=progress)
    # Distinct moves are counted on UCI strings: the same move has the same text for every player.
    _, codes = np.unique(np.array(moves, dtype=str), return_inverse=True)
    codes = codes.reshape(len(moves), team.num_players)
    counts = np.asarray(distinct_counts(codes))
    agreement = np.asarray(agreement_with_first(codes))
    summary = summarize([o.eco for o in openings], counts, agreement, team.num_players)
    summary["move"] = move
    summary["team"] = team.name
    summary["num_simulations"] = team.search_config.num_simulations
    summary.update(team.search_description())
    rows = []
    for opening, row, count in zip(openings, moves, counts):
        record: Dict[str, Any] = {"eco": opening.eco, "name": opening.name, "fen": opening.fen}
        record.update({f"player_{j}": uci for j, uci in enumerate(row)})
        record["distinct"] = int(count)
        rows.append(record)
    return summary, label_rows(rows, team)


def evaluate(team: Agent, openings_path, out, *, move: str = "lcb", limit: Optional[int] = None,
             batch_size: int = 64, seed: int = 0, progress: bool = True) -> Tuple[pathlib.Path, pathlib.Path]:
    """Runs the measure on ``team`` over the openings at ``openings_path``; writes ``out``.json/.csv.

    Args:
      team: a chess team.
      openings_path: ECO openings, a ``.tsv`` file or a folder of them (``data.load_openings``);
        the ``EXCLUDED_ECO`` lines are left out.
      out: the report's prefix.
      move, batch_size, seed, progress: as in ``opening_diversity``.
      limit: only the first ``limit`` openings (>= 1; default all).

    Returns:
      The paths of the JSON and CSV files written.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    positions = data.load_openings(openings_path, exclude=EXCLUDED_ECO)
    positions = list(positions)[:limit] if limit else list(positions)
    start = time.perf_counter()
    summary, rows = opening_diversity(team, positions, move=move, batch_size=batch_size, seed=seed,
                                      progress=progress)
    summary.update(openings=str(openings_path), excluded_eco=list(EXCLUDED_ECO), seed=seed,
                   seconds=round(time.perf_counter() - start, 1))
    return reports.write_report(out, summary, rows)


__all__ = [
    "ECO_IDS", "ECO_LETTERS", "EXCLUDED_ECO", "player_moves", "distinct_counts", "agreement_with_first", "summarize",
    "team_opening_moves", "opening_diversity", "evaluate",
]
