"""App. E of Nurisso et al. (NeurIPS 2024), checked without its formulas: the balance with biases by torch autograd,
a small teacher with biases for gradient descent, and persistent homology and neighbour graphs of samples of H(c)
with biases (Prop. 6, Cor. 4). Used by the chapter ``topo_beyond_remarks``.

* :func:`autograd_balance` -- Independent reference: the rescaling identity w.g_w + b g_b - a.g_a = 0 of the
  balance ||w_k||^2 + b_k^2 - ||a_k||^2 (App. E), with torch autograd, and the numpy gradient against it;
* :func:`teacher_problem` -- the teacher with biases and the start of the gradient descent that checks the drift;
* :func:`sampled_topology` -- per case (d, e, signs): the Betti numbers of Prop. 6, gudhi's Rips persistence on
  landmarks of a sample made from the equations, and neighbour-graph components with and without the bias;
* :func:`topology_table` -- those rows as the printed table.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import appendix, homology, invariant_set

__all__ = ["autograd_balance", "teacher_problem", "sampled_topology", "topology_table"]


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return rng


def autograd_balance(rng, trials=10):
    """Independent reference: (largest |w.g_w + b g_b - a.g_a|, largest |b g_b|, largest |numpy gradient - autograd|)
    over ``trials`` random networks f(x) = W2 relu(W1 x + b1) + b2 (4 neurons, d in 1..3, e in 1..2, 40 Gaussian
    points) with the MSE, the gradient from torch autograd. The first is the derivative at s = 1 of the rescaling
    (w_k, b_k, a_k) -> (s w_k, s b_k, a_k / s) (App. E), zero up to rounding; the second, the rate of the balance
    without the bias (up to the factor 2), is not. Draws from ``rng`` in order."""
    import torch

    rng, trials = _rng(rng), checks.positive_int("trials", trials)
    ident_err, ident_scale, grad_err = 0.0, 0.0, 0.0
    for _ in range(trials):
        l_, d_, e_, n_ = 4, int(rng.integers(1, 4)), int(rng.integers(1, 3)), 40
        X, Y = rng.normal(size=(n_, d_)), rng.normal(size=(n_, e_))
        ws = [rng.normal(size=s) for s in ((l_, d_), (l_,), (e_, l_), (e_,))]
        tw = [torch.tensor(w, requires_grad=True) for w in ws]
        f = torch.relu(torch.tensor(X) @ tw[0].T + tw[1]) @ tw[2].T + tw[3]
        tl = 0.5 * ((f - torch.tensor(Y)) ** 2).sum(1).mean()
        tg = [g.numpy() for g in torch.autograd.grad(tl, tw)]
        grad_err = max(grad_err, max(np.abs(a - b).max() for a, b in zip(tg, appendix.bias_mse_grads(*ws, X, Y))))
        rate_with = (ws[0] * tg[0]).sum(1) + ws[1] * tg[1] - (ws[2] * tg[2]).sum(0)
        ident_err = max(ident_err, np.abs(rate_with).max())
        ident_scale = max(ident_scale, np.abs(ws[1] * tg[1]).max())
    return float(ident_err), float(ident_scale), float(grad_err)


def teacher_problem(rng):
    """(init, X, Y): 200 Gaussian points in R^2, the teacher y = relu(x M^T + b) (1, -1)^T - 0.2 with a fixed M and b,
    and a start (W1 (3, 2), b1 (3,), W2 (1, 3), b2 = 0) of :func:`appendix.bias_gd_balances`, drawn from ``rng``."""
    rng = _rng(rng)
    X = rng.normal(size=(200, 2))
    Y = (np.maximum(X @ np.array([[1.0, -0.5], [-0.3, 1.0]]).T + np.array([0.5, -0.5]), 0) @ np.array([[1.0, -1.0]]).T
         - 0.2)
    init = (rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=(1, 3)), np.zeros(1))
    return init, X, Y


def sampled_topology(cases, rng, *, c_abs, trunc, n_landmarks, raw_factor, persist_min, max_edge, graph_radius):
    """The App. E topology checked on samples (no formula on the path): for each case (d, e, signs) with c_k = +-c_abs,
    ``raw_factor`` * ``n_landmarks`` points of H(c) with biases (:func:`homology.sample_invariant_set`, truncation
    ``trunc`` sqrt(c_abs)), scaled by 1 / sqrt(c_abs); farthest-point landmarks (gudhi); Rips persistence
    (:func:`homology.rips_betti`, bars longer than ``persist_min``, edges up to ``max_edge``) in dimensions 0..2 for
    one neuron, 0..1 for two, 0 for three; components of the radius-``graph_radius`` graph on the raw points, and on
    a sample without the bias. Returns a dict: rows (d, e, signs, Prop. 6's Betti numbers, Rips counts, graph b0 with
    the bias, graph b0 without), ph_ok, graph_ok, nobias_ok, the counts of equal rows (ph_equal, graph_with,
    graph_without), worst_noise, worst_signal, max_res (largest residual of the quadrics' equations)."""
    from gudhi.subsampling import choose_n_farthest_points

    rng = _rng(rng)
    c_abs, trunc = checks.positive_real("c_abs", c_abs), checks.positive_real("trunc", trunc)
    n_landmarks = checks.positive_int("n_landmarks", n_landmarks)
    raw_factor = checks.positive_int("raw_factor", raw_factor)
    scale = np.sqrt(c_abs)
    out = dict(rows=[], ph_ok=True, graph_ok=True, nobias_ok=True, worst_noise=0.0, worst_signal=np.inf, max_res=0.0,
               ph_equal=0, graph_with=0, graph_without=0)
    for d_, e_, sg in cases:
        c = [c_abs if s == "+" else -c_abs for s in sg]
        P = list(invariant_set.betti_numbers(d_, e_, c, bias=True))
        top = (2 if len(c) == 1 else 1) if len(c) < 3 else 0
        raw = homology.sample_invariant_set(d_, e_, c, raw_factor * n_landmarks, trunc * scale, rng, bias=True)
        for k, ck in enumerate(c):  # every point on its quadric (the samples' own residual)
            blk = raw[:, k * (d_ + 1 + e_):(k + 1) * (d_ + 1 + e_)]
            res = np.abs((blk[:, :d_ + 1] ** 2).sum(1) - (blk[:, d_ + 1:] ** 2).sum(1) - ck).max()
            out["max_res"] = max(out["max_res"], float(res))
        raw = raw / scale
        X = np.asarray(choose_n_farthest_points(points=raw, nb_points=n_landmarks, starting_point=0))
        counts, noise, signal = homology.rips_betti(X, top, persist_min, max_edge)
        b0_graph = homology.graph_components(raw, graph_radius)
        raw_nobias = homology.sample_invariant_set(d_, e_, c, raw_factor * n_landmarks, trunc * scale, rng, bias=False)
        b0_nobias = homology.graph_components(raw_nobias / scale, graph_radius)
        ph = counts == (P + [0] * (top + 1))[: top + 1]
        with_ = b0_graph == invariant_set.n_components(d_, e_, c, bias=True) == P[0]
        without = b0_nobias == invariant_set.n_components(d_, e_, c)
        out["ph_ok"] &= ph
        out["graph_ok"] &= with_
        out["nobias_ok"] &= without
        out["ph_equal"] += ph
        out["graph_with"] += b0_graph == P[0]
        out["graph_without"] += without
        out["worst_noise"], out["worst_signal"] = max(out["worst_noise"], noise), min(out["worst_signal"], signal)
        out["rows"].append((d_, e_, sg, P, counts, b0_graph, b0_nobias))
    return out


def topology_table(rows) -> str:
    """The rows of :func:`sampled_topology` as a table: Prop. 6, gudhi's counts, the graph's b0 against Cor. 4, and
    without the bias against Cor. 1."""
    lines = [f"{'d':>2}{'e':>3}  {'c':<6}{'Prop. 6':<14}{'gudhi (Rips)':<14}{'graph b0':>9}{'Cor. 4':>8}"
             f"{'no bias: graph b0':>19}{'Cor. 1':>8}"]
    for d_, e_, sg, P, counts, b0_graph, b0_nobias in rows:
        c = [1.0 if s == "+" else -1.0 for s in sg]
        lines.append(f"{d_:>2}{e_:>3}  {sg:<6}{str(P):<14}{str(counts):<14}{b0_graph:>9}"
                     f"{invariant_set.n_components(d_, e_, c, bias=True):>8}{b0_nobias:>19}"
                     f"{invariant_set.n_components(d_, e_, c):>8}")
    return "\n".join(lines)
