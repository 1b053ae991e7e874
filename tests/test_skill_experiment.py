"""The attuned senior (its framework self-play against a replay of its games, its
fine-tuning and the run it saves), the experiments' scripts' input errors and the engine
levels of the skill tables (real Fairy-Stockfish games)."""

import dataclasses
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import skill_stub  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax import games as games_lib  # noqa: E402
from azdb_jax.skill import frameworks  # noqa: E402


def _refuses_in_one_line(script: str, base, cases, out: pathlib.Path) -> None:
    """Each ``(extra flags, word)`` case: the script exits non-zero with one stderr line
    naming ``word``, and writes nothing to ``out``."""
    import subprocess  # pylint: disable=g-import-not-at-top

    path = pathlib.Path(__file__).resolve().parents[1] / "experiments" / script
    for extra, word in cases:
        result = subprocess.run([sys.executable, str(path)] + base + extra, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode != 0
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and word in lines[0], result.stderr[-2000:]
    assert not out.exists()


@pytest.mark.slow
def test_experiment_script_refuses_bad_flags_in_one_line(tmp_path):
    base = [f"--strong={tmp_path / 'none'}", f"--junior={tmp_path / 'none'}", f"--out={tmp_path / 'out'}"]
    cases = ((["--focals=tree,leela"], "focals"), (["--frameworks=stt,chess960"], "frameworks"),
             (["--games=5"], "games"), ([], "config.json"), (["--focals=tree,attuned"], "attuned_stt"),
             (["--junior_kind=maia"], "junior_kind"), (["--junior_simulations=0"], "junior_simulations"),
             ([f"--junior={tmp_path / 'none'}@last"], "iteration number"))
    _refuses_in_one_line("skill_compat.py", base, cases, tmp_path / "out")


# ------------------------------------------------------------------ the attuned senior


def _lowest_index_junior(params, state):
    """A junior that (all but surely) plays its lowest-numbered allowed move: log-probs fall
    by 100 per action id, so a hand restricted to a piece type plays that type's lowest."""
    del params
    rank = -100.0 * jnp.arange(state.legal_action_mask.shape[-1], dtype=jnp.float32)
    return jax.nn.log_softmax(jnp.where(state.legal_action_mask, rank, -jnp.inf), axis=-1)


def _replay(env, start, actions):
    """Replays the recorded moves of game 0.. from ``start``: (observations, rewards summed)."""
    step = jax.jit(env.step)
    games = []
    for b in range(actions.shape[1]):
        state = jax.tree.map(lambda x, b=b: x[b], start)
        observations, total = [], np.zeros(2)
        for t in range(actions.shape[0]):
            if actions[t, b] < 0:
                break
            observations.append(np.asarray(state.observation))
            state = step(state, int(actions[t, b]))
            total += np.asarray(state.rewards)
        games.append((observations, total, bool(state.terminated)))
    return games


@pytest.mark.slow
def test_stt_framework_selfplay_follows_the_coins_and_replays():
    from azdb_jax import search as search_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax.skill import attuned  # pylint: disable=g-import-not-at-top

    env = games_lib.make("tic_tac_toe")
    apply, weights = skill_stub.stub_network(env, seed=3)
    config = search_lib.SearchConfig(algorithm="gumbel", num_simulations=4, max_num_considered_actions=4)
    play = jax.jit(attuned.framework_selfplay(env, "stt", apply, config, _lowest_index_junior, max_plies=9))
    start = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 8))
    games = jax.device_get(play(weights, None, jax.random.PRNGKey(1), start))
    valid, action, senior = np.asarray(games.valid), np.asarray(games.action), np.asarray(games.senior_action)
    by_senior = np.asarray(games.by_senior)
    assert 0.2 < by_senior[valid].mean() < 0.8  # both agents move
    for (observations, total, ended), b in zip(_replay(env, start, action), range(8)):
        assert ended and bool(games.finished[b])  # tic-tac-toe ends within 9 plies
        np.testing.assert_array_equal(games.outcome[b], total)
        assert len(observations) == valid[:, b].sum() and valid[:len(observations), b].all()
        for t, obs in enumerate(observations):
            np.testing.assert_array_equal(np.asarray(games.observation)[t, b], obs)
    legal_lowest = []
    state = jax.tree.map(lambda x: x, start)
    for t in range(9):
        legal_lowest.append(np.argmax(np.asarray(state.legal_action_mask), axis=-1))
        state = jax.vmap(env.step)(state, jnp.maximum(jnp.asarray(action[t]), 0))
    for t in range(9):
        for b in range(8):
            if valid[t, b]:
                expected = senior[t, b] if by_senior[t, b] else legal_lowest[t][b]
                assert action[t, b] == expected, (t, b)
    control = jax.jit(attuned.framework_selfplay(env, "regular", apply, config, _lowest_index_junior, max_plies=9))
    plain = jax.device_get(control(weights, None, jax.random.PRNGKey(1), start))
    plain_valid = np.asarray(plain.valid)
    assert np.asarray(plain.by_senior)[plain_valid].all()  # no junior: the search plays every move
    np.testing.assert_array_equal(np.asarray(plain.action)[plain_valid], np.asarray(plain.senior_action)[plain_valid])
    batch = attuned.training_batch(games)
    movers = np.asarray(games.mover)[valid]
    np.testing.assert_array_equal(batch["z"], np.asarray(games.outcome)[np.nonzero(valid)[1], movers])
    np.testing.assert_allclose(batch["search_policy"].sum(-1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_hb_framework_selfplay_keeps_the_named_piece_and_scores_capped_games_by_material():
    from azdb_jax import adjudication, presets, runs, trainer  # pylint: disable=g-import-not-at-top
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import matches  # pylint: disable=g-import-not-at-top
    from azdb_jax.skill import attuned  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(presets.get_preset("gardner_cpu"), [
        "team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay", "network.channels=8",
        "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
        "search.max_num_considered_actions=4"])
    components = runs.build_components(config)
    state = trainer.init_trainer(components, jax.random.PRNGKey(0))
    env = components.env
    adjudicate = adjudication.adjudicator(env, "material")

    play = jax.jit(attuned.framework_selfplay(env, "hb", components.network.apply, config.search,
                                              _lowest_index_junior, max_plies=4, adjudicate=adjudicate))
    start = matches.random_openings(env, 3, 2, jax.random.PRNGKey(2))
    games = jax.device_get(play(state.train_state.params, None, jax.random.PRNGKey(3), start))
    assert np.asarray(games.valid).all() and np.asarray(games.by_senior).all()
    replay_state = start
    for t in range(4):
        legal = np.asarray(replay_state.legal_action_mask)
        types = np.asarray(frameworks.action_piece_types(env, replay_state))
        for b in range(3):
            named = types[b, int(games.senior_action[t, b])]
            mine = [a for a in np.flatnonzero(legal[b]) if types[b, a] == named]
            assert int(games.action[t, b]) == min(mine), (t, b)  # the hand's lowest move of the named type
        replay_state = jax.vmap(env.step)(replay_state, jnp.asarray(games.action[t]))
    # Four plies from two random ones: no game ends, so every result is the material verdict.
    verdict = np.asarray(adjudicate(replay_state))
    mover = np.asarray(replay_state.current_player)
    for b in range(3):
        np.testing.assert_array_equal(games.outcome[b, mover[b]], verdict[b])
        np.testing.assert_array_equal(games.outcome[b, 1 - mover[b]], -verdict[b])


@pytest.mark.slow
def test_attuned_fine_tuning_moves_the_network_and_saves_a_loadable_run(tmp_path):
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runs, trainer  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.skill import attuned  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(presets.get_preset("demo"), [
        "env.name=tic_tac_toe", "team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay",
        "network.channels=8", "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
        "search.max_num_considered_actions=4"])
    components = runs.build_components(config)
    state = trainer.init_trainer(components, jax.random.PRNGKey(0))
    tune = attuned.AttunedConfig(framework="stt", iterations=2, num_games=2, max_plies=9, opening_plies=0,
                                 learner_steps=2, batch_size=8, window=1)
    rounds = list(attuned.fine_tune(components.env, components.network, state.train_state.params, config.search,
                                    _lowest_index_junior, None, tune))
    assert [p.iteration for _, p in rounds] == [1, 2]
    assert all(5 <= p.positions <= 18 and 0.0 <= p.senior_share <= 1.0 for _, p in rounds)
    params = rounds[-1][0]
    moved = jax.tree_util.tree_leaves(jax.tree.map(lambda a, b: float(jnp.abs(a - b).max()), params,
                                                   state.train_state.params))
    assert max(moved) > 0
    runs.write_run(tmp_path / "attuned", config, state, params=params)
    team = loading.load_team(tmp_path / "attuned")
    assert team.step == int(state.iteration)
    jax.tree.map(np.testing.assert_array_equal, jax.device_get(team.params), jax.device_get(params))
    with pytest.raises(ValueError, match="already holds a run"):
        runs.write_run(tmp_path / "attuned", config, state, params=params)
    with pytest.raises(ValueError, match="framework"):
        attuned.AttunedConfig(framework="chess960")


@pytest.mark.slow
def test_attuning_script_refuses_bad_flags_in_one_line(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "config.json").write_text("{}")
    base = [f"--strong={tmp_path / 'none'}", f"--junior={tmp_path / 'none'}"]
    cases = (([f"--workdir={tmp_path / 'out'}", "--framework=tandem"], "framework"),
             ([], "--workdir"), ([f"--workdir={tmp_path / 'taken'}"], "already holds a run"),
             ([f"--workdir={tmp_path / 'out'}"], "config.json"))
    _refuses_in_one_line("train_attuned.py", base, cases, tmp_path / "out")


@pytest.mark.parametrize("preset, limit, engine", [
    pytest.param("gardner_cpu", "depth=1", "Fairy-Stockfish", marks=pytest.mark.slow),  # Gardner chess: real games
    pytest.param("demo_chess", "depth=1:skill=0", "Stockfish", marks=pytest.mark.slow),  # chess: Stockfish
])
def test_engine_levels_give_the_junior_and_the_strong_player_an_elo(tmp_path, request, preset, limit, engine):
    import math  # pylint: disable=g-import-not-at-top

    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runs, trainer  # pylint: disable=g-import-not-at-top
    from azdb_jax.skill import experiment  # pylint: disable=g-import-not-at-top

    # The engine is found on the PATH by the player; the fixture skips (or fails in CI) without it.
    request.getfixturevalue("fsf_path" if engine == "Fairy-Stockfish" else "stockfish_path")
    config = config_lib.apply_overrides(presets.get_preset(preset), [
        "team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay", "network.channels=8",
        "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
        "search.max_num_considered_actions=4", "run.eval_simulations=4"])
    components = runs.build_components(config)
    runs.write_run(tmp_path / "run", config, trainer.init_trainer(components, jax.random.PRNGKey(0)))
    games = 4 if engine == "Fairy-Stockfish" else 2
    settings = experiment.TableSettings(strong=str(tmp_path / "run"), junior=experiment.Junior(str(tmp_path / "run")),
                                        frameworks=(), references=(), engine_limits=(limit,), games=games,
                                        max_plies=8)
    report = experiment.play_tables(settings, tmp_path / "out")
    assert report["complete"] and not report["matches"]
    assert set(report["engines"]) == {f"junior_vs_{limit}", f"strong_vs_{limit}"}
    assert set(report["juniors"]) == {"vs_strong"}
    for item in report["engines"].values():
        assert item["games"] == item["wins"] + item["draws"] + item["losses"] == games
        assert engine in item["engine"] and "depth=1" in item["engine"] and item["limit"] == limit
        p = (item["wins"] + item["draws"] / 2) / games
        assert item["score"] == pytest.approx(p)
        if 0 < p < 1:
            assert item["elo"] == pytest.approx(-400 * math.log10(1 / p - 1))
        else:
            assert math.isinf(item["elo"]) and math.isfinite(item["elo_clipped"])
    assert experiment.read_tables(tmp_path / "out")["engines"] == report["engines"]
    with pytest.raises(ValueError, match="engine_limits"):
        dataclasses.replace(settings, engine_limits=("depth=x",))
    if engine == "Fairy-Stockfish":  # a level Fairy-Stockfish cannot play is refused before any game
        with pytest.raises(ValueError, match="takes no elo"):
            experiment.play_tables(dataclasses.replace(settings, engine_limits=("depth=1:elo=1500",)), tmp_path / "o2")
        assert not (tmp_path / "o2").exists()


def test_engine_limits_are_parsed_and_checked_per_engine():
    from azdb_jax.skill import experiment  # pylint: disable=g-import-not-at-top

    parse = experiment.parse_engine_limit
    assert parse("depth=1:skill=-20") == {"depth": 1, "skill_level": -20}
    assert parse("time=0.05:elo=1350", "chess") == {"time": 0.05, "elo": 1350}
    assert parse("nodes=100:skill=0", "chess") == {"nodes": 100, "skill_level": 0}
    for bad in ("depth", "nodes=many", "skill=3", "time=x", "depth=1:nodes=2", "depth=1:depth=2",
                "time=1:skill=0:elo=1500", "depth=1:level=3", "depth=0", "time=-0.5"):
        with pytest.raises(ValueError, match="engine_limits"):
            parse(bad)
    with pytest.raises(ValueError, match="Fairy-Stockfish .gardner_chess. takes no elo"):
        parse("depth=1:elo=1500", "gardner_chess")
    with pytest.raises(ValueError, match="no reference engine for connect_four"):
        parse("depth=1", "connect_four")
