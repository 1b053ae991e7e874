"""The team as a puzzle solver: players, selection rules, oracles and controls from one search.

``TeamSolver`` implements the ``Solver`` protocol of ``azdb_jax.evaluation.team`` for
chess positions (python-chess boards) and Gardner chess positions (``GardnerBoard``;
``azdb_jax.games.board_game`` converts either), so the puzzle runners of
``azdb_jax.evaluation.puzzles`` score a trained team exactly like a reference engine.
Each position is searched once per latent (``Agent.search``: one batched search for all
searched players, SPEC §1.10) and, for the homogeneous-team control, once per copy of
latent 0 (``planning.homogeneous_search``, with root noise so that the copies differ:
paper §4.3, SPEC §1.10). The answers come out as *columns* read off those searches:

- a player's move and its value ``V_j = max_{a visited} Q_j(s, a)`` for the side to move
  (SPEC §1.9): ``player_<j>`` (the solver's ``move``: most visited, or LCB), and
  ``player_<j>_<m>`` for each further per-player move ``m`` of ``moves`` (``visits``,
  ``value``: the highest Q over visited moves, ``lcb``); with several teams (training
  seeds searched as one team, paper Fig. 5 right) ``seed_<s>_player_<j>``;
- a selection rule of Eq. 9 (``planning.team_move``) over the players, the chosen
  player's move and ``V``: ``team_<rule>``, or ``latents_<k>_<rule>`` over the first
  ``k`` players for each number of trials ``k`` (paper Fig. 7, 8);
- the control copies: ``homogeneous_<c>`` and the rules over them ``homogeneous_<rule>``,
  or with trials ``copy_<c>`` and ``copies_<k>_<rule>``.

Oracle groups (solved if any member solved it, an upper bound of every rule over the
same members): ``max_over_latents`` (every player; ``max_over_seeds`` with several
teams), ``homogeneous_max`` (every copy), or with trials ``latents_<k>_max`` and
``copies_<k>_max``; a further per-player move ``m`` adds its own groups, suffixed ``_<m>``.

Every player searches as its ``Agent`` says: by default as in self-play (its ``λ_i``,
the intrinsic reward of ψ, ``v_d``), or extrinsic-only (the ablation). Latent 0 has
``λ_0 = 1`` in both, so the homogeneous control is the same in both modes.

Every batch is padded to ``batch_size`` with the standard start position, so one
compiled program per move generator (``max_pieces``, SPEC §4) serves every batch. The
random key of a position is folded from the solver's seed and the position's FEN and
split into the players' key and the control's, so an answer depends neither on the
batch it came in nor on the order of the calls, and every team of several searches a
position with the key one team alone would. Positions that are already over
(checkmate, stalemate, draw by rule) are not searched: their move is ``""`` and their
value the game's result for the side to move.

Besides the columns, ``search`` returns the players' root statistics and ``move_bars``
one player's view of each legal move (prior, the network's value after the move, Q,
visits) for the move-value figures.
"""

import functools
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import games, planning
from azdb_jax.agent import Agent
from azdb_jax.evaluation import solver_search
from azdb_jax.evaluation.team import SolverOutput

Array = jax.Array

DEFAULT_RULES = tuple(planning.SELECTION_RULES)  # visit, value, lcb, gap
# How one player picks its move: most visited, highest Q over visited moves, highest Q − U
# over visited moves (the per-player "rules" of the max-over-latents oracle, paper Fig. 8).
PLAYER_MOVES = ("visits", "value", "lcb")
MAX_OVER_LATENTS = "max_over_latents"
MAX_OVER_SEEDS = "max_over_seeds"
HOMOGENEOUS_MAX = "homogeneous_max"
CHILD_BATCH = 64  # positions per network call of ``TeamSolver.child_values``


# ------------------------------------------------------------------ column names


def player_column(j: int, move: str = "visits", *, seed: Optional[int] = None, main: str = "visits") -> str:
    """The column of latent ``j`` playing ``move`` (``seed``: its team's position among
    several; ``main``: the solver's move, whose columns carry no suffix)."""
    name = f"player_{j}" if seed is None else f"seed_{seed}_player_{j}"
    return name if move == main else f"{name}_{move}"


def copy_column(c: int, *, trials: bool = False) -> str:
    """The column of control copy ``c``: ``homogeneous_<c>``, or ``copy_<c>`` with trials."""
    return f"copy_{c}" if trials else f"homogeneous_{c}"


