"""markovlib.transformer.guideline_reference, guideline_canonical, guideline_claims, guideline_drawings."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.book import report  # noqa: E402
from markovlib.markov import canonical  # noqa: E402
from markovlib.markov.chain import MarkovChain  # noqa: E402
from markovlib.markov.energy import predict_limit  # noqa: E402
from markovlib.transformer import (  # noqa: E402
    guideline_canonical,
    guideline_claims,
    guideline_drawings,
    guideline_reference,
)


@pytest.mark.parametrize("p, q", [(0.5, 0.8), (0.2, 0.3), (0.8, 0.5), (0.3, 0.3)])
def test_reduced_grad_is_the_derivative_of_the_reduced_loss(p, q):
    cs = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    assert np.allclose(guideline_reference.reduced_grad(cs, p, q), canonical.reduced_loss_grad(cs, p, q), atol=1e-12)
    assert guideline_reference.reduced_loss_numeric(0.0, p, q) == pytest.approx(MarkovChain(p, q).marginal_entropy,
                                                                               abs=1e-9)
    assert guideline_reference.envelope_error([(p, q)]) < 1e-5


def test_flow_end_agrees_with_the_energy_rule():
    e0, w0 = np.array([1.0, 0.05, 0.05, 2.0]), np.array([-1.0, 0.5, -0.3, 1.0])
    for p, q in [(0.5, 0.8), (0.2, 0.3)]:
        ends = guideline_reference.flow_end(e0, w0, p, q, t_end=5000.0)
        rule = predict_limit(e0, w0, p, q).outcome
        assert list(ends == "global") == list(np.asarray(rule) == "global_min")
    assert guideline_reference.flow_end(0.05, 0.5, 0.5, 0.8) == "trapped"
    with pytest.raises(ValueError, match="p must"):
        guideline_reference.flow_end(1.0, -1.0, 1.5, 0.5)
    with pytest.raises(ValueError, match="chains"):
        guideline_reference.envelope_error([])


def test_point_limits_and_line():
    lim = guideline_canonical.point_limits(1.0, -1.0, [(0.5, 0.8), (0.2, 0.3)])
    assert lim["above"] == ["global"] and lim["below"] == ["global"] and lim["agree"] == lim["n"] == 2
    assert lim["energy"] == pytest.approx(0.0) and lim["coefficient"] == pytest.approx(-1.0)
    assert "above E_sad" in guideline_canonical.point_line("g", lim)
    auth = guideline_canonical.point_limits(-2 * math.sqrt(2), -16.0, [(0.5, 0.8), (0.2, 0.3)])
    assert auth["above"] == ["global"] and auth["below"] == ["trapped"]


def test_canonical_trap_bounds():
    out = guideline_canonical.canonical_trap(0.5, 0.8, [0.02, 0.4], 60, 8, seed=1, fine=[0.02, 0.4])
    assert out["ends"].shape == (2, 2, 60)
    assert out["n_pos_global"] == 0 and out["k_pos"] == out["n_pos"]  # w0 > 0 is always trapped (Thm 2)
    assert out["trap"][0, 0] > 0.9 and out["disagree"] == 0
    assert out["fine_trap"]["same"][0] == pytest.approx(out["trap"][0, 0], abs=0.05)
    with pytest.raises(ValueError, match="sigmas"):
        guideline_canonical.canonical_trap(0.5, 0.8, [0.0], 10, 8, seed=0)


def test_record_flags_counts_glues_and_asserts(capsys):
    verified, counts = report.Verification(), {}
    text = guideline_claims.record_flags(verified, counts, "claim", [True] * 9 + [False], glue_name="t_flags",
                                         rate=0.5, check="c", kind="same code")
    assert text == "9/10" and counts["claim"] == (9, 10, 1) and len(verified) == 1
    assert "claim: 9/10 seeds" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        guideline_claims.record_flags(verified, counts, "bad", [False] * 10, glue_name="t_bad", rate=0.5, check="c",
                                      kind="same code")


def _run(ratios, losses):
    hist = [{"step": 10 * k, "eval_loss": L, "coefficient_ratio": r} for k, (r, L) in enumerate(zip(ratios, losses))]
    return {"history": hist, "summary": {"coefficient_ratio": ratios[-1]}}


def test_fig4_curves_splits_the_runs():
    runs = [_run([0.0, 0.1], [0.7, 0.6]), _run([0.0, 0.2], [0.7, 0.5]), _run([0.5, 0.9], [0.6, 0.4]),
            _run([0.6, 1.0], [0.6, 0.3])]
    out = guideline_claims.fig4_curves(runs)
    assert list(out["loss"]["standard"][0]) == [0, 10]
    assert out["ratio"]["guideline"].tolist() == [[0.5, 0.9], [0.6, 1.0]]
    assert out["final"]["standard"].tolist() == [0.1, 0.2]
    with pytest.raises(ValueError, match="equally many"):
        guideline_claims.fig4_curves(runs[:3])


def test_grid_claims_and_record_grid():
    cells = [(0.2, 0.3), (0.5, 0.8), (0.8, 0.5)]
    claims = guideline_claims.grid_claims(cells, 200, 2000)
    assert [c[3] for c in claims] == [[(0.2, 0.3)], [(0.5, 0.8), (0.8, 0.5)], [(0.2, 0.3)], [(0.5, 0.8)], [(0.5, 0.8)]]
    times = {"standard": np.array([[100.0] * 20, [np.inf] * 20, [900.0] * 20]),
             "guideline": np.array([[50.0] * 20, [100.0] * 20, [np.inf] * 20])}
    verified, counts = report.Verification(), {}
    cc = guideline_claims.record_grid(verified, counts, times, cells, fast_steps=200, grid_steps=2000, rate=0.5)
    assert cc["ig_grid_before", (0.5, 0.8)] == (20, 20, 1) and len(verified) == 6
    curves = {("grid", pp, qq, init, "adamw", s): (np.array([0, 10, 20]), np.array([0.0, 0.6, 0.7]), None)
              for pp, qq in cells for init in ("standard", "guideline") for s in (0, 1)}
    assert guideline_claims.grid_times(curves, cells, [0, 1], 0.5)["standard"].tolist() == [[10.0, 10.0]] * 3


def test_drawings_return_figures():
    chain = MarkovChain(0.5, 0.8)
    runs = [_run([0.0, 0.1], [0.7, 0.6]), _run([0.5, 0.9], [0.6, 0.4])]
    f = guideline_drawings.fig4(guideline_claims.fig4_curves(runs), chain, window=(0, 10), level=0.5,
                                labels={"standard": "s", "guideline": "g"}, title="t")
    assert len(f.axes) == 2
    curve = (np.array([0, 10]), np.array([0.0, 0.8]), None)
    f = guideline_drawings.plateau({"AdamW": ("tab:blue", [curve])}, [10.0], 10, 10, level=0.5, title="t")
    assert len(f.axes) == 2
    cells = [(0.2, 0.2), (0.8, 0.8)]
    times = {"standard": np.array([[100.0, 200.0]] * 2), "guideline": np.array([[50.0, 60.0]] * 2)}
    f = guideline_drawings.phase_diagram(times, cells, [0.2, 0.5, 0.8], {("a", (0.2, 0.2)): (2, 2, 1)}, grid_steps=400,
                                         fast_steps=200, level=0.5, rate=0.5, short={"a": "a"})
    assert len(f.axes) == 4  # two maps, the counts, the colour bar
    canon = guideline_canonical.canonical_trap(0.5, 0.8, [0.02, 0.4], 20, 8, seed=0, fine=[0.02, 0.4])
    f = guideline_drawings.trap_probability([0.02, 0.4], np.ones((2, 10), bool), canon, [0.02, 0.4], title="t")
    assert f.axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="one row per sigma"):
        guideline_drawings.trap_probability([0.02], np.ones((2, 10), bool), canon, [0.02], title="t")
    plt.close("all")
