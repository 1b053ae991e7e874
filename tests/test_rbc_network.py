"""azdb_jax/rbc/{network,training,evaluator}.py and experiments/rbc_train.py.

- the network's heads have the sizes of RBC's actions, per headset;
- each headset has its own parameters: changing one headset's changes only its outputs,
  and a stop-gradient headset's loss does not reach the tower;
- a few Adam steps on a handful of examples lower their loss;
- accuracies and baselines are what hand-made predictions give;
- a saved checkpoint loads into an ``Evaluator`` that answers as the trained parameters do,
  and unknown headsets, bad shapes and missing checkpoints fail with one line naming them;
- (slow) the training script runs end to end on a few games.
"""

import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax.rbc import actions, dataset, evaluator, network, synopsis, training

REPO = pathlib.Path(__file__).resolve().parents[1]
TINY = network.RbcNetConfig(headsets=("A", "B"), channels=8, num_blocks=1, policy_channels=1, value_channels=1,
                            value_hidden=8)


def _synthetic(n: int, seed: int = 0) -> dataset.Examples:
    """``n`` examples with random synopses and targets, two games, groups A and B."""
    rng = np.random.default_rng(seed)
    stage = (np.arange(n) % 2).astype(np.uint8)
    legal = np.stack([dataset.pack_mask(set(rng.choice(actions.PASS, 20, replace=False).tolist()) | {actions.PASS})
                      for _ in range(n)])
    action = np.where(stage == 0, rng.integers(actions.NUM_SENSES, size=n), actions.PASS).astype(np.int32)
    return dataset.Examples(
        synopses=rng.integers(0, 2 ** 63, size=(n, synopsis.NUM_PLANES), dtype=np.uint64), stage=stage,
        action=action, legal=legal, result=rng.choice([-1, 0, 1], size=n).astype(np.int8),
        soon_win=rng.random(n) < 0.3, soon_lose=rng.random(n) < 0.3,
        pieces=rng.integers(0, 9, size=(n, dataset.NUM_PIECE_COUNTS)).astype(np.uint8), tracked=np.ones(n, bool),
        boards=np.ones(n, np.int32), game=(np.arange(n) % 2).astype(np.int32),
        group=(np.arange(n) // 2 % 2).astype(np.int32), color=np.ones(n, bool), turn=np.zeros(n, np.int32),
        games=["g0", "g1"], groups=["A", "B"])


@pytest.fixture(scope="module")
def tiny():
    """The tiny network, its initial parameters and a compiled apply of every headset."""
    net = network.make_rbc_network(TINY)
    return net, net.init(jax.random.PRNGKey(0)), jax.jit(net.apply)


@pytest.fixture(scope="module")
def trained(tiny):
    """25 Adam steps on 16 synthetic examples from the tiny network's initial parameters, the
    same examples as dev examples measured every 5 steps."""
    net, params, _ = tiny
    examples = _synthetic(16)
    config = training.TrainConfig(batch_size=16, steps=25, learning_rate=3e-3)
    return examples, config, training.train(net, examples, config, params=params, log_every=5, dev=examples,
                                            eval_every=5, dev_chunk=16)


def test_heads_have_rbcs_sizes_for_every_headset(tiny):
    net, params, apply = tiny
    assert net.config.headsets == ("all", "A", "B")
    assert {"headset_all", "headset_A", "headset_B", "stem", "block_0"} <= set(params["params"])
    planes = network.unpack_synopses(_synthetic(4).synopses)
    assert planes.shape == (4, synopsis.NUM_PLANES, 8, 8)
    out = apply(params, planes)
    assert out.sense_logits.shape == (3, 4, actions.NUM_SENSES) and out.move_logits.shape == (3, 4, actions.NUM_MOVES)
    assert out.value.shape == out.soon_win_logit.shape == out.soon_lose_logit.shape == (3, 4)
    assert out.piece_counts.shape == (3, 4, dataset.NUM_PIECE_COUNTS)
    assert np.all(np.abs(out.value) <= 1)
    with pytest.raises(ValueError, match="unknown headset 'C'; this network has all, A, B"):
        net.apply(params, planes, ("C",))
    with pytest.raises(ValueError, match=r"planes \[B, 104, 8, 8\]"):
        net.apply(params, planes[:, :50])
    for bad, message in ((dict(channels=0), "channels"), (dict(headsets=("A", "A")), "twice"),
                         (dict(stop_gradient=("Z",)), "do not exist")):
        with pytest.raises(ValueError, match=message):
            network.RbcNetConfig(**bad)


def test_each_headset_has_its_own_parameters(tiny):
    _, params, apply = tiny
    planes = network.unpack_synopses(_synthetic(4).synopses)
    before = apply(params, planes)
    changed = jax.tree_util.tree_map(lambda x: x, params)
    changed["params"]["headset_A"] = jax.tree_util.tree_map(lambda x: x + 0.5, params["params"]["headset_A"])
    after = apply(changed, planes)
    for field in network.RbcOutput._fields:
        b, a = np.asarray(getattr(before, field)), np.asarray(getattr(after, field))
        np.testing.assert_array_equal(a[0], b[0])  # all
        np.testing.assert_array_equal(a[2], b[2])  # B
        assert not np.allclose(a[1], b[1])  # A


def test_a_stop_gradient_headset_does_not_train_the_tower():
    config = network.RbcNetConfig(headsets=("A", "B"), channels=8, num_blocks=1, policy_channels=1,
                                  value_channels=1, value_hidden=8, stop_gradient=("B",))
    net = network.make_rbc_network(config)
    params = net.init(jax.random.PRNGKey(1))
    planes = jnp.asarray(network.unpack_synopses(_synthetic(2).synopses))

    @jax.jit
    def grads(weights):  # weights [A, B]: the loss of one headset at a time, one compilation
        def loss(p):
            out = net.apply(p, planes, ("A", "B"))
            per = jnp.sum(out.move_logits ** 2, axis=(1, 2)) + jnp.sum(out.value, 1) + jnp.sum(out.piece_counts, (1, 2))
            return jnp.sum(weights * per)
        return jax.grad(loss)(params)["params"]

    stopped, free = grads(jnp.array([0.0, 1.0])), grads(jnp.array([1.0, 0.0]))
    assert all(np.all(np.asarray(g) == 0) for g in jax.tree_util.tree_leaves(stopped["stem"]))
    assert any(np.any(np.asarray(g) != 0) for g in jax.tree_util.tree_leaves(stopped["headset_B"]))
    assert any(np.any(np.asarray(g) != 0) for g in jax.tree_util.tree_leaves(free["stem"]))


@pytest.mark.slow
def test_a_few_steps_lower_the_loss(tiny, trained):
    net, params, _ = tiny
    examples, config, result = trained
    batch = training.make_batch(examples, np.arange(16), training.headset_index(net.config, examples.groups))
    assert batch.headset.tolist() == [1, 1, 2, 2] * 4
    loss = jax.jit(lambda p: training.loss_fn(net, config, p, batch)[0])
    before, after = float(loss(params)), float(loss(result.params))
    assert result.steps_run == 25 and after < 0.7 * before
    assert result.losses[0]["step"] == 1 and result.losses[-1]["step"] == 25
    with pytest.raises(ValueError, match="TrainConfig.batch_size"):
        training.TrainConfig(batch_size=0)


def test_dev_examples_pick_the_step_with_the_least_dev_loss(tiny, trained):
    net, _, _ = tiny
    examples, config, result = trained
    assert [r["step"] for r in result.dev_losses] == [5, 10, 15, 20, 25] and result.steps_run == 25
    best = min(result.dev_losses, key=lambda r: r["loss"])
    assert result.step == best["step"]
    again = training.mean_losses(net, config, result.params, examples, chunk=16)
    assert again["loss"] == pytest.approx(best["loss"], rel=1e-4)


def test_accuracies_and_baselines_on_hand_made_predictions():
    examples = _synthetic(8)
    examples.action[:] = np.where(examples.stage == 0, 3, actions.PASS)
    examples.result[:] = [1, 1, -1, -1, 1, 0, 1, -1]
    top5 = np.array([[[3, 1, 2, 4, 6], [0] * 5, [3, 0, 1, 2, 4], [0] * 5, [5, 3, 0, 1, 2], [0] * 5, [3, 0, 1, 2, 4],
                      [0] * 5]])
    pred = {"sense": top5, "move": np.full((1, 8, 5), actions.PASS),
            "value": np.array([[0.5, 0.2, 0.3, -0.1, 0.9, 0.0, -0.4, -0.8]]),
            "soon_win": np.zeros((1, 8)), "soon_lose": np.zeros((1, 8)),
            "pieces": np.tile(examples.pieces[None].astype(float), (1, 1, 1))}
    rows = np.arange(8)
    m = training._metrics(pred, 0, examples, rows, examples, rows)  # pylint: disable=protected-access
    assert m["sense_n"] == 4 and m["sense_top1"] == 0.75 and m["sense_top1_most_frequent"] == 1.0
    assert m["sense_top5"] == 1.0 and m["sense_top5_uniform"] == pytest.approx(5 / 36)
    assert m["move_top1"] == 1.0 and m["move_top1_uniform"] == pytest.approx(1 / 21)
    assert m["decisive_n"] == 7 and m["winner_acc"] == pytest.approx(5 / 7)  # signs of 1,1,-1,-1,1,1,-1 vs value
    assert m["winner_acc_majority"] == pytest.approx(4 / 7)
    assert m["opponent_pieces_mae"] == 0.0
    assert m["soon_win_acc"] == pytest.approx(1 - examples.soon_win.mean())
    table = training.head_table([{"headset": "all", "data": "all", **m}])
    assert ("| all | all | 2: 4 / 4 | 75.0 [100.0, 2.8] | 100.0 [100.0, 4.8] | 100.0, 100.0 [100.0, 100.0] "
            "| 71.4 [57.1] (7) |") in table


def test_evaluate_measures_each_headset_on_its_groups_held_out_examples(tiny, trained):
    net, _, _ = tiny
    examples, _, result = trained
    held = _synthetic(12, seed=2)
    rows = training.evaluate(net, result.params, held, examples, chunk=16)
    assert [(r["headset"], r["data"]) for r in rows] == [("A", "A"), ("all", "A"), ("B", "B"), ("all", "B"),
                                                         ("all", "all")]
    assert [r["examples"] for r in rows] == [6, 6, 6, 6, 12] and rows[-1]["sense_n"] == rows[-1]["move_n"] == 6
    pred = training.predict(net, result.params, held, ("A",), chunk=16)
    a_rows = np.flatnonzero(held.group == 0)
    senses = a_rows[held.stage[a_rows] == 0]
    assert rows[0]["sense_top1"] == np.mean(pred["sense"][0, senses, 0] == held.action[senses])


def test_the_evaluator_answers_as_the_saved_parameters(tiny, trained, tmp_path):
    net, _, _ = tiny
    _, config, result = trained
    saved = training.save_checkpoint(tmp_path / "ckpt", net, config, result.params, result.opt_state, result.step)
    assert saved.name == str(result.step)
    model = evaluator.Evaluator(tmp_path / "ckpt")
    assert model.headsets == ("all", "A", "B") and model.config["network"]["channels"] == 8
    synopses = _synthetic(5, seed=1).synopses
    answer = model(synopses, "B")
    direct = net.apply(result.params, network.unpack_synopses(synopses), ("B",))
    np.testing.assert_allclose(answer.move_logits, direct.move_logits[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(answer.value, direct.value[0], rtol=1e-5, atol=1e-6)
    assert answer.sense_logits.shape == (5, actions.NUM_SENSES) and np.all(np.abs(answer.value) <= 1)
    single = model(synopses[0], "B")
    assert single.move_logits.shape == (actions.NUM_MOVES,)
    np.testing.assert_allclose(single.value, answer.value[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="unknown headset 'Trout'"):
        model(synopses, "Trout")
    with pytest.raises(ValueError, match=r"uint64 \[B, 104\]"):
        model(synopses.astype(np.int64), "all")
    with pytest.raises(ValueError, match="nowhere does not exist"):
        evaluator.Evaluator(tmp_path / "nowhere")


@pytest.mark.slow
def test_the_scripts_generate_and_train_end_to_end(tmp_path):
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}
    gen = subprocess.run([sys.executable, "experiments/rbc_generate.py", f"--out={tmp_path}/data",
                          "--matchups=tracking:random=4,attacker:random=2", "--max_turns=10", "--seconds_per_move=0.02",
                          "--examples", "--synopsis_boards=8", "--max_boards=100", "--games_per_part=3"],
                         cwd=REPO, capture_output=True, text=True, env=env)
    assert gen.returncode == 0, gen.stderr
    assert len(list((tmp_path / "data" / "examples").glob("*.npz"))) == 2
    run = subprocess.run([sys.executable, "experiments/rbc_train.py", f"--examples={tmp_path}/data/examples",
                          f"--out={tmp_path}/run", "--train_steps=20", "--channels=8", "--blocks=1", "--batch_size=16",
                          "--validation_fraction=0.4", "--min_headset_examples=10"],
                         cwd=REPO, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    table = (tmp_path / "run" / "heads.md").read_text()
    assert "| all | all |" in table and "RandomBot" in table
    model = evaluator.Evaluator(tmp_path / "run" / "checkpoints")
    assert "RandomBot" in model.headsets
    bad = subprocess.run([sys.executable, "experiments/rbc_train.py", f"--examples={tmp_path}/none.npz",
                          f"--out={tmp_path}/run2"], cwd=REPO, capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("none.npz does not exist")


def test_the_training_script_refuses_bad_options_in_one_line(tmp_path):
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "experiments/rbc_train.py", f"--examples={tmp_path}",
                          f"--out={tmp_path}/run", "--validation_fraction=1.5"], cwd=REPO, capture_output=True,
                         text=True, env=env)
    assert run.returncode != 0 and "--validation_fraction must be in (0, 1)" in run.stderr.strip().splitlines()[-1]
