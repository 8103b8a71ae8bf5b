"""drift_check: the comparison of the drift law with a stored curve, on a synthetic curve whose answers are known."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from markovlib.markov.energy import energy
from markovlib.transformer import drift_check


def _curve(w0=-0.3, dw=-1e-6, steps=2000, every=50, e=1e-3):
    s = np.arange(0, steps + 1, every)
    w = w0 + dw * s
    return pd.DataFrame({"step": s, "e": np.full(s.shape, e), "w": w, "energy": energy(e, w),
                         "coefficient_ratio": np.full(s.shape, 0.01)}).set_index("step")


def _law(curve, late, dw):
    return {"init": {"w": float(curve.w.iloc[0]), "dw": dw, "e2": 1e-6},
            "late": {"w": float(curve.loc[late, "w"]), "dw": dw, "e2": 1e-6, "lam_min": 0.1, "clip_bound": 1e-4,
                     "max_grad_norm": 0.1}}


def test_compare_run_recovers_a_linear_drift_and_its_saddle_step():
    curve, late, dw = _curve(), 1000, -1e-6
    row = drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, 0), _law(curve, late, dw), late)
    assert row["dw_meas"] == pytest.approx(dw, rel=1e-9)
    # the law's Delta E is E(0, w) along the same line: equal to the stored one up to the e^2 term (e constant)
    assert row["dE_law"] == pytest.approx(row["dE_meas"], rel=1e-9)
    # w reaches -1/sqrt 2 at step (w0 + 1/sqrt 2) / -dw
    assert row["t_sad_law"] == pytest.approx((-0.3 + 2 ** -0.5) / 1e-6, rel=1e-9)
    assert row["regen_w_diff"] == 0.0


def test_compare_run_stops_the_window_where_the_run_leaves_the_plateau():
    curve = _curve()
    curve.loc[1500:, "coefficient_ratio"] = 0.5
    row = drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, 0), _law(curve, 1000, -1e-6), 1000)
    assert row["T"] == 1450
    curve.loc[1000:, "coefficient_ratio"] = 0.5
    assert drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, 0), _law(curve, 1000, -1e-6), 1000) is None


def test_compare_run_stops_the_window_where_the_run_diverges():
    curve = _curve()
    curve["eval_loss"] = 0.67
    curve.loc[2000:, "eval_loss"] = 40.0  # far above H(pi) + DIVERGENCE_NATS, with c-hat / c* still small
    row = drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, 0), _law(curve, 1000, -1e-6), 1000)
    assert row["T"] == 1950
    curve.loc[1800, "eval_loss"] = float("nan")
    assert drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, 0), _law(curve, 1000, -1e-6), 1000)["T"] == 1750


def test_summarize_counts_and_ratios():
    rows = []
    for seed, factor in enumerate([1.0, 1.1, 0.9, 1.05]):
        curve = _curve(w0=-0.1 - 0.05 * seed)
        law = _law(curve, 1000, -1e-6 * factor)
        rows.append(drift_check.compare_run(curve, (0.5, 0.8, "sgd", 4.0, seed), law, 1000))
    out = drift_check.summarize(pd.DataFrame(rows))
    assert out["runs"] == 4 and out["counts"]["dw_negative"] == 4 and out["counts"]["dw_law_negative"] == 4
    assert out["overall"]["ratio_dw"]["median"] == pytest.approx(np.median([1.0, 1.1, 0.9, 1.05]), rel=1e-9)
    assert out["counts"]["dE_positive"] == 4  # E(0, w) rises while w < 0 falls towards -1/sqrt 2


def test_bad_keys_are_refused():
    with pytest.raises(ValueError, match="optimizer"):
        drift_check.law_at((0.5, 0.8, "lbfgs", 1.0, 0), 10)
    with pytest.raises(ValueError, match="lr"):
        drift_check.regenerate((0.5, 0.8, "sgd", -1.0, 0), 0)
    with pytest.raises(ValueError, match="key"):
        drift_check.regenerate((0.5, 0.8, "sgd"), 0)
