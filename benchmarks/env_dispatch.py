"""What the first env calls outside a jitted program cost: pgx's methods as they are against
the library's envs (``games.make``: ``init`` and ``step`` jitted).

  python benchmarks/env_dispatch.py [--game_ids=gardner_chess,chess] [--batch=4] [--plies=3]

A notebook, a test or a host loop that calls ``jax.vmap(env.init)`` and ``jax.vmap(env.step)``
outside ``jax.jit`` runs them primitive by primitive, and JAX compiles every primitive of the
game's rules on its own the first time it meets its shapes. Each measurement runs in a fresh
process with the persistent compilation cache off (compiled primitives are kept per process):
the first batched init and ``--plies`` random legal steps, then the same calls again, wall
seconds and the number of programs compiled. Prints one JSON line per game.
"""

import json
import os
import subprocess
import sys

from absl import app
from absl import flags

_GAME_IDS = flags.DEFINE_list("game_ids", ["gardner_chess", "chess"], "games to measure (registry ids)")
_BATCH = flags.DEFINE_integer("batch", 4, "games stepped side by side")
_PLIES = flags.DEFINE_integer("plies", 3, "random legal steps after the init")

# Run in a child process: ``argv`` = game, "pgx" | "library", batch, steps.
_CHILD = r"""
import json, sys, time
import jax, jax.numpy as jnp
from jax import monitoring
from azdb_jax import games
game, kind, batch, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
compiles = [0]
monitoring.register_event_duration_secs_listener(
    lambda event, seconds, **_: compiles.__setitem__(0, compiles[0] + (event == "/jax/core/compile/backend_compile_duration")))
env = games.make(game) if kind == "library" else games.get(game).make()
def play():
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), batch))
    key = jax.random.PRNGKey(4)
    for _ in range(steps):
        key, sub = jax.random.split(key)
        action = jax.random.categorical(sub, jnp.where(states.legal_action_mask, 0.0, -1e9))
        states = jax.vmap(env.step)(states, action)
    return jax.block_until_ready(states)
out = {}
for name in ("first", "again"):
    start, before = time.perf_counter(), compiles[0]
    play()
    out[name + "_s"], out[name + "_compiles"] = round(time.perf_counter() - start, 3), compiles[0] - before
print(json.dumps(out))
"""


def measure(game: str, kind: str, batch: int, steps: int) -> dict:
    """One fresh process's first and second batched init + steps of ``game`` (``kind``:
    ``"pgx"``, the game's env as built, or ``"library"``, ``games.make``)."""
    env = dict(os.environ, JAX_ENABLE_COMPILATION_CACHE="false", JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    proc = subprocess.run([sys.executable, "-c", _CHILD, game, kind, str(batch), str(steps)], env=env, text=True,
                          capture_output=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"env_dispatch: {game} ({kind}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv):
    del argv
    for game in _GAME_IDS.value:
        pgx_calls = measure(game, "pgx", _BATCH.value, _PLIES.value)
        library = measure(game, "library", _BATCH.value, _PLIES.value)
        print(json.dumps(dict(game=game, batch=_BATCH.value, plies=_PLIES.value, pgx=pgx_calls, library=library,
                              first_call_ratio=round(pgx_calls["first_s"] / library["first_s"], 2))), flush=True)


if __name__ == "__main__":
    app.run(main)
