"""Self-play throughput against a plain pgx + mctx AlphaZero, printed as JSON.

  python benchmarks/selfplay.py --game=chess --batch=32 --simulations=32 --channels=32 --blocks=4 --plies=4
  python benchmarks/selfplay.py --game=connect_four --batch=64 --num_players=1,5 --algorithms=gumbel

For every search algorithm (``--algorithms``) and team size (``--num_players``), on the
same game, network, batch and number of simulations, one run measures:

  positions_per_s       searched-and-played positions per second of our self-play: a
                        jitted window of --plies plies of
                        ``azdb_jax.selfplay.selfplay_iteration`` called as the trainer
                        calls it (a team of n; for n > 1, λ_i = --lam for i > 0 and the
                        intrinsic reward r_d with ψ in the search);
  reference_positions_per_s  the same for the plain pgx + mctx AlphaZero of
                        ``benchmarks/reference.py`` (same network, latent 0);
  speedup               positions_per_s / reference_positions_per_s;
  overhead_ratio        one ply / (S + 1) batched forward passes: what the search,
                        the game steps and the bookkeeping cost on top of the network
                        calls a search must make (1.0 = free search); also the
                        reference's; ``forward_ms`` is one such forward pass;
  tree_bytes_per_node   bytes of one search's tree (every array of it, embeddings
                        included) / (batch x (S + 1)); also the reference's;
  device_peak_bytes     (GPU/TPU; None on a CPU, which keeps no count) the device's
                        peak memory over the run, once in the report: measure one
                        configuration per process (one --algorithms, one
                        --num_players, --noreference) for the peak of our self-play at a
                        batch, and raise --batch to find the largest that fits.
  team_vs_one           (n > 1, when 1 is among --num_players) the team's positions/s
                        / the team of one's, both windows timed in the same turns.

Timing: per algorithm, after compilation, our window, the reference's and a run of
forward passes for every team size alternate ``--repeats`` times and the medians are
reported, so that a load change on a shared machine hits them all. Compare ratios
taken in one run.
"""

import functools
import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, Optional

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

import reference  # benchmarks/reference.py (this folder is on the path when a script runs)

from azdb_jax import diversity, features, games, matchmaking, networks, search, selfplay
from azdb_jax.cli import common_flags
from azdb_jax.config import DiversityConfig, TeamConfig

# The games pgx ships: the plain pgx + mctx reference plays them.
_GAME = common_flags.define_game("Game.", default="connect_four",
                                 choices=[game.id for game in games.REGISTRY if game.from_pgx])
_BATCH = flags.DEFINE_integer("batch", 64, "Games played side by side.", lower_bound=1)
_SIMULATIONS = common_flags.define_simulations("Search simulations per move.", default=32)
_NUM_PLAYERS = flags.DEFINE_list("num_players", ["1", "10"], "Team sizes to measure.")
_LAM = flags.DEFINE_float("lam", 0.9, "λ_i of players i > 0 in teams of more than one (diversity on when < 1).")
_CHANNELS = flags.DEFINE_integer("channels", 32, "Network channels.", lower_bound=1)
_BLOCKS = flags.DEFINE_integer("blocks", 2, "Residual blocks.", lower_bound=0)
_COMPUTE_DTYPE = flags.DEFINE_enum("compute_dtype", "float32", networks.COMPUTE_DTYPES,
                                   "Activations' dtype (the chess presets use bfloat16).")
_PLIES = flags.DEFINE_integer("plies", 16, "Plies per timed self-play window.", lower_bound=1)
_ALGORITHMS = flags.DEFINE_list("algorithms", list(search.ALGORITHMS), "Search algorithms to measure.")
flags.DEFINE_alias("algorithm", "algorithms")
_REFERENCE = flags.DEFINE_bool("reference", True, "Also time the plain pgx + mctx reference.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed repetitions.", lower_bound=1)
_FORWARDS = 8  # forward passes per timed turn (one is a few ms: too short to time alone)


