"""The figures of the chapter ``topo_breast_cancer`` (Nurisso et al., NeurIPS 2024, Sec. 6 and Fig. 4), each returning
its matplotlib figure.

* :func:`draw_fig4` -- the paper's Fig. 4 for the stored and the re-executed runs: the mean test BCE over (l, n_+),
  and against the fraction n_+ / l and the number n_+, with the n_+ = 0 floor (n_0 / n) log 2;
* :func:`draw_accuracy` -- the stored mean test accuracy against n_+, and the re-executed accuracy under two tie rules
  and the AUC against the binned fraction n_+ / l.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting

__all__ = ["draw_fig4", "draw_accuracy"]


def _fig4_row(axes, A, title, floor):
    ws = A["widths"]
    grid = np.full((max(ws) + 1, len(ws)), np.nan)
    for k, w in enumerate(ws):
        grid[: w + 1, k] = A["means"][w]
    im = axes[0].imshow(grid, origin="lower", aspect="auto", cmap="viridis",
                        extent=(-0.5, len(ws) - 0.5, -0.5, max(ws) + 0.5))
    axes[0].set_xticks(range(len(ws)), [str(w) for w in ws])
    axes[0].set(xlabel="hidden neurons $l$", ylabel="non-pathological neurons $n_+$", title=f"{title}: mean test BCE")
    plt.colorbar(im, ax=axes[0], label="mean test BCE")
    for k, w in enumerate(ws):
        col = plt.cm.plasma(k / max(1, len(ws) - 1))
        axes[1].plot(np.arange(w + 1) / w, A["means"][w], "o-", color=col, ms=3, label=f"$l = {w}$")
        axes[2].plot(np.arange(w + 1), A["means"][w], "o-", color=col, ms=3, label=f"$l = {w}$")
    axes[1].set_xlabel("fraction of non-pathological neurons $n_+/l$")
    axes[2].set_xlabel("number of non-pathological neurons $n_+$")
    for ax in axes[1:]:
        ax.axhline(floor, color=plotting.LOCAL, ls=":", lw=1.2, label="$n_+ = 0$ floor $(n_0/n)\\log 2$")
        ax.set_ylabel("mean test BCE")
    axes[1].set_title(f"{title}: against the fraction (Fig. 4 right)")
    axes[2].set_title(f"{title}: against the number")
    axes[2].legend(fontsize=7, ncol=2)


def draw_fig4(SA, A, stored_floor, floor):
    """Two rows of Fig. 4: the stored run's analysis ``SA`` with its floor, the re-executed ``A`` with its floor (both
    from :func:`markovlib.topology.breast_cancer.analyse`)."""
    for name, value in (("SA", SA), ("A", A)):
        if not isinstance(value, dict) or "means" not in value:
            raise ValueError(f"{name} must be the dict of breast_cancer.analyse, got {type(value).__name__}")
    fig, axes = plt.subplots(2, 3, figsize=(17, 9), layout="constrained")
    _fig4_row(axes[0], SA, f"stored, {SA['n_inits']} inits per cell", stored_floor)
    _fig4_row(axes[1], A, f"re-executed, {A['n_inits']} inits per cell", floor)
    fig.suptitle("Fig. 4 of the paper: breast cancer, test BCE against the non-pathological neurons")
    return fig


def draw_accuracy(stored, SA, rows, A, benign_share):
    """Left: the stored mean test accuracy (f > 0 benign) against n_+ per width; right: the re-executed ``rows``'
    accuracy under f > 0 and f >= 0 and the AUC, in 5 bins of n_+ / l, with the benign share."""
    if not stored or not rows:
        raise ValueError("stored and rows must hold runs")
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.3), layout="constrained")
    for k, w in enumerate(SA["widths"]):
        col = plt.cm.plasma(k / max(1, len(SA["widths"]) - 1))
        acc = [np.mean([r["test_acc"] for r in stored if r["width"] == w and r["n_plus"] == m]) for m in range(w + 1)]
        axes[0].plot(np.arange(w + 1), acc, "o-", color=col, ms=3, label=f"$l = {w}$")
    axes[0].set(xlabel="number of non-pathological neurons $n_+$", ylabel="mean test accuracy ($f > 0$ benign)",
                title=f"stored, {SA['n_inits']} inits per cell")
    axes[0].legend(fontsize=7, ncol=2)
    bins = np.linspace(0, 1, 6)
    fr = np.array([r["n_plus"] / r["width"] for r in rows])
    idx = np.clip(np.digitize(fr, bins[1:-1]), 0, len(bins) - 2)
    for key, col, name in (("test_acc", plotting.GLOBAL, "accuracy, $f > 0$ benign"),
                           ("test_acc_ge", plotting.LOCAL, "accuracy, $f \\geq 0$ benign"),
                           ("test_auc", plotting.SADDLE, "AUC (ties count 1/2)")):
        val = np.array([r[key] for r in rows])
        axes[1].plot([fr[idx == b].mean() for b in range(len(bins) - 1)],
                     [val[idx == b].mean() for b in range(len(bins) - 1)], "o-", color=col, label=name)
    axes[1].axhline(benign_share, color=plotting.NEUTRAL, ls=":", label="benign share")
    axes[1].set(xlabel="fraction of non-pathological neurons $n_+/l$ (binned)", ylabel="mean over runs",
                title=f"re-executed, {A['n_inits']} inits per cell")
    axes[1].legend(fontsize=8)
    fig.suptitle("Accuracy under two tie rules, and the AUC")
    return fig
