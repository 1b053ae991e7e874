"""Tests of azdb_jax/evaluation/nim.py against brute-force game solving (no nim-sum rule)."""

import dataclasses
import functools
import itertools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import games, networks, search
from azdb_jax.games.nim import nim_oracle_policy
from azdb_jax.policies import uniform_random_policy
from azdb_jax.envs import nim as nim_lib
from azdb_jax.evaluation import nim as nim_eval
from azdb_jax.evaluation import reports
from azdb_jax.agent import Agent

HEAPS = (1, 2, 3, 4)


@functools.lru_cache(maxsize=None)
def _wins(heaps: tuple) -> bool:
    """Brute force: the player to move wins iff some move leaves a position lost for the opponent."""
    return any(not _wins(heaps[:k] + (heaps[k] - t,) + heaps[k + 1:])
               for k in range(len(heaps)) for t in range(1, heaps[k] + 1))


def _brute_force(initial):
    """Per non-terminal position: (won, #winning moves, #legal moves, first legal move wins)."""
    rows = []
    for heaps in itertools.product(*(range(h + 1) for h in initial)):
        if sum(heaps) == 0:
            continue
        moves = [(k, t) for k in range(len(heaps)) for t in range(1, heaps[k] + 1)]
        winning = [not _wins(heaps[:k] + (heaps[k] - t,) + heaps[k + 1:]) for k, t in moves]
        # Action ids are heap * max_heap + take - 1, so the lowest legal id takes 1 from the first non-empty heap.
        first = min(range(len(moves)), key=lambda i: moves[i][0] * max(initial) + moves[i][1] - 1)
        rows.append((_wins(heaps), sum(winning), len(moves), winning[first]))
    return rows


def _heaps_of(observation):
    return jnp.argmax(observation[..., 0], axis=-1)  # one-hot [B, K, M+1, 1] -> [B, K]


def _oracle_apply(max_heap):
    def apply_fn(params, observation, player):
        del player
        heaps = _heaps_of(observation)
        winning = jax.vmap(lambda h: nim_lib.winning_moves(h, max_heap))(heaps)
        value = jax.vmap(nim_lib.position_value)(heaps).astype(jnp.float32)
        mix = params["mix"]
        return networks.NetOutput(policy_logits=mix * 10.0 * winning, value=mix * value,
                                  value_d=jnp.zeros_like(value))

    return apply_fn


def _agent(env, apply_fn, num_players=1):
    """A team of ``num_players`` over ``apply_fn``, which takes no parameters."""
    return Agent(env=env, apply_fn=apply_fn, params=None, num_players=num_players, search_config=search.SearchConfig())


def _constant_apply(value):
    def apply_fn(params, observation, player):
        del params
        batch = observation.shape[0]
        return networks.NetOutput(policy_logits=jnp.zeros((batch, observation.shape[1] * (observation.shape[2] - 1))),
                                  value=jnp.full((batch,), value), value_d=jnp.zeros(batch))

    return apply_fn


def test_positions_and_oracle_match_brute_force():
    env = games.make("nim", heaps=HEAPS)
    oracle = nim_eval.oracle_tables(env)
    truth = _brute_force(HEAPS)
    assert len(oracle.heaps) == 2 * 3 * 4 * 5 - 1 == len(truth)
    np.testing.assert_array_equal(oracle.value > 0, [r[0] for r in truth])
    np.testing.assert_array_equal(oracle.winning.sum(-1), [r[1] if r[0] else 0 for r in truth])
    np.testing.assert_array_equal(oracle.legal.sum(-1), [r[2] for r in truth])
    assert len(nim_eval.nim_positions(HEAPS, include_terminal=True)) == 120


def test_expert_measure_perfect_network_and_search():
    env = games.make("nim", heaps=HEAPS)
    team = Agent(env=env, apply_fn=_oracle_apply(env.max_heap), params={"mix": jnp.float32(1.0)}, num_players=2,
                 search_config=search.SearchConfig(num_simulations=4))
    result = nim_eval.expert_measure(team, search=True, batch_size=32)
    assert result["positions"] == 119 and len(result["players"]) == 2
    for player in result["players"]:
        for key in ("top1_accuracy", "value_sign_accuracy", "value_sign_accuracy_won", "value_sign_accuracy_lost",
                    "search_top1_accuracy", "search_value_sign_accuracy"):
            assert player[key] == 1.0, key


def test_checkpoints_of_a_run_share_one_compiled_search():
    env = games.make("nim", heaps=HEAPS)
    config = search.SearchConfig(num_simulations=2)
    first = Agent(env=env, apply_fn=_oracle_apply(env.max_heap), params={"mix": jnp.float32(1.0)}, num_players=1,
                  search_config=config, name="nim@0", step=0)
    later = dataclasses.replace(first, params={"mix": jnp.float32(0.0)}, name="nim@10", step=10, l0=2.0)
    misses = nim_eval._search_fn.cache_info().misses
    for team in (first, later):
        nim_eval.expert_measure(team, search=True, batch_size=64)
    assert nim_eval._search_fn.cache_info().misses - misses <= 1
    assert nim_eval.search_key(first) == nim_eval.search_key(later)
    assert nim_eval.search_key(first) != nim_eval.search_key(first.with_simulations(3))


