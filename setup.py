"""Installs azdb_jax: a JAX library for training diverse AlphaZero teams (AZdb)."""

import pathlib

import setuptools

ROOT = pathlib.Path(__file__).parent

# Version ranges: see BUILD.md ("Dependency pins") for why each bound is where it is.
INSTALL_REQUIRES = [
    "jax>=0.6.0,<0.11",
    "flax>=0.10.0,<0.13",
    "optax>=0.2.4,<0.3",
    "mctx>=0.0.5,<0.1",
    "chex>=0.1.88,<0.2",
    # We build on pgx's chess internals (board layout, move generator); they are private
    # API, so the pin is tight and a new pgx minor is re-verified before widening it.
    "pgx>=2.6.0,<2.7",
    "orbax-checkpoint>=0.11.0,<0.13",
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

EXTRAS_REQUIRE = {
    "test": ["pytest>=8.0", "pytest-xdist>=3.5", "scipy>=1.11", "nbclient>=0.9", "nbformat>=5.9", "ipykernel>=6.25",
             "sphinx>=7.2,<9"]  # the API reference (docs/api), built by tests/test_api_reference.py
    + RBC_REQUIRES + SOLVER_REQUIRES,
    "docs": ["sphinx>=7.2,<9"],
    "rbc": RBC_REQUIRES,
    "solver": SOLVER_REQUIRES,
    "notebooks": ["jupyter>=1.0", "nbformat>=5.9"],
}

setuptools.setup(
    name="azdb_jax",
    version="0.1.0",
    description="Diverse AlphaZero teams (AZdb) in JAX: pgx games, mctx search, latent-conditioned players.",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
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
