"""Skill-compatible seniors against the plain strong player, in Stochastic Tag Team and Hand and Brain.

The analogue of Hamade et al. (2024), Tables 1 and 2, on our own networks:

- the *strong* player (the paper's leela) is player 0 of ``--strong`` (a run directory,
  ``@step`` optional), searching with its evaluation search;
- the *junior* is the network of ``--junior`` (typically an early checkpoint of the same
  run) playing its policy, sampled at ``--junior_temperature``: a stochastic weak player,
  whose strength is measured here against uniform random play, the depth-2 minimax and
  the strong player;
- the focal seniors: *tree* (the strong player's search over the junior's network) and
  the *expector* (STT: ``argmax_m E_s[w | m, s]`` over the four coin strings of the next
  two plies; HB: the piece type with the best expected win probability over the hand's
  moves of that type), both modelling the juniors by their policies (top
  ``--junior_top_k`` moves) and the strong player by its policy's best move, with the
  strong network's value as the win probability.

For each focal senior F: STT (F + junior vs strong + junior), HB (brain F + hand junior vs
brain strong + hand junior) and regular play (F vs strong; the HB expector names piece
types only, so it has no regular game); and the junior in the senior's seat (the paper's
last column). Win-share from the focal side with its standard error, and for STT the
move losses ``L(A, *)`` and ``ΔG`` by agent and by the mover's win probability
(``azdb_jax.skill.measures``).

    python experiments/skill_compat.py --strong=runs/sc_az --junior=runs/sc_az@5 --games=64 \\
        --out=eval/skill_compat

Writes ``skill_compat.json`` (everything) and ``matches.csv`` / ``losses.csv`` to ``--out``.
"""

import functools
import json
import pathlib
import sys
import time
from typing import Any, Dict, List

from absl import app, flags

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import distributed  # noqa: E402  (imports no JAX: safe before jax.distributed.initialize)

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

import jax  # noqa: E402

from azdb_jax import adjudication, arena, cli, opponents  # noqa: E402
from azdb_jax.evaluation import loading, matches, reports  # noqa: E402
from azdb_jax.skill import agents, measures  # noqa: E402

_STRONG = flags.DEFINE_string("strong", None, "The strong player's run directory[@step] (player 0 plays).")
_JUNIOR = flags.DEFINE_string("junior", None, "The junior's run directory[@step] (its player 0's policy).")
_TEMPERATURE = flags.DEFINE_float("junior_temperature", 1.0, "Softmax temperature of the junior's policy.")
_SIMULATIONS = flags.DEFINE_integer("simulations", None, "Search simulations of the strong player and of tree "
                                    "(default: the strong run's evaluation's).")
_TOP_K = flags.DEFINE_integer("junior_top_k", 4, "The expector models a junior by its top-k moves.", lower_bound=1)
_FOCALS = flags.DEFINE_list("focals", ["tree", "expector", "junior"], "Focal seniors: tree, expector, junior.")
_FRAMEWORKS = flags.DEFINE_list("frameworks", ["stt", "hb", "regular"], "Frameworks: stt, hb, regular.")
_GAMES = flags.DEFINE_integer("games", 64, "Games per match (even; both colours per start).", lower_bound=2)
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 2, "Uniformly random plies to each pair's start.",
                                      lower_bound=0)
_MAX_PLIES = flags.DEFINE_integer("max_plies", 100, "Games stop here and are adjudicated by material.", lower_bound=1)
_REFERENCES = flags.DEFINE_list("references", ["random", "minimax2"], "Fixed opponents that measure the junior's "
                                 "strength (azdb_jax.opponents.opponents_for; minimax2 costs ~30x random on Gardner).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the starts, the coins and the agents' sampling.")
_OUT = flags.DEFINE_string("out", None, "Output folder.")