def test_expert_measure_constant_network_baselines():
    env = games.make("nim", heaps=HEAPS)
    truth = _brute_force(HEAPS)
    won = [r for r in truth if r[0]]
    first_move_baseline = sum(r[3] for r in won) / len(won)
    random_baseline = float(np.mean([r[1] / r[2] for r in won]))
    share_won = len(won) / len(truth)
    # Positive constant value: right exactly on the won positions. Batch size 50 pads the last batch.
    result = nim_eval.expert_measure(_agent(env, _constant_apply(0.5)), batch_size=50)
    player = result["players"][0]
    assert result["won_positions"] == len(won)
    assert player["top1_accuracy"] == pytest.approx(first_move_baseline)
    assert 0.0 < first_move_baseline < 1.0
    assert result["random_baseline"] == pytest.approx(random_baseline)
    assert player["value_sign_accuracy"] == pytest.approx(share_won)
    assert player["value_sign_accuracy_won"] == 1.0 and player["value_sign_accuracy_lost"] == 0.0
    # A value of exactly 0 never has the right sign.
    zero = nim_eval.expert_measure(_agent(env, _constant_apply(0.0)))["players"][0]
    assert zero["value_sign_accuracy"] == 0.0
    with pytest.raises(ValueError, match="batch_size"):
        nim_eval.expert_measure(_agent(env, _constant_apply(0.0)), batch_size=0)


def test_champion_measure_oracle_beats_random():
    env = games.make("nim", heaps=(1, 3, 5))
    agents = [nim_eval.Entrant("random", uniform_random_policy(), None),
              nim_eval.Entrant("oracle", nim_oracle_policy(env.max_heap), None)]
    result = nim_eval.champion_measure(env, agents, jax.random.PRNGKey(0), num_games=16, num_seeds=2, oracle=True)
    random_row, oracle_row = result["agents"]
    assert random_row["elo"] == 0.0 and random_row["elo_stderr"] == 0.0  # the anchor
    assert oracle_row["elo"] > 100 and np.isfinite(oracle_row["elo_stderr"]) and oracle_row["elo_stderr"] > 0
    (pair,) = result["pairs"]
    assert pair["wins"] + pair["draws"] + pair["losses"] == 32 and pair["losses"] > pair["wins"]
    assert np.isfinite(pair["elo_difference"]) and pair["elo_difference"] < 0
    # Oracle against oracle: the first mover wins (nim-sum 1^3^5 = 7 != 0), so exactly half.
    assert oracle_row["score_vs_oracle"] == 0.5
    assert random_row["score_vs_oracle"] < 0.2
    with pytest.raises(ValueError, match="at least two"):
        nim_eval.champion_measure(env, agents[:1], jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="num_games must be an even"):
        nim_eval.champion_measure(env, agents, jax.random.PRNGKey(0), num_games=7)


@pytest.mark.slow
def test_checkpoints_script_measures_and_writes(tmp_path):
    env = games.make("nim", heaps=(1, 3, 5))
    config = search.SearchConfig(num_simulations=2)
    apply_fn = _oracle_apply(env.max_heap)
    teams = [(step, Agent(env=env, apply_fn=apply_fn, params={"mix": jnp.float32(mix)}, num_players=2,
                         search_config=config, name=f"nim@{step}")) for step, mix in ((0, 0.0), (10, 1.0))]
    summary, rows = nim_eval.measure_checkpoints(teams, num_games=8, num_seeds=1, seed=0, progress=False)
    assert [(r["step"], r["player"]) for r in rows] == [(0, 0), (0, 1), (10, 0), (10, 1)]
    later = [r for r in rows if r["step"] == 10]
    assert all(r["top1_accuracy"] == 1.0 and r["search_top1_accuracy"] == 1.0 for r in later)
    assert all(r["elo"] > 0 and np.isfinite(r["elo_stderr"]) for r in later)
    assert rows[0]["elo"] == 0.0
    json_path, csv_path = reports.write_report(tmp_path / "nim", summary, rows)
    report = json.loads(json_path.read_text())
    assert report["summary"]["champion"]["anchor"] == "step0/p0" and len(report["rows"]) == 4
    assert csv_path.read_text().startswith("step,player,")


def test_learning_check_measures_the_nim_recipe_against_brute_force():
    # experiments/learning_check.py's Nim measurement, on the recipe's untrained network (no
    # training): the run's Components make the agent, the oracle's counts come out.
    from azdb_jax import runner  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import learning_check  # pylint: disable=g-import-not-at-top
    config = learning_check.make_config("nim")
    programs = runner.programs(config)
    params = programs.init(jax.random.PRNGKey(0)).train_state.params
    result = learning_check.evaluate("nim", config, programs.components, params)
    truth = _brute_force((1, 3, 5))
    won = [r for r in truth if r[0]]
    assert result["positions"] == len(truth) == 47 and result["won_positions"] == len(won) == 40
    assert result["random_baseline"] == pytest.approx(float(np.mean([r[1] / r[2] for r in won])))
    assert result["accuracy_margin"] == pytest.approx(result["policy_top1_accuracy"] - result["random_baseline"])
    assert 0.0 <= result["value_sign_accuracy"] <= 1.0
