r"""Cross-check of our Gardner chess env against Fairy-Stockfish, position by position.

Plays games from the start position with ``azdb_jax.games.make("gardner_chess")`` (random
playouts, and lines played by Fairy-Stockfish at a small node budget with some random
moves mixed in) and, at every position, asks Fairy-Stockfish (``UCI_Variant gardner``,
``position fen <start> moves ...``) for:

- the legal moves (``go perft 1``), compared with ours through the UCI mapping; every
  engine move also goes UCI -> action id -> UCI;
- the FEN it holds (``d``), compared with ``gardner_interop.state_to_fen`` (board, side
  to move, clocks);
- whether the side to move is in check (``d``'s Checkers line).

Game ends are judged by a reference written here from the engine's view, independently
of pgx: no legal move and in check is checkmate (the mover loses), no legal move
otherwise stalemate; then the draw rules our env adds to the engine's (it plays on,
as UCI engines do): the fifty-move rule (engine's half-move clock >= 100), threefold
repetition (the engine's board + side to move seen three times in the game),
insufficient material (K v K, K + minor v K, kings and bishops on one colour) and
the 256-ply cap. A position where our env ends the game by one of those draw rules
while the engine still lists moves is an *explained* difference (counted by rule);
anything else is a mismatch and is listed with its reason.

Finally every position is rebuilt from the engine's FEN (``states_from_fens``, in
batches) and compared with the stepped state: legal moves and Zobrist hash.
``crosscheck`` returns the report; ``experiments/gardner_crosscheck.py`` is its command line.
"""

import collections
import time
from typing import Any, Dict, List, Optional

import chess.engine
import jax
import numpy as np
import pgx.core

from azdb_jax import games
from azdb_jax.envs import gardner_interop
from azdb_jax.evaluation import fairy_stockfish

DRAW_RULES = ("fifty_moves", "threefold_repetition", "insufficient_material", "move_cap")


def insufficient_material(board_fen: str) -> bool:
    """The draw rule of our env (OpenSpiel's), judged from a FEN's piece placement.

    K v K; K + one knight or bishop v K; only kings and bishops, every bishop on one
    square colour.
    """
    pieces = []
    for row, text in enumerate(board_fen.split("/")):
        file = 0
        for char in text:
            if char.isdigit():
                file += int(char)
            else:
                pieces.append((char, file, 4 - row))
                file += 1
    others = [(c, f, r) for c, f, r in pieces if c.lower() != "k"]
    if not others:
        return True
    if len(others) == 1 and others[0][0].lower() in "nb":
        return True
    if all(c.lower() == "b" for c, _, _ in others):
        return len({(f + r) % 2 for _, f, r in others}) == 1
    return False


def reference_end(engine_moves: List[str], checkers: List[str], fen: str, seen: int, ply: int) -> Optional[str]:
    """How the game stands by the reference rules (None: not over), first rule that applies."""
    if not engine_moves:
        return "checkmate" if checkers else "stalemate"
    if int(fen.split()[4]) >= 100:
        return "fifty_moves"
    if seen >= 3:
        return "threefold_repetition"
    if insufficient_material(fen.split()[0]):
        return "insufficient_material"
    if ply >= gardner_interop.MAX_TERMINATION_STEPS:
        return "move_cap"
    return None