def _split(text: str):
    path, _, step = text.partition("@")
    return pathlib.Path(path), (int(step) if step else None)


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    if not _STRONG.value or not _JUNIOR.value or not _OUT.value:
        raise ValueError("--strong, --junior and --out are required")
    for name in _FOCALS.value:
        if name not in ("tree", "expector", "junior"):
            raise ValueError(f"--focals: unknown senior {name!r}; valid: tree, expector, junior")
    for name in _FRAMEWORKS.value:
        if name not in ("stt", "hb", "regular"):
            raise ValueError(f"--frameworks: unknown framework {name!r}; valid: stt, hb, regular")
    if _GAMES.value % 2:
        raise ValueError(f"--games must be even (both colours per start), got {_GAMES.value}")
    strong_dir, strong_step = _split(_STRONG.value)
    junior_dir, junior_step = _split(_JUNIOR.value)
    strong = loading.load_team(strong_dir, step=strong_step, num_simulations=_SIMULATIONS.value)
    junior_net = loading.load_team(junior_dir, step=junior_step)
    env = strong.env
    if junior_net.env.id != env.id:
        raise ValueError(f"--junior plays '{junior_net.env.id}', --strong plays '{env.id}'")
    sp, jp = strong.params, junior_net.params

    junior_model = agents.network_move_model(junior_net.apply_fn, temperature=_TEMPERATURE.value)
    junior = agents.sampling_policy(junior_model)
    strong_model = agents.network_move_model(strong.apply_fn)
    leela = opponents.search_policy(env, strong.apply_fn, strong.search_config, player=0)
    value = agents.network_value(strong.apply_fn)
    seniors: Dict[str, Any] = {
        "strong": (leela, sp),
        "tree": (agents.tree_senior(env, junior_net.apply_fn, strong.search_config), jp),
        "expector": (agents.stt_expector(env, agents.STTModels(value, junior_model, strong_model, junior_model,
                                                                 strong_model), junior_top_k=_TOP_K.value),
                     agents.STTModels(sp, jp, sp, jp, sp)),
        "junior": (junior, jp),
    }
    brains: Dict[str, Any] = {name: (agents.brain_from_policy(env, policy), params)
                              for name, (policy, params) in seniors.items() if name != "expector"}
    brains["expector"] = (agents.hb_expector(env, agents.HBModels(value, junior_model)), agents.HBModels(sp, jp))

    def team(framework: str, name: str):
        if framework == "stt":
            policy, params = seniors[name]
            return agents.tag_team(policy, junior), (params, jp)
        if framework == "hb":
            brain, params = brains[name]
            return agents.hand_and_brain(env, brain, junior_model), (params, jp)
        return seniors[name]

    key = jax.random.PRNGKey(_SEED.value)
    start_key, match_key = jax.random.split(key)
    starts = matches.random_openings(env, _GAMES.value // 2, _OPENING_PLIES.value, start_key)
    adjudicate = adjudication.adjudicator(env, "material")
    report: Dict[str, Any] = dict(strong=_STRONG.value, junior=_JUNIOR.value, junior_temperature=_TEMPERATURE.value,
                                  simulations=strong.search_config.num_simulations, junior_top_k=_TOP_K.value,
                                  games=_GAMES.value, max_plies=_MAX_PLIES.value, opening_plies=_OPENING_PLIES.value,
                                  seed=_SEED.value, juniors={}, matches=[], losses=[])

    # The junior's strength in regular play.
    fixed = opponents.opponents_for(env.id, env)
    unknown = [name for name in _REFERENCES.value if name not in fixed]
    if unknown:
        raise ValueError(f"--references: unknown opponent(s) {unknown} for {env.id}; valid: {', '.join(fixed)}")
    references = [(name, (fixed[name], None)) for name in _REFERENCES.value] + [("strong", seniors["strong"])]
    for name, (policy, params) in references:
        play = jax.jit(functools.partial(arena.play_games, env, junior, policy_b=policy, num_games=_GAMES.value,
                                         max_plies=_MAX_PLIES.value, adjudicate=adjudicate))
        summary = measures.summarize(jax.device_get(play(params_a=jp, params_b=params, rng_key=match_key,
                                                         initial_state=starts)))
        report["juniors"][f"vs_{name}"] = summary
        print(f"junior vs {name}: {summary['score']:.3f} ± {summary['score_se']:.3f} "
              f"(+{summary['wins']} ={summary['draws']} -{summary['losses']})", flush=True)

    for framework in _FRAMEWORKS.value:
        for name in _FOCALS.value:
            if framework == "regular" and name == "junior":
                continue  # that is the junior's own strength, above
            start = time.time()
            focal, focal_params = team(framework, name)
            alter, alter_params = team(framework, "strong")
            match = measures.play_match(framework, env, focal, focal_params, alter, alter_params, match_key,
                                        num_games=_GAMES.value, max_plies=_MAX_PLIES.value, adjudicate=adjudicate,
                                        initial_state=starts)
            s = match.summary
            row = dict(framework=framework, focal=name, alter="strong", games=s["games"], wins=s["wins"],
                       draws=s["draws"], losses=s["losses"], adjudicated=s["adjudicated"], score=s["score"],
                       score_se=s["score_se"], mean_length=s["mean_length"], seconds=round(time.time() - start, 1))
            report["matches"].append(row)
            print(f"{framework:8s} {name:9s} vs strong: {s['score']:.3f} ± {s['score_se']:.3f} "
                  f"(+{s['wins']} ={s['draws']} -{s['losses']}, {row['seconds']} s)", flush=True)
            if framework == "stt":
                moves = measures.move_losses(match, env, value, sp)
                table = measures.loss_table(moves, num_games=_GAMES.value, seed=_SEED.value)
                for r in table:
                    report["losses"].append(dict(framework=framework, focal=name, **r))
                deltas = {k: measures.delta(table, *pair) for k, pair in (
                    ("alter_junior-focal_junior", ("alter_junior", "focal_junior")),
                    ("alter_senior-focal_senior", ("alter_senior", "focal_senior")),
                    ("alter_team-focal_team", ("alter_team", "focal_team")))}
                row["delta"] = deltas
                print("    ΔG: " + ", ".join(f"{k} {v['delta']:+.2f} ± {v['se']:.2f}" for k, v in deltas.items()),
                      flush=True)

    out = pathlib.Path(_OUT.value)
    reports.write_atomic(out / "skill_compat.json", json.dumps(report, indent=1, default=float))
    flat = [{k: v for k, v in r.items() if k != "delta"} for r in report["matches"]]
    paths = [reports.write_report(out / "matches", {"strong": _STRONG.value, "junior": _JUNIOR.value}, flat),
             reports.write_report(out / "losses", {"strong": _STRONG.value}, report["losses"])]
    print(f"wrote {out / 'skill_compat.json'}, " + ", ".join(str(p) for group in paths for p in group))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
