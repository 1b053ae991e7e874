"""The main job: train an AlphaZero team on a supported game (see ``azdb_jax.cli.train``).

  python experiments/train.py --preset=demo --workdir=runs/demo
  python experiments/train.py --preset=demo --workdir=runs/demo --resume
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax.cli import train  # noqa: E402  pylint: disable=g-import-not-at-top

if __name__ == "__main__":
    train.run()
