"""The closing chapter's explorer, headless: how an optimizer at step size h breaks each conservation law, and where
training then ends (``book/closing``).

:func:`laws` builds the chapter's three problems at its default sizes, from the package's models: Part I, the
canonical model's reduced loss (``markov.canonical.grad``) on the chain p = q = 0.9 with the energy
E(e, w) (``markov.energy.energy``, Lemma 1) and SGD on minibatches of a pool of sampled transitions; Part II, one
neuron f(x) = a w^T x on d = 3, n = 2 points with delta = a^2 - ||w||^2 (``richlazy.minimal_model.conserved_delta``);
Part III, a ReLU network of width 4 on d = 2 (``topology.shallow_relu.loss_grad``) with the balances
c_k = ||w_k||^2 - a_k^2. Each has ``N_INITS`` initializations and the outcome its theorem predicts from them: the
basin (``energy.predict_limit``, Thm 2), the interpolant (``minimal_exact.implicit_bias_limit``, Thm 3.1) and the
signs of the pathological output weights (c_k < 0, topology Prop. "balance").

:func:`draw_drift` runs one optimizer (``beyond.conservation.run_optimizer``: GD, SGD or Adam) at step size h on all
three, draws the median drift |Q(t) - Q(0)| of each law over time (log axes; the chapter's fixed time T = 2 marked)
and how many runs end where the theorem predicts, and returns what it displays.
"""
from __future__ import annotations

import functools

import numpy as np

from ..book import plotting
from ..markov import canonical as K
from ..markov.energy import energy, predict_limit
from ..numerics import checks
from ..richlazy.minimal_exact import implicit_bias_limit
from ..richlazy.minimal_model import conserved_delta
from ..topology import shallow_relu
from . import conservation as C

P, Q = 0.9, 0.9  # Part I's chain (the chapter's default)
D2, N2, D3, WIDTH, N3 = 3, 2, 2, 4, 20  # Part II and Part III sizes (the chapter's defaults)
N_POOL, BATCHES = 4096, {"I": 64, "II": 1, "III": 5}  # SGD: Part I's pool of transitions; minibatch per law
N_INITS = 8  # initializations per law
T_DRIFT = 2.0  # the fixed time of the drift study (the chapter's t_drift)
T_END = {"I": 50.0, "II": 200.0, "III": 20.0}  # training times (the chapter's t_pred1, t_pred2, t_pred3)
BETA_TOL = 0.05  # Part II: the run ends at the predicted interpolant if |beta - beta_pred| < this (the chapter's)
H_RANGE = (0.001, 1.0)  # step sizes the explorer accepts
NAMES = {"I": "E (Part I)", "II": "delta (Part II)", "III": "c_k (Part III)"}
OUTCOMES = {"I": "basin", "II": "interpolant", "III": "signs"}