def search_tree(search_output: search.SearchOutput) -> Any:
    """The tree of a finished search of ours (the one place that knows where it lives)."""
    return search_output.tree


def tree_bytes(tree: Any) -> int:
    """Bytes of every array of a tree (arrays or shape structs)."""
    return int(sum(np.prod(leaf.shape, dtype=np.int64) * np.dtype(leaf.dtype).itemsize
                   for leaf in jax.tree.leaves(tree)))


def device_peak_bytes() -> Optional[int]:
    """The device's peak bytes in use so far (GPU/TPU), or None (a CPU keeps no count)."""
    stats = jax.devices()[0].memory_stats()
    return int(stats["peak_bytes_in_use"]) if stats and "peak_bytes_in_use" in stats else None


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def _alternating(fns: Dict[Any, Callable[[], Any]], repeats: int) -> Dict[Any, float]:
    """Median seconds of each function, compiled first, then timed in turns."""
    for fn in fns.values():
        jax.block_until_ready(fn())
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(_timed(fn))
    return {name: statistics.median(values) for name, values in times.items()}


class _Setup:
    """One game, network (for a team of n) and batch of games, shared by ours and the reference."""

    def __init__(self, env, num_players: int):
        self.env = env
        self.num_players = num_players
        net_config = networks.NetworkConfig(channels=_CHANNELS.value, num_blocks=_BLOCKS.value,
                                            value_hidden=_CHANNELS.value, compute_dtype=_COMPUTE_DTYPE.value)
        self.network = networks.make_network(net_config, num_actions=env.num_actions, num_players=num_players)
        self.graph = matchmaking.uniform(jnp.zeros((num_players, num_players)))
        self.games = selfplay.init_selfplay(env, jax.random.PRNGKey(0), num_games=_BATCH.value, graph=self.graph)
        self.params = self.network.init(jax.random.PRNGKey(1), self.games.env_state.observation)
        self.lambdas = jnp.asarray(TeamConfig(num_players, _LAM.value if num_players > 1 else 1.0).lambdas)
        self.diverse = bool(np.any(np.asarray(self.lambdas) < 1.0))
        self.feature_fn = features.feature_fn(env)
        num_features = jax.eval_shape(self.feature_fn, jax.eval_shape(env.init, jax.random.PRNGKey(0))).shape[-1]
        # ψ as after some training: players apart, so that r_d is not zero.
        self.psi = 0.1 * jax.random.uniform(jax.random.PRNGKey(3), (num_players, num_features))
        self.reward_fn = (functools.partial(diversity.team_intrinsic_reward, l0=DiversityConfig().l0)
                          if self.diverse else None)

    def ours(self, algorithm: str):
        """Our self-play window (jitted) and the abstract output of one of its searches."""
        config = search.SearchConfig(num_simulations=_SIMULATIONS.value, algorithm=algorithm)
        sp_config = selfplay.SelfPlayConfig(num_games=_BATCH.value, num_plies=_PLIES.value)
        window = jax.jit(lambda params, key, games, psi: selfplay.selfplay_iteration(
            self.env, self.network.apply, params, key, games, lambdas=self.lambdas, config=sp_config,
            search_config=config, graph=self.graph, feature_fn=self.feature_fn,
            intrinsic_reward_fn=self.reward_fn, hook_params=psi))
        root = self.games.env_state
        players = jnp.arange(_BATCH.value) % self.num_players
        one_search = jax.eval_shape(lambda params, key, psi: search.run_search(
            self.env, self.network.apply, params, key, root, players, self.lambdas[players], config=config,
            add_noise=True, feature_fn=self.feature_fn if self.diverse else None,
            intrinsic_reward_fn=self.reward_fn, hook_params=psi), self.params, jax.random.PRNGKey(2), self.psi)
        key = jax.random.PRNGKey(2)
        return (lambda: window(self.params, key, self.games, self.psi)), search_tree(one_search)

    def reference(self, algorithm: str):
        """The reference's window (jitted) and the abstract tree of one of its searches."""
        window = jax.jit(functools.partial(reference.selfplay, self.env, self.network.apply, algorithm=algorithm,
                                           num_simulations=_SIMULATIONS.value, num_plies=_PLIES.value))
        root = self.games.env_state
        policy_output = jax.eval_shape(functools.partial(
            reference.search, self.env, self.network.apply, algorithm=algorithm,
            num_simulations=_SIMULATIONS.value), self.params, jax.random.PRNGKey(2), root)
        key = jax.random.PRNGKey(2)
        return (lambda: window(self.params, key, root)), policy_output.search_tree

    def forwards(self, count: int):
        """``count`` batched network forward passes on the root observations, back to back."""
        forward = jax.jit(self.network.apply)
        players = jnp.zeros((_BATCH.value,), jnp.int32)
        obs = self.games.env_state.observation
        return lambda: [forward(self.params, obs, players).value for _ in range(count)][-1]


