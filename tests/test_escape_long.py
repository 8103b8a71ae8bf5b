"""markovlib.transformer.escape_long on synthetic sets, against hand computations (independent: sorting and
counting, scipy's Spearman on the raw arrays)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from markovlib.transformer.escape_drawings import escape_test_figure  # noqa: E402
from markovlib.transformer.escape_long import LongSet, escape_test, kilo, rate_test  # noqa: E402


def _set(escapes, horizon=1000, lr=7.0):
    runs = pd.DataFrame({"p": 0.5, "q": 0.8, "optimizer": "sgd", "lr": lr, "seed": np.arange(len(escapes)),
                         "steps": horizon, "escape_step": escapes})
    return LongSet({}, runs, pd.DataFrame(), horizon, 1, [lr])


def test_all_escaped_median_is_the_tenth_time_and_e1_reads_the_band():
    esc = np.arange(1, 21) * 40.0  # 40 .. 800
    t_sad = {str(s): 1000.0 for s in range(20)}
    out = escape_test(_set(esc), t_sad, band=(0.3, 0.5))
    assert out["median"] == 400.0  # S = 1 - k/20 reaches 1/2 at the 10th event
    assert out["escaped"] == 20 and out["m"] == 1000.0 and out["band"] == (300.0, 500.0)
    lo, hi = out["median_interval"]
    assert lo <= 400.0 <= hi and out["E1"]
    far = escape_test(_set(esc), {str(s): 10_000.0 for s in range(20)}, band=(0.6, 0.9))
    assert far["band"] == (6000.0, 9000.0) and not far["E1"]


def test_censored_runs_count_as_not_escaped_and_rank_last():
    esc = np.array([100.0, 200.0, np.nan, 300.0, np.nan] + [50.0 * k for k in range(1, 16)])
    t_sad = {str(s): float(s + 1) * 10 for s in range(20)}
    out = escape_test(_set(esc), t_sad)
    assert out["escaped"] == 18 and out["n"] == 20
    from scipy.stats import spearmanr

    ranked = np.where(np.isnan(esc), 1001.0, esc)
    assert out["spearman"] == pytest.approx(spearmanr(np.arange(1, 21) * 10.0, ranked)[0])
    assert np.isnan(out["per_seed_ratio"][2]) and out["per_seed_ratio"][0] == pytest.approx(100.0 / 10.0)


def test_median_not_reached_when_most_runs_are_censored():
    esc = np.array([100.0] * 5 + [np.nan] * 15)
    out = escape_test(_set(esc), {s: 500.0 for s in range(20)})  # integer keys are accepted too
    assert not np.isfinite(out["median"]) and out["escaped"] == 5
    assert kilo(out["median"]) == "not reached"   # what batch1_study's table prints for it
    escape_test_figure([out])


@pytest.mark.parametrize("band", [(0.9, 0.6), (0.0, 1.0)])
def test_bad_band_is_refused(band):
    with pytest.raises(ValueError, match="band"):
        escape_test(_set(np.arange(1, 21) * 10.0), {str(s): 1.0 for s in range(20)}, band=band)


def test_rate_test_counts_signs_and_rises():
    df = pd.DataFrame({"lr": [2.0] * 4 + [8.0] * 2, "dw_law": [-1, -2, -1.1, -0.9, 1.0, -1.0],
                       "dw_meas": [-1, -1.9, -1.0, -1.0, -1.0, -1.0], "dE_meas": [1, 2, 1, 0.5, 1, 1],
                       "w_late": [-0.01, -0.02, -0.01, 0.01, -0.01, -0.01], "regen_w_diff": [0, 1e-7, 0, 0, 0, 0]})
    r = rate_test(df, 2.0)
    assert r["n"] == 4 and r["R1"] and r["R2"] and r["signs_agree"] == 4 and r["falling"] == 3
    assert r["ratio_median"] == pytest.approx(np.median([1, 2 / 1.9, 1.1, 0.9]))
    edge = rate_test(df, 8.0)
    assert edge["signs_agree"] == 1 and not edge["R2"]
    with pytest.raises(ValueError, match="lr"):
        rate_test(df, 5.0)


def _curves(losses, ws, ratios, every=100):
    rows = []
    for seed, (ls, w, r) in enumerate(zip(losses, ws, ratios)):
        rows += [{"seed": seed, "step": k * every, "eval_loss": lv, "w": wv, "coefficient_ratio": rv}
                 for k, (lv, wv, rv) in enumerate(zip(ls, w, r))]
    return pd.DataFrame(rows)


def test_plateau_end_tells_escape_from_divergence_and_growth_reads_the_doubling():
    from markovlib.markov.chain import MarkovChain
    from markovlib.transformer.escape_long import growth, plateau_end

    c = MarkovChain(0.5, 0.8)
    h, mid = c.marginal_entropy, (c.marginal_entropy + c.entropy_rate) / 2
    steps = np.arange(12) * 100.0
    w_geo = -0.01 * 2 ** (steps / 300.0)  # doubling every 300 steps: 0.01 .. 0.127
    dip = [h] * 3 + [mid - 0.01] + [h] * 8  # one evaluation below the midpoint with c-hat at 0: noise
    losses = [[h] * 8 + [mid - 0.001] * 4, [h] * 5 + [h + 0.6] + [np.nan] * 6, [h + 0.4] * 12, dip]
    ratios = [[0.0] * 8 + [0.9] * 4, [0.0] * 12, [0.0] * 12, [0.0] * 12]
    S = LongSet({"chains": [[0.5, 0.8]]}, pd.DataFrame(), _curves(losses, [w_geo] * 4, ratios), 1100, 1, [5.0])
    ends = plateau_end(S)
    assert ends.loc[0].tolist() == [800.0, "escape"] and ends.loc[1].tolist() == [500.0, "divergence"]
    assert np.isnan(ends.loc[2, "T_end"]) and ends.loc[2, "kind"] == ""
    assert np.isnan(ends.loc[3, "T_end"])  # a single dip is not an escape
    assert np.isnan(plateau_end(S, persist=5).loc[0, "T_end"])  # four evaluations below: not five
    g = growth(S)
    assert g.loc[2, "doubling"] == pytest.approx(300.0) and g.loc[2, "points"] == 9  # |w| >= 0.02 from step 300
    assert g.loc[0, "points"] == 5  # steps 300 to 700: only before the end at 800
    assert np.isnan(g.loc[1, "slope"])  # 3 points before its end at 500: fewer than 4


def test_growth_scaling_recovers_a_power_law():
    from markovlib.transformer.escape_long import growth_scaling

    lrs = [7.0, 6.0, 5.0]
    sd = {7.0: 0.4, 6.0: 0.3, 5.0: 0.2}
    rate = {lr: 1e-3 * lr * sd[lr] ** 2 for lr in lrs}  # rate proportional to lr * C_bb
    study = {"tests": {str(lr): {"lr": lr, "doubling_median": np.log(2) / rate[lr]} for lr in lrs}}
    law = {"scan": {"batch1": {str(lr): {"bias_floor_sd": sd[lr]} for lr in lrs}}}
    g = growth_scaling(study, law)
    assert g["exponent_lr_Cbb"] == pytest.approx(1.0)
    assert g["exponent_lr"] == pytest.approx(np.polyfit(np.log(lrs), np.log([rate[x] for x in lrs]), 1)[0])
