"""The games' environments: pgx envs with their traps fixed, Nim, and their host-side boards.

Every env follows pgx's contract (``pgx.core.Env``): ``env.init(key) -> State``,
``env.step(state, action) -> State`` on a single game, ``jax.vmap`` for batches;
``State`` carries ``current_player``, ``observation``, ``rewards`` (by player id),
``terminated``, ``truncated`` and ``legal_action_mask``.

Envs are made through the game registry (``azdb_jax.games.make``), which knows each
game's factory and options; this package holds the implementations it makes them from
(``chess``, ``gardner``, ``nim``), boards and conversions (``chess_interop``,
``gardner_interop``, ``gardner_board``, ``board_interop``, ``chess_pgn``) and the
auto-reset wrappers used by self-play.
"""

from azdb_jax.envs.autoreset import reset_where_done, step_autoreset
from azdb_jax.envs.nim import Nim

__all__ = ["reset_where_done", "step_autoreset", "Nim"]
