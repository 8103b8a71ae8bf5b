"""markovlib.beyond.drift_drawings: the closing chapter's explorer draws headless and reports what it shows."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.beyond import drift_drawings as DD  # noqa: E402


def plain_drift(law, h, optimizer, seed=0, betas=(0.9, 0.999), eps=1e-8):
    """Reference written out here (not conservation.run_optimizer): GD, SGD (minibatches drawn as the package
    documents: default_rng(seed).choice without replacement, one per step) or Adam run to t = 2 from the law's
    initializations; the median over them of max over components |Q(t) - Q(0)|, and Q's written-out formula."""
    spec = DD.laws(seed)[law]
    th = spec["theta0"].copy()

    def Q(t):
        if law == "I":
            e, w = t[:, 0], t[:, 1]
            return e**2 - w**2 - np.sign(w) * np.log(np.abs(w))
        if law == "II":
            return t[:, 0] ** 2 - (t[:, 1:] ** 2).sum(1)
        W, a = t[:, :DD.WIDTH * DD.D3].reshape(-1, DD.WIDTH, DD.D3), t[:, DD.WIDTH * DD.D3:]
        return (W**2).sum(2) - a**2

    q0 = Q(th)
    rng = np.random.default_rng(seed)
    m, v = np.zeros_like(th), np.zeros_like(th)
    for s in range(1, int(round(DD.T_DRIFT / h)) + 1):
        idx = rng.choice(spec["n_data"], DD.BATCHES[law], replace=False) if optimizer == "sgd" else None
        g = spec["grad"](th, idx)
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

    out = DD.draw_drift(h, optimizer)
    plt.close("all")
    for law in DD.NAMES:
        ref = plain_drift(law, h, optimizer)
        assert abs(out["drift"][law] - ref) <= 1e-9 * max(1.0, ref), (law, out["drift"][law], ref)
    assert out["text"] == DD.outcome_text(out["drift"], out["ends"], DD.N_INITS)
    assert out["h"] == h and out["optimizer"] == optimizer and out["n"] == DD.N_INITS


def test_gd_drift_is_first_order_adam_is_not():
    """Over a fixed time GD's drift shrinks like h (closing-prop-gd); Adam's does not vanish."""
    import matplotlib.pyplot as plt

    small, large, adam = DD.draw_drift(0.01, "gd"), DD.draw_drift(0.1, "gd"), DD.draw_drift(0.01, "adam")
    plt.close("all")
    for law in DD.NAMES:
        slope = np.log(large["drift"][law] / small["drift"][law]) / np.log(10.0)
        assert 0.8 < slope < 1.2, (law, slope)
        assert adam["drift"][law] > 5 * small["drift"][law]
    assert all(small["ends"][law] == DD.N_INITS for law in DD.NAMES)  # small steps end where the theorems say
    assert all(v == 0 for v in small["diverged"].values())


def test_initializations_are_on_the_theorems_side():
    spec = DD.laws(0)
    th1 = spec["I"]["theta0"]
    assert th1.shape == (DD.N_INITS, 2) and np.all(np.abs(th1[:, 1]) >= 0.2)
    th3 = spec["III"]["theta0"]
    c = (th3[:, :DD.WIDTH * DD.D3].reshape(-1, DD.WIDTH, DD.D3) ** 2).sum(2) - th3[:, DD.WIDTH * DD.D3:] ** 2
    assert np.all((c < 0).any(axis=1))  # every Part III network has a pathological neuron
    for law in DD.NAMES:  # at the start nobody has moved: the agreement rule reads the initialization itself
        assert spec[law]["agree"](spec[law]["theta0"]).shape == (DD.N_INITS,)


@pytest.mark.parametrize("kwargs", [dict(h=0.0, optimizer="gd"), dict(h=2.0, optimizer="gd"),
                                    dict(h=0.1, optimizer="rmsprop")])
def test_bad_input(kwargs):
    with pytest.raises(ValueError):
        DD.draw_drift(**kwargs)
