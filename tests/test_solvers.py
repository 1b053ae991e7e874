"""azdb_jax.evaluation.solvers: solvers sharing compiled searches answer as each team alone.

``TeamSolver``'s searches take the network parameters and ψ as arguments, so the teams of
one configuration's seeds (same network, search, λ and ℓ0; their own parameters and ψ)
share one compiled program through ``programs``. Checked against each team's own solver
with nothing shared, on a diverse tiny Gardner team whose players 1 search with λ < 1,
so that ψ reaches the answers.
"""

import jax
import numpy as np

from azdb_jax import features, games, networks, search
from azdb_jax.envs import gardner_board
from azdb_jax.evaluation import solvers
from azdb_jax.evaluation.team import Team

TINY = networks.NetworkConfig(channels=4, num_blocks=1, value_hidden=4)


def _team(seed: int, psi_seed: int) -> Team:
    env = games.make("gardner_chess")
    state = env.init(jax.random.PRNGKey(0))
    net = networks.make_network(TINY, num_actions=env.num_actions, num_players=2)
    params = net.init(jax.random.PRNGKey(seed), state.observation)
    num_features = jax.eval_shape(features.feature_fn(env), state).shape[-1]
    psi = jax.random.uniform(jax.random.PRNGKey(psi_seed), (2, num_features))
    return Team(env=env, apply_fn=net.apply, params=params, num_players=2, lambdas=(1.0, 0.5), psi=psi, l0=0.5,
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
