"""Learning acceptance of the training core: small AZ runs that must reach known strength.

  python experiments/learning_check.py --game=tic_tac_toe
  python experiments/learning_check.py --game=all
  python experiments/learning_check.py --game=nim --override=run.num_iterations=40

Trains each recipe of ``azdb_jax.evaluation.learning_check`` (plain AlphaZero from the
``demo`` preset with a few overrides and a fixed seed: tic-tac-toe against a perfect
player, connect four against random play, Gardner chess against its untrained network,
Nim against the oracle) and prints one JSON report per game (the numbers and the wall
times of training and evaluation, compilation included); the exit status is 1 when a
recipe misses its acceptance bar. ``tests/test_learning.py`` runs the same recipes and
asserts the same thresholds.
"""

import json
import sys
from typing import List

from absl import app, flags

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import learning_check  # noqa: E402


def main(argv: List[str]) -> None:
    del argv
    games = learning_check.GAMES if _GAME.value == "all" else (_GAME.value,)
    reports = [learning_check.run_check(game, _OVERRIDE.value, reference=_REFERENCE.value) for game in games]
    print(json.dumps(reports if len(reports) > 1 else reports[0], indent=1, sort_keys=True))
    if not all(report["passed"] for report in reports):
        sys.exit(1)


if __name__ == "__main__":
    _GAME = common_flags.define_game("Which recipe to run (all: each in turn).", default="all",
                                     choices=list(learning_check.GAMES) + ["all"])
    _OVERRIDE = flags.DEFINE_multi_string("override", [], "Extra config override section.field=value, "
                                          "applied after the recipe's.")
    _REFERENCE = flags.DEFINE_bool("reference", True, "Also measure the untrained network the same way.")
    app.run(main)
