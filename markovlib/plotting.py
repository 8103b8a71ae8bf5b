"""One shared figure style for the book, plus the drawings that more than one chapter uses.

Call ``use_style()`` once at the top of a chapter. Colours are fixed by meaning across the book:
the global minimum / bigram (entropy rate) is ``GLOBAL``, the bad local minimum / unigram (H(pi)) is ``LOCAL``,
the saddle and its asymptotes are ``SADDLE``.
"""
from __future__ import annotations

import matplotlib as mpl
import numpy as np

GLOBAL = "#1b7837"  # green: global minima, entropy rate
LOCAL = "#b2182b"  # red: bad local minima, H(pi)
MAXIMA = "#2166ac"  # blue: local maxima
SADDLE = "#e6ab02"  # yellow (the paper's saddle asymptotes)
NEUTRAL = "#4d4d4d"

STYLE = {
    "figure.figsize": (6.4, 4.2),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "font.size": 10,
    "image.cmap": "viridis",
    "svg.hashsalt": "markovlib",  # deterministic SVG ids
}


def use_style():
    """Apply the book's matplotlib style (idempotent)."""
    mpl.rcParams.update(STYLE)


def yardsticks(ax, entropy_rate, marginal_entropy, horizontal=True):
    """Draw the two loss yardsticks: the entropy rate (bigram, global) and H(pi) (unigram, local)."""
    line = ax.axhline if horizontal else ax.axvline
    line(entropy_rate, color=GLOBAL, ls="--", lw=1.2, label=f"entropy rate {entropy_rate:.4f} (bigram)")
    line(marginal_entropy, color=LOCAL, ls=":", lw=1.4, label=f"H(pi) {marginal_entropy:.4f} (unigram)")


def critical_points(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), n=801, legend=True):
    """Draw the critical points of L(e, w) (Thm 1): Gamma*, the w-axis split into minima/maxima, the saddle."""
    from .canonical import W_SADDLE, critical_sets

    cs = critical_sets(p, q)
    w = np.linspace(*w_lim, n)
    e = cs.global_min_e(w)
    e = np.where(e <= e_lim, e, np.nan)
    ax.plot(e, w, color=GLOBAL, lw=2.2, label=r"global minima $\Gamma^*$")
    ax.plot(-e, w, color=GLOBAL, lw=2.2)
    if cs.saddle is None:  # p + q = 1: c* = 0, every critical point ({e = 0} and {w = -1/sqrt 2}) is global
        ax.plot([0, 0], list(w_lim), color=GLOBAL, lw=3, solid_capstyle="butt")
        ax.axhline(W_SADDLE, color=GLOBAL, lw=2.2)
    else:
        loci = ((cs.local_min_w, LOCAL, "local minima"), (cs.local_max_w, MAXIMA, "local maxima"))
        for (lo, hi), color, name in loci:
            lo, hi = max(lo, w_lim[0]), min(hi, w_lim[1])
            ax.plot([0, 0], [lo, hi], color=color, lw=3, solid_capstyle="butt", label=f"{name} (e = 0)")
        ax.plot([0], [W_SADDLE], "o", color=SADDLE, mec="k", ms=7, label="saddle", zorder=5)
    ax.set_xlabel("e (embedding scale)")
    ax.set_ylabel("w (feed-forward scale)")
    ax.set_xlim(-e_lim, e_lim)
    ax.set_ylim(*w_lim)
    if legend:
        ax.legend(loc="lower right")
