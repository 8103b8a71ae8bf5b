"""The breast-cancer study of Nurisso et al. (NeurIPS 2024), Sec. 6 and Fig. 4: a one-output ReLU network without
biases, f(x) = sum_k a_k relu(w_k . x), trained by full-batch gradient descent on the BCE of the Wisconsin
diagnostic data, with n_+ of its l neurons non-pathological (c_k = +|c|) and the others pathological (c_k = -|c|),
every output weight positive at the start. By Prop. 3 the pathological output weights stay positive, so at n_+ = 0
f >= 0 and the test BCE is at least (n_0 / n) log 2 (the floor, Remark topo-rem-bce-floor).

* :func:`split` -- the stratified split, standardized with the training split's mean and standard deviation;
* :func:`bce_floors` -- (n_0 / n) log 2 on the training and the test split;
* :func:`initial_weights` -- Kaiming-normal draws, output weights made positive, rescaled onto c (Prop. 4), the
  same draw for every n_+ (a paired design);
* :func:`train_runs` -- one batch of runs at one width, one row (a dict) per run;
* :func:`analyse`, :func:`prop3_and_floor`, :func:`mean_at` -- the statistics of the claims;
* :func:`read_stored` -- the stored paper-scale rows and their manifest.
"""
from __future__ import annotations

import csv
import json
import numbers
from pathlib import Path

import numpy as np

from ..numerics import checks
from . import invariant_set, shallow_relu

__all__ = ["split", "bce_floors", "initial_weights", "train_runs", "analyse", "prop3_and_floor", "mean_at",
           "read_stored"]


def _int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _ints(name, values, minimum):
    values = list(values)
    if not values:
        raise ValueError(f"{name} must be a non-empty list of integers >= {minimum}")
    return [_int(f"{name}[{i}]", v, minimum) for i, v in enumerate(values)]


def split(X, y, split_seed, test_size):
    """(X_tr, X_te, y_tr, y_te): a split stratified on y (scikit-learn, ``random_state=split_seed``), each feature
    standardized with the mean and standard deviation of the training split only; y as floats."""
    from sklearn.model_selection import train_test_split

    X = checks.finite_array("X", X, ndim=(2,))
    y = checks.finite_array("y", y, ndim=(1,))
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size!r}")
    X_tr, X_te, y_tr, y_te = train_test_split(X, y.astype(float), test_size=test_size, stratify=y,
                                              random_state=_int("split_seed", split_seed, 0))
    mu, sd = X_tr.mean(0), X_tr.std(0)
    return (X_tr - mu) / sd, (X_te - mu) / sd, y_tr, y_te


def bce_floors(y_tr, y_te):
    """The n_+ = 0 floors (n_0 / n) log 2 of the training and the test BCE, n_0 the label-0 points."""
    y_tr, y_te = checks.finite_array("y_tr", y_tr, ndim=(1,)), checks.finite_array("y_te", y_te, ndim=(1,))
    return np.mean(y_tr == 0) * np.log(2), np.mean(y_te == 0) * np.log(2)


def initial_weights(width, n_plus, inits, seed, d, c_abs):
    """Kaiming-normal draws, generator [seed, l, init]: w_k ~ N(0, 2/d I_d), a_k ~ |N(0, 2/l)|, rescaled (Prop. 4) onto
    c_k = +c_abs for the first n_+ neurons and -c_abs for the others, for every n_+ of ``n_plus``.
    Returns W1 (len(n_plus), len(inits), l, d), a (len(n_plus), len(inits), l) and c of the shape of a."""
    width, d, seed = _int("width", width, 1), _int("d", d, 1), _int("seed", seed, 0)
    n_plus, inits = _ints("n_plus", n_plus, 0), _ints("inits", inits, 0)
    if max(n_plus) > width:
        raise ValueError(f"n_plus must hold counts in [0, width = {width}], got {n_plus!r}")
    if not (np.isfinite(c_abs) and c_abs > 0):
        raise ValueError(f"c_abs must be a finite real > 0, got {c_abs!r}")
    W1 = np.empty((len(n_plus), len(inits), width, d))
    a = np.empty((len(n_plus), len(inits), width))
    c = np.empty_like(a)
    for j, i in enumerate(inits):
        r_ = np.random.default_rng([seed, width, i])
        w0 = r_.normal(scale=np.sqrt(2.0 / d), size=(width, d))
        a0 = np.abs(r_.normal(scale=np.sqrt(2.0 / width), size=width))
        for m, npl in enumerate(n_plus):
            c[m, j] = np.where(np.arange(width) < npl, c_abs, -c_abs)
            W1[m, j], a[m, j] = invariant_set.rescale_to(w0, a0, c[m, j])
    return W1, a, c


