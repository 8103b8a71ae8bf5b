"""markovlib.beyond.drift_drawings: the closing chapter's explorer draws headless and reports what it shows."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.beyond import (
    drift_drawings,  # noqa: E402
    drift_problems,  # noqa: E402
)


def plain_drift(law, h, optimizer, seed=0, betas=(0.9, 0.999), eps=1e-8):
    """Reference written out here (not conservation.run_optimizer): GD, SGD (minibatches drawn as the package
    documents: default_rng(seed).choice without replacement, one per step) or Adam run to t = 2 from the law's
    initializations; the median over them of max over components |Q(t) - Q(0)|, and Q's written-out formula."""
    spec = drift_problems.laws(seed)[law]
    th = spec.theta0.copy()
    width, d3 = drift_problems.WIDTH, drift_problems.D3

    def Q(t):
        if law == "I":
            e, w = t[:, 0], t[:, 1]
            return e**2 - w**2 - np.sign(w) * np.log(np.abs(w))
        if law == "II":
            return t[:, 0] ** 2 - (t[:, 1:] ** 2).sum(1)
        W, a = t[:, :width * d3].reshape(-1, width, d3), t[:, width * d3:]
        return (W**2).sum(2) - a**2

    q0 = Q(th)
    rng = np.random.default_rng(seed)
    m, v = np.zeros_like(th), np.zeros_like(th)
    for s in range(1, int(round(drift_drawings.T_DRIFT / h)) + 1):
        idx = rng.choice(spec.problem.n_data, spec.batch, replace=False) if optimizer == "sgd" else None
        g = spec.problem.grad(th, idx)
        if optimizer == "adam":
            m = betas[0] * m + (1 - betas[0]) * g
            v = betas[1] * v + (1 - betas[1]) * g * g
            g = (m / (1 - betas[0] ** s)) / (np.sqrt(v / (1 - betas[1] ** s)) + eps)
        th = th - h * g
    d = np.abs(Q(th) - q0)
    return float(np.median(d.reshape(len(th), -1).max(axis=1)))


@pytest.mark.parametrize("h, optimizer", [(0.1, "gd"), (0.3, "sgd"), (0.1, "adam")])
def test_drift_agrees_with_a_plain_loop(h, optimizer):
    import matplotlib.pyplot as plt

    out = drift_drawings.draw_drift(h, optimizer)
    plt.close("all")
    for law in drift_problems.NAMES:
        ref = plain_drift(law, h, optimizer)
        assert abs(out["drift"][law] - ref) <= 1e-9 * max(1.0, ref), (law, out["drift"][law], ref)
    assert out["text"] == drift_drawings.outcome_text(out["drift"], out["ends"], drift_problems.N_INITS)
    assert out["h"] == h and out["optimizer"] == optimizer and out["n"] == drift_problems.N_INITS


def test_gd_drift_is_first_order_adam_is_not():
    """Over a fixed time GD's drift shrinks like h (closing-prop-gd); Adam's does not vanish."""
    import matplotlib.pyplot as plt

    small, large = drift_drawings.draw_drift(0.01, "gd"), drift_drawings.draw_drift(0.1, "gd")
    adam = drift_drawings.draw_drift(0.01, "adam")
    plt.close("all")
    for law in drift_problems.NAMES:
        slope = np.log(large["drift"][law] / small["drift"][law]) / np.log(10.0)
        assert 0.8 < slope < 1.2, (law, slope)
        assert adam["drift"][law] > 5 * small["drift"][law]
    # small steps end where the theorems say
    assert all(small["ends"][law] == drift_problems.N_INITS for law in drift_problems.NAMES)
    assert all(v == 0 for v in small["diverged"].values())


@pytest.mark.parametrize("kwargs", [dict(h=0.0, optimizer="gd"), dict(h=2.0, optimizer="gd"),
                                    dict(h=0.1, optimizer="rmsprop")])
def test_bad_input(kwargs):
    with pytest.raises(ValueError):
        drift_drawings.draw_drift(**kwargs)
