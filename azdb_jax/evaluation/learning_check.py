"""Learning acceptance of the training core: small AZ runs that must reach known strength.

Each recipe (``RECIPES``) trains plain AlphaZero (a team of one) from the ``demo``
preset with a few overrides and a fixed seed, then measures the trained network
against an opponent whose strength is known exactly::

  tic_tac_toe   arena games against a perfect player, both colours: no loss allowed.
  connect_four  arena games against uniform random play, both colours: >= 95% won.
  gardner_chess Gardner's 5x5 chess with Gumbel search: head to head with its own untrained
                network (same search, 8 simulations, both colours, games adjudicated by
                material at 60 plies): score >= 0.6, i.e. training made it stronger.
  nim           heaps (1, 3, 5), every position solved by the Nim oracle: the share of
                winning positions where the prior's best legal move wins, against the
                share a uniformly random legal move achieves; and how often the sign of
                the value head is the game-theoretic value.

``run_check`` trains a recipe in memory (no run directory), measures it and returns
the report with ``passed``: ``experiments/learning_check.py`` prints the reports as
JSON, and ``tests/test_learning.py`` asserts the acceptance thresholds stored with the
recipes.
"""

import dataclasses
import functools
import time
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp

from azdb_jax import adjudication, arena, games, opponents, runner, trainer
from azdb_jax import config as config_lib
from azdb_jax.evaluation import nim as nim_eval
from azdb_jax.presets import get_preset


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A tuned training run (overrides of the ``demo`` preset) and its acceptance bar.

    Attributes:
      overrides: ``section.field=value`` overrides applied to the ``demo`` preset. The
        agent is evaluated with ``run.eval_simulations`` simulations over
        ``run.eval_games`` arena games (both colours).
      opponent: name of the fixed opponent (``opponents.opponents_for``) for arena games;
        empty for the oracle evaluation of Nim.
      min_score: least share of arena games won (connect four), or None.
      min_points: least score (W + D/2) / N of the arena games (Gardner chess), or None.
      max_losses: most arena games lost (tic-tac-toe), or None.
      min_accuracy_margin: least gap between the prior's top-1 accuracy and the random
        baseline (Nim), or None.
    """

    overrides: Tuple[str, ...]
    opponent: str = ""
    min_score: Optional[float] = None
    max_losses: Optional[int] = None
    min_accuracy_margin: Optional[float] = None
    min_points: Optional[float] = None


# Shared by every recipe: plain AZ, no built-in evaluation, one checkpoint at the end.
_COMMON = ("team.num_players=1", "team.lam=1.0", "run.eval_every=0", "run.checkpoint_every=0", "run.seed=0")

RECIPES: Dict[str, Recipe] = {
    "tic_tac_toe": Recipe(
        overrides=_COMMON + (
            "env.name=tic_tac_toe",
            "network.channels=32", "network.num_blocks=2", "network.value_hidden=32",
            # Stronger root noise: the agent must also know the lines a perfect player picks.
            "search.num_simulations=32", "search.dirichlet_fraction=0.5",
            # Every move of a self-play game sampled ∝ visits: with the first 4 only, the games
            # after ply 4 were the agent's own line and it met a perfect first player's other
            # lines unprepared (seeds 0-3 lost games as second player after 9 of 16 lengths
            # of 60-150 iterations). With all 9 sampled, seed 0 still lost 1 of 128 (as
            # second player) at 90 iterations and none of seeds 0-5 did at 120.
            # docs/results.md, "Learning checks on any machine".
            "selfplay.num_games=64", "selfplay.num_plies=9", "selfplay.sample_plies=9",
            "replay.capacity=8192",
            "learner.learning_rate=0.002",
            "run.num_iterations=120", "run.learner_steps=24", "run.batch_size=128",
            "run.eval_games=128", "run.eval_simulations=64",
        ),
        opponent="perfect",
        max_losses=0,
    ),
    "connect_four": Recipe(
        overrides=_COMMON + (
            "env.name=connect_four",
            "network.channels=16", "network.num_blocks=1", "network.value_hidden=32",
            # Unvisited moves count as draws, not losses: with a few dozen simulations the
            # search then still tries low-prior moves and finds the immediate wins and
            # blocks that self-play must teach the prior (with -1 it mostly misses them).
            "search.num_simulations=24", "search.unvisited_q=0.0",
            "selfplay.num_games=64", "selfplay.num_plies=21", "selfplay.sample_plies=8",
            "replay.capacity=40000",
            "learner.learning_rate=0.002",
            "run.num_iterations=60", "run.learner_steps=12", "run.batch_size=256",
            "run.eval_games=200", "run.eval_simulations=32",
        ),
        opponent="random",
        min_score=0.95,
    ),
    "gardner_chess": Recipe(
        overrides=_COMMON + (
            "env.name=gardner_chess",
            "network.channels=32", "network.num_blocks=2", "network.value_hidden=32",
            # Gumbel search: with few simulations PUCT misses low-prior mates and self-play
            # drifts into repetition draws that teach nothing (docs/results.md, "Gardner chess").
            "search.algorithm=gumbel", "search.num_simulations=16", "search.max_num_considered_actions=8",
            "selfplay.num_games=32", "selfplay.num_plies=32", "selfplay.sample_plies=8",
            "replay.capacity=20000",
            "learner.learning_rate=0.002",
            # 30 iterations scored 0.52-0.56 on one CPU and 0.74 on another (same seed):
            # too little self-play to be stronger on every CPU; 60 score 0.75. More learner
            # steps on the same data (24 a iteration) do not help (0.52).
            "run.num_iterations=60", "run.learner_steps=12", "run.batch_size=128",
            # Head to head with the untrained network, both searching with 8 simulations
            # (the first 6 plies sampled from the visits, so that games differ); games stop at
            # 60 plies and are adjudicated by material (azdb_jax.adjudication).
            "run.eval_games=64", "run.eval_simulations=8", "run.eval_max_plies=60",
            "run.eval_adjudication=\"material\"",
        ),
        opponent="untrained",
        min_points=0.6,
    ),
    "nim": Recipe(
        overrides=_COMMON + (
            "env.name=nim", "env.nim_heaps=[1,3,5]",
            "network.channels=32", "network.num_blocks=2", "network.value_hidden=32",
            # Stronger root noise keeps self-play visiting the positions off the winning line.
            "search.num_simulations=32", "search.dirichlet_fraction=0.5",
            "selfplay.num_games=64", "selfplay.num_plies=9", "selfplay.sample_plies=4",
            "replay.capacity=8192",
            "learner.learning_rate=0.002",
            "run.num_iterations=30", "run.learner_steps=24", "run.batch_size=128",
        ),
        min_accuracy_margin=0.25,
    ),
}

GAMES = tuple(RECIPES)


def make_config(game: str, extra_overrides: Sequence[str] = ()) -> config_lib.TrainConfig:
    """The recipe's config: the ``demo`` preset with its overrides, then ``extra_overrides``."""
    if game not in RECIPES:
        raise ValueError(f"unknown game {game!r}; recipes exist for {GAMES}")
    return config_lib.apply_overrides(get_preset("demo"), list(RECIPES[game].overrides) + list(extra_overrides))


