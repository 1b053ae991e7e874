"""A team searches at test time as in self-play (SPEC §2; paper §3 and Fig. 8).

Player i searches with its own λ_i (λ_0 = 1), the intrinsic reward r_d^i of the
checkpoint's ψ on its own moves in the tree and v_d at the leaves; ``extrinsic_only`` is
the paper's ablation (λ = 1 for everyone). Checked here: λ = 1 is plain AlphaZero bit
for bit; the root Q of a player with λ < 1 differs from its extrinsic-only search by the
intrinsic terms computed by hand from Eq. 8; player 0 searches identically in both
modes; a team loaded from a run carries its λ_i, ψ and ℓ0; every report is labelled.
"""

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import diversity, features, games, networks, planning, runner, runs, search  # noqa: E402
from azdb_jax import agent as agent_lib  # noqa: E402
from azdb_jax.evaluation import loading, puzzle_eval, team as team_lib  # noqa: E402
from azdb_jax.agent import Agent  # noqa: E402
from azdb_jax.networks import NetOutput  # noqa: E402
from test_planning import _ttt_setup  # noqa: E402

# ------------------------------------------------------------------ hand-computed intrinsic terms

# Nim (1, 2): φ is the one-hot heap sizes [h0=0, h0=1, h0=2, h1=0, h1=1, h1=2] after the move.
NIM_HEAPS = (1, 2)
PHI_AFTER = {0: [1, 0, 0, 0, 0, 1],  # take 1 from heap 0 -> (0, 2)
             2: [0, 1, 0, 0, 1, 0],  # take 1 from heap 1 -> (1, 1)
             3: [0, 1, 0, 1, 0, 0]}  # take 2 from heap 1 -> (1, 0)
PSI = np.float32([[0.2, 0.5, 0.3, 0.1, 0.4, 0.5],   # player 0
                  [0.6, 0.3, 0.1, 0.5, 0.2, 0.3]])  # player 1
L0, LAM, V_D_ROOT = 1.5, 0.5, 0.7


def _hand_reward(action: int) -> float:
    """Eq. 8 for player 1, whose only neighbour is player 0: (1 − (d/ℓ0)³) φ·(ψ_1 − ψ_0).

    d = ||ψ_1 − ψ_0|| = sqrt(0.48) = 0.69282, (d/ℓ0)³ = 0.098535, so r_d = 0.901465 φ·Δ:
    +0.180293 (action 0), −0.360586 (action 2), +0.180293 (action 3).
    """
    delta = PSI[1].astype(np.float64) - PSI[0]
    d = np.sqrt(np.sum(delta**2))
    return float((1 - (d / L0) ** 3) * np.dot(PHI_AFTER[action], delta))


def _nim_stub(obs_counters_at_root: int = 3):
    """Uniform prior, v = 0; v_d = 0.7 at the root (3 counters: the root player to move), 0 elsewhere.

    Every child of the root has the opponent to move and v = v_d = 0, so its leaf value is 0
    whichever way v_d enters opponent-to-move leaves.
    """

    def apply(params, obs, player):
        del params, player
        batch = obs.shape[0]
        counters = jnp.sum(jnp.argmax(obs[..., 0], axis=-1), axis=-1)  # [B]
        value_d = jnp.where(counters == obs_counters_at_root, V_D_ROOT, 0.0)
        return NetOutput(jnp.zeros((batch, 4)), jnp.zeros(batch), value_d)

    return apply


def _nim_team(**kwargs) -> Agent:
    env = games.make("nim", heaps=NIM_HEAPS)
    # unvisited Q at the top of the range: 3 simulations visit each of the 3 root moves once.
    config = search.SearchConfig(num_simulations=3, unvisited_q=1.0)
    return Agent(env=env, apply_fn=_nim_stub(), params=None, num_players=2, search_config=config,
                lambdas=(1.0, LAM), psi=PSI, l0=L0, **kwargs)


def _team_search(team: Agent):
    root = jax.vmap(lambda _: team.env.state_from_heaps(jnp.int32(NIM_HEAPS), 0))(jnp.arange(1))
    return team.search(team.params, jax.random.PRNGKey(0), root)