class _Checker:
    """Plays and checks games; collects counts and mismatches."""

    def __init__(self, engine: fairy_stockfish.FairyStockfish, rng: np.random.Generator, max_mismatches: int,
                 env: Optional[pgx.core.Env] = None):
        self.engine = engine
        self.rng = rng
        self.env = games.make("gardner_chess") if env is None else env
        self.step = jax.jit(self.env.step)
        self.init = jax.jit(self.env.init)
        self.counts: Dict[str, int] = collections.Counter()
        self.mismatches: List[Dict[str, Any]] = []
        self.max_mismatches = max_mismatches
        self.fens: List[str] = []  # every engine FEN, for the FEN -> state pass
        self.stepped: List[tuple] = []  # (legal actions, hash) of the stepped state, same order

    def mismatch(self, kind: str, fen: str, moves: List[str], **detail) -> None:
        self.counts[f"mismatch_{kind}"] += 1
        if len(self.mismatches) < self.max_mismatches:
            self.mismatches.append(dict(kind=kind, fen=fen, moves=" ".join(moves), **detail))

    def check_position(self, state, moves: List[str], seen: Dict[str, int], ply: int) -> Optional[str]:
        """Compares one position; returns the reference end reason (None: game goes on)."""
        engine = self.engine
        start = self.start
        engine_moves = engine.legal_moves(start, moves)
        shown = engine.engine.display()
        fen, checkers = shown["Fen"], shown["Checkers"].split()
        ours_fen = gardner_interop.state_to_fen(state)
        self.counts["positions"] += 1
        if ours_fen != fen:
            self.mismatch("fen", fen, moves, ours=ours_fen)
        ours = gardner_interop.legal_uci_moves(state)
        if set(ours) != set(engine_moves) or len(ours) != len(engine_moves):
            self.mismatch("legal_moves", fen, moves, only_ours=sorted(set(ours) - set(engine_moves)),
                          only_engine=sorted(set(engine_moves) - set(ours)))
        for uci in engine_moves:
            self.counts["moves_checked"] += 1
            self.counts["promotions_checked"] += len(uci) == 5
            try:
                back = gardner_interop.action_to_uci(gardner_interop.uci_to_action(uci, state), state)
            except ValueError as error:
                back = str(error)
            if back != uci:
                self.mismatch("uci_round_trip", fen, moves, move=uci, back=back)
        if gardner_interop.is_in_check(state) != bool(checkers):
            self.mismatch("check", fen, moves, engine_checkers=checkers)
        self.counts["in_check"] += bool(checkers)
        key = " ".join(fen.split()[:2])
        seen[key] = seen.get(key, 0) + 1
        reason = reference_end(engine_moves, checkers, fen, seen[key], ply)
        terminated = bool(state.terminated)
        if terminated != (reason is not None):
            self.mismatch("game_end", fen, moves, reference=reason, ours_terminated=terminated)
        rewards = np.asarray(state.rewards)
        mover = int(state.current_player)
        expected = np.zeros(2)
        if reason == "checkmate":
            expected[mover], expected[1 - mover] = -1.0, 1.0
        if not np.array_equal(rewards, expected):
            self.mismatch("rewards", fen, moves, reference=reason, ours=rewards.tolist(), expected=expected.tolist())
        if reason is not None:
            self.counts[f"end_{reason}"] += 1
            if reason in DRAW_RULES:
                # Explained: our env ends the game by rule, the engine (a UCI engine) plays on.
                self.counts[f"explained_{reason}_engine_plays_on"] += 1
        self.fens.append(fen)
        position_hash = tuple(np.asarray(state._zobrist_hash).tolist())
        self.stepped.append((tuple(gardner_interop.legal_actions(state)), position_hash))
        return reason

    def play_game(self, game: int, engine_line: bool, budget: int, engine_nodes: int, random_rate: float,
                  start: Optional[str] = None) -> None:
        if start is None:
            state = self.init(jax.random.PRNGKey(game))
        else:
            state = gardner_interop.state_from_fen(start)
        self.start = start or gardner_interop.STARTING_FEN
        moves: List[str] = []
        seen: Dict[str, int] = {}
        if engine_line:
            self.engine.engine.new_game()
        for ply in range(10_000):
            if self.counts["positions"] >= budget:
                return
            reason = self.check_position(state, moves, seen, ply)
            if reason is not None or bool(state.terminated):
                return
            legal = gardner_interop.legal_uci_moves(state)
            if engine_line and self.rng.random() >= random_rate:
                move = self.engine.analyse(self.start, moves,
                                           limit=chess.engine.Limit(nodes=engine_nodes), new_game=False).bestmove
                if move not in legal:
                    self.mismatch("engine_move", self.fens[-1], moves, move=move)
                    return
            else:
                move = legal[int(self.rng.integers(len(legal)))]
            self.counts["underpromotions_played"] += len(move) == 5 and move[4] != "q"
            self.counts["promotions_played"] += len(move) == 5
            state = self.step(state, gardner_interop.uci_to_action(move, state))
            moves.append(move)

    def check_fen_builds(self, batch: int = 256) -> None:
        """Every engine FEN -> state: the same legal moves and hash as the stepped state."""
        for begin in range(0, len(self.fens), batch):
            fens = self.fens[begin:begin + batch]
            states = jax.device_get(gardner_interop.states_from_fens(fens))
            for k, fen in enumerate(fens):
                built = jax.tree.map(lambda x: x[k], states)  # pylint: disable=cell-var-from-loop
                legal, position_hash = self.stepped[begin + k]
                self.counts["fen_builds_checked"] += 1
                if tuple(gardner_interop.legal_actions(built)) != legal:
                    self.mismatch("fen_build_legal_moves", fen, [])
                if tuple(np.asarray(built._zobrist_hash).tolist()) != position_hash:
                    self.mismatch("fen_build_hash", fen, [], built=np.asarray(built._zobrist_hash).tolist(),
                                  stepped=list(position_hash))
                if gardner_interop.state_to_fen(built) != fen:
                    self.mismatch("fen_round_trip", fen, [], ours=gardner_interop.state_to_fen(built))