@functools.lru_cache(maxsize=4)
def laws(seed=0) -> dict:
    """The three problems: law -> dict(grad, quantity, theta0, n_data, batch, agree, t_end). ``agree(theta)`` says,
    per initialization, whether the final iterate is where the theorem predicts. Cached (read-only use)."""
    seed = checks.nonnegative_int("seed", seed)
    rng = np.random.default_rng([seed, 11])
    # Part I: the reduced loss of (e, w); a minibatch's loss is that of its empirical chain (smoothed counts)
    x0 = (rng.random(N_POOL) < P / (P + Q)).astype(int)
    x1 = np.where(rng.random(N_POOL) < np.where(x0 == 0, P, Q), 1 - x0, x0)

    def grad1(th, idx=None):
        if idx is None:
            pb, qb = P, Q
        else:
            a_, b_ = x0[idx], x1[idx]
            pb = (((a_ == 0) & (b_ == 1)).sum() + 0.5) / ((a_ == 0).sum() + 1.0)
            qb = (((a_ == 1) & (b_ == 0)).sum() + 0.5) / ((a_ == 1).sum() + 1.0)
        return np.stack(K.grad(th[:, 0], th[:, 1], pb, qb), axis=1)

    th1 = np.empty((0, 2))
    while len(th1) < N_INITS:  # |w0| >= 0.2 and a predicted minimum (not a saddle or a maximum)
        th = rng.uniform(-1.5, 1.5, size=(4 * N_INITS, 2))
        th = th[np.abs(th[:, 1]) >= 0.2]
        th = th[np.isin(predict_limit(th[:, 0], th[:, 1], P, Q).outcome, ["global_min", "local_min"])]
        th1 = np.concatenate([th1, th])
    th1 = th1[:N_INITS]
    pred1 = predict_limit(th1[:, 0], th1[:, 1], P, Q).outcome
    c_star = K.c_star(P, Q)

    def agree1(th):
        with np.errstate(over="ignore", invalid="ignore"):
            c = th[:, 0] ** 2 * (1 + 2 * th[:, 1] * np.abs(th[:, 1]))
        return np.where(np.abs(c - c_star) < np.abs(c), "global_min", "local_min") == pred1

    # Part II: one neuron a w^T x on L = |X a w - y|^2 / (2n), beta0 = a0 w0 on the theorem's side y_i x_i^T beta0 > 0
    X2, y2 = rng.normal(size=(N2, D2)), rng.normal(size=N2)

    def grad2(th, idx=None):
        Xb, yb = (X2, y2) if idx is None else (X2[idx], y2[idx])
        a, w = th[:, :1], th[:, 1:]
        gb = ((a * w) @ Xb.T - yb) @ Xb / len(yb)
        return np.concatenate([(gb * w).sum(1, keepdims=True), a * gb], axis=1)

    deltas, betas = [], []
    while len(betas) < N_INITS:
        b0 = 0.3 * rng.normal(size=D2)
        if np.all((X2 @ b0) * y2 > 0):
            betas.append(b0)
            deltas.append(rng.uniform(-2, 2))
    deltas, betas = np.array(deltas), np.array(betas)
    a0 = np.sqrt((deltas + np.hypot(deltas, 2 * np.linalg.norm(betas, axis=1))) / 2) * rng.choice([-1.0, 1.0], N_INITS)
    th2 = np.concatenate([a0[:, None], betas / a0[:, None]], axis=1)
    pred2 = np.array([implicit_bias_limit(X2, y2, b, dl) for b, dl in zip(betas, deltas)])

    def agree2(th):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.linalg.norm(th[:, :1] * th[:, 1:] - pred2, axis=1) < BETA_TOL

    # Part III: f(x) = sum_k a_k relu(w_k^T x) on MSE/2, a ReLU teacher with a positive output weight
    X3 = rng.normal(size=(N3, D3))
    y3 = 1.5 * np.maximum(X3 @ rng.normal(size=D3), 0.0)

    def unpack3(th):
        return th[:, :WIDTH * D3].reshape(-1, WIDTH, D3), th[:, WIDTH * D3:]

    def grad3(th, idx=None):
        Xb, yb = (X3, y3) if idx is None else (X3[idx], y3[idx])
        W, a = unpack3(th)
        _, gW, ga = shallow_relu.loss_grad(W, a, Xb, yb)
        return np.concatenate([gW.reshape(len(th), -1), ga], axis=1)

    def q3(th):
        W, a = unpack3(th)
        return (W**2).sum(2) - a**2

    th3 = np.empty((0, WIDTH * D3 + WIDTH))
    while len(th3) < N_INITS:  # networks with at least one pathological neuron (c_k < 0)
        th = rng.uniform(-1, 1, size=(4 * N_INITS, WIDTH * D3 + WIDTH))
        th3 = np.concatenate([th3, th[(q3(th) < 0).any(axis=1)]])
    th3 = th3[:N_INITS]
    path3, sign3 = q3(th3) < 0, np.sign(unpack3(th3)[1])

    def agree3(th):
        return np.all(~path3 | (np.sign(unpack3(th)[1]) == sign3), axis=1)

    return {"I": dict(grad=grad1, quantity=lambda th: energy(th[:, 0], th[:, 1]), theta0=th1, n_data=N_POOL,
                      agree=agree1),
            "II": dict(grad=grad2, quantity=lambda th: conserved_delta(th[:, 0], th[:, 1:]), theta0=th2, n_data=N2,
                       agree=agree2),
            "III": dict(grad=grad3, quantity=q3, theta0=th3, n_data=N3, agree=agree3)}


def run_law(law, h, optimizer, seed=0):
    """One optimizer at step ``h`` on one law from its initializations, for its training time T_END[law], the
    quantity recorded at every step. Returns the :class:`~markovlib.beyond.conservation.Run`."""
    spec = laws(seed)[law]
    steps = int(round(T_END[law] / h))
    return C.run_optimizer(spec["grad"], spec["theta0"], h, steps, quantity=spec["quantity"], optimizer=optimizer,
                           n_data=spec["n_data"], batch=BATCHES[law], seed=seed, record_every=1)


