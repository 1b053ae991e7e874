"""A match between two agents: W/D/L, score, Elo ± SE, and every game saved (SPEC §2 "Matches").

  python experiments/play_match.py --a=runs/demo@120 --b=runs/demo@40 --seeds=32 --sample_plies=4 --out=/tmp/match
  python experiments/play_match.py --a=runs/demo --a_rule=gap --b=minimax2 --seeds=16 --sample_plies=4 --out=/tmp/m2
  python experiments/play_match.py --a=runs/chess --a_rule=lookup --seeds=4 --heldout_seeds=2 --sample_plies=8 \\
      --b=runs/az --num_openings=20 --out=/tmp/lookup
  python experiments/play_match.py --a=runs/chess --b=stockfish --stockfish_elo=1500 --out=/tmp/sf
  python experiments/play_match.py --a=runs/gardner_cpu --b=alphabeta:depth=3 --num_openings=10 --opening_plies=2 \
      --out=/tmp/ab3

An agent (--a, --b) is a run directory of experiments/train.py, optionally at a
checkpoint step (``runs/demo@40``); ``stockfish`` (chess; --stockfish* flags); a classical
alpha-beta searcher (chess, Gardner chess; ``alphabeta:depth=3``, ``alphabeta:nodes=20000``,
see ``azdb_jax.classical.player``: it plays on host boards with the game's move stack,
and two of them, or one and stockfish, play a host-side match); or a
fixed opponent of the game (``random``, and per game ``perfect``, ``minimax2``,
``oracle``; see ``azdb_jax.opponents.opponents_for``). A run plays as one team player
(--a_player=j), as the whole team through a selection rule (--a_rule=visit|value|lcb|gap),
or, for A only, as the opening-specialisation lookup of the paper's Appendix C.5
(--a_rule=lookup: the table is built on --seeds training seeds and scored on
--heldout_seeds further seeds). By default a team of one plays its player and a larger
team the visit rule.

Chess starts from book positions (--book, default the shared 4mvs book under
AZDB_DATA_DIR; a ``.tsv`` file or folder is read as ECO openings), other games from
their initial position, or from --num_openings random openings of --opening_plies
uniformly random plies. A noiseless search plays (almost) the same game for every seed:
--sample_plies=N makes the agents of runs sample their first N moves ∝ visit counts, as
in self-play, so that seeds (and the lookup's held-out seeds) differ. Every start is
played with both colours for every seed.
--out receives ``match.json`` (summary + per-game rows), ``match.csv`` (per-game rows)
and the games: ``games.pgn`` for chess, ``games.txt`` otherwise.
The players of runs search as in self-play (their λ_i and the intrinsic reward of the
checkpoint's ψ); --extrinsic_only makes every run's team search with λ = 1 (the paper's
ablation): its names end in ``/extrinsic_only`` and the summary's ``search`` says so.
"""

import sys
from typing import List

from absl import app, flags, logging

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import cli  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import agent_match, matches  # noqa: E402


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    if not (_A.value and _B.value and _OUT.value):
        raise app.UsageError("--a, --b and --out are required")
    stockfish = dict(path=_STOCKFISH.value, nodes=_SF_NODES.value, time=_SF_TIME.value, elo=_SF_ELO.value,
                     skill_level=_SF_SKILL.value)
    summary = agent_match.run_match(
        a=_A.value, b=_B.value, out=_OUT.value, a_player=_A_PLAYER.value, a_rule=_A_RULE.value,
        b_player=_B_PLAYER.value, b_rule=_B_RULE.value, num_players_a=_NUM_PLAYERS_A.value,
        num_players_b=_NUM_PLAYERS_B.value, env_name=_ENV.value, book=_BOOK.value, num_openings=_NUM_OPENINGS.value,
        opening_plies=_OPENING_PLIES.value, seeds=_SEEDS.value, heldout_seeds=_HELDOUT.value,
        sample_plies=_SAMPLE_PLIES.value,
        simulations=_SIMULATIONS.value, max_plies=_MAX_PLIES.value,
        batch_pairs=_BATCH_PAIRS.value, stockfish=stockfish, extrinsic_only=_EXTRINSIC_ONLY.value)
    print(matches.format_summary(summary))
    for side, search in summary["search"].items():
        print(f"  {side} searches: {search['search_note']}")
    for colour, part in summary["by_colour"].items():
        print(f"  as {colour}: +{part['wins']} ={part['draws']} -{part['losses']} (score {part['score']:.3f})")
    if "specialisation" in summary:
        report = summary["specialisation"]
        print(f"  lookup (held-out): score {report['lookup']['score']:.3f}; best latent "
              f"{report['best_latent']['player']}: {report['best_latent']['score']:.3f}; "
              f"max over latents: {report['max_over_latents']['score']:.3f}")
        if report["leave_one_seed_out"]:
            print(f"  leave-one-seed-out lookup: {report['leave_one_seed_out']['lookup']['score']:.3f}")
        for j, by_turn in enumerate(report["per_player_by_turn"]):
            print(f"  player {j} (all seeds): " + "; ".join(
                f"moving {turn} +{r['wins']} ={r['draws']} -{r['losses']} ({r['score']:.3f})"
                for turn, r in by_turn.items()))
    print("wrote " + ", ".join(summary["files"]))