def rule_column(rule: str, k: Optional[int] = None, *, copies: bool = False) -> str:
    """The column of ``rule`` over the first ``k`` players (``copies``: control copies);
    ``k`` None: over all of them (``team_<rule>``, ``homogeneous_<rule>``)."""
    if k is None:
        return f"{'homogeneous' if copies else 'team'}_{rule}"
    return f"{'copies' if copies else 'latents'}_{k}_{rule}"


def max_group(k: Optional[int] = None, *, copies: bool = False, move: str = "visits", seeds: bool = False,
              main: str = "visits") -> str:
    """The oracle group over the first ``k`` players playing ``move`` (``copies``: control
    copies); ``k`` None: over all of them (``max_over_latents``, ``max_over_seeds`` with
    several teams, ``homogeneous_max``)."""
    if k is None:
        name = HOMOGENEOUS_MAX if copies else (MAX_OVER_SEEDS if seeds else MAX_OVER_LATENTS)
    else:
        name = f"{'copies' if copies else 'latents'}_{k}_max"
    return name if move == main else f"{name}_{move}"


# ------------------------------------------------------------------ positions in batches


# ------------------------------------------------------------------ reading columns off the searches


@functools.partial(jax.jit, static_argnames=("rule", "move"))
def _team_choice(stats: planning.TeamRootStatistics, rule: str, move: str) -> Tuple[Array, Array]:
    """``rule``'s choice on a batch of team statistics [B, k, ...]: the chosen player's
    ``move`` [B] and its ``V`` [B]."""
    player, action = planning.team_move(stats, rule, move=move)
    return action, planning.solved_by(stats.value, player)


def _player_actions(searched: planning.TeamSearch, move: str) -> np.ndarray:
    """Every player's ``move`` [B, P] (``value``: ``argmax_a Q_j(s, a)``, Q being −inf
    off the visited moves)."""
    if move == "visits":
        return np.asarray(searched.most_visited_action)
    if move == "lcb":
        return np.asarray(searched.lcb_action)
    return np.argmax(np.asarray(searched.stats.q), axis=-1)


def _first(searched: planning.TeamSearch, k: Optional[int]) -> planning.TeamSearch:
    """The first ``k`` players of host search results [B, P, ...] (all when ``k`` is None)."""
    return searched if k is None else jax.tree.map(lambda x: x[:, :k], searched)


class _Members(NamedTuple):
    """The columns read off one kind of search: the players', or the control copies'."""

    names: Dict[str, Tuple[str, ...]]  # move -> one column per player (or copy)
    sizes: Tuple[Optional[int], ...]  # how many of the first members each rule and group takes (None: all)
    copies: bool  # the control copies


