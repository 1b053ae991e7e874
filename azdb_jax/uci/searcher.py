"""The trained team behind the engine: an anytime team search, compiled once.

A position is searched by ``azdb_jax.anytime``: one tree per player (each with its
latent, its ``λ_i`` and the team's intrinsic reward, no noise: the team's evaluation
search, as ``evaluation.solvers.TeamSolver`` runs it), grown in chunks of simulations
for as long as the engine says, then read once for every player and every selection
rule. The engine plays the column its options ask for:

- a selection rule of Eq. 9 (``visit``, ``value``, ``lcb``, ``gap``): the team's move,
  and the player the rule chose (the player whose move and value the team's are);
- ``player``: one fixed player's move;
- ``lookup``: the player an opening-specialisation table names for the game's opening
  and the engine's colour (``azdb_jax.uci.lookup``), else the fallback rule.

Four programs are jitted once per move generator (``begin``, ``restart``, ``grow`` with
a traced chunk size, ``answers``) and compiled by ``warm_up`` before the engine says
``readyok``; the trees' arrays (``capacity`` nodes a player, from the ``Hash`` option)
are allocated once and reused by every search, the next search keeping the subtree
under the two plies played since (PUCT trees; ``reuse``). Nodes are network
evaluations: the simulations in the players' trees, summed.
"""

import dataclasses
import functools
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import anytime, games, planning
from azdb_jax.agent import Agent
from azdb_jax.envs.chess import DEFAULT_MAX_PIECES
from azdb_jax.evaluation import solver_search

RULES = tuple(planning.SELECTION_RULES)  # visit, value, lcb, gap: the order of Answers.rule_*
MAX_REUSED_PLIES = 8  # a later position this many plies past the tree's root can reuse it
PV_LENGTH = 12
MIN_CAPACITY = 256


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """The searched position as the engine reports it."""

    move: str  # UCI move ("" when the position is over)
    value: float  # the chosen player's value V for the side to move, in [-1, 1]
    player: int  # the team player whose move is played
    column: str  # team_<rule> or player_<j>
    nodes: int  # simulations in the players' trees, summed (reused ones included)
    depth: int  # mean depth of the chosen player's tree, rounded (at least 1)
    seldepth: int  # its deepest node
    pv: Sequence[str]  # the chosen player's line from its move (UCI)
    player_moves: Sequence[str]  # [n] every player's move
    player_values: Sequence[float]  # [n]
    full: bool  # a tree reached its capacity


class _Programs(NamedTuple):
    """The jitted search of one move generator."""

    begin: Any
    restart: Any
    grow: Any
    answers: Any


