"""Named, typed training configurations (``--preset=NAME`` of the training entry points).

demo        CPU, about ten minutes on 2 cores: a diverse team of 3 on connect four with a
            small network — player 0 plain AlphaZero (λ_0 = 1), players 1-2 with the
            diversity reward (λ = 0.7), PSRO-Nash matchmaking (paper §3, App. B). The
            control of the method is the same preset with --override=team.lam=1.0.
demo_chess  CPU, a few minutes: a team of 2 on chess with a tiny network and few
            simulations. It learns little; it makes chess checkpoints for trying the
            evaluation scripts (puzzles, matches with PGN, opening diversity) on a CPU.
az_fast     the paper's "fast" setup (§4 Setup) with one player: chess, batch 1024,
            every position stored, 400 simulations; for accelerators.
azdb_fast   the same with a team of 5 and PSRO-Nash matchmaking.
az_full     the paper's "full" setup with one player: batch 4096, 10% of positions
            stored, 1M-position replay, 1.6M learner steps, 400 simulations.
azdb_full   the same with a team of 10.

AlphaZero's chess network (256 channels, 19 residual blocks) and optimiser (SGD with
momentum 0.9, learning rate 0.2 dropped tenfold three times, weight decay 1e-4 as L2
on the weights) are used for the paper's setups. Self-play width (games x plies per
iteration) and learner steps per iteration are starting points for one accelerator
host; scale ``selfplay.num_games`` with the number of devices.
"""

from typing import Callable, Dict

from azdb_jax.config import EnvConfig, RunConfig, TeamConfig, TrainConfig
from azdb_jax.learner import LearnerConfig
from azdb_jax.networks import NetworkConfig
from azdb_jax.replay import ReplayConfig
from azdb_jax.search import SearchConfig
from azdb_jax.selfplay import SelfPlayConfig


def demo() -> TrainConfig:
    return TrainConfig(
        env=EnvConfig(name="connect_four"),
        # λ = 0.7: in 120 iterations the diverse players' d_i end ~3x the control's while
        # they still beat the fixed references (λ = 0.9 barely separates them in this
        # budget, λ = 0.5 loses to minimax2; docs/results.md, "The demo").
        team=TeamConfig(num_players=3, lam=0.7, matchmaker="psro_nash"),
        network=NetworkConfig(channels=32, num_blocks=2, value_hidden=32),
        search=SearchConfig(num_simulations=24, unvisited_q=0.0),  # few simulations: try every move once
        selfplay=SelfPlayConfig(num_games=64, num_plies=21, sample_plies=8),
        replay=ReplayConfig(capacity=40_000),
        learner=LearnerConfig(optimizer="adamw", learning_rate=2e-3, weight_decay=1e-4),
        run=RunConfig(num_iterations=120, learner_steps=12, batch_size=256, eval_every=40, eval_games=64,
                      eval_simulations=24, checkpoint_every=40),
    )


def demo_chess() -> TrainConfig:
    return TrainConfig(
        env=EnvConfig(name="chess"),
        team=TeamConfig(num_players=2, lam=0.9, matchmaker="selfplay"),
        network=NetworkConfig(channels=16, num_blocks=1, value_hidden=16),
        search=SearchConfig(num_simulations=16, unvisited_q=0.0),
        selfplay=SelfPlayConfig(num_games=32, num_plies=16, sample_plies=16),
        replay=ReplayConfig(capacity=8192),
        learner=LearnerConfig(optimizer="adamw", learning_rate=2e-3, weight_decay=1e-4),
        run=RunConfig(num_iterations=40, learner_steps=4, batch_size=128, eval_every=0, eval_simulations=16,
                      checkpoint_every=10, keep_checkpoints=4, checkpoint_replay=False),
    )


def _chess(num_players: int, *, full: bool) -> TrainConfig:
    steps = 1_600_000
    return TrainConfig(
        env=EnvConfig(name="chess"),
        team=TeamConfig(num_players=num_players, lam=1.0 if num_players == 1 else 0.9,
                        matchmaker="selfplay" if num_players == 1 else "psro_nash"),
        network=NetworkConfig(channels=256, num_blocks=19, value_hidden=256, policy_channels=73,
                              compute_dtype="bfloat16"),
        search=SearchConfig(num_simulations=400),
        selfplay=SelfPlayConfig(num_games=512, num_plies=32, sample_plies=30),
        replay=ReplayConfig(capacity=1_000_000, observation_dtype="float16"),
        learner=LearnerConfig(optimizer="sgd", learning_rate=0.2, momentum=0.9, weight_decay=1e-4,
                              schedule="piecewise", boundaries=(steps // 4, steps // 2, 3 * steps // 4),
                              boundary_scales=(0.1, 0.1, 0.1), history_dropout=0.2),
        run=RunConfig(
            num_iterations=steps // (4 if full else 16),
            learner_steps=4 if full else 16,
            batch_size=4096 if full else 1024,
            store_fraction=0.1 if full else 1.0,
            eval_every=500, eval_games=128, eval_simulations=400, checkpoint_every=500, keep_checkpoints=5),
    )


PRESETS: Dict[str, Callable[[], TrainConfig]] = {
    "demo": demo,
    "demo_chess": demo_chess,
    "az_fast": lambda: _chess(1, full=False),
    "azdb_fast": lambda: _chess(5, full=False),
    "az_full": lambda: _chess(1, full=True),
    "azdb_full": lambda: _chess(10, full=True),
}


def get_preset(name: str) -> TrainConfig:
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}") from None


__all__ = ["PRESETS", "get_preset"]
