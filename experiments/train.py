"""The main job: train an AlphaZero team on a supported game (see ``azdb_jax.cli.train``).

  python experiments/train.py --preset=demo --workdir=runs/demo
  python experiments/train.py --preset=demo --workdir=runs/demo --resume
"""

from azdb_jax.cli import train

if __name__ == "__main__":
    train.run()
