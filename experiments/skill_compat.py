"""Skill-compatible seniors against the plain strong player, in Stochastic Tag Team and Hand and Brain.

The analogue of Hamade et al. (2024), Tables 1 and 2, on our own networks:

- the *strong* player (the paper's leela) is player 0 of ``--strong`` (a run directory,
  ``@step`` optional), searching with its evaluation search;
- the *junior* is the network of ``--junior`` (typically an early checkpoint of the same
  run) playing its policy (``--junior_kind=policy``) or a small PUCT search of
  ``--junior_simulations`` sampled by visits (``search``), at ``--junior_temperature``: a
  stochastic weak player, whose strength is measured here against ``--references`` and
  the strong player;
- the focal seniors: *tree* (the strong player's search over the junior's network) and
  the *expector* (STT: ``argmax_m E_s[w | m, s]`` over the four coin strings of the next
  two plies; HB: the piece type with the best expected win probability over the hand's
  moves of that type), both modelling the juniors by their policies (top
  ``--junior_top_k`` moves) and the strong player by its policy's best move, with the
  strong network's value as the win probability; and the *attuned* seniors
  (``--attuned_stt``, ``--attuned_hb``: runs written by ``experiments/train_attuned.py``).

For each focal senior F: STT (F + junior vs strong + junior), HB (brain F + hand junior vs
brain strong + hand junior) and regular play (F vs strong; the HB expector names piece
types only, so the STT expector plays the regular games; each attuned network plays its
own); and the junior in the senior's seat (the paper's last column). Win-share from the
focal side with its standard error, and for STT the move losses ``L(A, *)`` and ``ΔG`` by
agent and by the mover's win probability (``azdb_jax.skill.measures``).

    python experiments/skill_compat.py --strong=runs/sc_az --junior=runs/sc_az@5 --games=64 \\
        --out=eval/skill_compat

Writes ``skill_compat.json`` (everything) and ``matches.csv`` / ``losses.csv`` to ``--out``,
rewritten after every match (an interrupted run keeps the rows it finished). The command
line of ``azdb_jax.skill.experiment.play_tables``.
"""

import pathlib
import sys
from typing import List

from absl import app, flags

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import cli  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.skill import agents, experiment  # noqa: E402

_STRONG = flags.DEFINE_string("strong", None, "The strong player's run directory[@step] (player 0 plays).")
_JUNIOR = flags.DEFINE_string("junior", None, "The junior's run directory[@step] (its player 0's policy).")
_JUNIOR_KIND = flags.DEFINE_enum("junior_kind", "policy", agents.JUNIOR_KINDS,
                                 "The junior: its network's policy, or a small PUCT search sampled by visits.")
_TEMPERATURE = flags.DEFINE_float("junior_temperature", 1.0, "The junior's sampling temperature.")
_JUNIOR_SIMS = flags.DEFINE_integer("junior_simulations", 8, "Simulations of a search junior.", lower_bound=1)
_ATTUNED_STT = flags.DEFINE_string("attuned_stt", None, "The STT-attuned senior's run directory "
                                   "(experiments/train_attuned.py); focal 'attuned' in STT and regular play.")
_ATTUNED_HB = flags.DEFINE_string("attuned_hb", None, "The HB-attuned brain's run directory; focal 'attuned' in HB "
                                  "and regular play.")
_SIMULATIONS = common_flags.define_simulations("Search simulations of the strong player and of tree "
                                               "(default: the strong run's evaluation budget).")
_TOP_K = flags.DEFINE_integer("junior_top_k", 4, "The expector models a junior by its top-k moves.", lower_bound=1)
_FOCALS = flags.DEFINE_list("focals", list(experiment.FOCALS),
                            "Focal seniors (attuned needs --attuned_stt and/or --attuned_hb).")
_FRAMEWORKS = flags.DEFINE_list("frameworks", list(experiment.FRAMEWORKS), "Frameworks: stt, hb, regular.")
_GAMES = common_flags.define_games("Games per match (even; both colours per start).", default=64, lower_bound=2)
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 2, "Uniformly random plies to each pair's start.",
                                      lower_bound=0)
_MAX_PLIES = common_flags.define_max_plies("Games stop here and are adjudicated by material.", default=100)
_REFERENCES = flags.DEFINE_list("references", ["random", "minimax2"], "Fixed opponents that measure the junior's "
                                 "strength (azdb_jax.opponents.opponents_for; minimax2 costs ~30x random on Gardner).")
_ENGINES = flags.DEFINE_list("engine_limits", [], "Levels of the game's reference engine (Fairy-Stockfish on Gardner "
                             "chess, Stockfish on chess) the junior and the strong player play for their Elo against "
                             "it, e.g. depth=1,depth=1:skill=-20 or nodes=100:skill=0,time=0.05:elo=1350 (one of "
                             "depth, nodes, time, then skill or elo (chess), joined by ':'), or classical "
                             "alpha-beta searchers such as alphabeta:depth=3.")
_JUNIOR_STRENGTH = flags.DEFINE_bool("junior_strength", True, "Measure the junior against --references and the strong "
                                     "player first (--nojunior_strength: only the framework rows, e.g. when "
                                     "another invocation with the same junior measures it).")
_SEED = common_flags.define_seed("Seed of the starts, the coins and the agents' sampling.")
_OUT = common_flags.define_out("Output folder.")


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    if not _STRONG.value or not _JUNIOR.value or not _OUT.value:
        raise ValueError("--strong, --junior and --out are required")
    focals = list(_FOCALS.value)
    if "attuned" in focals and not (_ATTUNED_STT.value or _ATTUNED_HB.value) and not flags.FLAGS["focals"].present:
        focals.remove("attuned")  # the default list: no attuned run given, so no attuned rows
    settings = experiment.TableSettings(
        strong=_STRONG.value,
        junior=experiment.Junior(_JUNIOR.value, kind=_JUNIOR_KIND.value, temperature=_TEMPERATURE.value,
                                 simulations=_JUNIOR_SIMS.value),
        attuned_stt=_ATTUNED_STT.value, attuned_hb=_ATTUNED_HB.value, simulations=_SIMULATIONS.value,
        junior_top_k=_TOP_K.value, focals=tuple(focals), frameworks=tuple(_FRAMEWORKS.value), games=_GAMES.value,
        opening_plies=_OPENING_PLIES.value, max_plies=_MAX_PLIES.value, references=tuple(_REFERENCES.value),
        engine_limits=tuple(_ENGINES.value), junior_strength=_JUNIOR_STRENGTH.value, seed=_SEED.value)
    out = pathlib.Path(_OUT.value)
    experiment.play_tables(settings, out)
    print(f"wrote {out / 'skill_compat.json'}, {out / 'matches'}.*, {out / 'losses'}.*")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
