"""App. G of Nurisso et al. (NeurIPS 2024) for several outputs: one pathological neuron of the constructed family
(:func:`appendix.draw_construction`), its population flow with e outputs and with one, and gradient descent on a
finite sample. Used by the chapter ``topo_beyond_remarks``.

* :func:`population_check` -- the closed-form population loss against Monte Carlo (a z-score) and its gradient
  against torch autograd (Independent reference: the autograd of the closed form written in torch);
* :func:`flow_runs` -- per draw: the flow with e outputs and with one output on a grid of 801 times, the zero events
  of a_1, the balance drift, and :func:`shallow_relu.gradient_descent` on Gaussian points;
* :func:`summarize` -- the counts and extremes over the draws that the chapter's claims are about.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import appendix, shallow_relu

__all__ = ["population_check", "flow_runs", "summarize"]


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return rng


def population_check(rng, d, e, c, *, points=5, samples=200_000):
    """(largest |z| of Monte Carlo mean - :func:`appendix.population_loss` over its standard error, largest |numpy
    gradient - torch autograd|) at ``points`` draws of the construction with w0 moved off it by a Gaussian step,
    ``samples`` Gaussian inputs each. Independent reference for the gradient: torch autograd of
    L = ||a||^2 ||w||^2 / 4 - (a . v) ||w|| kappa(theta) / (2 pi) (App. G's closed form, written again in torch)."""
    import torch

    rng, points, samples = _rng(rng), checks.positive_int("points", points), checks.positive_int("samples", samples)
    mc_z, ag_err = 0.0, 0.0
    for _ in range(points):
        u, v, w0, a0 = appendix.draw_construction(rng, d, e, c)
        w0 = w0 + rng.normal(size=d)  # also points off the constructed family
        xs = rng.normal(size=(samples, d))
        vals = 0.5 * ((np.maximum(xs @ w0, 0)[:, None] * a0 - np.maximum(xs @ u, 0)[:, None] * v) ** 2).sum(1)
        mc_z = max(mc_z, abs(vals.mean() - appendix.population_loss(w0, a0, u, v)) / (vals.std() / np.sqrt(len(vals))))
        tw, ta = torch.tensor(w0, requires_grad=True), torch.tensor(a0, requires_grad=True)
        tu, tv = torch.tensor(u), torch.tensor(v)
        nw = torch.linalg.norm(tw)
        th = torch.arccos(torch.clamp(tw @ tu / nw, -1, 1))
        tl = 0.25 * (ta @ ta) * nw**2 - (ta @ tv) * nw * (torch.sin(th) + (np.pi - th) * torch.cos(th)) / (2 * np.pi)
        gw_t, ga_t = torch.autograd.grad(tl, (tw, ta))
        gw, ga = appendix.population_grad(w0, a0, u, v)
        ag_err = max(ag_err, np.abs(gw - gw_t.numpy()).max(), np.abs(ga - ga_t.numpy()).max())
    return float(mc_z), float(ag_err)


def flow_runs(rng, draws, d, e, c, *, horizon, n_data, lr) -> list:
    """``draws`` draws of the construction (balance c < 0), each a dict: u, v, tt (801 times to ``horizon``), Z and Z1
    (the flow with e outputs and with one output, a_1(0) = sqrt(||w0||^2 - c), at tt), t_down (downward zeros of a_1),
    n_up (upward zeros), rest (sum_(j >= 2) a_j^2 / (-c) at the zeros), off and off1 (the neuron switched off),
    drift (largest |c(t) - c| of both flows), min_a1_single, loss1_margin (min L / (v_1^2 / 4) with one output),
    t_gd (first crossing of a_1 under gradient descent with step ``lr`` on ``n_data`` Gaussian points, nan if none)
    and a1_gd (its a_1 every 10 steps)."""
    rng, draws = _rng(rng), checks.positive_int("draws", draws)
    horizon, lr = checks.positive_real("horizon", horizon), checks.positive_real("lr", lr)
    n_data = checks.positive_int("n_data", n_data)
    runs = []
    for _ in range(draws):
        u, v, w0, a0 = appendix.draw_construction(rng, d, e, c)
        sol = appendix.population_flow(w0, a0, u, v, horizon)
        sol1 = appendix.population_flow(w0, np.array([np.sqrt(w0 @ w0 - c)]), u, v[:1], horizon)  # one output, same c
        tt = np.linspace(0, horizon, 801)
        Z, Z1 = appendix.flow_at(sol, tt), appendix.flow_at(sol1, tt)
        c_t = (Z[:d] ** 2).sum(0) - (Z[d:] ** 2).sum(0)
        c1_t = (Z1[:d] ** 2).sum(0) - Z1[d] ** 2
        t_down = sol.t_events[0]
        rest = (sol.y_events[0][:, d + 1:] ** 2).sum(1) / (-c) if len(t_down) else np.array([])
        loss1 = np.array([appendix.population_loss(Z1[:d, j], Z1[d:, j], u, v[:1]) for j in range(0, tt.size, 8)])
        X = rng.normal(size=(n_data, d))
        Y = np.maximum(X @ u, 0)[:, None] * v[None, :]
        gd = shallow_relu.gradient_descent(w0[None, :], a0[:, None], X, Y, lr=lr, steps=int(round(horizon / lr)),
                                           save_every=1)
        a1_gd = gd.W2_path[:, 0, 0]
        gd_cross = np.flatnonzero((a1_gd[:-1] > 0) & (a1_gd[1:] <= 0))
        runs.append(dict(u=u, v=v, tt=tt, Z=Z, Z1=Z1, t_down=t_down, n_up=len(sol.t_events[1]), rest=rest,
                         off=len(sol.t_events[2]) > 0, off1=len(sol1.t_events[2]) > 0,
                         drift=max(np.abs(c_t - c).max(), np.abs(c1_t - c).max()),
                         min_a1_single=Z1[d].min(), loss1_margin=(loss1 / (v[0] ** 2 / 4)).min(),
                         t_gd=(gd_cross[0] + 1) * lr if len(gd_cross) else np.nan, a1_gd=a1_gd[::10]))
    return runs


def summarize(runs, c) -> dict:
    """Over :func:`flow_runs`: n_cross (flows with exactly one downward zero of a_1), n_up, max_down, rest_min (the
    smallest ratio at a zero, floored to 2 decimals as rest_text), drift, n_keep (one-output flows with a_1 > 0),
    n_off, n_off1, single_ratio (min a_1 / sqrt(-c), one output), loss_ratio, n_gd (gradient descents that cross),
    t_rel (largest relative difference of the crossing times, GD vs flow, where both cross), t_range."""
    if not runs:
        raise ValueError("runs must be a non-empty list of flow_runs")
    down = [r["t_down"][0] for r in runs if len(r["t_down"])]
    rest_min = min(r["rest"].min() for r in runs if len(r["rest"]))
    return dict(n_cross=sum(len(r["t_down"]) == 1 for r in runs), n_up=sum(r["n_up"] for r in runs),
                max_down=max(len(r["t_down"]) for r in runs), rest_min=rest_min,
                rest_text=f"{np.floor(rest_min * 100) / 100:.2f}", drift=max(r["drift"] for r in runs),
                n_keep=sum(r["min_a1_single"] > 0 for r in runs), n_off=sum(r["off"] for r in runs),
                n_off1=sum(r["off1"] for r in runs),
                single_ratio=min(r["min_a1_single"] for r in runs) / np.sqrt(-c),
                loss_ratio=min(r["loss1_margin"] for r in runs), n_gd=sum(np.isfinite(r["t_gd"]) for r in runs),
                t_rel=max(abs(r["t_gd"] - r["t_down"][0]) / r["t_down"][0] for r in runs
                          if len(r["t_down"]) and np.isfinite(r["t_gd"])),
                t_range=(min(down), max(down)))
