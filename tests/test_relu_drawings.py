"""markovlib.richlazy.relu_drawings: the ReLU (tau, alpha) explorer draws headless and reports what it shows."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (
    relu_drawings,  # noqa: E402
    relu_networks,  # noqa: E402
)
from markovlib.richlazy.minimal_model import kernel_distance  # noqa: E402


@pytest.mark.parametrize("tau, alpha", [(0.1, 0.25), (0.5, 1.0), (2.0, 4.0)])
def test_frame_agrees_with_plain_gradient_descent(tau, alpha):
    """The drawing's metrics (relu_batch.train_networks) against relu_networks.gradient_descent on the same draw,
    with the NTK, the kernel distance, the activation patterns and the test loss computed from the weights."""
    import matplotlib.pyplot as plt

    out = relu_drawings.draw_relu_training(tau, alpha, steps=200)
    plt.close("all")
    delta, task = relu_drawings.relu_setup(tau, alpha)
    assert delta == pytest.approx(tau**2 * (alpha**2 - alpha**-2), rel=1e-14)
    assert out["delta"] == delta and out["regime"] == relu_drawings.regime(delta) and out["finite"]
    # the init is the paper's: |a_k| = tau alpha, ||w_k|| = tau / alpha, delta_k = delta for every neuron
    a0, W0 = task["a0"], task["W0"]
    assert np.allclose(np.abs(a0), tau * alpha) and np.allclose(np.linalg.norm(W0, axis=1), tau / alpha)
    run = relu_networks.gradient_descent(task["X"], task["y"], a0, W0, 5e-3 / tau**2, out["steps"])
    X = task["X"]
    K0 = relu_networks.ntk(X, a0, W0)
    for i in range(len(out["steps"])):
        a, W = run["a"][i], run["W"][i]
        assert abs(out["kernel_distance"][i] - kernel_distance(K0, relu_networks.ntk(X, a, W))) < 1e-9
        assert abs(out["hamming"][i] - relu_networks.hamming_distance(relu_networks.activation_pattern(X, W0),
                                                           relu_networks.activation_pattern(X, W))) < 1e-12
        assert abs(out["test_loss"][i] - relu_networks.mse(task["X_test"], task["y_test"], a, W)) < 1e-12
    assert out["text"] == relu_drawings.outcome_text(delta, out["test_loss_end"], out["kernel_distance_end"],
                                                     out["hamming_end"])
    assert out["regime"] in out["text"]


def test_small_scale_is_rich_and_large_scale_lazy():
    """Fig. 1b's trend at delta = 0 in the explorer's task: the kernel and the pattern move far more at tau = 0.1."""
    import matplotlib.pyplot as plt

    small, large = relu_drawings.draw_relu_training(0.1, 1.0), relu_drawings.draw_relu_training(2.0, 1.0)
    plt.close("all")
    assert small["kernel_distance_end"] > 10 * large["kernel_distance_end"]
    assert small["hamming_end"] > 10 * large["hamming_end"]
    assert small["regime"] == large["regime"] == "balanced"


def test_regime_names_follow_the_sign_of_delta():
    assert relu_drawings.regime(relu_drawings.delta_of(1.0, 0.5)) == "downstream"
    assert relu_drawings.regime(relu_drawings.delta_of(1.0, 1.0)) == "balanced"
    assert relu_drawings.regime(relu_drawings.delta_of(1.0, 2.0)) == "upstream"


@pytest.mark.parametrize("kwargs", [dict(tau=0.0, alpha=1.0), dict(tau=10.0, alpha=1.0), dict(tau=1.0, alpha=0.0),
                                    dict(tau=1.0, alpha=20.0), dict(tau=1.0, alpha=1.0, steps=5),
                                    dict(tau=1.0, alpha=1.0, base_lr=1.0)])
def test_bad_input(kwargs):
    with pytest.raises(ValueError):
        relu_drawings.draw_relu_training(**kwargs)


def test_recompute_frames_equals_the_drawn_frames():
    """The second computation of the explorer's grid equals each drawn frame's metrics at the last step."""
    import matplotlib.pyplot as plt

    second = relu_drawings.recompute_frames([0.1, 2.0], [0.5, 2.0], steps=100)
    assert all(v.shape == (2, 2) for v in second.values())
    for i, tau in enumerate([0.1, 2.0]):
        for j, alpha in enumerate([0.5, 2.0]):
            out = relu_drawings.draw_relu_training(tau, alpha, steps=100)
            plt.close("all")
            for m, v in second.items():
                assert abs(out[m] - v[i, j]) < 1e-9
    with pytest.raises(ValueError):
        relu_drawings.recompute_frames([], [1.0])
    with pytest.raises(ValueError):
        relu_drawings.recompute_frames([0.1], [-1.0])


def test_heat_map_and_rows_draw_headless():
    import matplotlib.pyplot as plt

    taus, deltas = np.logspace(-1, 0.3, 3), np.linspace(-1, 1, 3)
    fig, ax = plt.subplots()
    mesh = relu_drawings.heat_map(ax, np.arange(9.0).reshape(3, 3), taus, deltas, "t", "viridis", 0.0, 8.0)
    assert mesh.get_array().size == 9 and ax.get_xscale() == "log"
    fig = relu_drawings.heat_rows([("loss", np.ones((2, 3, 3)) + 1.0, "coolwarm", True)], taus, deltas, ["a", "b"],
                                  "title")
    assert len(fig.axes) == 3  # two maps and a colour bar
    plt.close("all")
    with pytest.raises(ValueError):
        relu_drawings.heat_map(ax, np.ones((2, 3)), taus, deltas, "t", "viridis", 0.0, 1.0)
    with pytest.raises(ValueError):
        relu_drawings.heat_rows([("loss", np.ones((3, 3, 3)), "coolwarm", False)], taus, deltas, ["a", "b"], "title")
