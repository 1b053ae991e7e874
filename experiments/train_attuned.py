"""Trains the *attuned* senior: the strong player fine-tuned on framework games with the junior.

The paper's attuned agents (Hamade et al. 2024, §3.2) are leela fine-tuned on games of
leela + maia teams played in Stochastic Tag Team or Hand and Brain. Here the strong
run's player 0 plays both teams' senior (STT) or brain (HB) with its self-play search,
the junior makes its share of the moves, and the network learns the framework's results
(value) and its own search's moves (policy) — ``azdb_jax.skill.attuned``.

    python experiments/train_attuned.py --strong=runs/sc_az --junior=runs/sc_az@10 \\
        --junior_kind=search --junior_simulations=8 --framework=stt --workdir=runs/sc_attuned_stt

``--workdir`` becomes a run directory (the strong run's config, one checkpoint with the
fine-tuned network) that every evaluation script loads like a trained run, e.g.
``experiments/skill_compat.py --attuned_stt=runs/sc_attuned_stt``; ``attuned.json`` beside
it records the settings and ``attuned_metrics.jsonl`` each round. The command line of
``azdb_jax.skill.experiment.attune``.
"""

from typing import List

from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.skill import agents, attuned, experiment

_STRONG = flags.DEFINE_string("strong", None, "The strong run's directory[@step]; its player 0 is fine-tuned.")
_JUNIOR = flags.DEFINE_string("junior", None, "The junior's run directory[@step] (its player 0).")
_JUNIOR_KIND = flags.DEFINE_enum("junior_kind", "policy", agents.JUNIOR_KINDS,
                                 "The junior: its network's policy, or a small PUCT search sampled by visits.")
_TEMPERATURE = flags.DEFINE_float("junior_temperature", 1.0, "The junior's sampling temperature.")
_JUNIOR_SIMS = flags.DEFINE_integer("junior_simulations", 8, "Simulations of a search junior.", lower_bound=1)
_FRAMEWORK = flags.DEFINE_enum("framework", "stt", attuned.TRAINABLE_FRAMEWORKS, "The framework to attune to.")
_SIMULATIONS = common_flags.define_simulations("The senior's search simulations in the framework games "
                                               "(default: the strong run's self-play budget).")
_ITERATIONS = flags.DEFINE_integer("iterations", 8, "Rounds of games + updates.", lower_bound=1)
_GAMES = common_flags.define_games("Framework games per round.", default=64)
_MAX_PLIES = common_flags.define_max_plies("Games stop here and are adjudicated by material.", default=80)
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 2, "Uniformly random plies to each game's start.",
                                      lower_bound=0)
_STEPS = flags.DEFINE_integer("learner_steps", 16, "Updates per round.", lower_bound=1)
_BATCH = flags.DEFINE_integer("batch_size", 256, "Positions per update.", lower_bound=1)
_LR = flags.DEFINE_float("learning_rate", 5e-4, "Adam's learning rate (a fine-tuning rate).")
_WINDOW = flags.DEFINE_integer("window", 4, "Updates draw from the last this-many rounds' games.", lower_bound=1)
_SEED = common_flags.define_seed("Seed of the starts, the coins, the searches and the batches.")
_WORKDIR = common_flags.define_workdir("Output run directory (must not hold a run).")


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    if not _STRONG.value or not _JUNIOR.value or not _WORKDIR.value:
        raise ValueError("--strong, --junior and --workdir are required")
    config = attuned.AttunedConfig(
        framework=_FRAMEWORK.value, iterations=_ITERATIONS.value, num_games=_GAMES.value, max_plies=_MAX_PLIES.value,
        opening_plies=_OPENING_PLIES.value, learner_steps=_STEPS.value, batch_size=_BATCH.value,
        learning_rate=_LR.value, window=_WINDOW.value, seed=_SEED.value)
    junior = experiment.Junior(_JUNIOR.value, kind=_JUNIOR_KIND.value, temperature=_TEMPERATURE.value,
                               simulations=_JUNIOR_SIMS.value)
    workdir = experiment.attune(_STRONG.value, junior, _WORKDIR.value, config, simulations=_SIMULATIONS.value)
    print(f"wrote {workdir} (load it like a run: --attuned_{config.framework}={workdir})")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
