"""The agent a run becomes: a team's network, its parameters and how its players search.

An ``Agent`` is what every use of a trained team plays with: the in-training evaluator,
matches, puzzle solvers, the UCI engine, Nim's measures. It holds the game, the network's
``apply_fn`` and parameters, the team size, the evaluation search settings and what its
players' searches mix in — ``λ_i``, the checkpoint's expected features ψ and ℓ0 — and is
the one place where those become a search's λ and intrinsic-reward hook
(``search_lambdas``, ``search_hook``; self-play's reward: ``intrinsic_reward``).

Its ways to play:

- ``search(params, key, positions)``: every position searched once per player
  (``planning.team_search``), the statistics every selection rule and solver reads;
- ``player_policy(i)``: one player, most-visited move (the player may be traced);
- ``latent_policy()``: any player, chosen by the params ``(network params, player)``,
  so that every player of a team plays through one compiled program;
- ``rule_policy(rule)``: the whole team, a selection rule of Eq. 9 choosing whose move.

A policy is ``policy(params, rng_key, state [B]) -> action [B]`` (``azdb_jax.policies``),
so an agent's players meet fixed opponents, classical search and each other in the
arena. ``azdb_jax.runs.load_agent`` builds one from a run's directory (reading only
its config, parameters and ψ); ``from_config`` builds one from a config and arrays
(e.g. inside a compiled program, with traced parameters and ψ).
"""

import dataclasses
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import config as config_lib
from azdb_jax import features, networks, planning
from azdb_jax import search as search_lib
from azdb_jax.policies import Policy, sample_by_visits, sample_uniform

Array = jax.Array
SearchHook = search_lib.SearchHook  # the intrinsic-reward arguments of a search

SEARCH_MODES: Dict[str, str] = {
    "selfplay": ("each player searches as in self-play: its own λ_i (λ_0 = 1), the intrinsic reward of "
                 "the checkpoint's ψ accumulated root to leaf and v_d at the leaves (paper §3; Fig. 8 solid)"),
    "extrinsic_only": ("ABLATION: extrinsic-only search, λ = 1 for every player: game result and value "
                       "only, no intrinsic reward, no v_d (paper Fig. 8 dashed)"),
}


def search_policy(
    env: pgx.core.Env,
    apply_fn: search_lib.ApplyFn,
    search_config: search_lib.SearchConfig,
    *,
    player: Any,
    lam: Any = 1.0,
    sample_plies: int = 0,
    feature_fn: Optional[Callable[[pgx.core.State], Array]] = None,
    intrinsic_reward_fn: Optional[search_lib.IntrinsicRewardFn] = None,
    hook_params: Any = None,
) -> Policy:
    """A network as one fixed player: search without noise, most-visited move.

    ``params`` of the returned policy are the network parameters. The search runs as in
    evaluation (SPEC §1.8: no Dirichlet or Gumbel noise) with the latent of ``player``
    and its ``λ`` conditioning every network call; with the intrinsic-reward hook
    (``feature_fn``, ``intrinsic_reward_fn``, ``hook_params``: ``Agent.search_hook``) and
    the player's ``λ_i`` it searches as in self-play (SPEC §2); ``player``, ``lam`` and
    ``hook_params`` may be traced values. The move is the most-visited root action,
    ties broken by the higher root Q, then uniformly at random (Gumbel's sequential
    halving ends with its finalists on equal visits, so the value decides).

    ``sample_plies = k > 0`` samples the move in proportion to the root visit counts
    while fewer than ``k`` plies have been played (``state._step_count``: 0 at
    ``env.init`` and at a position built from a FEN), as self-play does: matches then
    differ from seed to seed, which a noiseless search alone hardly does.

    A trained team's players come from ``Agent.player_policy``; this is the network
    without a team (e.g. a junior network searched by a senior, ``azdb_jax.skill``).
    """
    _check_sample_plies(sample_plies)

    def policy(params, rng_key, state):
        search_key, tie_key = jax.random.split(rng_key)
        batch = state.current_player.shape[0]
        out = search_lib.run_search(
            env, apply_fn, params, search_key, state,
            jnp.full((batch,), player, jnp.int32), jnp.full((batch,), lam, jnp.float32),
            config=search_config, add_noise=False, feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn,
            hook_params=hook_params)
        visits = jnp.where(state.legal_action_mask, out.visits, -1)
        most_visited = visits == visits.max(axis=-1, keepdims=True)
        q = jnp.where(most_visited, out.qvalues, -jnp.inf)
        action = sample_uniform(tie_key, most_visited & (q >= q.max(axis=-1, keepdims=True)))
        if sample_plies:
            sample_key = jax.random.fold_in(tie_key, 1)
            action = jnp.where(state._step_count < sample_plies, sample_by_visits(sample_key, visits), action)
        return action

    return policy


