"""Game records of a match: PGN for chess, a plain text record for any game.

Chess matches are written as PGN (``match_pgn``; python-chess reads every game back,
the Result tag is python-chess's verdict on the final position); other games as a
plain text record, one game per line (``match_record``). ``write_games`` picks the
format from the match's game.
"""

import datetime
import warnings
from typing import Optional, Sequence

from azdb_jax.envs import chess_pgn
from azdb_jax.evaluation import matches
from azdb_jax.files import write_atomic


def _pgn_result(a_result: float, finished: bool, a_white: bool) -> str:
    if not finished:
        return "*"
    if a_result == 0:
        return "1/2-1/2"
    return "1-0" if (a_result > 0) == a_white else "0-1"


def match_pgn(match: matches.MatchResult, start_fens: Sequence[Optional[str]], *, event: str = "azdb_jax match",
              site: str = "azdb_jax", date: Optional[str] = None) -> str:
    """PGN of every chess game of ``match`` (games separated by blank lines).

    ``start_fens[i]`` is start ``i``'s FEN (None: the standard start; then no FEN/SetUp
    tags). Tags: Event, Site, Date, Round (the seed), White/Black (the agents' names),
    Result (python-chess's verdict on the final position under the env's rules, via
    ``chess_pgn.game_result``; ``*`` for an unfinished game), FEN + SetUp for
    non-standard starts, Termination (e.g. ``checkmate``, ``threefold repetition``,
    ``unterminated``) and StartIndex. A result that disagrees with the arena's is
    written as python-chess sees it, with a warning.
    """
    if match.env_id not in matches.CHESS_IDS:
        raise ValueError(f"PGN is for chess matches; this match is '{match.env_id}' (use match_record)")
    date = date or datetime.date.today().strftime("%Y.%m.%d")
    games = []
    for g in range(match.num_games):
        start = start_fens[int(match.start_index[g])]
        a_white = match.a_colour[g] == "white"
        white, black = match.names if a_white else match.names[::-1]
        moves = match.actions[g, :match.length[g]]
        board = chess_pgn.replay_actions(moves, start)
        reason = chess_pgn.termination_reason(board, num_plies=len(board.move_stack))
        game = chess_pgn.game_to_pgn(moves, start=start, white=white, black=black, event=event, headers={
            "Site": site, "Date": date, "Round": str(int(match.seed[g])),
            "Termination": "unterminated" if reason is None else reason.replace("_", " "),
            "StartIndex": str(int(match.start_index[g]))})
        expected = _pgn_result(match.result[g], bool(match.finished[g]), a_white)
        if game.headers["Result"] != expected:
            warnings.warn(f"game {g}: the arena scored {expected} but the final position reads "
                          f"{game.headers['Result']}; writing the latter")
        games.append(str(game))
    return "\n\n".join(games) + "\n"


def match_record(match: matches.MatchResult) -> str:
    """Plain text record of any game: a header, then one tab-separated line per game.

    Columns: game, start index, seed, first mover, second mover, result (first mover's
    view: 1-0, 0-1, 1/2-1/2, or * when unfinished), plies, moves (pgx action ids).
    """
    lines = [f"# {match.env_id} match: A = {match.names[0]}, B = {match.names[1]}",
             "# game\tstart\tseed\tfirst\tsecond\tresult\tplies\tmoves"]
    for g in range(match.num_games):
        first, second = match.names if match.a_first[g] else match.names[::-1]
        result = _pgn_result(match.result[g], bool(match.finished[g]), bool(match.a_first[g]))
        moves = " ".join(str(int(a)) for a in match.actions[g, :match.length[g]])
        lines.append(f"{g}\t{int(match.start_index[g])}\t{int(match.seed[g])}\t{first}\t{second}\t{result}\t"
                     f"{int(match.length[g])}\t{moves}")
    return "\n".join(lines) + "\n"


def write_games(path, match: matches.MatchResult, start_fens: Optional[Sequence[Optional[str]]] = None):
    """Writes ``match_pgn`` (chess) or ``match_record`` (other games) to ``path`` atomically."""
    if match.env_id in matches.CHESS_IDS:
        fens = start_fens if start_fens is not None else [None] * (int(match.start_index.max()) + 1)
        return write_atomic(path, match_pgn(match, fens))
    return write_atomic(path, match_record(match))


__all__ = ["match_pgn", "match_record", "write_games"]
