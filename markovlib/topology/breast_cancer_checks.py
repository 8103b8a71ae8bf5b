"""The checks and statistics of the chapter ``topo_breast_cancer`` (Nurisso et al., NeurIPS 2024, Sec. 6 and Fig. 4),
on the rows of :func:`markovlib.topology.breast_cancer.train_runs` or of the stored run.

* :func:`write_rows` -- the rows as a CSV (the paper-scale run);
* :func:`summarize` -- Prop. 3, the n_+ = 0 floor (n_0 / n) log 2, the drift, the slopes of claim (b) and the tie
  rule at n_+ = 0;
* :func:`bce_table` and :func:`tie_table` -- the printed tables of the cell means and of the accuracies and AUC;
* :func:`stored_slice` -- stored runs re-trained and compared, with the sensitivity to a 1e-9 perturbation;
* :func:`stored_summary` -- the same claims on the stored run, per width;
* :func:`live_text`, :func:`ties_text`, :func:`stored_text` -- the printed reports of these statistics.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from . import breast_cancer

__all__ = ["write_rows", "summarize", "bce_table", "tie_table", "stored_slice", "stored_summary", "live_text",
           "ties_text", "stored_text"]


def write_rows(rows, path) -> None:
    """Write ``rows`` (dicts with the same keys) to the CSV file ``path``, creating its folder."""
    if not rows:
        raise ValueError("rows must hold at least one run")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


def summarize(rows, A, floor_tr, floor_te, benign_share, drift_tol) -> dict:
    """The re-executed runs' claims: n_runs, n_kept, n_zero, n_above, drift (:func:`breast_cancer.prop3_and_floor`),
    n_over (runs with relative drift >= ``drift_tol``), the 95 % Wilson interval (lo, hi) of n_kept, n_neg (inits
    whose slope of the test BCE against n_+, averaged over widths, is negative; A from :func:`breast_cancer.analyse`),
    n_zero_runs, n_ge_benign (n_+ = 0 runs whose f >= 0 rule scores exactly ``benign_share``), zero_malig (mean share
    of malignant test points at f = 0 when n_+ = 0), rise_last (widths whose cell mean rises at n_+ = l - 1 -> l)."""
    n_runs, n_kept, n_zero, n_above, drift = breast_cancer.prop3_and_floor(rows, floor_tr, floor_te)
    zero_runs = [r for r in rows if r["n_plus"] == 0]
    out = dict(n_runs=n_runs, n_kept=n_kept, n_zero=n_zero, n_above=n_above, drift=drift,
               n_over=sum(r["rel_drift"] >= drift_tol for r in rows), n_neg=int(np.sum(A["slopes"].mean(0) < 0)),
               n_zero_runs=len(zero_runs),
               n_ge_benign=sum(abs(r["test_acc_ge"] - benign_share) < 1e-12 for r in zero_runs),
               zero_malig=float(np.mean([r["zero_malignant"] for r in zero_runs])),
               rise_last=[w for w in A["widths"] if A["means"][w][-1] > A["means"][w][-2]])
    out["lo"], out["hi"] = wilson_interval(n_kept, n_runs)
    return out


def bce_table(A) -> str:
    """The cell means of the test BCE for n_+ = 0..l per width, and the mean slope (A from
    :func:`breast_cancer.analyse`)."""
    lines = [f"{'l':>3}  {'mean test BCE, n_plus = 0 .. l':<66}{'slope':>8}"]
    for w in A["widths"]:
        cells = " ".join(fixed(v, 2) for v in A["means"][w])
        lines.append(f"{w:>3}  {cells:<66}{fixed(A['slope'][w], 3):>8}")
    return "\n".join(lines)


def tie_table(rows) -> str:
    """Accuracy (f > 0 benign), accuracy (f >= 0 benign), AUC and test BCE at n_+ = 0 and n_+ = l
    (:func:`breast_cancer.mean_at`)."""
    lines = [f"{'':>8}{'accuracy (f > 0)':>18}{'accuracy (f >= 0)':>19}{'AUC':>7}{'test BCE':>10}"]
    for name, which in (("n+ = 0", 0), ("n+ = l", -1)):
        v = [fixed(breast_cancer.mean_at(rows, k, which), 3)
             for k in ("test_acc", "test_acc_ge", "test_auc", "test_bce")]
        lines.append(f"{name:>8}{v[0]:>18}{v[1]:>19}{v[2]:>7}{v[3]:>10}")
    return "\n".join(lines)


def stored_slice(data, stored, seed, *, width, inits, lr, steps, c_abs) -> tuple[int, float, float]:
    """(runs, largest |test BCE - stored|, largest change from initial input weights perturbed by 1e-9): the stored
    runs at ``width`` and the first ``inits`` initializations, every n_+, re-trained on ``data`` with the stored run's
    ``seed``."""
    width, inits = checks.positive_int("width", width), checks.positive_int("inits", inits)
    ref = {(r["n_plus"], r["init"]): r["test_bce"] for r in stored if r["width"] == width}
    if not ref:
        raise ValueError(f"width must be a stored width, got {width}")
    sl = dict(data=data, width=width, n_plus=list(range(width + 1)), inits=list(range(inits)), seed=seed, lr=lr,
              steps=steps, c_abs=c_abs)
    again = breast_cancer.train_runs(**sl)
    moved = breast_cancer.train_runs(**sl, perturb=1e-9)
    return (len(again), float(max(abs(r["test_bce"] - ref[r["n_plus"], r["init"]]) for r in again)),
            float(max(abs(r["test_bce"] - q["test_bce"]) for r, q in zip(again, moved))))


def stored_summary(stored, SA, floor_tr, floor_te, drift_tol) -> dict:
    """The stored run's claims: s_runs, s_kept, s_zero, s_above, s_drift, s_over (runs with drift >= drift_tol) and
    s_over_inits, the Wilson interval (s_lo, s_hi), n_s_slopes (widths whose bootstrap slope interval lies below 0;
    SA from :func:`breast_cancer.analyse`), s_rise_last, s_num_wins, acc_gap (per width, mean accuracy at n_+ = l
    minus at n_+ = 0) and np2 (per width, mean test BCE at n_+ = 2)."""
    s_runs, s_kept, s_zero, s_above, s_drift = breast_cancer.prop3_and_floor(stored, floor_tr, floor_te)
    s_over = [r for r in stored if r["rel_drift"] >= drift_tol]

    def mean(key, w, m):
        return float(np.mean([r[key] for r in stored if r["width"] == w and r["n_plus"] == m]))

    out = dict(s_runs=s_runs, s_kept=s_kept, s_zero=s_zero, s_above=s_above, s_drift=s_drift, s_over=s_over,
               s_over_inits=sorted({(r["width"], r["init"]) for r in s_over}),
               n_s_slopes=sum(SA["slope_hi"][w] < 0 for w in SA["widths"]),
               s_rise_last=[w for w in SA["widths"] if SA["means"][w][-1] > SA["means"][w][-2]],
               s_num_wins=SA["rss_num"] < SA["rss_frac"],
               acc_gap={w: mean("test_acc", w, w) - mean("test_acc", w, 0) for w in SA["widths"]},
               np2={w: mean("test_bce", w, 2) for w in SA["widths"]})
    out["s_lo"], out["s_hi"] = wilson_interval(s_kept, s_runs)
    return out


def live_text(B, A, n_inits, drift_tol) -> str:
    """The re-executed runs' report: the drift, Prop. 3 with its Wilson interval, the n_+ = 0 floor, the
    :func:`bce_table`, claim (b) over ``n_inits`` initializations, the widths that rise at the last step (B from
    :func:`summarize`, A from :func:`breast_cancer.analyse`)."""
    return "\n".join([
        f"largest relative balance drift over every step of every run: {fixed(B['drift'], 3)}; runs at or above "
        f"drift_tol = {drift_tol}: {fraction(B['n_over'], B['n_runs'])}",
        f"Prop. 3, runs with every pathological output weight positive at every step: "
        f"{fraction(B['n_kept'], B['n_runs'])} (95% Wilson [{fixed(B['lo'], 3)}, {fixed(B['hi'], 3)}])",
        f"n_plus = 0 runs at or above the floor (test and train): {fraction(B['n_above'], B['n_zero'])}",
        bce_table(A),
        f"(b) initializations whose slope, averaged over widths, is negative: {fraction(B['n_neg'], n_inits)}",
        f"widths whose cell mean rises at the last step n_plus = l - 1 -> l: {B['rise_last']}"])


def ties_text(B, A, rows, n_boot, floor_te, benign_share) -> str:
    """Claim (c) on the re-executed runs, the malignant points at f = 0 when n_+ = 0 and their share of the test BCE,
    and the :func:`tie_table`."""
    zm = B["zero_malig"]
    return "\n".join([
        f"(c) isotonic fit on the number n_plus leaves less residual than on the fraction: "
        f"{'yes' if A['rss_num'] < A['rss_frac'] else 'no'} (RSS {A['rss_num']:.1e} vs {A['rss_frac']:.1e}); in "
        f"{fixed(100 * A['boot_num_wins'], 0)} % of {n_boot} bootstrap resamples of the initializations",
        f"n_plus = 0: malignant test points exactly at f = 0 (mean over runs) {fixed(zm, 2)}; runs whose f >= 0 "
        f"rule predicts every point benign (accuracy = benign share {fixed(benign_share, 3)}): "
        f"{fraction(B['n_ge_benign'], B['n_zero_runs'])}",
        f"n_plus = 0: the malignant points at f = 0 contribute (share x (n_0 / n) log 2) {fixed(zm * floor_te, 3)} "
        f"to the mean test BCE {fixed(breast_cancer.mean_at(rows, 'test_bce', 0), 3)}",
        tie_table(rows)])


def stored_text(S, SA, stored, mp, drift_tol) -> str:
    """The stored run's report (S from :func:`stored_summary`, SA its analysis, mp its manifest's parameters): Prop. 3
    and the floor, the drift, claims (b) and (c), the widths that rise at the last step, the means at n_+ = 0 and
    n_+ = l, at n_+ = 2 per width, and the accuracy gain per width."""
    def at(key, which):
        return fixed(breast_cancer.mean_at(stored, key, which), 3)

    return "\n".join([
        f"stored: {len(stored)} runs, {SA['n_inits']} initializations per cell, widths {SA['widths']}, "
        f"{mp['steps']} GD steps of {mp['lr']}, |c_k| = {mp['c_abs']}",
        f"stored: Prop. 3 kept in {fraction(S['s_kept'], S['s_runs'])} runs (Wilson [{fixed(S['s_lo'], 3)}, "
        f"{fixed(S['s_hi'], 3)}]); n_plus = 0 runs at or above the floor: {fraction(S['s_above'], S['s_zero'])}",
        f"stored: runs with a relative balance drift >= drift_tol = {drift_tol}: "
        f"{fraction(len(S['s_over']), S['s_runs'])} "
        f"(initializations (l, init): {S['s_over_inits']}); largest drift {fixed(S['s_drift'], 3)}",
        f"stored: widths whose 95% bootstrap interval of the slope lies below 0: "
        f"{fraction(S['n_s_slopes'], len(SA['widths']))}; isotonic RSS on the number {SA['rss_num']:.2e}, on the "
        f"fraction {SA['rss_frac']:.2e} (number smaller in {fixed(100 * SA['boot_num_wins'], 0)} % of the bootstrap "
        "resamples)",
        f"stored: widths whose cell mean rises at the last step n_plus = l - 1 -> l: {S['s_rise_last']}",
        f"stored: mean test BCE at n_plus = 0 {at('test_bce', 0)}, at n_plus = l {at('test_bce', -1)}; mean test "
        f"accuracy (f > 0) at n_plus = 0 {at('test_acc', 0)}, at n_plus = l {at('test_acc', -1)}",
        "stored: mean test BCE at n_plus = 2, per width: " + ", ".join(f"l = {w}: {fixed(v, 3)}"
                                                                      for w, v in S["np2"].items()),
        "stored: accuracy at n_plus = l minus at n_plus = 0, per width: "
        + ", ".join(f"l = {w}: {fixed(g, 3)}" for w, g in S["acc_gap"].items())])