def _check_sample_plies(sample_plies: Any) -> None:
    if isinstance(sample_plies, bool) or not isinstance(sample_plies, int) or sample_plies < 0:
        raise ValueError(f"sample_plies must be an int >= 0, got {sample_plies!r}")


def make_network(config: config_lib.TrainConfig, env: pgx.core.Env) -> networks.Network:
    """The network of a run's config on its game (training and loading build it here)."""
    return networks.make_network(config.network, num_actions=env.num_actions, num_players=config.team.num_players,
                                 value_d_opponent=predicts_opponent_leaves(config))


def predicts_opponent_leaves(config: config_lib.TrainConfig) -> bool:
    """Whether the run's network has the opponent-to-move intrinsic head
    (``diversity.opponent_leaves="predict"`` in a team with λ < 1)."""
    return config.diversity.opponent_leaves == "predict" and config.team.lam < 1.0


@dataclasses.dataclass(frozen=True)
class Agent:
    """A trained team ready to search and play.

    By default a team searches as its players did in self-play (SPEC §2, paper §3 and
    Fig. 8): player i with its own ``λ_i`` (``λ_0 = 1``: player 0 is plain AlphaZero),
    the intrinsic reward ``r_d^i`` of the checkpoint's expected features ψ on its own
    moves in the tree, and ``λ_i v + (1 − λ_i) v_d`` at the leaves; no root noise.
    ``extrinsic_only=True`` is the paper's ablation (Fig. 8 dashed): λ = 1 for every
    player, so every search scores positions by the game's outcome only. An agent without
    ``lambdas`` (an AlphaZero run, or a hand-built team) searches with λ = 1 in both modes.

    Attributes:
      env: the game.
      apply_fn: ``(params, observation [B, ...], player [B]) -> NetOutput``.
      params: the network parameters (may be traced inside a compiled program).
      num_players: n, the number of latents the network was trained with.
      search_config: the evaluation search (no noise is added in evaluation).
      lambdas: ``λ_i`` per player as trained (``TeamConfig.lambdas``; ``λ_0`` must be 1),
        or None for λ = 1 everywhere.
      psi: ``[n, F]`` expected features ψ of the checkpoint (the intrinsic reward's
        input; may be traced), or None for no intrinsic reward.
      l0: ℓ0 of the intrinsic reward (Eq. 8), the run's ``diversity.l0`` (may be a traced
        array: a population member's, ``trainer.Components.with_arm``).
      intrinsic_in_search: the run's ``diversity.in_search``: whether its self-play
        searches added the intrinsic reward to the root player's moves.
      extrinsic_only: search with λ = 1 for every player (the ablation).
      name: a label for reports and PGN headers.
      step: the checkpoint step the parameters come from, when loaded from a run.
    """

    env: pgx.core.Env
    apply_fn: search_lib.ApplyFn
    params: Any
    num_players: int
    search_config: search_lib.SearchConfig
    lambdas: Optional[Tuple[float, ...]] = None
    psi: Any = None
    l0: float = 1.0
    intrinsic_in_search: bool = True
    extrinsic_only: bool = False
    name: str = "team"
    step: Optional[int] = None

    def __post_init__(self):
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int) or self.num_players < 1:
            raise ValueError(f"num_players must be an int >= 1, got {self.num_players!r}")
        if self.lambdas is not None:
            lambdas = tuple(float(x) for x in np.asarray(self.lambdas, np.float64).reshape(-1))
            if len(lambdas) != self.num_players or not all(0.0 <= x <= 1.0 for x in lambdas):
                raise ValueError(f"lambdas must be {self.num_players} values in [0, 1] (one per player), "
                                 f"got {self.lambdas!r}")
            if lambdas[0] != 1.0:
                raise ValueError(f"lambdas[0] must be 1: player 0 is plain AlphaZero (paper §3), got {lambdas[0]}")
            object.__setattr__(self, "lambdas", lambdas)
        if self.psi is not None:
            shape = tuple(np.shape(self.psi))
            if len(shape) != 2 or shape[0] != self.num_players:
                raise ValueError(f"psi must be [num_players={self.num_players}, F] expected features, got {shape}")
        if not (isinstance(self.l0, jax.Array) or (isinstance(self.l0, (int, float)) and self.l0 > 0)):
            raise ValueError(f"l0 must be > 0, got {self.l0!r}")

    @classmethod
    def from_config(cls, config: config_lib.TrainConfig, params: Any, psi: Any = None, *,
                    env: Optional[pgx.core.Env] = None, apply_fn: Optional[search_lib.ApplyFn] = None,
                    search_config: Optional[search_lib.SearchConfig] = None, **fields: Any) -> "Agent":
        """The agent of a run's ``config`` with these parameters and ψ: its game, network,
        team size, ``λ_i`` (``TeamConfig.lambdas``), ℓ0 and ``diversity.in_search``.

        ``env`` and ``apply_fn`` default to building them from the config (pass the ones
        in use to share their compiled programs); ``search_config`` defaults to the run's
        self-play search settings (without its noise, which evaluation never adds);
        ``fields`` set the other attributes (``name``, ``step``, ``extrinsic_only``).
        """
        env = config.env.make() if env is None else env
        apply_fn = make_network(config, env).apply if apply_fn is None else apply_fn
        team = config.team
        return cls(env=env, apply_fn=apply_fn, params=params, num_players=team.num_players,
                   search_config=config.search if search_config is None else search_config,
                   lambdas=team.lambdas,
                   psi=psi, l0=config.diversity.l0, intrinsic_in_search=config.diversity.in_search, **fields)

    # ---------------------------------------------------------------- how the team searches

    @property
    def search_mode(self) -> str:
        """``"selfplay"`` (the default: as in self-play) or ``"extrinsic_only"`` (the ablation)."""
        return "extrinsic_only" if self.extrinsic_only else "selfplay"

    @property
    def diverse(self) -> bool:
        """Whether some player was trained with ``λ_i < 1`` (behavioural diversity on)."""
        return self.lambdas is not None and min(self.lambdas) < 1.0

    @property
    def search_lambdas(self) -> np.ndarray:
        """``[n]`` λ of each player's search: the trained ``λ_i``, or 1 for all in the ablation."""
        if self.extrinsic_only or self.lambdas is None:
            return np.ones(self.num_players, np.float32)
        return np.asarray(self.lambdas, np.float32)

    @property
    def uses_intrinsic_terms(self) -> bool:
        """Whether some player's search mixes in intrinsic terms (some searched λ_i < 1)."""
        return bool(np.any(self.search_lambdas < 1.0))

    def intrinsic_reward(self) -> SearchHook:
        """``r_d^i(s, a)`` of Eq. 8 for the agent's ψ and ℓ0 (``search.intrinsic_hook``):
        what self-play scores each move with, whether or not its searches add it. All None
        without ψ or when every player was trained with ``λ_i = 1``."""
        if not self.diverse or self.psi is None:
            return search_lib.NO_HOOK
        return search_lib.intrinsic_hook(features.feature_fn(self.env), jnp.asarray(self.psi, jnp.float32),
                                         l0=self.l0)

    def search_hook(self) -> SearchHook:
        """The intrinsic reward the team's searches add: ``intrinsic_reward()`` when some
        player searches with ``λ_i < 1`` and the run's self-play searches carried it
        (``diversity.in_search``); else all None."""
        if not self.uses_intrinsic_terms or not self.intrinsic_in_search:
            return search_lib.NO_HOOK
        return self.intrinsic_reward()

    def player_hook(self, player: int) -> SearchHook:
        """``search_hook()`` for player ``player`` alone: none at ``λ_i = 1``, where the
        intrinsic reward is dropped exactly (so its features are not computed)."""
        return self.search_hook() if self.search_lambdas[int(player)] < 1.0 else search_lib.NO_HOOK

    def search(self, params: Any, rng_key: Array, positions: pgx.core.State, *,
               players: Optional[Array] = None) -> planning.TeamSearch:
        """Every position searched once per player, each as ``search_mode`` says: the one
        team search of every solver, match, engine and report (``planning.team_search``
        with this agent's env, network, search settings, λ_i and ``search_hook()``).

        Args:
          params: the network parameters (``self.params``, or a traced copy).
          rng_key: consumed.
          positions: batched pgx State [B]; none terminal.
          players: [k] latent ids to search (default every player, in order).
        """
        return planning.team_search(self.env, self.apply_fn, params, rng_key, positions,
                                    num_players=self.num_players, lam=self.search_lambdas,
                                    config=self.search_config, players=players, **self.search_hook()._asdict())

    def search_description(self) -> Dict[str, Any]:
        """How the team searches, for reports: ``search`` (the mode), ``search_note``, λ_i, ℓ0."""
        return {"search": self.search_mode, "search_note": SEARCH_MODES[self.search_mode],
                "search_lambdas": [float(x) for x in self.search_lambdas],
                "intrinsic_reward": self.search_hook().intrinsic_reward_fn is not None,
                "l0": float(self.l0) if self.uses_intrinsic_terms else None}

    # ---------------------------------------------------------------- its players as policies

    def player_policy(self, player: Any, *, sample_plies: int = 0) -> Policy:
        """Player ``player`` alone: its search without noise, most-visited move
        (``search_policy`` with its latent, ``λ_i`` and hook). ``params`` of the policy are
        the network parameters. ``player`` is an int, or a traced value (then the hook of
        the whole team is passed, and a player at ``λ_i = 1`` weighs it by 0).

        ``sample_plies = k`` samples the first ``k`` plies of a game ∝ the root visit
        counts (``state._step_count``), so that seeds give different games.

        Raises:
          ValueError: an int ``player`` outside the team, or bad ``sample_plies``.
        """
        traced = isinstance(player, jax.Array) and not isinstance(player, (bool, np.bool_))
        if not traced and (isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer))
                           or not 0 <= player < self.num_players):
            raise ValueError(f"player must be an int in [0, {self.num_players}) for {self.name!r}, got {player!r}")
        if not traced:
            player = int(player)
            lam, hook = float(self.search_lambdas[player]), self.player_hook(player)
        else:
            lam, hook = jnp.asarray(self.search_lambdas)[player], self.search_hook()
        return search_policy(self.env, self.apply_fn, self.search_config, player=player, lam=lam,
                             sample_plies=sample_plies, **hook._asdict())

    def latent_policy(self, *, sample_plies: int = 0) -> Policy:
        """Any single player, chosen by the params: ``params = (network params, player [])``.

        Playing every player of a team through this one policy compiles the match once.
        ``sample_plies`` as in ``player_policy``.
        """
        _check_sample_plies(sample_plies)

        def policy(params, rng_key, state):
            net_params, player = params
            return self.player_policy(player, sample_plies=sample_plies)(net_params, rng_key, state)

        return policy

    def rule_policy(self, rule: str, *, move: str = "visits", sample_plies: int = 0) -> Policy:
        """The whole team as one player: every latent searches, ``rule`` picks whose move
        to play.

        ``rule`` is a name of ``planning.SELECTION_RULES`` (visit, value, lcb, gap); ``move``
        is the chosen player's most-visited (``"visits"``) or LCB (``"lcb"``) move. The
        policy's ``params`` are the network parameters. With ``sample_plies = k`` the
        first ``k`` plies of a game are sampled ∝ the chosen player's visit counts instead.

        Raises:
          ValueError: unknown rule (the message lists the rules) or move.
        """
        planning.get_rule(rule)
        if move not in planning.MOVES:
            raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
        _check_sample_plies(sample_plies)

        def policy(params, rng_key, state):
            search_key, sample_key = jax.random.split(rng_key)
            search = self.search(params, search_key, state)
            player, action = planning.team_move(search.stats, rule, move=move)
            if sample_plies:
                visits = jnp.take_along_axis(search.stats.visits, player[:, None, None], axis=1)[:, 0]
                sampled = sample_by_visits(sample_key, visits)
                action = jnp.where(state._step_count < sample_plies, sampled, action)
            return action

        return policy

    # ---------------------------------------------------------------- variants

    def as_extrinsic_only(self, extrinsic_only: bool = True) -> "Agent":
        """The same team searching extrinsic-only (the ablation), or back to the default."""
        return dataclasses.replace(self, extrinsic_only=extrinsic_only)

    def with_simulations(self, num_simulations: int) -> "Agent":
        """The same team searching with ``num_simulations`` simulations per move."""
        if isinstance(num_simulations, bool) or not isinstance(num_simulations, int) or num_simulations < 1:
            raise ValueError(f"num_simulations must be an int >= 1, got {num_simulations!r}")
        return dataclasses.replace(
            self, search_config=dataclasses.replace(self.search_config, num_simulations=num_simulations))

    def with_env(self, env: pgx.core.Env) -> "Agent":
        """The same team on another env with the same observations and actions (e.g. chess
        with the 32-piece move generator)."""
        return dataclasses.replace(self, env=env)

    def with_arrays(self, params: Any, psi: Any = None) -> "Agent":
        """The same team with other parameters and ψ (e.g. traced copies inside a program)."""
        return dataclasses.replace(self, params=params, psi=psi)

    def psi_as_param(self, make: Callable[["Agent"], Policy]) -> Policy:
        """``make(agent)``'s policy with ψ passed in its params: ``params = (ψ, the params
        make's policy takes)``. It plays for every agent that differs from this one only in
        its arrays (the runs of one configuration's seeds: pass that agent's ψ and network
        parameters), so that they play through one compiled program rather than one each
        (ψ is otherwise a constant of the program). E.g. ``psi_as_param(lambda a:
        a.rule_policy("gap"))`` with ``params = (agent_k.psi, agent_k.params)``."""

        def policy(params, rng_key, state):
            psi, inner = params
            return make(self.with_arrays(self.params, psi))(inner, rng_key, state)

        return policy


def stack_members(trees: Sequence[Any]) -> Any:
    """Trees of one structure (the parameters or ψ of one configuration's runs) stacked on a
    leading member axis: the arguments of a program mapped over the runs with ``jax.vmap``."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *trees)


__all__ = ["Agent", "SEARCH_MODES", "SearchHook", "make_network", "predicts_opponent_leaves", "search_policy",
           "stack_members"]
