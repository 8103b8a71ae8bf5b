"""The closing chapter's explorer, headless: how an optimizer at step size h breaks each conservation law, and where
training then ends (``book/closing``).

The three problems and their predicted ends are built once in :mod:`markovlib.beyond.drift_problems`
(``drift_problems.laws``: Part I's chain p = q = 0.9 with the energy E of Lemma 1 and the basin of Thm 2, Part II's
neuron with delta and the interpolant of Thm 3.1, Part III's ReLU network with the balances c_k and the signs of the
pathological output weights). This module runs them and draws:

:func:`draw_drift` runs one optimizer (``beyond.conservation.run_optimizer``: GD, SGD or Adam) at step size h on all
three, draws the median drift |Q(t) - Q(0)| of each law over time (log axes; the chapter's fixed time T = 2 marked)
and how many runs end where the theorem predicts, and returns what it displays.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from ..numerics import checks
from . import conservation
from .drift_problems import N_INITS, NAMES, OUTCOMES, laws

T_DRIFT = 2.0  # the fixed time of the drift study (the chapter's t_drift)
H_RANGE = (0.001, 1.0)  # step sizes the explorer accepts


def run_law(law, h, optimizer, seed=0):
    """One optimizer at step ``h`` on one law from its initializations, for its training time (``Law.t_end``), the
    quantity recorded at every step. Returns the :class:`~markovlib.beyond.conservation.Run`."""
    spec = laws(seed)[law]
    steps = int(round(spec.t_end / h))
    return conservation.run_optimizer(spec.problem.grad, spec.theta0, h, steps, quantity=spec.problem.quantity,
                                      optimizer=optimizer, n_data=spec.problem.n_data, batch=spec.batch, seed=seed,
                                      record_every=1)


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
    optimizer = checks.choice("optimizer", optimizer, set(conservation.OPTIMIZERS))
    k_drift = int(round(T_DRIFT / h))
    drift, ends, diverged, curves = {}, {}, {}, {}
    for law in NAMES:
        run = run_law(law, h, optimizer, seed)
        curve = drift_curve(run)
        curves[law] = (run.times, curve)
        drift[law] = float(curve[k_drift])
        ends[law] = int(np.sum(laws(seed)[law].agree(run.theta[-1]) & ~run.diverged))
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
