"""Reconnaissance Blind Chess: an RBC player against a reconchess bot, both colours.

Plays ``--games`` games of ``azdb_jax.rbc.player.TrackingPlayer`` (``--player=tracking``)
or ``DSMCPPlayer`` (``--player=dsmcp``: the belief and UCT over information states, with
``--seconds_per_move`` for each sense and each move, ``--simulations``, ``--variant``,
``--bandit``, ``--exploration``, ``--mixing``, ``--caution``, ``--cautious_size``,
``--paranoia``, ``--depth``, ``--set_size``, ``--particles``, ``--persistence``,
``--evaluator``, ``--value_view``, ``--opponent_model``, ``--search_senses``,
``--synopsis_boards``; with ``--evaluator=network`` the synopsis network of
``--checkpoint``, ``--headset`` for our decisions and ``--opponent_headset`` for the
opponent's) against
RandomBot, AttackerBot or TroutBot (``--opponent``; TroutBot needs Stockfish and the
environment variable STOCKFISH_EXECUTABLE, e.g. /usr/games/stockfish), White in
even-numbered games, and writes to ``--out``: ``report.json`` (W/D/L, score, Elo with its
95% interval, the tracker's set sizes, cap hits, rebuilds and truth checks, the planner's
counts, games replayed because the opponent's engine died, seconds per game, one record
per game) and ``games/game_<i>.json`` (reconchess GameHistory files).

    python experiments/rbc_gauntlet.py --opponent=random --games=20 --out=eval/rbc_random
    python experiments/rbc_gauntlet.py --player=dsmcp --opponent=attacker --games=20
    python experiments/rbc_gauntlet.py --player=dsmcp --evaluator=network --checkpoint=/work/rbc_data/run1 \
        --variant=mixture --opponent=trout --games=20

The paper's variants (§6, Table 4) with a network: ``--variant=network`` (its policy, no
search), ``--variant=tree`` (uniform priors, the network's values) and ``--variant=mixture``
(its priors and values).
"""

import math
import pathlib

from absl import app, flags

from azdb_jax import cli, files
from azdb_jax.cli import common_flags
from azdb_jax.rbc import belief, gauntlet, infostate, tracking, uct
from azdb_jax.rbc import player as player_lib

_PLAYER = flags.DEFINE_enum("player", "tracking", ["tracking", "dsmcp"], "The player: TrackingPlayer or DSMCPPlayer.")
_OPPONENT = flags.DEFINE_enum("opponent", "random", list(gauntlet.OPPONENTS), "The reconchess bot to play.")
_GAMES = common_flags.define_games("Games to play (colours alternate, the player White first).", default=10)
_SEED = common_flags.define_seed("Seed of the games (the bots' and the player's randomness).")
_OUT = common_flags.define_out("Output folder (default: eval/rbc_gauntlet_<opponent>).")
_SECONDS_PER_MOVE = flags.DEFINE_float("seconds_per_move", 0.5, "The player's time for scoring a move, for dsmcp "
                                       "for each sense and each move (> 0; at most 1/30 of its clock).")
_SECONDS_PER_PLAYER = flags.DEFINE_float("seconds_per_player", 900.0, "Each side's clock in seconds (> 0; "
                                         "reconchess adds 5 s per turn).")
_MAX_BOARDS = flags.DEFINE_integer("max_boards", tracking.DEFAULT_MAX_BOARDS, "Cap on the tracked possible boards "
                                   "(0: no cap).", lower_bound=0)
_MAX_BOARDS_BEFORE_SENSE = flags.DEFINE_integer(
    "max_boards_before_sense", 0, "Cap between the opponent's move and the sense (0: "
    f"{tracking.BEFORE_SENSE_FACTOR} x --max_boards).", lower_bound=0)
_SENSE_SAMPLES = flags.DEFINE_integer("sense_samples", 5000, "Boards the sense choice reads at most.", lower_bound=1)
_MAX_TURNS = flags.DEFINE_integer("max_turns", None, "Full turns after which a game is a draw (default: none).",
                                  lower_bound=1)
_MAX_REPLAYS = flags.DEFINE_integer("max_replays", 3, "Replays of a game whose opponent's engine died (>= 0).")
# DSMCPPlayer (--player=dsmcp)
_SIMULATIONS = common_flags.define_simulations("dsmcp: playouts per decision at most (default: until the time "
                                               "is up).")
_VARIANT = flags.DEFINE_enum("variant", "mixture", list(player_lib.VARIANTS), "dsmcp: mixture (priors mixed in "
                             "during early visits), tree (m = inf, uniform priors) or network (the evaluator's "
                             "policy, no playouts).")
_BANDIT = flags.DEFINE_enum("bandit", "ucb1", list(uct.BANDITS), "dsmcp: UCB1 with priors or aVoP.")
_EXPLORATION = flags.DEFINE_float("exploration", 2.0, "dsmcp: the exploration constant c (>= 0).")
_MIXING = flags.DEFINE_float("mixing", 1.0, "dsmcp: the bandit mixing constant m of the mixture (>= 0).")
_CAUTION = flags.DEFINE_float("caution", 0.0, "dsmcp: fraction of playouts in which the opponent's set is cut to "
                              "--cautious_size boards (in [0, 1]).")