@pytest.mark.slow
def test_root_q_differs_from_the_ablation_by_the_hand_computed_intrinsic_terms():
    team = _nim_team()
    own, ablation = _team_search(team), _team_search(team.as_extrinsic_only())
    legal = [0, 2, 3]
    for out in (own, ablation):
        np.testing.assert_array_equal(np.asarray(out.stats.visits)[0, :, legal], 1)
    q_own, q_ablation = np.asarray(own.stats.q)[0], np.asarray(ablation.stats.q)[0]
    # Player 1 (λ = 0.5): Q(root, a) = (1 − λ) r_d(a) + 0; the ablation's Q is 0.
    for a in legal:
        assert q_ablation[1, a] == 0.0
        assert q_own[1, a] == pytest.approx((1 - LAM) * _hand_reward(a), abs=1e-6)
    assert q_own[1, 0] == pytest.approx(0.0901465, abs=1e-6) and q_own[1, 2] == pytest.approx(-0.180293, abs=1e-6)
    # Player 0 (λ_0 = 1) searches identically in both modes, bit for bit.
    for field in own.stats._fields:
        np.testing.assert_array_equal(np.asarray(getattr(own.stats, field))[:, 0],
                                      np.asarray(getattr(ablation.stats, field))[:, 0])


def test_root_value_adds_v_d_at_the_root_players_leaf():
    # The root itself is a leaf where the root player is to move: λ v + (1 − λ) v_d.
    team = _nim_team()
    root = jax.vmap(lambda _: team.env.state_from_heaps(jnp.int32(NIM_HEAPS), 0))(jnp.arange(1))

    def value(t: Agent) -> float:
        out = search.run_search(t.env, t.apply_fn, None, jax.random.PRNGKey(0), root, jnp.int32([1]),
                                jnp.float32([t.search_lambdas[1]]), config=t.search_config, add_noise=False,
                                **t.search_hook()._asdict())
        return float(out.search_value[0])

    expected = ((1 - LAM) * V_D_ROOT + sum((1 - LAM) * _hand_reward(a) for a in (0, 2, 3))) / 4
    assert value(team) - value(team.as_extrinsic_only()) == pytest.approx(expected, abs=1e-6)


def test_team_intrinsic_hook_is_the_papers_reward():
    team = _nim_team()
    hook = team.search_hook()
    state = team.env.state_from_heaps(jnp.int32([0, 2]), 1)
    np.testing.assert_array_equal(hook.feature_fn(state), PHI_AFTER[0])
    reward = hook.intrinsic_reward_fn(hook.hook_params, hook.feature_fn(state), jnp.int32(1))
    assert float(reward) == pytest.approx(_hand_reward(0), rel=1e-5)
    assert float(reward) == pytest.approx(float(diversity.team_intrinsic_reward(jnp.asarray(PSI), hook.feature_fn(
        state), jnp.int32(1), l0=L0)), rel=1e-6)
    # No hook in the ablation, for a team without λ < 1, or when self-play kept r_d out of its search.
    assert team.as_extrinsic_only().search_hook() == agent_lib.SearchHook(None, None, None)
    assert _nim_team(intrinsic_in_search=False).search_hook().intrinsic_reward_fn is None
    no_diversity = Agent(env=team.env, apply_fn=team.apply_fn, params=None, num_players=2,
                        search_config=team.search_config, lambdas=(1.0, 1.0), psi=PSI)
    assert no_diversity.search_hook().intrinsic_reward_fn is None
    # A single player's hook: none at λ_0 = 1 (its reward is dropped exactly), the team's below.
    assert team.player_hook(0) == search.NO_HOOK
    one = team.player_hook(1)
    np.testing.assert_array_equal(one.hook_params, hook.hook_params)
    assert float(one.intrinsic_reward_fn(one.hook_params, one.feature_fn(state), jnp.int32(1))) == float(reward)


