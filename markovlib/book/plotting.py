"""One shared figure style for the book, and the yardstick lines that every part draws.

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