# Material of the endgame starts (with the kings): long random games, so that the
# fifty-move rule and repetitions come up (random games from the start rarely last).
ENDGAME_MATERIAL = ("R/r", "Q/r", "R/n", "RP/r", "Q/q", "N/b", "RN/r", "P/p", "BB/r", "Q/")


def random_endgame_fen(rng: np.random.Generator) -> str:
    """A random legal-looking endgame (kings + ``ENDGAME_MATERIAL``), half-move clock in [60, 99)."""
    white, black = ENDGAME_MATERIAL[int(rng.integers(len(ENDGAME_MATERIAL)))].split("/")
    while True:
        board = np.zeros((5, 5), np.int32)
        squares = rng.permutation(25)
        pieces = [("k", 1), ("k", -1)] + [(p, 1) for p in white.lower()] + [(p, -1) for p in black]
        ok = True
        for (letter, sign), square in zip(pieces, squares):
            file, rank = divmod(int(square), 5)
            ok &= not (letter == "p" and rank in (0, 4))
            board[file, rank] = sign * ("pnbrqk".index(letter) + 1)
        fen = gardner_interop.fen_of(board, bool(rng.random() < 0.5), int(rng.integers(60, 99)),
                                     int(rng.integers(1, 60)))
        if not ok:
            continue
        try:
            gardner_interop.state_from_fen(fen)  # rejects a side not to move in check
        except ValueError:
            continue
        return fen


def crosscheck(engine: fairy_stockfish.FairyStockfish, *, positions: int, seed: int = 0,
               engine_games: float = 0.3, endgame_games: float = 0.15, engine_nodes: int = 2000,
               random_rate: float = 0.2, max_mismatches: int = 50, env: Optional[pgx.core.Env] = None
               ) -> Dict[str, Any]:
    """Checks at least ``positions`` positions; returns the report (see the module docstring).

    ``engine_games`` of the games are played by the engine (``engine_nodes`` per move, a
    random move with probability ``random_rate``), ``endgame_games`` start from random
    endgames (``random_endgame_fen``) with random moves, the others start from the start
    position with random moves. ``env`` (default ``games.make("gardner_chess")``) is the
    env whose games are checked, e.g. ``pgx.make("gardner_chess")`` to see pgx's traps.
    """
    if not isinstance(positions, int) or positions < 1:
        raise ValueError(f"positions must be an int >= 1, got {positions!r}")
    rng = np.random.default_rng(seed)
    checker = _Checker(engine, rng, max_mismatches, env)
    began = time.time()
    games = collections.Counter()
    game = 0
    while checker.counts["positions"] < positions:
        kind = rng.random()
        engine_line, endgame = kind < engine_games, engine_games <= kind < engine_games + endgame_games
        games["engine" if engine_line else "endgame" if endgame else "random"] += 1
        start = random_endgame_fen(rng) if endgame else None
        checker.play_game(seed * 1_000_003 + game, engine_line, positions, engine_nodes, random_rate, start)
        game += 1
    checker.check_fen_builds()
    counts = dict(sorted(checker.counts.items()))
    unexplained = sum(v for k, v in counts.items() if k.startswith("mismatch_"))
    return dict(
        env=type(checker.env).__module__ + "." + type(checker.env).__name__,
        engine=engine.name, variant=engine.variant, seed=seed, positions=counts.get("positions", 0),
        games=dict(games), engine_nodes=engine_nodes, random_rate=random_rate,
        unexplained_mismatches=unexplained, counts=counts, mismatches=checker.mismatches,
        explained={rule: counts.get(f"explained_{rule}_engine_plays_on", 0) for rule in DRAW_RULES},
        seconds=round(time.time() - began, 1),
        note=("explained: positions where our env ends the game by a draw rule (fifty moves, threefold "
              "repetition, insufficient material, 256-ply cap) while the engine, which adjudicates nothing, "
              "still lists moves; every other difference is a mismatch"),
    )


__all__ = ["DRAW_RULES", "ENDGAME_MATERIAL", "crosscheck", "insufficient_material", "random_endgame_fen",
           "reference_end"]