class TeamSearcher:
    """The anytime search of one checkpoint's team.

    Args:
      team: a chess or Gardner chess ``Agent``.
      move: the chosen player's move, ``visits`` (most visited) or ``lcb``.
      seed: the search's random key (tie-breaking noise).
      hash_mb: memory for the trees; ``capacity`` nodes per player fit in it.
      reuse: keep the subtree of a search for the next move (PUCT teams only: a Gumbel
        root's visits must follow the sequential-halving schedule of its own search).
    """

    def __init__(self, team: Agent, *, move: str = "visits", seed: int = 0, hash_mb: int = 256, reuse: bool = True):
        env_id = getattr(team.env, "id", team.env)
        if env_id not in games.BOARD_IDS:
            raise ValueError(f"the engine plays {' or '.join(games.BOARD_IDS)}; {team.name} plays {env_id!r}")
        if move not in planning.MOVES:
            raise ValueError(f"Move must be one of {planning.MOVES}, got {move!r}")
        self._game = games.board_game(env_id)
        self.variant = games.get(env_id).uci_variant  # the game's UCI_Variant name
        self.team = team
        self.move = move
        self.seed = seed
        self.reuse = False
        self.set_reuse(reuse)
        self.warm_rate = 100.0  # simulations per second per tree, measured by warm_up
        self.warm_read_seconds = 0.0  # seconds a search's result takes to read, measured by warm_up
        self.load_times: Dict[str, float] = {}
        self._params = jax.device_put(team.params, jax.devices()[0])  # one sharding for every program's inputs
        hook = team.search_hook()
        self._hook = hook._replace(hook_params=None)  # ψ goes in as an argument of the programs
        self._hook_params = None if hook.hook_params is None else jax.device_put(hook.hook_params, jax.devices()[0])
        self._players = jnp.arange(team.num_players, dtype=jnp.int32)
        self._lam = jnp.asarray(team.search_lambdas, jnp.float32)
        self.capacity = self._capacity(hash_mb)
        self._programs: Dict[int, _Programs] = {}
        self._traces = 0
        self._trees: Dict[int, anytime.AnytimeSearch] = {}  # by move generator
        self._root: Optional[tuple] = None  # (max_pieces, start FEN, moves) of the last search's root
        self._searched: Optional[Any] = None  # the last search's board
        self.reused = False

    @property
    def num_players(self) -> int:
        return self.team.num_players

    def set_reuse(self, reuse: bool) -> None:
        """Subtree reuse on or off (stays off for a Gumbel team: a reused root's visits
        would not follow the sequential-halving schedule of the next search)."""
        self.reuse = bool(reuse) and self.team.search_config.algorithm == "puct"

    def _capacity(self, hash_mb: int) -> int:
        """Nodes per player tree that fit in ``hash_mb`` MB, from the arrays' shapes."""
        probe = 1024
        shapes = jax.eval_shape(functools.partial(
            anytime.begin, self.team.env, self.team.apply_fn, config=self.team.search_config, capacity=probe),
            self._params, jax.random.PRNGKey(0), jax.eval_shape(self.team.env.init, jax.random.PRNGKey(0)),
            players=self._players, lam=self._lam)
        total = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))
        per_node = total / (probe * self.num_players)
        return max(MIN_CAPACITY, int(hash_mb * 2**20 / (per_node * self.num_players)))

    # ---------------------------------------------------------------- programs

    def _programs_for(self, max_pieces: int) -> _Programs:
        if max_pieces not in self._programs:
            team = solver_search.team_for_pieces(self.team, max_pieces)
            env, apply_fn, config = team.env, team.apply_fn, team.search_config
            self._programs[max_pieces] = _Programs(
                begin=self._jit(functools.partial(anytime.begin, env, apply_fn, config=config,
                                                  capacity=self.capacity)),
                restart=self._jit(functools.partial(anytime.restart, env, apply_fn), donate_argnums=(1,)),
                grow=self._jit(functools.partial(anytime.grow, env, apply_fn, config=config, hook=self._hook),
                               donate_argnums=(1,)),
                answers=self._jit(functools.partial(anytime.answers, num_actions=env.num_actions, config=config,
                                                    move=self.move, pv_length=PV_LENGTH)))
        return self._programs[max_pieces]

    def _jit(self, fn, **kwargs):
        """``jax.jit(fn)`` that counts its traces (one per compiled shape)."""

        def traced(*args, **kw):
            self._traces += 1
            return fn(*args, **kw)

        return jax.jit(traced, **kwargs)

    def compiled_programs(self) -> int:
        """Programs traced so far, one per compiled executable (a recompilation guard for tests)."""
        return self._traces

    def _state_of(self, board, max_pieces: int):
        return jax.tree.map(lambda x: x[0], self._game.states_from_boards([board], max_pieces=max_pieces))

    def warm_up(self) -> Dict[str, float]:
        """Compiles and runs every program a game's searches use, on the start position
        and the position after a reply, in the order a game calls them; returns the
        seconds of each step (first call = compile + run, then a second call)."""
        times: Dict[str, float] = {}

        def timed(name, fn):
            start = time.perf_counter()
            out = jax.block_until_ready(fn())
            times[name] = times.get(name, 0.0) + time.perf_counter() - start
            return out

        board = self._game.new_board(None)
        timed("board conversion", lambda: self._state_of(board, DEFAULT_MAX_PIECES))
        self._programs_for(DEFAULT_MAX_PIECES)
        timed("first search (compile)", lambda: self.start(board, None))
        timed("first search (compile)", lambda: self.grow(8, budget=64))
        timed("first search (compile)", lambda: self.result(rule="visit"))
        reply = board.copy()
        for _ in range(2):
            reply.push(next(iter(reply.legal_moves)))
        timed("next search (compile)", lambda: self.start(reply, None))
        timed("next search (compile)", lambda: self.grow(8, budget=64))
        timed("next search (compile)", lambda: self.result(rule="visit"))
        timed("search (compiled)", lambda: self.start(board, None))
        timed("search (compiled)", lambda: self.grow(8, budget=64))
        timed("search (compiled)", lambda: self.result(rule="visit"))
        start = time.perf_counter()
        ran = self.grow(32, budget=64)
        self.warm_rate = ran / max(time.perf_counter() - start, 1e-6)
        reads = []
        for _ in range(3):  # what reading a move's trees takes, compiled: the slowest of three
            start = time.perf_counter()
            self.result(rule="visit")
            reads.append(time.perf_counter() - start)
        self.warm_read_seconds = max(reads)
        self.forget()
        return times

    # ---------------------------------------------------------------- one search

    def forget(self) -> None:
        """No subtree of earlier searches is reused by the next (a new game)."""
        self._root = self._searched = None

    def start(self, board: Any, line: Optional[tuple] = None) -> bool:
        """Roots the search at ``board`` (a position to search, without history);
        ``line = (start FEN, moves)`` names the game it comes from, so that the tree of
        the last search is kept when this position follows its root by an even number
        of plies. Returns whether some player's subtree was reused."""
        max_pieces = self._game.required_max_pieces([board])
        programs = self._programs_for(max_pieces)
        state = self._state_of(board, max_pieces)
        actions = np.zeros(MAX_REUSED_PLIES, np.int32)
        length = 0
        if self.reuse and line is not None and self._root is not None and self._root[0] == max_pieces:
            _, fen, moves = self._root
            new_fen, new_moves = line
            extra = new_moves[len(moves):]
            if (new_fen == fen and tuple(new_moves[:len(moves)]) == tuple(moves) and 0 < len(extra) <= len(actions)
                    and len(extra) % 2 == 0):
                walk = self._searched.copy()
                for i, text in enumerate(extra):
                    move = walk.parse_uci(text)
                    actions[i] = self._game.move_to_action(move, walk)
                    walk.push(move)
                length = len(extra)
        if max_pieces not in self._trees:
            self._trees[max_pieces] = programs.begin(self._params, jax.random.PRNGKey(self.seed), state,
                                                     players=self._players, lam=self._lam)
            reused = np.zeros(self.num_players, bool)
        else:
            self._trees[max_pieces], reused = programs.restart(self._params, self._trees[max_pieces], state,
                                                               jnp.asarray(actions), length)
        self._current = max_pieces
        self._root = (max_pieces, *line) if line is not None else (max_pieces, None, ())
        self._searched = board.copy()
        self.reused = bool(np.any(reused))
        return self.reused

    def grow(self, simulations: int, *, budget: int) -> int:
        """Runs ``simulations`` more simulations on each player's tree (fewer when the
        trees are full); ``budget`` is the total a Gumbel root plans for. Returns the
        simulations run (blocks until they are)."""
        programs = self._programs[self._current]
        before = np.asarray(self._trees[self._current].num_nodes)  # read before the arrays are donated
        after = programs.grow(self._params, self._trees[self._current], int(simulations),
                              hook_params=self._hook_params, budget=int(budget))
        self._trees[self._current] = after
        return int(np.max(np.asarray(after.num_nodes) - before))

    def nodes(self) -> int:
        """Simulations in the players' trees, summed."""
        return int(np.sum(np.asarray(self._trees[self._current].num_nodes) - 1))

    def result(self, *, rule: str = "visit", player: Optional[int] = None) -> SearchResult:
        """The move of ``player`` when given, else the team's under ``rule``, with every
        player's answer; the trees stay as they are (the search can go on)."""
        tree = self._trees[self._current]
        out = jax.device_get(self._programs[self._current].answers(tree))
        board = self._searched
        moves = [self._game.action_to_uci(int(a), board) for a in out.player_actions]
        values = [float(v) for v in out.player_values]
        if player is not None:
            column, chosen = f"player_{player}", int(player)
        else:
            column, chosen = f"team_{rule}", int(out.rule_players[RULES.index(rule)])
        pv = self._line(out.pv[chosen], board)
        nodes = np.asarray(out.nodes) - 1
        return SearchResult(move=moves[chosen], value=values[chosen], player=chosen, column=column,
                            nodes=int(nodes.sum()), depth=max(1, int(round(float(out.depth[chosen])))),
                            seldepth=max(1, int(out.seldepth[chosen])), pv=pv, player_moves=moves,
                            player_values=values, full=bool(np.max(out.nodes) >= self.capacity))

    def _line(self, actions: Sequence[int], board: Any) -> List[str]:
        """UCI moves of a line of action ids from ``board`` (stops at -1: a line ends at a
        leaf, and a finished game's node has no moves)."""
        line, walk = [], board.copy()
        for i, action in enumerate(actions):
            if action < 0:
                break
            text = self._game.action_to_uci(int(action), walk)
            line.append(text)
            if i + 1 < len(actions) and actions[i + 1] >= 0:
                walk.push(walk.parse_uci(text))
        return line


__all__ = ["TeamSearcher", "SearchResult", "RULES"]