def drift_curve(run) -> np.ndarray:
    """The median over initializations of max over components |Q(t) - Q(0)|, at every recorded step."""
    d = np.abs(run.quantity - run.quantity[:1])
    return np.median(d.reshape(d.shape[0], d.shape[1], -1).max(axis=2), axis=1)


def outcome_text(drift, ends, n) -> str:
    """The readout of a frame: each law's drift at T = 2 (one significant digit) and the count of runs that end where
    the theorem predicts."""
    return ("drift at t = 2: " + ", ".join(f"{NAMES[k].split()[0]} {drift[k]:.0e}" for k in NAMES)
            + "; ends where predicted: " + ", ".join(f"{OUTCOMES[k]} {ends[k]}/{n}" for k in NAMES))


def draw_drift(h, optimizer, fig=None, *, seed=0) -> dict:
    """Run ``optimizer`` ("gd", "sgd" or "adam") at step size ``h`` in [0.001, 1] on the three laws and draw the
    median drift |Q(t) - Q(0)| over time and the count of runs ending where each theorem predicts.

    Returns {"h", "optimizer", "drift": law -> median drift at t = T_DRIFT, "ends": law -> count of runs ending where
    predicted (not diverged), "diverged": law -> count, "n": N_INITS, "curves": law -> (times, median drift),
    "text": :func:`outcome_text`}.
    """
    import matplotlib.pyplot as plt

    h = checks.positive_real("h", h)
    if not H_RANGE[0] <= h <= H_RANGE[1]:
        raise ValueError(f"h must lie in [{H_RANGE[0]:g}, {H_RANGE[1]:g}], got {h!r}")
    optimizer = checks.choice("optimizer", optimizer, set(C.OPTIMIZERS))
    k_drift = int(round(T_DRIFT / h))
    drift, ends, diverged, curves = {}, {}, {}, {}
    for law in NAMES:
        run = run_law(law, h, optimizer, seed)
        curve = drift_curve(run)
        curves[law] = (run.times, curve)
        drift[law] = float(curve[k_drift])
        ends[law] = int(np.sum(laws(seed)[law]["agree"](run.theta[-1]) & ~run.diverged))
        diverged[law] = int(run.diverged.sum())
    text = outcome_text(drift, ends, N_INITS)

    if fig is None:
        fig = plt.figure(figsize=(8.0, 4.1))
    ax, bx = fig.subplots(1, 2, gridspec_kw=dict(width_ratios=[1.7, 1], left=0.09, right=0.98, top=0.82,
                                                  bottom=0.14, wspace=0.32))
    colours = {"I": plotting.GLOBAL, "II": plotting.SADDLE, "III": plotting.LOCAL}
    for law, (t, y) in curves.items():
        sel = (t > 0) & (y > 0) & np.isfinite(y)
        ax.loglog(t[sel], y[sel], color=colours[law], lw=1.6, label=NAMES[law])
    ax.axvline(T_DRIFT, color="0.5", ls=":", lw=1)
    ax.set_xlabel("time t = steps x h", fontsize=8)
    ax.set_ylabel("median drift |Q(t) - Q(0)|", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="lower right")
    xs = np.arange(3)
    bx.bar(xs, [ends[k] for k in NAMES], color=[colours[k] for k in NAMES])
    bx.bar(xs, [diverged[k] for k in NAMES], bottom=[ends[k] for k in NAMES], color="0.8", label="diverged")
    bx.set_xticks(xs, [f"{OUTCOMES[k]}\n(Part {k})" for k in NAMES], fontsize=7)
    bx.set_ylim(0, N_INITS)
    bx.set_ylabel(f"runs ending where predicted (of {N_INITS})", fontsize=8)
    bx.tick_params(labelsize=7)
    if any(diverged.values()):
        bx.legend(fontsize=7)
    fig.suptitle(f"{optimizer.upper() if optimizer != 'adam' else 'Adam'}, h = {h:g}: drift at t = {T_DRIFT:g}: "
                 + ", ".join(f"{NAMES[k].split()[0]} {drift[k]:.0e}" for k in NAMES)
                 + "\nend: " + ", ".join(f"{OUTCOMES[k]} {ends[k]}/{N_INITS}" for k in NAMES), fontsize=9)
    return {"h": h, "optimizer": optimizer, "drift": drift, "ends": ends, "diverged": diverged, "n": N_INITS,
            "curves": curves, "text": text}
