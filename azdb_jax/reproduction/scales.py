"""The scales a reproduction runs at, and the runs each scale trains.

A scale names a game, the training budget of every arm, the seeds, and how large each
evaluation is. Every arm of a scale trains for the same number of iterations with the same
self-play and learner budget (equal compute per arm, as in the paper's comparisons):

- ``az``: one player, λ = 1 (AlphaZero);
- ``azdb``: ``num_players`` players, λ < 1, PSRO-Nash matchmaking (the method);
- ``control``: the same team with λ = 1 for every player (the homogeneous control: one
  network, the same latents and matchmaking, no diversity reward);
- ``az_starts_random`` / ``az_starts_ood``: AlphaZero starting half its self-play games
  from puzzle positions, with a random and an out-of-distribution held-out split
  (paper Table 1 rows 3 and 4);
- ``az_starts``: AlphaZero starting half its games from every puzzle, each at half-move
  clock 0 (row 2), and the paper's three additions, each on top of the one before (rows
  5-7, App. C.3): ``az_starts_intermediate`` also starts from the positions along each
  puzzle's solution line; ``az_starts_exploration`` samples its moves ∝ N^(1/10) for the
  first 15 plies; ``az_starts_halfmove`` draws each puzzle position's clock from
  0, 20, 40, 60, 80. A scale whose puzzles have no solution lines (``chess_fast``: the
  paper's list publishes none) leaves rows 5-7 out (``Scale.arms``).

``ci`` is minutes on 2 CPU cores (the notebooks execute on it in the test suite); ``cpu``
is Gardner chess sized for a laptop overnight; ``chess_fast`` is the paper's fast chess
configuration for accelerators.
"""

import dataclasses
from typing import Dict, Optional, Sequence, Tuple

from azdb_jax import config as config_lib
from azdb_jax import games
from azdb_jax import presets

ARMS = ("az", "azdb", "control", "az_starts_random", "az_starts_ood", "az_starts", "az_starts_intermediate",
        "az_starts_exploration", "az_starts_halfmove")
TABLE1_LOWER = ("az_starts_intermediate", "az_starts_exploration", "az_starts_halfmove")  # rows 5-7


@dataclasses.dataclass(frozen=True)
class EvalSizes:
    """How large each evaluation of a scale is (every figure group reads what it needs).

    Attributes:
      simulations: search budget of every evaluation search.
      scaling_simulations: budgets of the scaling figure (Fig. 7).
      puzzles_per_set: puzzles taken from each engine-labelled set (0: all).
      positions: positions for move-choice statistics (distinct moves, Fig. 3).
      openings: opening positions drawn on boards (Fig. 3) and played from (Fig. 23).
      occupancy_games: self-play games per player for the occupancy heatmaps (Fig. 2).
      match_games: games per pairing in AZdb-vs-AZ matches (Table 2), both colours.
      max_plies: evaluation games stop here and are adjudicated by material.
      engine_nodes: Fairy-Stockfish / Stockfish node budget as a solver and opponent.
      trials: numbers of latents tried in the scaling and selection figures (Fig. 7, 8).
      match_pairings: which seeds meet in the matches (Table 2): ``"same_seed"`` (AZdb
        seed k against AZ seed k) or ``"all"`` (every AZdb seed against every AZ seed, so
        the interval covers both networks' seeds; ``results.crossed_mean_stderr``).
      match_sides: the arms that play AZ in the matches: ``("azdb",)``, or with the λ = 1
        ``"control"`` too (Table 2 for the control, the same pairings).
    """

    simulations: int = 32
    scaling_simulations: Tuple[int, ...] = (8, 16, 32)
    puzzles_per_set: int = 0
    positions: int = 200
    openings: int = 12
    occupancy_games: int = 32
    match_games: int = 32
    max_plies: int = 100
    engine_nodes: int = 1000
    trials: Tuple[int, ...] = (1, 2, 3)
    match_pairings: str = "same_seed"
    match_sides: Tuple[str, ...] = ("azdb",)

    def __post_init__(self):
        if self.match_pairings not in MATCH_PAIRINGS:
            raise ValueError(f"eval.match_pairings must be one of {', '.join(MATCH_PAIRINGS)}, "
                             f"got {self.match_pairings!r}")
        if not self.match_sides or self.match_sides[0] != "azdb" or not set(self.match_sides) <= {"azdb", "control"}:
            raise ValueError(f"eval.match_sides must start with 'azdb' and hold only 'azdb' and 'control', "
                             f"got {self.match_sides!r}")


MATCH_PAIRINGS = ("same_seed", "all")


