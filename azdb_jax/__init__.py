"""azdb_jax: diverse AlphaZero teams (AZdb) in JAX.

Submodules are importable on their own; importing the package does no work.
"""

__version__ = "0.1.0"