_CAUTIOUS_SIZE = flags.DEFINE_integer("cautious_size", 1, "dsmcp: the opponent's set size in cautious playouts (>= 1).")
_PARANOIA = flags.DEFINE_float("paranoia", 0.0, "dsmcp: weight of the least value seen in the bandit (in [0, 1]).")
_DEPTH = flags.DEFINE_integer("depth", 6, "dsmcp: actions per playout before the leaf is evaluated (>= 1).")
_SET_SIZE = flags.DEFINE_integer("set_size", belief.DEFAULT_SET_SIZE, "dsmcp: boards in an approximate "
                                 "information state (>= 1).")
_PARTICLES = flags.DEFINE_integer("particles", belief.DEFAULT_PARTICLES, "dsmcp: particles of the belief (>= 1).")
_PERSISTENCE = flags.DEFINE_integer("persistence", belief.DEFAULT_PERSISTENCE, "dsmcp: rejections in a row before "
                                    "the belief falls back (>= 1).")
_EVALUATOR = flags.DEFINE_enum("evaluator", "classical", ["classical", "heuristic", "network"], "dsmcp: the "
                               "priors and values of the search: uniform priors or hand-made ones "
                               "(infostate.HeuristicEvaluator) with the classical evaluation's values, or the synopsis "
                               "network of --checkpoint (evaluator.NetworkEvaluator).")
_CHECKPOINT = common_flags.define_checkpoint("dsmcp, --evaluator=network: the synopsis network's training run "
                                             "(experiments/rbc_train.py --out) or its checkpoints folder, RUN[@STEP] "
                                             "(default step: the latest).")
_HEADSET = flags.DEFINE_string("headset", "all", "dsmcp, --evaluator=network: the headset of our own decisions.")
_OPPONENT_HEADSET = flags.DEFINE_string("opponent_headset", "auto", "dsmcp, --evaluator=network: the headset of the "
                                        "opponent's decisions in the search (auto: the one named after the opponent, "
                                        "e.g. TroutBot, when the network has it, else --headset).")
_SYNOPSIS_BOARDS = flags.DEFINE_integer("synopsis_boards", 64, "dsmcp: the most possible boards a decision's synopsis "
                                        "reads (as experiments/rbc_generate.py's --synopsis_boards; >= 1).")
_VALUE_VIEW = flags.DEFINE_enum("value_view", "self", list(uct.VALUE_VIEWS), "dsmcp: whose information state "
                                "values a leaf: the mover's (the paper's) or ours.")
_OPPONENT_MODEL = flags.DEFINE_enum("opponent_model", "uniform", ["uniform", "aggressive"], "dsmcp: the opponent "
                                    "policy guiding the belief's sampling.")
_SEARCH_SENSES = flags.DEFINE_bool("search_senses", True, "dsmcp: choose senses by the search (else as the "
                                   "tracking player does).")
for _name in ("seconds_per_move", "seconds_per_player"):
    flags.register_validator(_name, lambda value: value > 0, message=f"--{_name} must be > 0")
for _name, _check, _rule in (("max_replays", lambda v: v >= 0, ">= 0"),
                             ("exploration", lambda v: v >= 0, ">= 0"), ("mixing", lambda v: v >= 0, ">= 0"),
                             ("caution", lambda v: 0 <= v <= 1, "in [0, 1]"),
                             ("paranoia", lambda v: 0 <= v <= 1, "in [0, 1]"),
                             ("cautious_size", lambda v: v >= 1, ">= 1"), ("depth", lambda v: v >= 1, ">= 1"),
                             ("set_size", lambda v: v >= 1, ">= 1"), ("particles", lambda v: v >= 1, ">= 1"),
                             ("synopsis_boards", lambda v: v >= 1, ">= 1"),
                             ("persistence", lambda v: v >= 1, ">= 1")):
    flags.register_validator(_name, lambda value, check=_check: value is not None and not (
        isinstance(value, float) and math.isnan(value)) and check(value), message=f"--{_name} must be {_rule}")


def _network():
    """The synopsis network of --checkpoint (an ``evaluator.Evaluator``), or None without --evaluator=network."""
    if _PLAYER.value != "dsmcp" or _EVALUATOR.value != "network":
        if _CHECKPOINT.value:
            raise ValueError("--checkpoint is read only with --player=dsmcp --evaluator=network")
        return None
    if not _CHECKPOINT.value:
        raise ValueError("--evaluator=network needs --checkpoint (a training run of experiments/rbc_train.py)")
    from azdb_jax.rbc import evaluator  # pylint: disable=g-import-not-at-top (JAX only where a network plays)
    run, step = common_flags.split_checkpoint(_CHECKPOINT.value)
    return evaluator.Evaluator(evaluator.checkpoint_directory(run), step)


