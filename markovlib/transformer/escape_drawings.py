"""Drawings of the chapter trap_or_plateau (:mod:`markovlib.transformer.escape_stored`): each returns its figure.

- :func:`survival_figure`: per chain, the Kaplan-Meier fraction still on the unigram plateau per arm, with its
  log-log Greenwood 95 % band.
- :func:`energy_figure`: per chain and optimizer, Part I's energy E(e, w) of the projection along training (reference
  Lemma 1), with E_sad and the escapes from H(pi) marked.
- :func:`escape_test_figure`: the escape sets at batch 1 against the drift law's predicted band; :func:`growth_figure`:
  |w| along their runs against the law's frozen drift.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..markov.energy import SADDLE_ENERGY

COLOURS = {"sgd": plotting.LOCAL, "momentum": plotting.SADDLE, "adam": plotting.MAXIMA, "adamw": plotting.GLOBAL}


def survival_figure(S, km):
    """One panel per chain of ``S`` (an :class:`EscapeSet`): the step curve of ``km[arm]`` (Kaplan-Meier) for every
    arm, SGD and Adam drawn wide under their look-alikes (momentum, AdamW), which may coincide."""
    missing = [a for a in S.arms if a not in km]
    if missing:
        raise ValueError(f"km must hold every arm, missing {missing}")
    fig, axes = plt.subplots(1, len(S.chains), figsize=(12, 4), sharey=True, squeeze=False)
    pad = lambda a: np.concatenate([[1.0], a, [a[-1] if a.size else 1.0]])  # noqa: E731
    for ax, pq in zip(axes[0], S.chains):
        for opt in S.lrs:
            for lr, style in zip(S.lrs[opt], ("--", "-")):
                k_m = km[(pq, opt, lr)]
                x = np.concatenate([[0], k_m.times, [S.horizon]])
                wide = opt in ("sgd", "adam")
                ax.step(x, pad(k_m.survival), where="post", color=COLOURS[opt], ls=style, lw=4 if wide else 1.3,
                        alpha=0.45 if wide else 1.0, label=f"{opt}, lr {lr:g}")
                ax.fill_between(x, pad(k_m.lower), pad(k_m.upper), step="post", color=COLOURS[opt], alpha=0.12)
        ax.set(title=f"p = {pq[0]:g}, q = {pq[1]:g}: {len(S.seeds)} seeds per arm", xlabel="step",
               xlim=(0, S.horizon), ylim=(-0.02, 1.02))
    axes[0, 0].set_ylabel("fraction still on the unigram plateau")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def energy_figure(S, esc, clip=8.0):
    """Rows: chains; columns: optimizers. Every run's E(e, w) (clipped to [-clip, clip]) against the step, one colour
    per learning rate, E_sad as a line and the escape step (``esc``, NaN: none) as a dot."""
    clip = float(clip)
    if not clip > 0:
        raise ValueError(f"clip must be > 0, got {clip}")
    opts = list(S.lrs)
    fig, axes = plt.subplots(len(S.chains), len(opts), figsize=(12, 6), sharex=True, sharey=True, squeeze=False)
    c = S.curves
    for (i, pq), (j, opt) in ((a, b) for a in enumerate(S.chains) for b in enumerate(opts)):
        ax = axes[i, j]
        for lr, colour in zip(S.lrs[opt], (plotting.NEUTRAL, plotting.MAXIMA)):
            g = c[(c.p == pq[0]) & (c.q == pq[1]) & (c.optimizer == opt) & (c.lr == lr)]
            for s, run in g.groupby("seed"):
                ax.plot(run.step, run.energy.clip(-clip, clip), color=colour, lw=0.6, alpha=0.5,
                        label=f"lr {lr:g}" if s == S.seeds[0] else None)
                t = esc.get((pq[0], pq[1], opt, lr, s), np.nan)
                if np.isfinite(t):
                    e_t = run.energy[run.step == t].clip(-clip, clip).iloc[0]
                    ax.plot(t, e_t, "o", ms=2.5, color=plotting.GLOBAL)
        ax.axhline(SADDLE_ENERGY, color=plotting.SADDLE, lw=1.5)
        ax.set_title(f"{opt}, p = {pq[0]:g}, q = {pq[1]:g}", fontsize=9)
        ax.set(xlabel="step" if i == len(S.chains) - 1 else "", ylabel="E(e, w) of the projection" if j == 0 else "")
        ax.legend(loc="upper right", fontsize=7)
    fig.suptitle(f"E along training (clipped to [{-clip:g}, {clip:g}]); yellow: E_sad; green dots: the escape from "
                 "H(pi)")
    fig.tight_layout()
    return fig


def escape_test_figure(tests):
    """The escape sets at batch 1 (:func:`markovlib.transformer.escape_long.escape_test`, one per step size): the
    Kaplan-Meier fraction of runs still on the plateau with its band, against the law's predicted median end of the
    plateau, the band [f_lo m, f_hi m] (shaded, same colour); dotted: each set's horizon. Log step axis, so that the
    measured ends and the predictions show together."""
    if not tests:
        raise ValueError("tests must hold at least one escape_test result")
    colours = [plotting.LOCAL, plotting.SADDLE, plotting.MAXIMA, plotting.GLOBAL]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    pad = lambda a: np.concatenate([[1.0], a, [a[-1] if a.size else 1.0]])  # noqa: E731
    first = min(t["km"].times[0] for t in tests if t["km"].times.size) if any(t["km"].times.size for t in tests) \
        else min(t["horizon"] for t in tests)
    for t, colour in zip(sorted(tests, key=lambda t: -t["lr"]), colours):
        km = t["km"]
        x = np.concatenate([[first / 2], km.times, [t["horizon"]]])
        ax.step(x, pad(km.survival), where="post", color=colour, lw=2, label=f"lr {t['lr']:g}: measured")
        ax.fill_between(x, pad(km.lower), pad(km.upper), step="post", color=colour, alpha=0.12)
        ax.axvspan(*t["band"], color=colour, alpha=0.25, label=f"lr {t['lr']:g}: the law's median")
        ax.axvline(t["horizon"], color=colour, ls=":", lw=1)
    ax.axhline(0.5, color="0.5", lw=0.8)
    ax.set(xscale="log", xlabel="SGD step (batch 1)", ylabel="fraction of runs still on the plateau",
           ylim=(-0.02, 1.02), xlim=(first / 2, 1.3 * max(t["band"][1] for t in tests)),
           title="end of the unigram plateau: measured (Kaplan-Meier) against the drift law")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    fig.tight_layout()
    return fig


def growth_figure(sets, ends, law_dw):
    """One panel per escape set (``sets``: {tag: LongSet}, ``ends``: {tag: plateau_end frame}, ``law_dw``: {tag: the
    law's dw per seed at the initialization}): every run's |w| against the step (log scale) up to the end of its
    plateau, the end marked (cross: divergence, circle: escape), and dashed the law's frozen drift |w_0 + dw t| of the
    seed with the median dw."""
    if not sets:
        raise ValueError("sets must hold at least one escape set")
    fig, axes = plt.subplots(1, len(sets), figsize=(3.2 * len(sets), 3.4), sharey=True, squeeze=False)
    for ax, (tag, S) in zip(axes[0], sets.items()):
        e = ends[tag]
        for seed, g in S.curves.sort_values("step").groupby("seed"):
            t_end = e.loc[seed, "T_end"]
            g = g[g.step <= t_end] if np.isfinite(t_end) else g
            ax.plot(g.step, np.maximum(g.w.abs(), 1e-4), color=plotting.LOCAL, lw=0.7, alpha=0.6)
            if np.isfinite(t_end):
                marker = "x" if e.loc[seed, "kind"] == "divergence" else "o"
                ax.plot(g.step.iloc[-1], max(abs(g.w.iloc[-1]), 1e-4), marker, color=plotting.SADDLE, ms=4)
        dw = law_dw[tag]
        seed = min(dw, key=lambda s: abs(dw[s] - np.median(list(dw.values()))))
        w0 = float(S.curves[(S.curves.seed == seed) & (S.curves.step == 0)].w.iloc[0])
        t = np.linspace(0, S.horizon, 200)
        ax.plot(t, np.maximum(np.abs(w0 + dw[seed] * t), 1e-4), "k--", lw=1.2, label="law, frozen drift")
        ax.axhline(1 / np.sqrt(2), color="0.5", lw=0.8)
        ax.set(yscale="log", xlabel="step", title=f"lr {S.lrs[0]:g}, batch {S.batch}", ylim=(1e-4, 10))
    axes[0, 0].set_ylabel("|w| of the projection")
    axes[0, 0].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig
