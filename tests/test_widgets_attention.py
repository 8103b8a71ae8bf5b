"""The attention explorer's drawing function (markovlib.markov.drawings.draw_attention), called headless."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.book import widgets
from markovlib.markov import drawings
from markovlib.markov.attention import separatrix

E_S0 = float(separatrix(0.0))  # the separatrix at a = 0 (~1.2717)

# (p, q, e0, w0, a0, expected outcome): both sides of p + q = 1, i.i.d. data, both sides of the separatrix
CASES = [
    (0.9, 0.9, 0.5, -0.3, 0.2, "unigram"),  # p + q > 1, reduced energy < E_sad
    (0.9, 0.9, 1.0, -0.4, -0.6, "global_min"),  # p + q > 1, reduced energy > E_sad
    (0.9, 0.9, 0.5, 0.8, 0.3, "unigram"),  # p + q > 1, w0 > 0 inside R_0
    (0.9, 0.9, 1.1 * E_S0, 0.8, 0.0, "global_min"),  # w0 > 0 beyond the separatrix: global (no 2-D analogue)
    (0.1, 0.1, 0.3, -1.2, 0.1, "unigram"),  # p + q < 1, w0 < -1/sqrt 2, reduced energy < E_sad
    (0.1, 0.1, 0.4, 0.5, -0.5, "global_min"),  # p + q < 1, w0 > -1/sqrt 2
    (0.5, 0.8, 0.6, 0.0, 0.2, "unigram"),  # w0 = 0: the ea-plane, inside R_0
    (0.5, 0.5, 0.8, 0.4, 0.3, "global_min"),  # p + q = 1
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("p,q,e0,w0,a0,expected", CASES)
def test_draw_attention_returns_the_outcome_it_displays(p, q, e0, w0, a0, expected):
    out = drawings.draw_attention(p, q, e0, w0, a0)
    assert out["predicted"] == expected
    assert out["reached"] == expected
    e, w, a = out["limit"]
    assert all(np.isfinite([e, w, a]))
    if expected == "unigram":
        assert abs(e) < 1e-5
        assert np.allclose(out["predicted_limit"], out["limit"], atol=1e-5)
    if w0 != 0:
        assert out["energy_drift"] < 1e-6
    else:
        assert np.isnan(out["energy0"]) and abs(w) == 0.0
    ax = plt.gcf().axes[0]
    assert ax.name == "3d" and out["reached"] in ax.get_title()


def test_draw_attention_on_a_given_axes_and_bad_axes():
    fig = plt.figure()
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    out = drawings.draw_attention(0.9, 0.9, 0.4, -0.2, 0.1, ax=ax3)
    assert out["reached"] == "unigram" and np.isfinite(out["reduced_energy"])
    ax2 = fig.add_subplot(1, 2, 2)
    with pytest.raises(ValueError):
        drawings.draw_attention(0.9, 0.9, 0.4, -0.2, 0.1, ax=ax2)


def test_explorer_is_none_in_batch(monkeypatch):
    monkeypatch.setenv("MARKOVLIB_BATCH", "1")
    assert widgets.explorer(drawings.draw_attention, p=(0.05, 0.95, 0.05, 0.9)) is None
