"""Installs azdb_jax: a JAX library for training diverse AlphaZero teams (AZdb)."""

import pathlib

import setuptools

ROOT = pathlib.Path(__file__).parent

# Version ranges: see BUILD.md ("Dependency pins") for why each bound is where it is.
INSTALL_REQUIRES = [
    # JAX 0.11 and later need Python 3.12: on 3.11 pip takes 0.10.2, on 3.12 and later the newest.
    "jax>=0.10.2,<0.13",
    # flax 0.12.9 and later need JAX 0.11.1 (and Python 3.12); flax 0.12.8's nnx does not import
    # on JAX 0.11.1 and later, so with the newer JAX comes flax 0.12.10 or later.
    "flax>=0.12.8,<0.13; python_version < '3.12'",
    "flax>=0.12.10,<0.13; python_version >= '3.12'",
    "optax>=0.2.8,<0.3",
    "mctx>=0.0.71,<0.1",
    "chex>=0.1.92,<0.2",
    # We build on pgx's chess internals (board layout, move generator); they are private
    # API, so the pin is tight and a new pgx minor is re-verified before widening it.
    "pgx>=2.6.0,<2.7",
    "orbax-checkpoint>=0.12.8,<0.13",
    "absl-py>=2.0",
    "chess>=1.10.0,<2",
    "numpy>=1.26",
    "tqdm>=4.66",
    "tensorboardX>=2.6",  # TensorBoard event files without TensorFlow
    "matplotlib>=3.8",  # interaction-graph and occupancy heatmaps written during training
]

# Reconnaissance Blind Chess (azdb_jax.rbc): the reconchess game and bots. An extra, not a core
# dependency: it brings pygame, lxml and requests, which nothing else needs.
RBC_REQUIRES = ["reconchess>=1.6.9,<1.7"]

# The connect-four solver (azdb_jax.games.connect_four_solver: ground truth and the "perfect"
# opponent): BitBully and its opening books (bitbully-databases, 27 MB). An extra: only
# connect four's measures need it. Below 0.1: a young package whose API may still move.
SOLVER_REQUIRES = ["bitbully>=0.0.79,<0.1"]

# The documentation site (scripts/docs.sh): Sphinx with MyST for the Markdown pages and the
# tutorial notebook (rendered as stored, not executed).
DOCS_REQUIRES = ["sphinx>=7.2,<9", "myst-nb>=1.1,<2"]

# Accelerators, the JAX way: each extra brings JAX's own extra of the same name (its
# accelerator plugin and, for CUDA, the NVIDIA libraries from PyPI) at the version range above.
JAX_REQUIRES = next(r for r in INSTALL_REQUIRES if r.startswith("jax>="))
ACCELERATOR_EXTRAS = {name: [JAX_REQUIRES.replace("jax", f"jax[{name}]", 1)] for name in ("cuda12", "cuda13", "tpu")}

# Weights & Biases logging of a run (azdb_jax.wandb_log, azdb-train --wandb_project): optional,
# TensorBoard and metrics.jsonl need nothing more. 0.19.10: wandb.init(reinit="create_new"), one
# run per training run even beside a notebook's own; tested on 0.31.0.
WANDB_REQUIRES = ["wandb>=0.19.10"]

EXTRAS_REQUIRE = {
    "test": ["pytest>=8.0", "pytest-xdist>=3.8", "scipy>=1.11", "nbclient>=0.9", "nbformat>=5.9", "ipykernel>=6.25",
             "build>=1.2", "wheel>=0.42"]  # the wheel and sdist of tests/test_quickstart.py
    + DOCS_REQUIRES + RBC_REQUIRES + SOLVER_REQUIRES + WANDB_REQUIRES,
    **ACCELERATOR_EXTRAS,
    "docs": DOCS_REQUIRES,
    "rbc": RBC_REQUIRES,
    "solver": SOLVER_REQUIRES,
    "wandb": WANDB_REQUIRES,
    "notebooks": ["jupyter>=1.0", "nbformat>=5.9"],
}

setuptools.setup(
    name="azdb_jax",
    version="0.1.0",
    description="Diverse AlphaZero teams (AZdb) in JAX: pgx games, mctx search, latent-conditioned players.",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",  # chex 0.1.92 and orbax-checkpoint 0.12.8 need 3.11
    packages=setuptools.find_packages(include=["azdb_jax", "azdb_jax.*"]),
    # The shipped teams (azdb_jax.pretrained): each a folder of config, checkpoint and manifest.
    package_data={"azdb_jax.data": ["*.csv", "gardner_puzzles/*.csv"], "azdb_jax.pretrained": ["*/**/*"]},
    install_requires=INSTALL_REQUIRES,
    extras_require=EXTRAS_REQUIRE,
    entry_points={
        "console_scripts": [
            "azdb-train = azdb_jax.cli.train:run",  # the main job: train a team (the demo by default)
            "azdb-eval = azdb_jax.cli.eval:run",  # a trained team's table and picture
            "azdb-uci = azdb_jax.uci.main:run",  # a trained chess team as a UCI engine
            "azdb-alphabeta = azdb_jax.classical.uci:run",  # the classical alpha-beta searcher as a UCI engine
        ],
    },
    license="Apache-2.0",
)