if __name__ == "__main__":
    _A = flags.DEFINE_string("a", None, "Agent A: RUN_DIR[@STEP], 'stockfish', 'alphabeta:...' or a fixed "
                             "opponent name.")
    _B = flags.DEFINE_string("b", None, "Agent B: RUN_DIR[@STEP], 'stockfish', 'alphabeta:...' or a fixed "
                             "opponent name.")
    _A_PLAYER = flags.DEFINE_integer("a_player", None, "A plays as this single team player.")
    _A_RULE = flags.DEFINE_string("a_rule", None, "A plays as the team through this rule: "
                                  f"{', '.join(agent_match.RULES)}.")
    _B_PLAYER = flags.DEFINE_integer("b_player", None, "B plays as this single team player.")
    _B_RULE = flags.DEFINE_string("b_rule", None, "B plays as the team through this rule: "
                                  f"{', '.join(agent_match.RULES[:-1])}.")
    _NUM_PLAYERS_A = flags.DEFINE_integer("num_players_a", None, "Check that A's checkpoint holds this many players.")
    _NUM_PLAYERS_B = flags.DEFINE_integer("num_players_b", None, "Check that B's checkpoint holds this many players.")
    _ENV = flags.DEFINE_string("env", None, "The game when neither agent is a run (e.g. tic_tac_toe).")
    _BOOK = flags.DEFINE_string("book", None, "Chess start positions: FEN/EPD book, or ECO .tsv file/folder.")
    _NUM_OPENINGS = flags.DEFINE_integer("num_openings", None, "Chess: the first N book positions (default all); "
                                         "other games: N random openings (with --opening_plies).")
    _OPENING_PLIES = flags.DEFINE_integer("opening_plies", 0, "Other games: random plies before each start "
                                          "(0: the initial position).", lower_bound=0)
    _SEEDS = flags.DEFINE_integer("seeds", 1, "Seeds per start and colour (lookup: training seeds).", lower_bound=1)
    _SAMPLE_PLIES = flags.DEFINE_integer(
        "sample_plies", 0, "Agents of runs sample their first N moves of a game in proportion to visit counts "
        "(as in self-play), so seeds give different games; 0: always the most-visited move.", lower_bound=0)
    _HELDOUT = flags.DEFINE_integer("heldout_seeds", 0, "Lookup: held-out seeds scored with the table.", lower_bound=0)
    _SIMULATIONS = common_flags.define_simulations("Search simulations per move of the runs' players (default: "
                                                   "each run's evaluation budget).")
    _MAX_PLIES = common_flags.define_max_plies("Plies per game at most; games still running there are unfinished "
                                               "(default: the game's own longest game).")
    _BATCH_PAIRS = flags.DEFINE_integer("batch_pairs", 32, "Game pairs per compiled chunk.", lower_bound=1)
    _OUT = common_flags.define_out("Output directory.")
    _STOCKFISH = flags.DEFINE_string("stockfish", None, "Stockfish binary (default: PATH, then /usr/games).")
    _SF_NODES = flags.DEFINE_integer("stockfish_nodes", None, "Stockfish nodes per move.")
    _SF_TIME = flags.DEFINE_float("stockfish_time", None, "Stockfish seconds per move (default 0.1 without nodes).")
    _SF_ELO = flags.DEFINE_integer("stockfish_elo", None, "Stockfish UCI_Elo strength limit.")
    _SF_SKILL = flags.DEFINE_integer("stockfish_skill", None, "Stockfish Skill Level (0-20).")
    _EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False, "Runs' teams search with λ = 1 for every player: "
                                        "the paper's ablation (Fig. 8 dashed) instead of the self-play search.")
    app.run(cli.input_errors_exit(main))
