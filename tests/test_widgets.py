"""The explorers' drawing functions, called headless with several slider values (markovlib.book.widgets)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.book import widgets
from markovlib.markov import drawings
from markovlib.markov.canonical import classify
from markovlib.markov.energy import SADDLE_ENERGY, energy, predict_limit
from markovlib.markov.flow import horizon, integrate

# (p, q, e0, w0): both sides of p + q = 1 and i.i.d. data, every region of Thms 2 and 8, the invariant lines
CASES = [
    (0.9, 0.9, 0.5, -0.3),  # p + q > 1, E0 < E_sad, -1/sqrt2 < w0 < 0: local minimum
    (0.9, 0.9, 1.2, -0.2),  # p + q > 1, E0 > E_sad: global minimum
    (0.9, 0.9, 0.4, 0.8),  # p + q > 1, w0 > 0: local minimum
    (0.9, 0.9, 0.3, -1.5),  # p + q > 1, w0 < -1/sqrt2: global minimum
    (0.1, 0.1, 0.3, -1.2),  # p + q < 1, w0 < -1/sqrt2, E0 < E_sad: local minimum
    (0.1, 0.1, 1.0, -1.0),  # p + q < 1, E0 > E_sad: global minimum
    (0.1, 0.1, -0.5, 0.7),  # p + q < 1, w0 > -1/sqrt2: global minimum
    (0.5, 0.8, 0.8, 0.0),  # w0 = 0: along the e-axis to the origin (local minimum)
    (0.2, 0.3, 0.8, 0.0),  # w0 = 0, p + q < 1: along the e-axis to e^2 = c*
    (0.9, 0.9, 0.0, -1.0),  # e0 = 0: critical, stays (local maximum)
    (0.5, 0.5, 1.0, 0.5),  # p + q = 1: every limit global, reached algebraically
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("draw", [drawings.draw_landscape, drawings.draw_energy])
@pytest.mark.parametrize("p,q,e0,w0", CASES)
def test_draw_returns_the_outcome_it_displays(draw, p, q, e0, w0):
    fig, ax = plt.subplots()
    out = draw(p, q, e0, w0, ax=ax)
    fig.canvas.draw()  # renders without error
    pred = predict_limit(e0, w0, p, q)
    assert out["predicted"] == pred.outcome
    assert np.allclose(out["limit"], (pred.e, pred.w))
    tr = integrate(e0, w0, p, q, t_max=horizon(p, q) if draw is drawings.draw_energy else 2e4)
    assert np.allclose(out["reached_point"], (tr.e[-1], tr.w[-1]))
    assert out["reached"] == out["predicted"]  # the flow ends where the energy says (Thms 2, 8)
    if p + q != 1:
        assert np.allclose(out["reached_point"], out["limit"], atol=1e-4)
        assert out["reached"] == classify(*out["reached_point"], p, q, atol=1e-6)
    # the title shows what is returned
    assert f"predicted {out['predicted']}" in ax.get_title() and f"reached {out['reached']}" in ax.get_title()
    if draw is drawings.draw_energy:
        if w0 != 0:
            assert np.isclose(out["energy0"], energy(e0, w0)) and out["energy_drift"] < 1e-6
        else:
            assert np.isnan(out["energy0"])


def test_draw_energy_waits_for_slow_chains():
    """At (0.02, 0.88), |g'(0)| = 0.002: by t = 2e4 the flow to the local minimum is not there yet; draw_energy's
    default horizon (flow.horizon, the same effective time as for the chains of Fig. 1) reaches it."""
    p, q, e0, w0 = 0.02, 0.88, 0.025316455696202667, -0.7341772151898733  # next to the saddle: slow
    tr = integrate(e0, w0, p, q, t_max=2e4)
    assert classify(tr.e[-1], tr.w[-1], p, q, atol=1e-6) == "regular"
    out = drawings.draw_energy(p, q, e0, w0, arrows=False)
    assert out["predicted"] == out["reached"] == "local_min"


def test_draw_without_axes_makes_a_figure():
    n = len(plt.get_fignums())
    out = drawings.draw_landscape(0.9, 0.9, 0.5, 0.5)
    assert len(plt.get_fignums()) == n + 1 and out["predicted"] == "local_min"
    out = drawings.draw_energy(0.1, 0.1, 0.5, 0.5, arrows=False)
    assert len(plt.get_fignums()) == n + 2 and out["predicted"] == "global_min"


def test_saddle_asymptotes_are_the_level_set():
    w = np.linspace(-3, -0.01, 500)
    e = drawings.saddle_asymptotes(w)
    assert np.allclose(energy(e, w), SADDLE_ENERGY, atol=1e-9)
    assert np.isnan(drawings.saddle_asymptotes(0.5))
    assert np.argmin(e) == np.argmin(np.abs(w + 1 / np.sqrt(2)))


def test_critical_points_handles_iid_data():
    fig, ax = plt.subplots()
    drawings.critical_points(ax, 0.3, 0.7)  # p + q = 1: {c = 0} is the axis and the line w = -1/sqrt2
    drawings.critical_points(ax, 0.9, 0.9)
    fig.canvas.draw()


def test_explorer_is_off_in_batch_runs():
    assert os.environ.get("MARKOVLIB_BATCH") == "1"  # set by the root conftest
    assert widgets.explorer(drawings.draw_landscape, p=(0.05, 0.95, 0.05, 0.9)) is None


def test_explorer_builds_sliders_in_a_live_session(monkeypatch):
    import ipywidgets

    monkeypatch.setattr(widgets, "interactive_session", lambda: True)
    ui = widgets.explorer(drawings.draw_energy, p=(0.05, 0.95, 0.05, 0.9), q=(0.05, 0.95, 0.05, 0.9),
                          e0=(-2.0, 2.0, 0.05, 0.5), w0=(-2.0, 2.0, 0.05, -0.3))
    assert isinstance(ui, ipywidgets.interactive)
    names = [c.description for c in ui.children if isinstance(c, ipywidgets.FloatSlider)]
    assert names == ["p", "q", "e0", "w0"]
    plt.close("all")


def test_explorer_builds_a_dropdown_for_string_choices(monkeypatch):
    import ipywidgets

    monkeypatch.setattr(widgets, "interactive_session", lambda: True)
    seen = []
    ui = widgets.explorer(lambda h, optimizer: seen.append((h, optimizer)), h=(0.01, 1.0, 0.01, 0.1),
                          optimizer=["gd", "sgd", "adam"])
    assert isinstance(ui, ipywidgets.interactive)
    drop = [c for c in ui.children if isinstance(c, ipywidgets.Dropdown)]
    assert [d.description for d in drop] == ["optimizer"] and list(drop[0].options) == ["gd", "sgd", "adam"]
    assert seen and seen[-1] == (0.1, "gd")
    plt.close("all")

@pytest.mark.slow
def test_explorer_renders_as_a_widget_in_a_live_kernel():
    """Run the explorer cell in a real kernel outside batch mode: it displays an ipywidgets view.

    The kernel is driven from a fresh interpreter: after the dask sweep tests have run in this process, nbclient's
    message loop here waits out its full timeout for the widget comm messages (the test still passes, slowly)."""
    import subprocess
    import sys

    script = """
import nbclient, nbformat
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "from markovlib.book import widgets\\n"
    "from markovlib.markov import drawings\\n"
    "ui = widgets.explorer(drawings.draw_landscape, p=(0.05, 0.95, 0.05, 0.9), q=(0.05, 0.95, 0.05, 0.9),"
    " e0=(-2.0, 2.0, 0.05, 0.8), w0=(-2.0, 2.0, 0.05, -0.4))\\n"
    "display(ui)")]
nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
print(any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in nb.cells[0].outputs))
"""
    env = {k: v for k, v in os.environ.items() if k != "MARKOVLIB_BATCH"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True", done.stdout
