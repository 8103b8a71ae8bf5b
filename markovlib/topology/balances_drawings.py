"""The figure of the chapter ``topo_balances``: how discrete optimizers break the neuron balances c_k and how weight
decay shrinks them (Nurisso et al., NeurIPS 2024, Eq. (10)-(12) and Sec. 8)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting


def drift_figure(drifts, lrs, ts, c_wd, weight_decay, t):
    """Left: every network's drift against h per optimizer (thin) with the geometric means (dots); right: the balances
    under weight decay (``decay_check``) with c_k(0) exp(-2 lambda t)."""
    if set(drifts) != {"gd", "sgd", "adam"} or c_wd.shape[0] != len(ts):
        raise ValueError("drifts must map gd, sgd, adam to drift arrays and c_wd have one row per time of ts")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    for k, col in (("gd", plotting.GLOBAL), ("sgd", plotting.SADDLE), ("adam", plotting.LOCAL)):
        axes[0].loglog(lrs, drifts[k], "-", color=col, alpha=0.3, lw=0.8)
        axes[0].loglog(lrs, np.exp(np.mean(np.log(drifts[k]), axis=1)), "o-", color=col, lw=2,
                       label=f"{k.upper()} (geometric mean)")
    axes[0].set(xlabel="step size h", ylabel=f"max_k |c_k(t) - c_k(0)| at t = {t}",
                title=f"Discrete optimizers break the conservation ({drifts['gd'].shape[1]} networks)")
    axes[0].legend()
    for k in range(c_wd.shape[1]):
        axes[1].plot(ts, c_wd[:, k], color=plotting.NEUTRAL)
        axes[1].plot(ts, c_wd[0, k] * np.exp(-2 * weight_decay * ts), ":", color=plotting.LOCAL,
                     label="$c_k(0)e^{-2\\lambda t}$" if k == 0 else None)
    axes[1].set(xlabel="time t", ylabel="$c_k(t)$", title=f"Weight decay lambda = {weight_decay}: balances decay to 0")
    axes[1].legend()
    return fig