def train_runs(data, width, n_plus, inits, seed, *, lr, steps, c_abs, perturb=0.0):
    """Train the (n_plus x inits) batch at width l on ``data`` = (X_tr, X_te, y_tr, y_te) by full-batch gradient
    descent on the BCE (one BLAS thread), one row per run: width, n_plus, init, test_bce, train_bce, test_acc (f > 0
    predicted benign), test_acc_ge (f >= 0), test_auc (ties count 1/2), zero_malignant (share of label-0 test points
    with f = 0 exactly), rel_drift (max over steps and neurons of |c_k(t) - c_k(0)| / c_abs), end_drift (at the last
    step), patho_kept (every pathological output weight positive at every step), n_flipped (non-pathological output
    weights negative at the end). ``perturb``: relative Gaussian noise on the initial input weights (generator
    [seed, l, 7])."""
    from sklearn.metrics import roc_auc_score
    from threadpoolctl import threadpool_limits

    X_tr, X_te, y_tr, y_te = data
    if not (np.isfinite(perturb) and perturb >= 0):
        raise ValueError(f"perturb must be a finite real >= 0, got {perturb!r}")
    W1, a, c = initial_weights(width, n_plus, inits, seed, X_tr.shape[1], c_abs)
    if perturb:
        W1 = W1 * (1 + perturb * np.random.default_rng([seed, width, 7]).standard_normal(W1.shape))
    with threadpool_limits(limits=1):   # one BLAS thread: the big products are one GEMM per step already
        res = shallow_relu.gradient_descent(W1, a, X_tr, y_tr, lr=lr, steps=steps, kind="bce")
        test = shallow_relu.loss(res.W1, res.W2, X_te, y_te, "bce")
        train = shallow_relu.loss(res.W1, res.W2, X_tr, y_tr, "bce")
        f_te = shallow_relu.forward(res.W1, res.W2, X_te)
    benign = y_te > 0.5
    patho = c < 0
    c_end = (res.W1**2).sum(-1) - res.W2**2
    rows = []
    for m, npl in enumerate(n_plus):
        for j, i in enumerate(inits):
            f = f_te[m, j]
            rows.append(dict(width=width, n_plus=npl, init=i, test_bce=float(test[m, j]), train_bce=float(train[m, j]),
                             test_acc=float(np.mean((f > 0) == benign)),
                             test_acc_ge=float(np.mean((f >= 0) == benign)),
                             test_auc=float(roc_auc_score(benign, f)),
                             zero_malignant=float(np.mean(f[~benign] == 0)),
                             rel_drift=float(res.balance_drift[m, j].max() / c_abs),
                             end_drift=float(np.abs(c_end[m, j] - c[m, j]).max() / c_abs),
                             patho_kept=bool(np.all(res.W2_min[m, j][patho[m, j]] > 0)),
                             n_flipped=int(np.sum(res.W2[m, j][~patho[m, j]] < 0))))
    return rows


