"""Drawings of the chapter authors_fig4 (the paper's Fig. 4 at its scale, from the stored runs): each function draws
one figure and returns it.

- :data:`COLOURS`: one colour per initialization (green: the guideline, which reaches the global minimum; red: the
  public code's init, which stays at the local one).
- :func:`stored_curves`: held-out loss per chain, mean and 1-sd band over the stored seeds per initialization.
- :func:`leave_survival`: Kaplan-Meier curves of the time to leave H(pi) per initialization, with 95 % bands.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..book.formatting import fraction
from ..numerics.survival import kaplan_meier

COLOURS = {"standard": plotting.NEUTRAL, "authors_submission": plotting.MAXIMA, "authors_public": plotting.LOCAL,
           "guideline": plotting.GLOBAL}


def stored_curves(stored, tables, labels):
    """One panel per chain of ``tables`` (``fig4_stored.outcome_tables``): the held-out loss of every
    initialization of ``labels`` (name -> legend text), mean and band of one standard deviation over the stored
    seeds, with the chain's yardsticks."""
    if not set(labels) <= set(COLOURS):
        raise ValueError(f"labels must name initializations of {sorted(COLOURS)}")
    fig, axes = plt.subplots(1, len(tables), figsize=(13, 4.4), layout="constrained", sharey=False)
    for ax, ((p_, q_), (ch, _)) in zip(np.atleast_1d(axes), tables.items()):
        for init in labels:
            ev = stored[(stored.p == p_) & (stored.q == q_) & (stored.init == init)].dropna(subset=["eval_loss"])
            piv = ev.pivot(index="step", columns="seed", values="eval_loss")
            mean, sd = piv.mean(axis=1), piv.std(axis=1, ddof=0)
            ax.plot(piv.index, mean, color=COLOURS[init], lw=1.6, label=labels[init])
            ax.fill_between(piv.index, mean - sd, mean + sd, color=COLOURS[init], alpha=0.2, lw=0)
        plotting.yardsticks(ax, ch.entropy_rate, ch.marginal_entropy)
        ax.set_ylim(ch.entropy_rate - 0.03, max(math.log(2), ch.marginal_entropy) + 0.05)
        ax.set_xlabel("AdamW step")
        ax.set_ylabel("held-out loss (nats)")
        n_s = stored[(stored.p == p_) & (stored.q == q_)].seed.nunique()
        ax.set_title(f"Fig. 4 at the paper's scale: p = {p_}, q = {q_} (mean, band = 1 sd over {n_s} seeds)")
        ax.legend(loc="upper right")
    return fig


def leave_survival(leaves, labels, horizon, title):
    """Kaplan-Meier estimates of the fraction of seeds still at H(pi) against the step, one per initialization
    (``leaves[init]``: each seed's step of leaving, NaN if never: censored at ``horizon``), with 95 % bands.
    Returns (figure, {init: KaplanMeier})."""
    if horizon <= 0:
        raise ValueError(f"horizon must be positive, got {horizon!r}")
    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    kms = {}
    for init in labels:
        lv = np.asarray(leaves[init], dtype=float)
        km = kms[init] = kaplan_meier(np.where(np.isfinite(lv), lv, horizon), np.isfinite(lv))
        t = np.concatenate([[0.0], km.times, [horizon]])
        last = km.survival[-1] if km.survival.size else 1.0
        s = np.concatenate([[1.0], km.survival, [last]])
        lo_s = np.concatenate([[1.0], km.lower, [km.lower[-1] if km.lower.size else 1.0]])
        hi_s = np.concatenate([[1.0], km.upper, [km.upper[-1] if km.upper.size else 1.0]])
        ax.step(t, s, where="post", color=COLOURS[init], lw=1.6,
                label=f"{labels[init]} ({fraction(int(np.isfinite(lv).sum()), len(lv))} leave)")
        ax.fill_between(t, lo_s, hi_s, step="post", color=COLOURS[init], alpha=0.15, lw=0)
    ax.set_xlabel("AdamW step")
    ax.set_ylabel("fraction of seeds still at H(pi)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8)
    return fig, kms