def main(argv):
    del argv
    env = games.make(_GAME.value)
    batch, sims, plies = _BATCH.value, _SIMULATIONS.value, _PLIES.value
    nodes = batch * (sims + 1)
    team_sizes = [int(n) for n in _NUM_PLAYERS.value]
    for algorithm in _ALGORITHMS.value:
        if algorithm not in search.ALGORITHMS:
            raise app.UsageError(f"--algorithms: unknown {algorithm!r}; known: {', '.join(search.ALGORITHMS)}")
    setups = {n: _Setup(env, n) for n in team_sizes}
    results = []
    for algorithm in _ALGORITHMS.value:
        fns, trees = {}, {}
        for n, setup in setups.items():
            fns[("ours", n)], trees[("ours", n)] = setup.ours(algorithm)
            fns[("forwards", n)] = setup.forwards(_FORWARDS)
            if _REFERENCE.value:
                fns[("reference", n)], trees[("reference", n)] = setup.reference(algorithm)
        seconds = _alternating(fns, _REPEATS.value)
        for n, setup in setups.items():
            ours_s, forward_s = seconds[("ours", n)], seconds[("forwards", n)] / _FORWARDS
            row = dict(algorithm=algorithm, num_players=n, lam=round(float(np.asarray(setup.lambdas)[-1]), 4),
                       diversity_in_search=setup.diverse,
                       positions_per_s=round(batch * plies / ours_s, 1),
                       ply_ms=round(1e3 * ours_s / plies, 2),
                       forward_ms=round(1e3 * forward_s, 3),
                       overhead_ratio=round(ours_s / plies / ((sims + 1) * forward_s), 2),
                       tree_bytes_per_node=round(tree_bytes(trees[("ours", n)]) / nodes))
            if _REFERENCE.value:
                ref_s = seconds[("reference", n)]
                row.update(reference_positions_per_s=round(batch * plies / ref_s, 1),
                           reference_ply_ms=round(1e3 * ref_s / plies, 2),
                           reference_overhead_ratio=round(ref_s / plies / ((sims + 1) * forward_s), 2),
                           reference_tree_bytes_per_node=round(tree_bytes(trees[("reference", n)]) / nodes),
                           speedup=round(ref_s / ours_s, 2))
            if n != 1 and 1 in setups:
                row["team_vs_one"] = round(seconds[("ours", 1)] / ours_s, 3)
            results.append(row)
            print(json.dumps(row), file=sys.stderr)  # progress: a long run shows its rows as they come
    report = dict(game=_GAME.value, batch=batch, simulations=sims, plies=plies, channels=_CHANNELS.value,
                  blocks=_BLOCKS.value, compute_dtype=_COMPUTE_DTYPE.value, device=str(jax.devices()[0].platform), num_devices=jax.device_count(),
                  device_peak_bytes=device_peak_bytes(), results=results)
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    app.run(main)