# ------------------------------------------------------------------ training


class TrainedRun(NamedTuple):
    """What ``train`` hands back."""

    components: trainer.Components
    params: Any  # the final network parameters
    initial_params: Any  # the untrained parameters (when kept), else None
    stats: Dict[str, Any]  # iterations, learner steps, seconds, last iteration's metrics


def train(config: config_lib.TrainConfig, *, keep_initial: bool = False) -> TrainedRun:
    """Runs ``config``'s iterations in memory and returns the final parameters.

    The same programs as ``runner.train`` (``runner.programs``: jitted self-play window,
    jitted learner step, ``trainer.train_iteration`` dispatching them), without the run directory: no
    checkpoints, metrics files or built-in evaluation. ``keep_initial`` also keeps a
    copy of the untrained parameters, as a reference for the evaluations.
    """
    start = time.perf_counter()
    programs = runner.programs(config)
    components = programs.components
    state = programs.init(jax.random.PRNGKey(config.run.seed))
    # The phases donate the state, so the untrained parameters are copied out first.
    initial = jax.tree.map(jnp.copy, state.train_state.params) if keep_initial else None
    metrics: Dict[str, Any] = {}
    for _ in range(config.run.num_iterations):
        state, metrics = trainer.train_iteration(components, state, selfplay_fn=programs.selfplay,
                                                 learner_fn=programs.learner)
    metrics = {name: round(float(value), 4) for name, value in jax.device_get(metrics).items()}
    params = jax.block_until_ready(state.train_state.params)
    stats = dict(iterations=int(state.iteration), learner_steps=int(state.train_state.step),
                 train_seconds=round(time.perf_counter() - start, 1), last_metrics=metrics)
    return TrainedRun(components, params, initial, stats)


# ------------------------------------------------------------------ evaluation


def eval_search_config(config: config_lib.TrainConfig):
    """The search the trained agent plays with: the run's search at ``run.eval_simulations``."""
    return dataclasses.replace(config.search, num_simulations=config.run.eval_simulations)


