"""A Gardner chess run's learning curve: player 0 against random, minimax2 and Fairy-Stockfish.

For each checkpoint of the run (or ``--steps``), player 0 (λ_0 = 1, searching as in
self-play, no noise) plays:

- uniform random and the depth-2 legal-move minimax (``minimax2``), ``--games`` games each,
  both colours, as the in-training evaluation plays them (``arena.play_games``: games stop
  at ``--arena_max_plies`` and are adjudicated by material, ``azdb_jax.adjudication``);
- Fairy-Stockfish (``UCI_Variant gardner``) at each ``--engines`` limit, from ``--starts``
  positions reached by ``--opening_plies`` uniformly random plies from the initial position
  (the same for every checkpoint), both colours; engine games stop at ``--max_plies`` and
  are then scored as draws;
- the classical alpha-beta searcher at each ``--classical`` spec (``alphabeta:depth=2``,
  ``alphabeta:nodes=20000``; ``azdb_jax.classical.player``), from the same starts, as the
  engine games are played.

The run's own evaluation scores at the same iteration (``metrics.jsonl``) are copied in
as ``own_vs_<opponent>``.

    python experiments/gardner_curve.py --run=runs/gardner_cpu --engines=depth=1,nodes=1000 \\
        --starts=10 --out=eval/gardner_curve.json

Needs Fairy-Stockfish (``apt-get install -y fairy-stockfish``, or ``FAIRY_STOCKFISH``).
"""

import functools
import json
import pathlib
import sys
from typing import Dict, List

from absl import app, flags

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

import jax  # noqa: E402
import numpy as np  # noqa: E402

from azdb_jax import adjudication, arena, cli, opponents, runs  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.classical import player as player_lib  # noqa: E402
from azdb_jax.envs import gardner_interop  # noqa: E402
from azdb_jax.evaluation import fairy_stockfish, loading, matches  # noqa: E402
from azdb_jax.files import write_atomic  # noqa: E402

_RUN = flags.DEFINE_string("run", None, "A Gardner chess run directory.")
_STEPS = common_flags.define_steps("Checkpoint steps, comma-separated (default: every checkpoint kept).")
_ENGINES = flags.DEFINE_list("engines", ["depth=1", "nodes=1000"], "Fairy-Stockfish limits, e.g. depth=1,nodes=1000.")
_CLASSICAL = flags.DEFINE_list("classical", [], "Classical alpha-beta opponents, e.g. alphabeta:depth=2 "
                                "(fields joined by ':').")
_STARTS = flags.DEFINE_integer("starts", 10, "Start positions (each played with both colours).", lower_bound=1)
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 2, "Random plies from the initial position to each start.",
                                      lower_bound=0)
_MAX_PLIES = common_flags.define_max_plies("Engine games stop here and score as draws.", default=150)
_GAMES = common_flags.define_games("Games against random and against minimax2 (0: skip them).", default=32,
                                   lower_bound=0)
_ARENA_MAX_PLIES = flags.DEFINE_integer("arena_max_plies", 100, "Games against random and minimax2 stop here and "
                                        "are adjudicated by material.", lower_bound=1)
_SIMULATIONS = common_flags.define_simulations("Search simulations (default: the run's evaluation budget).")
_SEED = common_flags.define_seed("Seed of the start positions and the agent's search.")
_OUT = common_flags.define_out("Write the curve as JSON here (default: print the rows only).")


def random_starts(count: int, plies: int, seed: int) -> List[str]:
    """``count`` FENs after ``plies`` uniformly random legal plies from the initial position."""
    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    env, rng = games.make("gardner_chess"), np.random.default_rng(seed)
    step = env.step
    fens = []
    while len(fens) < count:
        state = env.init(jax.random.PRNGKey(0))
        for _ in range(plies):
            state = step(state, int(rng.choice(gardner_interop.legal_actions(state))))
            if bool(state.terminated):
                break
        if not bool(state.terminated):
            fens.append(gardner_interop.state_to_fen(state))
    return fens


def parse_limit(text: str) -> Dict[str, int]:
    name, _, value = text.partition("=")
    if name not in ("depth", "nodes") or not value.isdigit():
        raise ValueError(f"--engines: {text!r} is not depth=N or nodes=N")
    return {name: int(value)}


def in_training_scores(workdir: pathlib.Path) -> Dict[int, Dict[str, float]]:
    """{iteration: {opponent: score}} of player 0 in the run's own evaluations."""
    scores: Dict[int, Dict[str, float]] = {}
    for record in runs.read_metrics(workdir):
        if record.get("kind") == "eval" and record.get("player") == 0:
            scores.setdefault(record["iteration"], {})[record["opponent"]] = record["score"]
    return scores


def main(argv):
    del argv
    if not _RUN.value:
        raise ValueError("--run is required")
    workdir = pathlib.Path(_RUN.value)
    limits = [parse_limit(text) for text in _ENGINES.value]
    steps = _STEPS.value or sorted(
        int(p.name) for p in (workdir / "checkpoints").iterdir() if p.name.isdigit())
    starts = random_starts(_STARTS.value, _OPENING_PLIES.value, _SEED.value)
    own = in_training_scores(workdir)
    rows = []
    engines = [fairy_stockfish.FairyStockfishPlayer(**limit) for limit in limits]
    classical = [player_lib.player_from_spec(spec) for spec in _CLASSICAL.value]
    try:
        for step in steps:
            team = loading.load_team(workdir, step=step, num_simulations=_SIMULATIONS.value)
            agent = team.player_policy(0)
            row = dict(iteration=step, **{f"own_vs_{k}": v for k, v in own.get(step, {}).items()})
            if _GAMES.value:
                fixed = opponents.opponents_for(team.env.id, team.env)
                for name in ("random", "minimax2"):
                    play = jax.jit(functools.partial(
                        arena.play_games, team.env, agent, policy_b=fixed[name], params_b=None,
                        num_games=_GAMES.value + _GAMES.value % 2, max_plies=_ARENA_MAX_PLIES.value,
                        adjudicate=adjudication.adjudicator(team.env, "material")))
                    summary = arena.summarize(jax.device_get(play(params_a=team.params,
                                                                  rng_key=jax.random.PRNGKey(_SEED.value + 1))))
                    row[f"vs_{name}"] = summary["score"]
                    row[f"vs_{name}_wdl"] = [summary["wins"], summary["draws"], summary["losses"]]
            keys = ["vs_fsf_" + "_".join(f"{k}{v}" for k, v in limit.items()) for limit in limits]
            for key, engine in zip(keys + [f"vs_{p.name}" for p in classical], engines + classical):
                result = matches.play_engine_match(agent, team.params, engine, starts, env=team.env,
                                                   max_plies=_MAX_PLIES.value,
                                                   rng_key=jax.random.PRNGKey(_SEED.value), agent_name=team.name)
                tally = arena.tally(result.result, np.ones_like(result.finished))
                row[key] = tally["score"]
                row[key + "_wdl"] = [tally["wins"], tally["draws"], tally["losses"]]
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        for engine in engines:
            engine.close()
    report = dict(run=str(workdir), engine=engines[0].name.split(" ")[0] if engines else None,
                  limits=_ENGINES.value, classical=_CLASSICAL.value, starts=starts, max_plies=_MAX_PLIES.value,
                  rows=rows)
    if _OUT.value:
        out = pathlib.Path(_OUT.value)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