@dataclasses.dataclass(frozen=True)
class Variant:
    """An arm of a sweep: a base arm (``az``, ``azdb``, ``control``) with overrides on top, e.g.
    ``Variant("azdb_lam070", "azdb", ("team.lam=0.7", "diversity.l0=0.38"))``."""

    name: str
    base: str
    overrides: Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Scale:
    """One scale of the reproduction.

    Attributes:
      name: ``ci``, ``cpu`` or ``chess_fast``.
      game: the env id every run plays.
      preset: the preset the arms start from (``azdb_jax.presets``).
      num_players: the team size of the ``azdb`` and ``control`` arms.
      lam: λ of the ``azdb`` arm's players i > 0.
      seeds: training seeds of the ``az``, ``azdb`` and ``control`` arms.
      puzzle_seeds: training seeds of the two puzzle-start arms.
      overrides: ``section.field=value`` overrides applied to every arm.
      start_sources: the puzzle sets the puzzle-start arms train from.
      heldout_group: the group the out-of-distribution split holds out.
      test_count: puzzles the random split holds out.
      eval: evaluation sizes.
      description: one line for the manifest and the console.
      arms: the arms this scale trains (every arm of ``ARMS`` unless said).
      variants: further arms, each a base arm with overrides (a sweep's settings); trained
        after ``arms``.
      groups: the figure groups this scale evaluates (empty: every group but ``sweep``).
    """

    name: str
    game: str
    preset: str
    num_players: int
    lam: float
    seeds: Tuple[int, ...]
    puzzle_seeds: Tuple[int, ...]
    overrides: Tuple[str, ...]
    start_sources: Tuple[str, ...]
    heldout_group: str
    test_count: int
    eval: EvalSizes
    description: str
    arms: Tuple[str, ...] = ARMS
    variants: Tuple[Variant, ...] = ()
    groups: Tuple[str, ...] = ()

    @property
    def all_arms(self) -> Tuple[str, ...]:
        """``arms`` then the variants' names: every arm this scale trains."""
        return (*self.arms, *(v.name for v in self.variants))

    def variant(self, name: str) -> Optional[Variant]:
        return next((v for v in self.variants if v.name == name), None)


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run of a reproduction: ``runs/<name>`` in the results folder."""

    name: str
    arm: str
    seed: int
    config: config_lib.TrainConfig


_GARDNER_SETS = ("gardner:mate_in_1", "gardner:mate_in_2", "gardner:mate_in_3", "gardner:only_move")

SCALES: Dict[str, Scale] = {
    "ci": Scale(
        name="ci", game="gardner_chess", preset="gardner_cpu", num_players=3, lam=0.9, seeds=(0,), puzzle_seeds=(0,),
        overrides=(
            "network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
            "search.num_simulations=8", "search.max_num_considered_actions=4",
            # 32 games: with 8, no game of some arms (control_s0, starting from the initial
            # position) finished in the two windows of 12 plies, so their networks never trained.
            "selfplay.num_games=32", "selfplay.num_plies=12", "selfplay.sample_plies=4",
            "replay.capacity=2048", "run.num_iterations=2", "run.learner_steps=2", "run.batch_size=8",
            "run.eval_every=0", "run.eval_simulations=8", "run.checkpoint_every=1", "run.keep_checkpoints=2",
            "run.checkpoint_replay=false"),
        start_sources=_GARDNER_SETS, heldout_group="gardner:mate_in_3", test_count=20,
        eval=EvalSizes(simulations=8, scaling_simulations=(4, 8), puzzles_per_set=8, positions=16, openings=4,
                       occupancy_games=4, match_games=4, max_plies=24, engine_nodes=200, trials=(1, 2, 3)),
        description="Gardner chess, tiny networks, 2 iterations: checks every notebook end to end in minutes"),
    "cpu": Scale(
        # Seeds 2-4: seeds 0 and 1 chose the setting (cpu_sweep below), the claims are measured on others.
        name="cpu", game="gardner_chess", preset="gardner_cpu", num_players=3, lam=0.9, seeds=(2, 3, 4),
        puzzle_seeds=(0,),
        overrides=("run.num_iterations=60", "run.eval_every=0", "run.checkpoint_every=20"),
        start_sources=_GARDNER_SETS, heldout_group="gardner:mate_in_3", test_count=100,
        eval=EvalSizes(simulations=32, scaling_simulations=(8, 16, 32, 64), puzzles_per_set=100, positions=200,
                       openings=12, occupancy_games=32, match_games=32, max_plies=100, engine_nodes=1000,
                       trials=(1, 2, 3), match_pairings="all", match_sides=("azdb", "control")),
        description="Gardner chess, the gardner_cpu preset for 60 iterations per arm (a laptop overnight)"),
    "chess_fast": Scale(
        name="chess_fast", game="chess", preset="azdb_fast", num_players=5, lam=0.9, seeds=(0,), puzzle_seeds=(0,),
        overrides=(),
        start_sources=("paper:penrose",), heldout_group="penrose_variation_2", test_count=17,
        eval=EvalSizes(simulations=400, scaling_simulations=(100, 200, 400, 800), puzzles_per_set=1000,
                       positions=500, openings=12, occupancy_games=128, match_games=128, max_plies=300,
                       engine_nodes=10_000, trials=(1, 2, 3, 4, 5)),
        description="chess, the paper's fast configuration (accelerators)",
        arms=tuple(a for a in ARMS if a not in TABLE1_LOWER)),
}


def sweep_scale(base: Scale, name: str, *, settings: Sequence[Tuple[str, float, float]], seeds: Tuple[int, ...],
                match_games: int, description: str) -> Scale:
    """A sweep of ``base``: per seed AZ, the λ = 1 control and one ``azdb`` run per setting
    ``(name, λ, ℓ0)``, each pinning both values (so that a later change of a preset's
    default leaves the sweep as it was); evaluated by the ``sweep`` group only."""
    variants = tuple(Variant(arm, "azdb", (f"team.lam={lam}", f"diversity.l0={l0}")) for arm, lam, l0 in settings)
    return dataclasses.replace(base, name=name, seeds=seeds, arms=("az", "control"), variants=variants,
                               groups=("sweep",), eval=dataclasses.replace(base.eval, match_games=match_games),
                               description=description)


# The Gardner sweep (docs/results.md, "Choosing λ and ℓ0"): the reference is the setting
# before calibration (λ = 0.9 and connect four's ℓ0 = 1.5); the others take the ℓ0 calibrated
# from this sweep's own λ = 1 controls (presets.GARDNER_L0). Seeds 0 and 1 choose the
# setting; the claims are measured on the cpu scale's other seeds.
SCALES["cpu_sweep"] = sweep_scale(
    SCALES["cpu"], "cpu_sweep", seeds=(0, 1), match_games=100,
    settings=(("azdb_ref", 0.9, 1.5), ("azdb_lam070", 0.7, presets.GARDNER_L0),
              ("azdb_lam090", 0.9, presets.GARDNER_L0), ("azdb_lam097", 0.97, presets.GARDNER_L0)),
    description="Gardner chess: λ and ℓ0 of the diversity term, 2 seeds, the cpu scale's budget per run")
# The same machinery in minutes (tests): one setting equal to the ci azdb arm (the scale's λ,
# the preset's ℓ0), one other.
SCALES["ci_sweep"] = sweep_scale(
    SCALES["ci"], "ci_sweep", seeds=(0,), match_games=4,
    settings=(("azdb_lam090", SCALES["ci"].lam, presets.get_preset(SCALES["ci"].preset).diversity.l0),
              ("azdb_lam050", 0.5, 0.3)),
    description="Gardner chess, tiny networks: the sweep group end to end in minutes")


# The accelerator pack (scripts/device_pack.sh): the cpu scale's AZ, AZdb and control arms
# for 16 seeds none of the other scales used, trained as populations and evaluated for the
# claims on distinct moves, solve rates and Table 2 (144 games a pairing); ``ci_pack`` is
# the same pack in minutes on a CPU (its test). The pack's checkpoints leave the replay
# buffer out: a ``gardner_cpu`` run's buffer is 657 MB, and 48 runs' three checkpoints
# with it (95 GB) would not fit the accelerator machine's disk; a resumed pack run
# refills its buffer by self-play, so it continues the run without being its exact copy.
# Its evaluations read the last checkpoint only, and a lease's machine keeps nothing for
# the next, so the pack checkpoints once, at the end: each checkpoint of 16 members took
# ~24 s on one H200 (a member's state without its buffer is 61 MB, 58 MB of it the
# pending self-play window): three a run were a quarter of the `az` arm's 277 s.
PACK_ARMS = ("az", "azdb", "control")
PACK_GROUPS = ("openings", "solve_rates", "matches")
SCALES["cpu16"] = dataclasses.replace(
    SCALES["cpu"], name="cpu16", seeds=tuple(range(10, 26)), arms=PACK_ARMS, groups=PACK_GROUPS,
    overrides=(*SCALES["cpu"].overrides, "run.checkpoint_replay=false", "run.checkpoint_every=60"),
    # 16 x 16 pairings would be 256 matches per agent: the pack's seeds meet seed by seed.
    eval=dataclasses.replace(SCALES["cpu"].eval, match_games=144, match_pairings="same_seed", match_sides=("azdb",)),
    description="Gardner chess, the cpu scale's AZ, AZdb and control for 16 fresh seeds (10-25), as populations")
# The pack cut to one accelerator lease (scripts/device_check.sh, part c): the same 16 seeds and
# arms for 12 iterations instead of 60 and 48 games a pairing instead of 144. On one H200 an
# iteration of 16 members took 3.1-3.2 s (docs/performance.md): 12 are ~40 s an arm's
# training, which leaves the lease's minutes for compiling and the evaluation. Its claims are
# those of nearly untrained teams: the part measures what the pack costs on the chip.
SCALES["lease16"] = dataclasses.replace(
    SCALES["cpu16"], name="lease16",
    overrides=(*SCALES["cpu16"].overrides, "run.num_iterations=12", "run.checkpoint_every=12"),
    eval=dataclasses.replace(SCALES["cpu16"].eval, match_games=48),
    description="Gardner chess, the accelerator pack cut to one lease: 16 seeds, 12 iterations, 48 games a pairing")
SCALES["ci_pack"] = dataclasses.replace(
    SCALES["ci"], name="ci_pack", seeds=(10, 11), arms=PACK_ARMS, groups=PACK_GROUPS,
    description="Gardner chess, tiny networks: the accelerator pack's runs and claims in minutes")


def get_scale(name: str) -> Scale:
    if name not in SCALES:
        raise ValueError(f"unknown scale {name!r}; scales: {', '.join(SCALES)}")
    return SCALES[name]


def _arm_overrides(scale: Scale, arm: str, seed: int) -> Sequence[str]:
    variant = scale.variant(arm)
    if variant is not None:
        return (*_arm_overrides(scale, variant.base, seed), *variant.overrides)
    team = {
        "az": ("team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay"),
        "azdb": (f"team.num_players={scale.num_players}", f"team.lam={scale.lam}", "team.matchmaker=psro_nash"),
        "control": (f"team.num_players={scale.num_players}", "team.lam=1.0", "team.matchmaker=psro_nash"),
    }
    if arm in team:
        return (*team[arm], f"run.seed={seed}")
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; arms: {', '.join(ARMS)}")
    sources = "[" + ",".join(f'"{s}"' for s in scale.start_sources) + "]"
    starts = (*team["az"], f"run.seed={seed}", f"start_positions.sources={sources}",
              "start_positions.initial_prob=0.5")
    starts += games.get(scale.game).puzzle_start_overrides  # chess: the Penrose positions' move generator
    if arm == "az_starts_random":
        return (*starts, "start_positions.split=random", f"start_positions.test_count={scale.test_count}")
    if arm == "az_starts_ood":
        return (*starts, "start_positions.split=group", f"start_positions.heldout_group={scale.heldout_group}")
    # Table 1 rows 2 and 5-7: every puzzle, introduced at half-move clock 0 (App. C.3), then
    # each row adds one thing to the row before.
    rows = ["az_starts", *TABLE1_LOWER]
    added = {"az_starts": ("start_positions.halfmove_clocks=[0]",),
             "az_starts_intermediate": ("start_positions.intermediate=true",),
             "az_starts_exploration": (f"selfplay.sample_plies={presets.EXPLORATION_PLIES}",
                                       f"selfplay.sample_temperature={presets.EXPLORATION_TEMPERATURE}"),
             "az_starts_halfmove": ("start_positions.halfmove_clocks=" + str(list(presets.HALFMOVE_CLOCKS)),)}
    out = starts
    for row in rows[:rows.index(arm) + 1]:
        out += added[row]
    return out


def arm_config(scale: Scale, arm: str, seed: int) -> config_lib.TrainConfig:
    """The training config of one arm and seed at ``scale``."""
    base = presets.get_preset(scale.preset)
    return config_lib.apply_overrides(base, (*scale.overrides, *_arm_overrides(scale, arm, seed)))


def run_specs(scale: Scale, arms: Optional[Sequence[str]] = None) -> Tuple[RunSpec, ...]:
    """Every run of ``scale`` (``<arm>_s<seed>``; ``arms``: default the scale's), in training order."""
    specs = []
    for arm in scale.all_arms if arms is None else arms:
        seeds = scale.puzzle_seeds if arm.startswith("az_starts") else scale.seeds
        for seed in seeds:
            specs.append(RunSpec(f"{arm}_s{seed}", arm, seed, arm_config(scale, arm, seed)))
    return tuple(specs)
