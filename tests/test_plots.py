"""Heatmap figures: the right panels and a readable PNG."""

import numpy as np

from azdb_jax import plots


def test_interaction_graph_figure(tmp_path):
    sigma = np.tril(np.ones((4, 4)))
    sigma /= sigma.sum(-1, keepdims=True)
    fig = plots.interaction_graph_figure(sigma, sigma.T / sigma.T.sum(-1, keepdims=True), np.eye(4) - 0.5, title="t")
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["Σ_w: i plays White", "Σ_b: i plays Black", "payoff for White"]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), sigma)
    path = tmp_path / "g.png"
    plots.save_figure(fig, path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert len(plots.interaction_graph_figure(sigma, sigma).axes) == 3  # two panels + colour bar