class TeamSolver:
    """A team answering chess positions per player, per selection rule and per control copy.

    Args:
      team: a chess team (``Agent.env`` is chess; a 32-piece move generator is switched in
        for positions that need it) or a Gardner chess team (positions are ``GardnerBoard``s);
        or a sequence of teams of one game (training seeds), searched as one team whose
        players are every team's players in order (columns ``seed_<s>_player_<j>``).
      players: how many latents of each team are searched, 0..players-1 (default all).
      rules: selection rules of ``planning.SELECTION_RULES``.
      move: the move a player plays in its column and when a rule chooses it,
        ``"visits"`` (most visited) or ``"lcb"``.
      moves: further per-player moves of ``PLAYER_MOVES``, each with its own player
        columns ``player_<j>_<m>`` and oracle groups.
      trials: numbers ``k`` of players (and of copies) the rules and oracle groups take
        (``latents_<k>_<rule>``, ``copies_<k>_<rule>``, ``latents_<k>_max``, ...); a ``k``
        past the players (or copies) gets none of their columns. Default: every player,
        every copy (``team_<rule>``, ``homogeneous_<rule>``, ``max_over_latents``, ...).
      homogeneous_copies: ``k`` searches of latent 0 for the control; default ``n`` (the
        team's size) for one team and 0 for several; 0 turns the control off.
      batch_size: positions per search; every batch is padded to this size.
      seed: base of every position's random key.
      programs: a dict that holds the compiled searches, to share them with other solvers
        whose teams search alike (one network architecture, search settings, λ and ℓ0,
        e.g. one configuration's seeds: the parameters and ψ are the programs' arguments,
        the rest is compiled in).
      batch_members: search several teams that search alike (one configuration's seeds)
        as members of one program, all of them in one call per batch (``jax.vmap`` over
        their parameters and ψ) rather than one call per team. Default (None): on where
        the teams allow it and the backend is not a CPU (where the members' convolutions
        run no faster side by side); True insists (ValueError when the teams differ).

    Attributes:
      columns: the member columns (per move, then per player), the rules over the
        players, the copies' columns, the rules over the copies (report order).
      groups: oracle group -> its member columns.
      game: the board game of the positions (``games.board_game``: boards to states, moves
        to actions).
    """

    def __init__(self, team: Union[Agent, Sequence[Agent]], *, players: Optional[int] = None,
                 rules: Sequence[str] = DEFAULT_RULES, move: str = "visits", moves: Sequence[str] = (),
                 trials: Optional[Sequence[int]] = None, homogeneous_copies: Optional[int] = None,
                 batch_size: int = 16, seed: int = 0, programs: Optional[Dict[Any, Callable]] = None,
                 batch_members: Optional[bool] = None):
        several = not isinstance(team, Agent)
        teams = list(team) if several else [team]
        if not teams:
            raise ValueError("TeamSolver needs at least one team")
        for member in teams:
            if getattr(member.env, "id", None) not in games.BOARD_IDS:
                raise ValueError(f"TeamSolver answers {' or '.join(games.BOARD_IDS)} positions; team "
                                 f"{member.name!r} plays {getattr(member.env, 'id', member.env)!r}")
            if member.env.id != teams[0].env.id:
                raise ValueError(f"the teams play different games: {member.env.id!r} and {teams[0].env.id!r}")
        self.game = games.board_game(teams[0].env)
        if isinstance(rules, str):
            rules = tuple(name.strip() for name in rules.split(",") if name.strip())
        rules = tuple(rules)
        for rule in rules:
            planning.get_rule(rule)  # ValueError listing the valid rules
        if len(set(rules)) != len(rules):
            raise ValueError(f"rules lists a rule twice: {rules}")
        if move not in planning.MOVES:
            raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
        for other in moves:
            if other not in PLAYER_MOVES:
                raise ValueError(f"moves must be among {PLAYER_MOVES}, got {other!r}")
        if players is not None and (isinstance(players, bool) or not isinstance(players, int) or players < 1):
            raise ValueError(f"players must be an int >= 1 (default: every latent), got {players!r}")
        if trials is not None and any(int(k) < 1 for k in trials):
            raise ValueError(f"trials must be >= 1, got {tuple(trials)}")
        copies = (0 if several else teams[0].num_players) if homogeneous_copies is None else homogeneous_copies
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 0:
            raise ValueError(f"homogeneous_copies must be an int >= 0 (0: no control), got {homogeneous_copies!r}")
        if several and copies:
            raise ValueError("the homogeneous control copies one team's latent 0: give one team, or no copies")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        alike = several and not copies and solver_search.search_alike(teams)
        if batch_members and not alike:
            raise ValueError("batch_members: the teams must be several, without homogeneous copies, and search "
                             "alike (one network, team size, search settings, λ_i, ℓ0 and search mode)")
        self.batch_members = alike if batch_members is None and jax.default_backend() != "cpu" else bool(
            batch_members) and alike
        self.teams = teams
        self.team = teams[0]
        self.players = players
        self.rules: Tuple[str, ...] = rules
        self.move = move
        self.moves: Tuple[str, ...] = tuple(dict.fromkeys((move,) + tuple(moves)))
        self.homogeneous_copies = copies
        self.batch_size = batch_size
        self.seed = int(seed)
        self._programs: Dict[Any, Callable] = {} if programs is None else programs
        # (team, latent) of every searched player, in column order
        self.members: Tuple[Tuple[int, int], ...] = tuple(
            (s, j) for s, t in enumerate(teams) for j in range(t.num_players if players is None
                                                                 else min(players, t.num_players)))
        trials = None if trials is None else sorted({int(k) for k in trials})
        self._players = _Members(
            names={m: tuple(player_column(j, m, seed=s if several else None, main=move) for s, j in self.members)
                   for m in self.moves},
            sizes=(None,) if trials is None else tuple(k for k in trials if k <= len(self.members)), copies=False)
        self._copies = _Members(
            names={move: tuple(copy_column(c, trials=trials is not None) for c in range(copies))},
            sizes=((None,) if copies else ()) if trials is None else tuple(k for k in trials if k <= copies),
            copies=True)
        self.columns: Tuple[str, ...] = (
            tuple(c for m in self.moves for c in self._players.names[m]) + self._rule_columns(self._players)
            + self._copies.names[move] + self._rule_columns(self._copies))
        self.groups: Dict[str, Tuple[str, ...]] = {
            max_group(k, move=m, seeds=several, main=move): self._players.names[m][:k]
            for m in self.moves for k in self._players.sizes}
        self.groups.update({max_group(k, copies=True): self._copies.names[move][:k] for k in self._copies.sizes})

    def _rule_columns(self, members: _Members) -> Tuple[str, ...]:
        return tuple(rule_column(r, k, copies=members.copies) for k in members.sizes for r in self.rules)

    # ---------------------------------------------------------------- compiled search

    def _program(self, s: int, max_pieces: int) -> Callable:
        """The jitted search of one padded batch by team ``s``
        (``solver_search.search_program``); with ``batch_members`` (``s`` is then 0) every
        team's at once."""
        searched = None if self.players is None else min(self.players, self.teams[s].num_players)
        return solver_search.search_program(self._programs, self.teams[s], slot=s, searched=searched,
                               copies=self.homogeneous_copies if s == 0 else 0, max_pieces=max_pieces,
                               members=self.batch_members)

    @functools.cached_property
    def _stacked(self) -> Tuple[Any, Any]:
        """The teams' parameters and ψ stacked on a member axis (``batch_members``)."""
        return solver_search.stacked_arrays(self.teams)

    def _batches(self, boards: Sequence[chess.Board]
                 ) -> Iterator[Tuple[solver_search.Batch, planning.TeamSearch, Optional[planning.TeamSearch]]]:
        """Every batch of ``boards`` with its players' and copies' searches (host arrays)."""
        boards = list(boards)
        for begin in range(0, len(boards), self.batch_size):
            batch = solver_search.prepare_batch(self.game, boards[begin:begin + self.batch_size], self.batch_size,
                                                self.team.env)
            if self.batch_members:  # every team in one call: [K, B, n, ...] -> [B, K * n, ...], teams in order
                members, _ = jax.device_get(self._program(0, batch.max_pieces)(
                    *self._stacked, jax.random.PRNGKey(self.seed), batch.indices, batch.states))
                yield batch, jax.tree.map(lambda x: np.concatenate(list(x), axis=1), members), None
                continue
            parts = [jax.device_get(self._program(s, batch.max_pieces)(
                team.params, team.psi, jax.random.PRNGKey(self.seed), batch.indices, batch.states))
                for s, team in enumerate(self.teams)]
            players = jax.tree.map(lambda *xs: np.concatenate(xs, axis=1), *[p[0] for p in parts])
            yield batch, players, parts[0][1]

    # ---------------------------------------------------------------- the Solver protocol

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        """Moves (UCI) and values (side to move) of every column for ``boards``."""
        answers = self.begin_answers()
        for batch, players, copies in self._batches(boards):
            self.add_answers(answers, batch, players, copies)
        return self.end_answers(answers)

    def begin_answers(self) -> Tuple[Dict[str, List[str]], Dict[str, List[float]]]:
        """Empty moves and values per column, filled batch by batch by ``add_answers`` and
        read by ``end_answers``: how ``__call__`` answers, and how a caller that searched
        the batches itself (``members_solver.MembersSolver``) answers with this solver's
        columns."""
        return {name: [] for name in self.columns}, {name: [] for name in self.columns}

    def add_answers(self, answers, batch: solver_search.Batch, players: planning.TeamSearch,
                copies: Optional[planning.TeamSearch]) -> None:
        """Appends one batch's moves and values of every column to ``answers`` (host
        searches [B, P, ...] of ``batch``: the players', and the copies' or None)."""
        moves, values = answers
        columns = self._columns(players, self._players)
        if copies is not None:
            columns.update(self._columns(copies, self._copies))
        for name in self.columns:
            actions, column_values = columns[name]
            for b, (board, outcome) in enumerate(zip(batch.boards, batch.outcomes)):
                moves[name].append("" if outcome is not None else self.game.action_to_uci(int(actions[b]), board))
                values[name].append(outcome if outcome is not None else float(column_values[b]))

    @staticmethod
    def end_answers(answers) -> SolverOutput:
        """The filled ``answers`` as the solver's output."""
        moves, values = answers
        return SolverOutput(moves=moves, values={name: np.asarray(v, np.float64) for name, v in values.items()})

    def _columns(self, searched: planning.TeamSearch, members: _Members) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
        """``column -> (actions [B], values [B])`` of one kind of search [B, P, ...]."""
        out = {}
        for move, names in members.names.items():
            actions = _player_actions(searched, move)
            out.update({name: (actions[:, i], searched.stats.value[:, i]) for i, name in enumerate(names)})
        for k in members.sizes:
            stats = _first(searched, k).stats
            for rule in self.rules:
                out[rule_column(rule, k, copies=members.copies)] = jax.device_get(_team_choice(stats, rule, self.move))
        return out

    # ---------------------------------------------------------------- one player's view

    def search(self, boards: Sequence[chess.Board]) -> planning.TeamSearch:
        """The players' searches of ``boards`` (host arrays [N, P, ...], players in column
        order); a position already over holds the start position's search."""
        parts = [jax.tree.map(lambda x, n=len(batch.boards): x[:n], players)
                 for batch, players, _ in self._batches(boards)]
        return jax.tree.map(lambda *xs: np.concatenate(xs), *parts)

    def child_values(self, boards: Sequence[chess.Board], player: int = 0) -> np.ndarray:
        """The network's value of each position (none over) for its side to move, as
        searched player ``player`` (an index into ``members``) sees it."""
        s, latent = self.members[player]
        team = self.teams[s]
        key = ("values", s, latent)
        if key not in self._programs:
            self._programs[key] = jax.jit(lambda params, observations: team.apply_fn(
                params, observations, jnp.full(observations.shape[0], latent, jnp.int32)).value)
        out = []
        for begin in range(0, len(boards), CHILD_BATCH):
            batch = solver_search.prepare_batch(self.game, boards[begin:begin + CHILD_BATCH], CHILD_BATCH,
                                                team.env)
            out.append(np.asarray(self._programs[key](team.params, batch.states.observation))[:len(batch.boards)])
        return np.concatenate(out) if out else np.zeros(0)

    def move_bars(self, boards: Sequence[chess.Board], player: int = 0) -> List[Dict[str, Any]]:
        """Player ``player``'s view of each of ``boards`` (none over): per legal move (UCI,
        sorted) its prior, the raw value of the position after it for the side to move
        (minus the network's value there; 1 for a mate, 0 for another end), the search's
        Q (NaN: not visited) and visits; the root's raw value and search value."""
        for board in boards:
            if solver_search.game_over_value(board) is not None:
                raise ValueError(f"position {board.fen()} is already over: no moves to show")
        if not boards:
            return []
        searched = self.search(boards)
        stats = jax.tree.map(lambda x: x[:, player], searched.stats)
        out = []
        for b, board in enumerate(boards):
            moves = sorted(board.legal_moves, key=lambda m: m.uci())
            actions = [self.game.move_to_action(m, board) for m in moves]
            visits = np.asarray(stats.visits[b])[actions]
            raw = np.zeros(len(moves))
            children, where = [], []
            for k, move in enumerate(moves):
                child = board.copy(stack=False)
                child.push(move)
                outcome = solver_search.game_over_value(child)
                if outcome is None:
                    children.append(child)
                    where.append(k)
                else:  # a mate wins for the mover, any other end draws
                    raw[k] = 1.0 if outcome < 0 else 0.0
            if children:
                raw[where] = -self.child_values(children, player)
            q = np.asarray(stats.q[b])[actions]
            out.append({"moves": [m.uci() for m in moves], "actions": actions,
                        "prior": np.asarray(stats.prior[b])[actions].astype(np.float64), "raw_value": raw,
                        "q": np.where(visits > 0, q, np.nan).astype(np.float64), "visits": visits.astype(np.int64),
                        "root_value": float(searched.network_value[b, player]), "search_value": float(stats.value[b])})
        return out


__all__ = ["TeamSolver", "DEFAULT_RULES", "PLAYER_MOVES", "MAX_OVER_LATENTS", "MAX_OVER_SEEDS", "HOMOGENEOUS_MAX",
           "CHILD_BATCH", "player_column",
           "copy_column", "rule_column", "max_group"]