def test_the_intrinsic_reward_hook_is_built_in_one_place():
    # Self-play, the training loop's evaluation and every evaluation of a trained team take
    # the reward their searches add from search.intrinsic_hook (the Agent through search_hook).
    package = pathlib.Path(search.__file__).parent
    builders = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                      if "team_intrinsic_reward" in p.read_text() and p.name != "diversity.py")
    assert builders == ["search.py"], builders
    # λ and the hook are assembled by the agent alone (azdb_jax.agent.Agent: search_hook,
    # intrinsic_reward), which the trainer, the evaluator, matches, solvers, Nim's measures
    # and the UCI engine all use; so is the team search.
    hooks = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if "intrinsic_hook(" in p.read_text() and p.name != "search.py")
    assert hooks == ["agent.py"], hooks
    callers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py") if "planning.team_search(" in p.read_text())
    assert callers == ["agent.py"], callers


# ------------------------------------------------------------------ λ = 1 is AlphaZero, bit for bit


def _ttt():
    env, net, params, states = _ttt_setup()  # test_planning's tic-tac-toe team of 3
    psi = jax.random.uniform(jax.random.PRNGKey(5), (3, features.num_features(env)))
    return env, net, params, states, psi


def test_lambda_one_with_the_hook_is_plain_alphazero_bit_for_bit():
    env, net, params, states, psi = _ttt()
    config = search.SearchConfig(num_simulations=12)
    hook = dict(feature_fn=features.feature_fn(env),
                intrinsic_reward_fn=lambda p, phi, i: diversity.team_intrinsic_reward(p, phi, i, l0=0.3),
                hook_params=psi)

    @jax.jit
    def both(params, key):
        plain = planning.team_search(env, net.apply, params, key, states, num_players=3, lam=jnp.ones(3),
                                     config=config)
        with_hook = planning.team_search(env, net.apply, params, key, states, num_players=3, lam=jnp.ones(3),
                                         config=config, **hook)
        return plain, with_hook

    plain, with_hook = both(params, jax.random.PRNGKey(1))
    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(with_hook)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # A scalar λ is for players i > 0: latent 0 always searches with λ_0 = 1.
    np.testing.assert_array_equal(planning.player_lambdas(0.5, jnp.int32([0, 1, 2]), 3), [1.0, 0.5, 0.5])
    np.testing.assert_array_equal(planning.player_lambdas(jnp.float32([1, 0.9, 0.8]), jnp.int32([2, 0]), 3),
                                  np.float32([0.8, 1.0]))


@pytest.mark.slow
def test_match_agents_search_like_the_team():
    env, net, params, states, psi = _ttt()
    team = Agent(env=env, apply_fn=net.apply, params=params, num_players=3,
                search_config=search.SearchConfig(num_simulations=12), lambdas=(1.0, 0.0, 0.0), psi=psi, l0=0.05)
    ablation = team.as_extrinsic_only()
    key = jax.random.PRNGKey(2)
    # Player 0 plays the same moves in both modes; the latent policy is the single-player policy.
    np.testing.assert_array_equal(jax.jit(team.player_policy(0))(params, key, states),
                                  jax.jit(ablation.player_policy(0))(params, key, states))
    for j in range(3):
        np.testing.assert_array_equal(
            jax.jit(team.player_policy(j))(params, key, states),
            jax.jit(team.latent_policy())((params, jnp.int32(j)), key, states))
    # λ = 0 and a tiny ℓ0: only the (large) intrinsic reward counts, so some move changes.
    own = [np.asarray(jax.jit(team.player_policy(j))(params, key, states)) for j in (1, 2)]
    ext = [np.asarray(jax.jit(ablation.player_policy(j))(params, key, states)) for j in (1, 2)]
    assert any((a != b).any() for a, b in zip(own, ext))


# ------------------------------------------------------------------ Agent, labels, loading from a run


def test_team_describes_its_search():
    team = _nim_team(name="t")
    assert team.search_mode == "selfplay" and team.uses_intrinsic_terms
    np.testing.assert_array_equal(team.search_lambdas, [1.0, LAM])
    ablation = team.as_extrinsic_only()
    assert ablation.search_mode == "extrinsic_only" and not ablation.uses_intrinsic_terms
    np.testing.assert_array_equal(ablation.search_lambdas, [1.0, 1.0])
    described = ablation.search_description()
    assert described["search"] == "extrinsic_only" and "ABLATION" in described["search_note"]
    assert team.search_description()["intrinsic_reward"] and team.search_description()["l0"] == L0
    assert team_lib.label_rows([{"a": 1}], ablation) == [{"a": 1, "search": "extrinsic_only"}]
    with pytest.raises(ValueError, match="player 0 is plain AlphaZero"):
        Agent(env=team.env, apply_fn=None, params=None, num_players=2, search_config=team.search_config,
             lambdas=(0.5, 0.5))


@pytest.fixture(scope="module")
def diverse_run(trained_run, tmp_path_factory):
    """A tiny AZdb run (λ = 0.5): tic-tac-toe's shared ``trained_run`` (tests/conftest.py) as the
    straight run, and the same configuration resumed after an interruption (trained here)."""
    straight = trained_run("tic_tac_toe")
    config = runs.load_run_config(straight)
    resumed = tmp_path_factory.mktemp("runs") / "resumed"
    runner.train(config, resumed, stop_after=1, progress=False)  # resumes with a previous network
    runner.train(config, resumed, resume=True, progress=False)
    return config, straight, resumed


@pytest.mark.slow
def test_loaded_team_searches_as_in_selfplay(diverse_run):
    config, straight, _ = diverse_run
    assert config.team.lam == 0.5 and config.team.num_players == 3
    team = loading.load_team(straight)
    _, _, state = runs.load_run(straight)
    assert team.lambdas == (1.0, 0.5, 0.5) and team.l0 == config.diversity.l0 == 0.8
    assert team.search_mode == "selfplay"
    np.testing.assert_array_equal(team.psi, np.asarray(state.expected_features.psi))
    assert team.search_hook().intrinsic_reward_fn is not None
    ablation = loading.load_team(straight, extrinsic_only=True)
    assert ablation.name.endswith("/extrinsic_only") and ablation.search_hook().hook_params is None
    np.testing.assert_array_equal(ablation.search_lambdas, [1.0, 1.0, 1.0])


@pytest.mark.slow
def test_evaluation_with_the_previous_network_and_its_psi_resumes_exactly(diverse_run):
    config, straight, resumed = diverse_run
    assert config.run.eval_every == 1 and config.run.num_iterations == 2

    def records(workdir):
        return runs.read_metrics(workdir, wall_clock=False)

    assert records(straight) == records(resumed)
    opponents = {r["opponent"] for r in records(straight) if r["kind"] == "eval" and r["iteration"] == 2}
    assert "previous" in opponents


# ------------------------------------------------------------------ chess: puzzle reports, both modes

STS_LINES = [
    '1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id "STS(v1.0) Undermine.001"; '
    'c0 "f5=10, Be5+=2, Bf2=3, Bg4=2"; c9 "f4f5 d4e5 d4f2 f3g4";',
    '1q2rb1k/prp3pp/1pn1p3/5p1N/2PP3Q/6R1/PP3PPP/R5K1 w - - bm Rh3; id "STS(v1.0) Undermine.002"; '
    'c0 "Rh3=10, Rg5=3"; c9 "g3h3 g3g5";',
]


@pytest.mark.slow
def test_puzzle_reports_label_the_ablation_and_player_0_is_unchanged(tmp_path):
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=4672, num_players=2)
    params = net.init(jax.random.PRNGKey(0), np.zeros((8, 8, 119), np.float32))
    psi = np.asarray(jax.random.uniform(jax.random.PRNGKey(1), (2, 772)) * 0.1)
    team = Agent(env=games.make("chess"), apply_fn=net.apply, params=params, num_players=2,
                search_config=search.SearchConfig(num_simulations=8), lambdas=(1.0, 0.2), psi=psi, l0=0.5,
                name="tiny")
    path = tmp_path / "sts.epd"
    path.write_text("\n".join(STS_LINES) + "\n")
    by_mode = {}
    for extrinsic_only in (False, True):
        report, json_path, csv_path = puzzle_eval.evaluate(
            suite="sts", data=str(path), team=team, homogeneous_copies=2, batch_size=2,
            out=str(tmp_path / f"sts_{extrinsic_only}"), extrinsic_only=extrinsic_only, progress=False)
        saved = json.loads(json_path.read_text())
        by_mode[extrinsic_only] = saved
        mode = "extrinsic_only" if extrinsic_only else "selfplay"
        assert saved["summary"]["search"] == mode and saved["summary"]["solver"]["search"] == mode
        header, *lines = csv_path.read_text().splitlines()
        assert "search" in header.split(",") and all(line.endswith(mode) for line in lines)
    for column in ("player_0", "homogeneous_0", "homogeneous_1"):
        for own, ablation in zip(by_mode[False]["rows"], by_mode[True]["rows"]):
            assert own[f"{column}_move"] == ablation[f"{column}_move"]
            assert own[f"{column}_value"] == ablation[f"{column}_value"]
