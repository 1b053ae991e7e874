"""azdb_jax: diverse AlphaZero teams (AZdb) in JAX.

Importing the package does no work: each public module (``__all__``) is imported the first
time it is used, as ``azdb_jax.pretrained`` or ``from azdb_jax import agent``. The API
reference (``docs/api``, built with Sphinx) documents every module by import layer.

The public modules, roughly in the order a user meets them:

- ``pretrained``: trained teams shipped in the package, loaded as agents;
- ``agent``: the agent a run becomes (its team search and its policies);
- ``runs``, ``runner``, ``population``, ``config``, ``presets``: reading runs back, training (one
  run, or many seeds as one program), configuring;
- ``arena``, ``planning``, ``opponents``: games between agents, selection rules, fixed opponents;
- ``games``, ``envs``: the game registry and the env implementations;
- ``search``, ``selfplay``, ``targets``, ``replay``, ``learner``, ``diversity``,
  ``matchmaking``, ``nash``, ``ratings``, ``networks``, ``features``, ``trainer``,
  ``checkpoint``, ``sharding``: the method's parts;
- ``evaluation``, ``classical``, ``skill``, ``rbc``, ``uci``, ``reproduction``, ``data``:
  evaluation, classical search, skill-compatible play, Reconnaissance Blind Chess, the UCI
  engine, the paper's reproduction, the data loaders.
"""

import importlib

__version__ = "0.1.0"

__all__ = [
    "pretrained", "agent", "runs", "runner", "population", "config", "presets", "arena", "planning", "opponents", "games", "envs",
    "search", "selfplay", "targets", "replay", "learner", "diversity", "matchmaking", "nash", "ratings", "networks",
    "features", "trainer", "checkpoint", "sharding", "evaluation", "classical", "skill", "rbc", "uci",
    "reproduction", "data",
]


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