def analyse(rows, n_boot, rng) -> dict:
    """The statistics of claims (b) and (c) over ``rows`` (every n_plus = 0..l of every width and init): cell means
    L(l, n_+) of the test BCE; per (width, init) the least-squares slope against n_+; per width the 97.5 % quantile of
    the bootstrap (``n_boot`` resamples of the inits, the same for every n_+: a paired design) of the mean slope;
    the residual sums of squares of decreasing isotonic fits of all cell means on n_+ and on n_+ / l, and the share
    of bootstrap resamples in which the fit on the number leaves less residual."""
    from sklearn.isotonic import IsotonicRegression

    n_boot = _int("n_boot", n_boot, 1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if not rows:
        raise ValueError("rows must hold at least one run")
    ws = sorted({r["width"] for r in rows})
    inits = sorted({r["init"] for r in rows})
    L = {width: np.full((width + 1, len(inits)), np.nan) for width in ws}
    for r in rows:
        L[r["width"]][r["n_plus"], inits.index(r["init"])] = r["test_bce"]
    slopes = np.array([np.polyfit(np.arange(width + 1), L[width], 1)[0] for width in ws])   # (widths, inits)
    npl = np.concatenate([np.arange(width + 1) for width in ws])
    frac = np.concatenate([np.arange(width + 1) / width for width in ws])
    iso = IsotonicRegression(increasing=False)

    def rss(pick):
        mm = np.concatenate([L[width][:, pick].mean(1) for width in ws])
        return (float(np.sum((iso.fit_transform(npl, mm) - mm) ** 2)),
                float(np.sum((iso.fit_transform(frac, mm) - mm) ** 2)))

    boot_slope = np.empty((n_boot, len(ws)))
    num_wins = 0
    for b in range(n_boot):
        pick = rng.integers(0, len(inits), len(inits))
        boot_slope[b] = slopes[:, pick].mean(1)
        r_num, r_frac = rss(pick)
        num_wins += r_num < r_frac
    rss_num, rss_frac = rss(np.arange(len(inits)))
    return dict(widths=ws, L=L, means={width: L[width].mean(1) for width in ws}, slopes=slopes,
                slope={width: float(slopes[k].mean()) for k, width in enumerate(ws)},
                slope_hi={width: float(np.quantile(boot_slope[:, k], 0.975)) for k, width in enumerate(ws)},
                rss_num=rss_num, rss_frac=rss_frac, boot_num_wins=num_wins / n_boot, n_inits=len(inits))


def prop3_and_floor(rows, floor_tr, floor_te):
    """(runs, runs whose pathological signs were kept, n_plus = 0 runs, of those at or above both floors, the
    largest relative drift)."""
    if not rows:
        raise ValueError("rows must hold at least one run")
    kept = sum(r["patho_kept"] for r in rows)
    zero = [r for r in rows if r["n_plus"] == 0]
    above = sum(r["test_bce"] >= floor_te and r["train_bce"] >= floor_tr for r in zero)
    return len(rows), kept, len(zero), above, max(r["rel_drift"] for r in rows)


def mean_at(rows, key, which):
    """Mean of ``key`` over the runs with n_plus = 0 (``which`` = 0) or n_plus = l (``which`` = -1), per width, then
    averaged over the widths."""
    if which not in (0, -1):
        raise ValueError(f"which must be 0 (n_plus = 0) or -1 (n_plus = l), got {which!r}")
    ws = sorted({r["width"] for r in rows})
    if not ws:
        raise ValueError("rows must hold at least one run")

    def pick(r, width):
        return r["width"] == width and r["n_plus"] == (0 if which == 0 else width)

    return float(np.mean([np.mean([r[key] for r in rows if pick(r, width)]) for width in ws]))


def read_stored(folder):
    """(manifest, rows) of the stored run in ``folder`` (``manifest.json`` and ``results.csv``); the rows typed as
    :func:`train_runs` writes them (the columns the stored run has)."""
    folder = Path(folder)
    if not (folder / "manifest.json").is_file() or not (folder / "results.csv").is_file():
        raise ValueError(f"folder must hold manifest.json and results.csv, got {folder}")
    manifest = json.loads((folder / "manifest.json").read_text())
    with open(folder / "results.csv") as fh:
        rows = [dict(width=int(r["width"]), n_plus=int(r["n_plus"]), init=int(r["init"]),
                     test_bce=float(r["test_bce"]), train_bce=float(r["train_bce"]), test_acc=float(r["test_acc"]),
                     rel_drift=float(r["rel_drift"]), patho_kept=r["patho_kept"] == "True",
                     n_flipped=int(r["n_flipped"])) for r in csv.DictReader(fh)]
    return manifest, rows
