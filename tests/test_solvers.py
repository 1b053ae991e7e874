"""azdb_jax.evaluation.solvers and members_solver: solvers sharing compiled searches answer
as each team alone.

``TeamSolver``'s searches take the network parameters and ψ as arguments, so the teams of
one configuration's seeds (same network, search, λ and ℓ0; their own parameters and ψ)
share one compiled program through ``programs``. Checked against each team's own solver
with nothing shared, on a diverse tiny Gardner team whose players 1 search with λ < 1,
so that ψ reaches the answers; and several teams searched as members of one vmapped
program (``batch_members``, ``members_move_choices``, ``members_solver.MembersSolver``)
against the same teams one by one.
"""

import jax
import numpy as np
import pytest

from azdb_jax import features, games, networks, search
from azdb_jax.envs import gardner_board
from azdb_jax.evaluation import members_solver, move_choices, solvers
from azdb_jax.agent import Agent

TINY = networks.NetworkConfig(channels=4, num_blocks=1, value_hidden=4)


def _team(seed: int, psi_seed: int) -> Agent:
    env = games.make("gardner_chess")
    state = env.init(jax.random.PRNGKey(0))
    net = networks.make_network(TINY, num_actions=env.num_actions, num_players=2)
    params = net.init(jax.random.PRNGKey(seed), state.observation)
    num_features = jax.eval_shape(features.feature_fn(env), state).shape[-1]
    psi = jax.random.uniform(jax.random.PRNGKey(psi_seed), (2, num_features))
    return Agent(env=env, apply_fn=net.apply, params=params, num_players=2, lambdas=(1.0, 0.5), psi=psi, l0=0.5,
                search_config=search.SearchConfig(num_simulations=8), name=f"seed{seed}")


def test_teams_of_one_configuration_share_the_search_and_keep_their_own_psi():
    boards = [gardner_board.GardnerBoard(), gardner_board.GardnerBoard("rnbqk/ppppp/5/PPPPP/RNBQK b - - 0 1")]
    first, second = _team(0, 1), _team(2, 3)
    programs = {}
    solvers.TeamSolver(first, rules=("value",), homogeneous_copies=0, programs=programs, batch_size=2)(boards)
    compiled = dict(programs)
    shared = solvers.TeamSolver(second, rules=("value",), homogeneous_copies=0, programs=programs, batch_size=2)
    alone = solvers.TeamSolver(second, rules=("value",), homogeneous_copies=0, batch_size=2)
    together, apart = shared(boards), alone(boards)
    assert programs == compiled  # the second team played through the first one's program
    assert together.moves == apart.moves
    for column in together.values:
        np.testing.assert_allclose(together.values[column], apart.values[column], rtol=1e-5, atol=1e-6)
    # ψ is the second team's: with the first team's ψ, player 1's search values change
    other_psi = solvers.TeamSolver(second.with_arrays(second.params, first.psi), rules=("value",),
                                   homogeneous_copies=0, programs=programs, batch_size=2)(boards)
    assert not np.allclose(other_psi.values["player_1"], apart.values["player_1"])
    np.testing.assert_allclose(other_psi.values["player_0"], apart.values["player_0"], rtol=1e-5, atol=1e-6)


def test_several_teams_search_as_members_of_one_program():
    """``batch_members``: three teams of one configuration searched in one vmapped call
    answer as the same solver calling each team's search in turn (every column: each
    seed's players, the rules over all of them, the max over seeds)."""
    boards = [gardner_board.GardnerBoard(), gardner_board.GardnerBoard("rnbqk/ppppp/5/PPPPP/RNBQK b - - 0 1"),
              gardner_board.GardnerBoard("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1")]
    teams = [_team(0, 1), _team(2, 3), _team(4, 5)]
    batched = solvers.TeamSolver(teams, rules=("value", "gap"), batch_size=2, batch_members=True)
    apart = solvers.TeamSolver(teams, rules=("value", "gap"), batch_size=2, batch_members=False)
    assert batched.batch_members and not apart.batch_members
    together, alone = batched(boards), apart(boards)
    assert batched.columns == apart.columns and len([c for c in batched.columns if c.startswith("seed_")]) == 6
    assert together.moves == alone.moves
    for column in together.values:
        np.testing.assert_allclose(together.values[column], alone.values[column], rtol=1e-5, atol=1e-6)
    # the members' programs are one: a fourth solver of these teams compiles nothing more
    programs = {}
    solvers.TeamSolver(teams, batch_size=2, batch_members=True, programs=programs)(boards[:1])
    assert [key[0] for key in programs] == ["members"]
    # teams that search differently cannot be members of one program
    other = teams[2].with_arrays(teams[2].params, teams[2].psi)
    other = Agent(env=other.env, apply_fn=other.apply_fn, params=other.params, num_players=2, lambdas=(1.0, 0.7),
                 psi=other.psi, l0=0.5, search_config=other.search_config)
    with pytest.raises(ValueError, match="search alike"):
        solvers.TeamSolver(teams[:2] + [other], batch_members=True)
    assert not solvers.TeamSolver(teams[:2] + [other], batch_members=None).batch_members


