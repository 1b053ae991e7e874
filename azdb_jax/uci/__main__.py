"""``python -m azdb_jax.uci``: the UCI engine (see ``azdb_jax.uci.main``)."""

from azdb_jax.uci.main import run

run()