def arena_eval(config: config_lib.TrainConfig, components: trainer.Components, params: Any,
               opponent: str, opponent_params: Any = None) -> Dict[str, Any]:
    """W/D/L of the trained agent (player 0, no noise) against ``opponent``, both colours.

    ``opponent`` is a fixed opponent's name (``opponents.opponents_for``) or "untrained":
    the same search with ``opponent_params`` (the untrained network); both sides then
    sample their first 6 plies from the visit counts, so that the games differ. Games stop
    at ``run.eval_max_plies`` (default: the game's cap), scored by ``run.eval_adjudication``.
    """
    env = components.env
    sample_plies = 6 if opponent == "untrained" else 0
    agent = components.agent(None, None, search_config=eval_search_config(config)).player_policy(
        0, sample_plies=sample_plies)
    if opponent == "untrained":
        policy_b = agent
    else:
        policy_b = opponents.named_opponents(env, [opponent])[opponent]
    num_games = config.run.eval_games + config.run.eval_games % 2
    play = jax.jit(functools.partial(arena.play_games, env, agent, policy_b=policy_b, num_games=num_games,
                                     max_plies=config.run.eval_max_plies or games.max_plies(env),
                                     adjudicate=adjudication.adjudicator(env, config.run.eval_adjudication)))
    key = jax.random.PRNGKey(config.run.seed + 1)
    summary = arena.summarize(jax.device_get(play(params_a=params, params_b=opponent_params, rng_key=key)))
    n = max(summary["finished"], 1)
    summary["win_rate"] = summary["wins"] / n
    summary["draw_rate"] = summary["draws"] / n
    summary["loss_rate"] = summary["losses"] / n
    summary["opponent"] = opponent
    return summary


def nim_oracle_eval(components: trainer.Components, params: Any) -> Dict[str, Any]:
    """Compares the network's prior and value with the Nim oracle over every position.

    The expert measure of player 0 without search (``azdb_jax.evaluation.nim.expert_measure``):
    top-1 accuracy over the non-terminal positions won for the side to move (the share
    where the prior's argmax over legal moves wins), against its random baseline, the
    mean over those positions of ``#winning / #legal``; value sign accuracy over every
    non-terminal position (``sign(v)`` is the game value: +1 won, -1 lost for the side
    to move), also split into won and lost positions.
    """
    measure = nim_eval.expert_measure(components.agent(params, None))
    player = measure["players"][0]
    accuracy, baseline = player["top1_accuracy"], measure["random_baseline"]
    return dict(
        positions=measure["positions"],
        won_positions=measure["won_positions"],
        policy_top1_accuracy=accuracy,
        random_baseline=baseline,
        accuracy_margin=accuracy - baseline,
        value_sign_accuracy=player["value_sign_accuracy"],
        value_sign_accuracy_won=player["value_sign_accuracy_won"],
        value_sign_accuracy_lost=player["value_sign_accuracy_lost"],
    )


# ------------------------------------------------------------------ a whole check


def evaluate(game: str, config: config_lib.TrainConfig, components: trainer.Components,
             params: Any, initial_params: Any = None) -> Dict[str, Any]:
    """The recipe's measurement of ``params``: oracle comparison (Nim) or arena games
    (against the untrained network ``initial_params`` for Gardner chess): a recipe without
    an opponent is measured against the game's oracle."""
    recipe = RECIPES[game]
    if not recipe.opponent:
        return nim_oracle_eval(components, params)
    return arena_eval(config, components, params, recipe.opponent, initial_params)


def accepted(game: str, result: Dict[str, Any]) -> bool:
    """Whether ``result`` (from ``evaluate``) meets the recipe's acceptance bar."""
    recipe = RECIPES[game]
    ok = True
    if recipe.min_accuracy_margin is not None:
        ok &= result["accuracy_margin"] >= recipe.min_accuracy_margin
    if recipe.max_losses is not None:
        ok &= result["unfinished"] == 0 and result["losses"] <= recipe.max_losses
    if recipe.min_score is not None:
        ok &= result["unfinished"] == 0 and result["win_rate"] >= recipe.min_score
    if recipe.min_points is not None:
        ok &= result["unfinished"] == 0 and result["score"] >= recipe.min_points
    return bool(ok)


def run_check(game: str, extra_overrides: Sequence[str] = (), *, reference: bool = True) -> Dict[str, Any]:
    """Trains the recipe of ``game``, evaluates it and returns the report.

    ``report["passed"]`` says whether the acceptance bar was met; with ``reference`` the
    untrained network is measured the same way (``report["untrained"]``) to show what
    the search alone achieves.
    """
    recipe = RECIPES[game]
    config = make_config(game, extra_overrides)
    head_to_head = recipe.opponent == "untrained"
    run = train(config, keep_initial=reference or head_to_head)
    start = time.perf_counter()
    result = evaluate(game, config, run.components, run.params, run.initial_params)
    eval_seconds = round(time.perf_counter() - start, 1)
    report = dict(game=game, passed=accepted(game, result), result=result, eval_seconds=eval_seconds,
                  total_seconds=round(run.stats["train_seconds"] + eval_seconds, 1), training=run.stats,
                  overrides=list(recipe.overrides) + list(extra_overrides),
                  thresholds=dict(max_losses=recipe.max_losses, min_score=recipe.min_score,
                                  min_points=recipe.min_points, min_accuracy_margin=recipe.min_accuracy_margin))
    if reference and not head_to_head:
        report["untrained"] = evaluate(game, config, run.components, run.initial_params)
    return report


__all__ = ["Recipe", "RECIPES", "GAMES", "make_config", "TrainedRun", "train", "eval_search_config", "arena_eval",
           "nim_oracle_eval", "evaluate", "accepted", "run_check"]