@pytest.mark.slow
def test_teams_answer_apart_as_members_of_one_program():
    """``MembersSolver``: three teams, each with its own rules and homogeneous control,
    searched in one vmapped call per batch, answer every column as each team's own
    solver does; ``split`` gives a row named as the team's own."""
    boards = [gardner_board.GardnerBoard(), gardner_board.GardnerBoard("rnbqk/ppppp/5/PPPPP/RNBQK b - - 0 1"),
              gardner_board.GardnerBoard("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1")]
    teams = [_team(0, 1), _team(2, 3), _team(4, 5)]
    options = dict(rules=("value", "gap"), homogeneous_copies=2, batch_size=2)
    programs = {}
    members = members_solver.MembersSolver(teams, batch_members=True, programs=programs, **options)
    together = members(boards)
    assert [key[0] for key in programs] == ["members"]  # one program for the three teams
    for k, team in enumerate(teams):
        alone = solvers.TeamSolver(team, **options)
        answers = alone(boards)
        assert members.solvers[k].columns == alone.columns and "homogeneous_1" in alone.columns
        for column in alone.columns:
            name = members_solver.member_column(k, column)
            assert together.moves[name] == answers.moves[column], (k, column)
            np.testing.assert_allclose(together.values[name], answers.values[column], rtol=1e-5, atol=1e-6)
        assert {g: tuple(c.split("/", 1)[1] for c in cols) for g, cols in members.groups.items()
                if g.startswith(f"member_{k}/")} == {members_solver.member_column(k, g): cols
                                                     for g, cols in alone.groups.items()}
    # the teams' own networks: their answers differ
    assert together.moves["member_0/player_0"] != together.moves["member_1/player_0"] or \
        not np.allclose(together.values["member_0/player_0"], together.values["member_1/player_0"])
    row = {"set": "x", **{f"{c}_solved": float(i) for i, c in enumerate(members.columns)}}
    assert members.split(row, 1) == {"set": "x", **{f"{c}_solved": float(row[f"member_1/{c}_solved"])
                                                    for c in members.solvers[1].columns}}
    apart = members_solver.MembersSolver(teams, batch_members=False, **options)
    assert not apart.batch_members and apart(boards).moves == together.moves
    other = Agent(env=teams[2].env, apply_fn=teams[2].apply_fn, params=teams[2].params, num_players=2,
                 lambdas=(1.0, 0.7), psi=teams[2].psi, l0=0.5, search_config=teams[2].search_config)
    with pytest.raises(ValueError, match="search alike"):
        members_solver.MembersSolver(teams[:2] + [other], batch_members=True)
    with pytest.raises(ValueError, match="one or more teams"):
        members_solver.MembersSolver([])


@pytest.mark.slow
def test_several_teams_choose_moves_as_members_of_one_program():
    """``move_choices.members_move_choices``: three teams' players on the same random
    positions in one vmapped program choose what each team chooses alone."""
    teams = [_team(0, 1), _team(2, 3), _team(4, 5)]
    key = jax.random.PRNGKey(7)
    together = move_choices.members_move_choices(teams, num_positions=6, rng_key=key, max_plies=4)
    programs = {}
    for team, choices in zip(teams, together):
        alone = move_choices.team_move_choices(team, num_positions=6, rng_key=key, max_plies=4, programs=programs)
        np.testing.assert_array_equal(choices.moves, alone.moves)
        np.testing.assert_array_equal(choices.distinct, alone.distinct)
    assert together[0].moves.shape == (2, 6)
    assert not all(np.array_equal(together[0].moves, c.moves) for c in together[1:])  # the teams' own networks