def main(argv):
    del argv
    out = pathlib.Path(_OUT.value or f"eval/rbc_gauntlet_{_OPPONENT.value}")
    network = _network()

    def make_evaluator(seed: int) -> infostate.Evaluator:
        if network is not None:
            from azdb_jax.rbc import evaluator  # pylint: disable=g-import-not-at-top
            return evaluator.NetworkEvaluator(network, _HEADSET.value, _OPPONENT_HEADSET.value)
        return (infostate.HeuristicEvaluator if _EVALUATOR.value == "heuristic" else infostate.ClassicalEvaluator)(
            seed=seed)

    tracking_kwargs = dict(max_boards=_MAX_BOARDS.value or None,
                           max_boards_before_sense=_MAX_BOARDS_BEFORE_SENSE.value or None,
                           sense_samples=_SENSE_SAMPLES.value)

    def make_player(seed: int) -> player_lib.TrackingPlayer:
        if _PLAYER.value == "tracking":
            return player_lib.TrackingPlayer(seconds_per_move=_SECONDS_PER_MOVE.value, seed=seed, **tracking_kwargs)
        return player_lib.DSMCPPlayer(
            seconds_per_decision=_SECONDS_PER_MOVE.value, simulations=_SIMULATIONS.value,
            variant=_VARIANT.value, bandit=_BANDIT.value, exploration=_EXPLORATION.value, mixing=_MIXING.value,
            caution=_CAUTION.value, cautious_size=_CAUTIOUS_SIZE.value, paranoia=_PARANOIA.value, depth=_DEPTH.value,
            set_size=_SET_SIZE.value, particles=_PARTICLES.value, persistence=_PERSISTENCE.value,
            search_senses=_SEARCH_SENSES.value, value_view=_VALUE_VIEW.value,
            opponent_policy=belief.AggressivePolicy() if _OPPONENT_MODEL.value == "aggressive" else None,
            evaluator=make_evaluator(seed), synopsis_boards=_SYNOPSIS_BOARDS.value, seed=seed, **tracking_kwargs)

    make_player(0)  # bad options end here, before any game
    out.mkdir(parents=True, exist_ok=True)
    files.write_atomic(out / "flags.txt", flags.FLAGS.flags_into_string())

    def progress(index, record):
        tracker = record.tracker
        planner = record.planner
        searched = (f"; searched {planner['searched']}/{planner['decisions']} decisions, "
                    f"{planner['mean_simulations']:.0f} playouts each, belief fallbacks "
                    f"{planner['belief']['fallbacks']}") if planner else ""
        print(f"game {index}: {record.player_color} {'+=-'[1 - record.result]} {record.win_reason} "
              f"after {record.turns} turns, {record.seconds:.1f} s; boards max {tracker['max_size']} mean "
              f"{tracker['mean_size']:.0f} (before senses: max {tracker['max_pairs_before_sense']} pairs), "
              f"cap hits {tracker['cap_hits']}, rebuilds {tracker['rebuilds']}, "
              f"truth misses {record.truth_misses}/{record.truth_checks}{searched}"
              f"{'; opponent error: ' + record.opponent_error if record.opponent_error else ''}", flush=True)

    report = gauntlet.run_gauntlet(make_player, _OPPONENT.value, _GAMES.value, seed=_SEED.value, out=out,
                                   seconds_per_player=_SECONDS_PER_PLAYER.value, max_turns=_MAX_TURNS.value,
                                   progress=progress, max_replays=_MAX_REPLAYS.value)
    low, high = report["elo_95"]
    tracker = report["tracker"]
    name = "TrackingPlayer" if _PLAYER.value == "tracking" else "DSMCPPlayer"
    print(f"{name} vs {_OPPONENT.value}: +{report['wins']} ={report['draws']} -{report['losses']} "
          f"(score {report['score']:.3f}, Elo 95% [{low:+.0f}, {high:+.0f}]"
          f"{' clipped' if report['saturated'] else ''}), {report['mean_seconds_per_game']:.1f} s per game; boards "
          f"mean {tracker['mean_size']:.0f} max {tracker['max_size']} (before senses: mean "
          f"{tracker['mean_pairs_before_sense']:.0f} max {tracker['max_pairs_before_sense']} pairs), cap hits "
          f"{tracker['cap_hits']} "
          f"({tracker['games_with_cap_hit']} games), rebuilds {tracker['rebuilds']}, truth misses "
          f"{tracker['truth_misses']}/{tracker['truth_checks']}; games replayed after the opponent's engine died: "
          f"{report['replayed']} ({len(report['opponent_errors'])} errors), left out (the opponent failed in every "
          f"replay): {len(report['dropped'])}")
    if "planner" in report:
        planner = report["planner"]
        print(f"planner: searched {planner['searched']} of {planner['decisions']} decisions, "
              f"{planner['mean_simulations']:.0f} playouts per searched decision, {planner['fallbacks']} time "
              f"fallbacks, {planner['forced_wins']} forced wins; belief: {planner['belief_candidates']} candidates, "
              f"{planner['belief_rejections']} rejected, {planner['belief_fallbacks']} singleton fallbacks, "
              f"{planner['belief_refills']} refills")
    print(f"wrote {out / 'report.json'} and {report['games']} game histories in {out / 'games'}")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
