"""The checks of the chapter ``topo_homology`` (Nurisso et al., NeurIPS 2024: Thm 1, Cor. 1-2, Lemmas 2-3, Prop. 3),
each by a route that does not use the formula it checks.

* :func:`cor1_grid` -- Cor. 1 as the constant term of Thm 1's Poincare polynomial, and P(-1) as the Euler
  characteristic of the product of spheres, over d, e in 1..4 and every sign pattern of 3 neurons;
* :func:`lemma2_paths` -- segments through the apex of the cone Q(0) stay on it (Lemma 2);
* :func:`sampled_betti` and :func:`betti_table` -- persistent homology (gudhi Rips) and neighbour graphs of samples of
  H(c) by Prop. 2's parametrization and by Newton projection, with the threshold set from the landmark spacing;
* :func:`torus_sample` -- a stratified sample of the torus T_c (the a = 0 slice of H(c), two c_k > 0, d = 2, e = 1);
* :func:`autograd_gradient` -- Independent reference: torch autograd of the MSE against :func:`shallow_relu.loss_grad`;
* :func:`prop3_runs` and :func:`prop3_summary` -- gradient descent with n_patho pathological neurons (Prop. 3);
* :func:`lemma3_normal_form` -- a sequence of rescalings and permutations is T_r P_tau (Lemma 3), as bookkeeping;
* :func:`effective_table` -- the Thm 2 enumeration's table; :func:`explorer_counts` -- the explorer's frames checked.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..book.inference import wilson_interval
from ..numerics import checks
from . import components, homology, invariant_set, shallow_relu

__all__ = ["cor1_grid", "lemma2_paths", "sampled_betti", "betti_table", "torus_sample", "autograd_gradient",
           "prop3_runs", "prop3_summary", "lemma3_normal_form", "effective_table", "explorer_counts"]


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return rng


def cor1_grid(max_dim=4, neurons=3) -> tuple[int, int]:
    """(cases that agree, cases): for d, e in 1..``max_dim`` and every pattern of ``neurons`` signs in (-1, 0, 1),
    b_0 of :func:`invariant_set.poincare_polynomial` equals :func:`invariant_set.n_components` (Cor. 1), and P(-1)
    equals the Euler characteristic (1 + (-1)^(d-1))^(l_+) (1 + (-1)^(e-1))^(l_-) of the product of spheres."""
    max_dim, neurons = checks.positive_int("max_dim", max_dim), checks.positive_int("neurons", neurons)
    ok = 0
    for d_, e_ in itertools.product(range(1, max_dim + 1), repeat=2):
        for signs in itertools.product((-1.0, 0.0, 1.0), repeat=neurons):
            P = invariant_set.poincare_polynomial(d_, e_, list(signs))
            chi = sum((-1) ** i * b for i, b in enumerate(P))
            lp, lm = signs.count(1.0), signs.count(-1.0)
            ok += (P[0] == invariant_set.n_components(d_, e_, list(signs))
                   and chi == (1 + (-1) ** (d_ - 1)) ** lp * (1 + (-1) ** (e_ - 1)) ** lm)
    return ok, max_dim**2 * 3**neurons


def lemma2_paths(rng, dims=((1, 1), (2, 1), (3, 2), (5, 4)), pairs=20) -> float:
    """Largest |‖w‖² - ‖a‖²| along the path from one random point of the cone Q(0) (‖w‖ = ‖a‖ = r, r in [0.1, 3]) to
    the origin and out to another, 101 points per segment, ``pairs`` pairs per (d, e) in ``dims`` (Lemma 2)."""
    rng, pairs = _rng(rng), checks.positive_int("pairs", pairs)
    err, ts = 0.0, np.linspace(0.0, 1.0, 101)[:, None]
    for d_, e_ in dims:
        for _ in range(pairs):
            ends = []
            for _ in range(2):
                w, a = rng.normal(size=d_), rng.normal(size=e_)
                r = rng.uniform(0.1, 3.0)
                ends.append(np.concatenate([r * w / np.linalg.norm(w), r * a / np.linalg.norm(a)]))
            path = np.vstack([(1 - ts) * ends[0], ts * ends[1]])
            err = max(err, np.abs(np.sum(path[:, :d_] ** 2, axis=1) - np.sum(path[:, d_:] ** 2, axis=1)).max())
    return float(err)


def sampled_betti(cases, rng, *, c_abs, trunc, cone_radius, n_landmarks, raw_factor, persist_min, noise_factor,
                  edge_factor) -> tuple[list, float]:
    """(rows, largest residual of the Newton projection): for each case (d, e, signs in +, -, 0) and each sampler
    ("param": :func:`homology.sample_by_parametrization`, "newton": :func:`homology.sample_by_projection`), raw_factor
    * n_landmarks points and a fresh half as many, farthest-point landmarks (gudhi), their spacing eps (covering
    radius on the fresh sample), the threshold theta = max(persist_min * the smallest feature radius, noise_factor *
    eps), Rips bars longer than theta up to edge_factor * theta (dimensions 0..2 for one neuron, 0..1 for two, 0 for
    three) and the components of the radius-theta graph. Each row: d, e, signs, sampler, P (Thm 1's Betti numbers),
    want, counts, b0_graph, noise and signal (in units of theta), spacing and theta (in units of sqrt(c_abs))."""
    from gudhi.subsampling import choose_n_farthest_points
    from scipy.spatial import cKDTree

    rng, c_abs = _rng(rng), checks.positive_real("c_abs", c_abs)
    n_landmarks = checks.positive_int("n_landmarks", n_landmarks)
    raw_factor = checks.positive_int("raw_factor", raw_factor)
    rho = float(np.sqrt(c_abs))
    shape = dict(trunc=trunc, cone_radius=cone_radius, rho=rho)
    n_raw, rows, proj_res = raw_factor * n_landmarks, [], 0.0

    def sample(name, d_, e_, c, n):
        if name == "param":
            return homology.sample_by_parametrization(d_, e_, c, n, rng, **shape), 0.0
        return homology.sample_by_projection(d_, e_, c, n, rng, **shape)

    for d_, e_, sg in cases:
        c = [c_abs if s == "+" else -c_abs if s == "-" else 0.0 for s in sg]
        P = list(invariant_set.betti_numbers(d_, e_, c))
        top = (2 if len(c) == 1 else 1) if len(c) < 3 else 0
        for name in ("param", "newton"):
            (raw, r1), (fresh, r2) = sample(name, d_, e_, c, n_raw), sample(name, d_, e_, c, n_raw // 2)
            proj_res = max(proj_res, r1, r2)
            X = np.asarray(choose_n_farthest_points(points=raw, nb_points=n_landmarks, starting_point=0))
            spacing = float(cKDTree(X).query(fresh)[0].max())
            theta = max(persist_min * rho * (cone_radius if 0.0 in c else 1.0), noise_factor * spacing)
            counts, noise, signal = homology.rips_betti(X, top, theta, edge_factor * theta)
            rows.append(dict(d=d_, e=e_, signs=sg, sampler=name, P=P, want=(P + [0] * 3)[: top + 1], counts=counts,
                             b0_graph=homology.graph_components(raw, theta), noise=noise / theta,
                             signal=signal / theta, spacing=spacing / rho, theta=theta / rho))
    return rows, float(proj_res)


def betti_table(rows) -> str:
    """The rows of :func:`sampled_betti` as the printed table (spacing and theta rounded up to 0.05)."""
    lines = [f"{'d':>2}{'e':>3}  {'signs':<6}{'Thm 1: b0, b1, ...':<20}{'sampler':<12}{'gudhi (Rips)':<14}"
             f"{'graph b0':>9}{'spacing/rho':>13}{'theta/rho':>11}"]
    for r in rows:
        spacing, theta = f"< {np.ceil(r['spacing'] * 20) / 20:.2f}", f"{np.ceil(r['theta'] * 20) / 20:.2f}"
        lines.append(f"{r['d']:>2}{r['e']:>3}  {r['signs']:<6}{str(r['P']):<20}{r['sampler']:<12}"
                     f"{str(r['counts']):<14}{r['b0_graph']:>9}{spacing:>13}{theta:>11}")
    return "\n".join(lines)


def torus_sample(torus_c, n_points, rng):
    """(points (n1 n2, 4), n1, n2): the torus of radii sqrt(c_1), sqrt(c_2) in R^4, one uniform point in each cell of
    an n1 x n2 grid of the two angles, n1 : n2 as the radii and n1 n2 about ``n_points`` (a stratified sample)."""
    rng, n_points = _rng(rng), checks.positive_int("n_points", n_points)
    r1, r2 = (checks.positive_real(f"torus_c[{i}]", c) ** 0.5 for i, c in enumerate(torus_c))
    n1 = max(3, int(round(np.sqrt(n_points * r1 / r2))))
    n2 = max(3, int(round(n_points / n1)))
    i_, j_ = np.meshgrid(np.arange(n1), np.arange(n2), indexing="ij")
    ang1 = 2 * np.pi * (i_.ravel() + rng.random(i_.size)) / n1
    ang2 = 2 * np.pi * (j_.ravel() + rng.random(j_.size)) / n2
    return np.column_stack([r1 * np.cos(ang1), r1 * np.sin(ang1), r2 * np.cos(ang2), r2 * np.sin(ang2)]), n1, n2


def autograd_gradient(rng, width, n=50, d=3) -> float:
    """Independent reference: the largest |:func:`shallow_relu.loss_grad` - torch autograd| of the MSE
    mean (a . relu(W1 x) - y)^2 / 2 at Gaussian (X (n, d), W1 (width, d), a (width,)) drawn from ``rng`` in this
    order, y the Prop. 3 teacher."""
    import torch

    rng, width = _rng(rng), checks.positive_int("width", width)
    X, W1, a = rng.normal(size=(n, d)), rng.normal(size=(width, d)), rng.normal(size=width)
    y = components.prop3_teacher(X)
    t1, ta = torch.tensor(W1, requires_grad=True), torch.tensor(a, requires_grad=True)
    tl = 0.5 * ((torch.relu(torch.tensor(X) @ t1.T) @ ta - torch.tensor(y)) ** 2).mean()
    tg1, tga = torch.autograd.grad(tl, (t1, ta))
    _, g1, ga = shallow_relu.loss_grad(W1, a, X, y)
    return float(max(np.abs(g1 - tg1.numpy()).max(), np.abs(ga - tga.numpy()).max()))


def prop3_runs(dims, n_seeds, seed, *, width, n_patho, c_train, n_data, lr, steps) -> dict:
    """(d, s) -> run, for d in ``dims`` and s < ``n_seeds``: from default_rng([seed, d, s]), n_data Gaussian inputs,
    the Prop. 3 teacher, U(-1, 1) weights with positive output weights rescaled onto c (the first ``n_patho`` neurons
    at -c_train, the others at +c_train), then ``steps`` gradient-descent steps of size ``lr``. Each run: a (the
    output weights after every step), loss, a_min and drift (largest |c_k(t) - c_k(0)|)."""
    n_seeds, width = checks.positive_int("n_seeds", n_seeds), checks.positive_int("width", width)
    c0 = np.where(np.arange(width) < n_patho, -c_train, c_train)
    runs = {}
    for d_ in dims:
        for s in range(n_seeds):
            r_ = np.random.default_rng([seed, d_, s])
            X = r_.normal(size=(n_data, d_))
            y = components.prop3_teacher(X)
            W1 = r_.uniform(-1, 1, size=(width, d_))
            W1, a = invariant_set.rescale_to(W1, np.abs(r_.uniform(-1, 1, size=width)), c0)
            res = shallow_relu.gradient_descent(W1, a, X, y, lr=lr, steps=steps, save_every=1)
            runs[d_, s] = dict(a=res.W2_path, loss=res.losses, a_min=res.W2_min, drift=float(res.balance_drift.max()))
    return runs


def prop3_summary(runs, n_patho) -> dict:
    """Over :func:`prop3_runs`: kept and flipped ((d, s) -> every pathological a_k kept its sign at every step; some
    non-pathological a_k turned negative), n_kept, n_flip, n_runs, drift (largest), min_abs (smallest |a_k| of a
    pathological neuron), and the 95 % Wilson interval (lo, hi) of n_kept / n_runs."""
    if not runs:
        raise ValueError("runs must be a non-empty dict of prop3_runs")
    n_patho = checks.positive_int("n_patho", n_patho)
    kept = {k: bool(np.all(v["a_min"][:n_patho] > 0)) for k, v in runs.items()}
    flipped = {k: bool(np.any(v["a"][:, n_patho:] < 0)) for k, v in runs.items()}
    out = dict(kept=kept, flipped=flipped, n_kept=sum(kept.values()), n_flip=sum(flipped.values()), n_runs=len(runs),
               drift=max(v["drift"] for v in runs.values()),
               min_abs=min(float(np.abs(v["a"][:, :n_patho]).min()) for v in runs.values()))
    out["lo"], out["hi"] = wilson_interval(out["n_kept"], out["n_runs"])
    return out


def lemma3_normal_form(rng, trials=30, actions=12) -> tuple[float, float]:
    """(largest relative difference between the action-by-action composition of ``actions`` random rescalings T_s and
    permutations P_sigma and its normal form T_r P_tau, largest relative change of the network function on 50 inputs),
    over ``trials`` networks with l in 2..6 neurons, d in 1..3, two outputs (Lemma 3's bookkeeping)."""
    rng, trials, actions = _rng(rng), checks.positive_int("trials", trials), checks.positive_int("actions", actions)
    err, fun = 0.0, 0.0
    for _ in range(trials):
        l_, d_ = int(rng.integers(2, 7)), int(rng.integers(1, 4))
        W1, W2 = rng.normal(size=(l_, d_)), rng.normal(size=(2, l_))
        V1, V2 = W1.copy(), W2.copy()
        r, tau = np.ones(l_), np.arange(l_)  # slot k holds neuron tau[k], rescaled by r[k]
        for _ in range(actions):
            if rng.random() < 0.5:  # a rescaling T_s
                s = np.exp(rng.normal(size=l_))
                V1, V2 = s[:, None] * V1, V2 / s[None, :]
                r = s * r
            else:  # a permutation: T_s P_sigma = P_sigma T_(s o sigma), applied to the normal form
                inv = rng.permutation(l_)
                V1, V2 = V1[inv], V2[:, inv]
                r, tau = r[inv], tau[inv]
        N1, N2 = r[:, None] * W1[tau], W2[:, tau] / r[None, :]
        err = max(err, np.abs(N1 - V1).max() / np.abs(V1).max(), np.abs(N2 - V2).max() / np.abs(V2).max())
        Xt = rng.normal(size=(50, d_))
        f0, f1 = np.maximum(Xt @ W1.T, 0) @ W2.T, np.maximum(Xt @ V1.T, 0) @ V2.T
        fun = max(fun, np.abs(f1 - f0).max() / np.abs(f0).max())
    return float(err), float(fun)


def effective_table(rows) -> str:
    """The rows of :func:`components.enumerate_effective` (e = 1, d = 2) as a table: sign vectors, Cor. 2's 2^(l_-),
    the enumerated classes, Cor. 3's l_- + 1."""
    lines = [f"{'l':>2}{'l-':>4}{'sign vectors':>14}{'Cor. 2: 2^l-':>14}{'enumerated classes':>20}"
             f"{'Cor. 3: l- + 1':>16}"]
    for r in rows:
        lines.append(f"{r['l']:>2}{r['lm']:>4}{r['n_signs']:>14}{invariant_set.n_components(2, 1, r['c']):>14}"
                     f"{r['classes']:>20}{invariant_set.n_effective_components(2, 1, r['c']):>16}")
    return "\n".join(lines)


def explorer_counts(points, results) -> dict:
    """The explorer's frames checked: n_cor1 (frames whose component count is Cor. 1 derived by counting the
    disconnected factors: S^(d-1) has two points iff d = 1, S^(e-1) iff e = 1, and the components of a product
    multiply), e1 (at e = 1 < d, pairs (components = 2^(l_-), effective = l_- + 1)), n_flows and n_sheet (3-D frames,
    and those whose pathological output signs were kept), drift (largest balance drift of the 3-D frames). ``points``
    are the frames' (d, e, l_plus, l_minus) dicts, ``results`` what :func:`drawings.draw_invariant_set` returned."""
    points, results = list(points), list(results)
    if len(points) != len(results) or not points:
        raise ValueError(f"points and results must be non-empty and of one length, got {len(points)}, {len(results)}")
    flows = [out for out in results if "drift" in out]
    return dict(
        n_cor1=sum(out["components"] == (2 if pt["d"] == 1 else 1) ** pt["l_plus"] * (2 if pt["e"] == 1 else 1)
                   ** pt["l_minus"] for pt, out in zip(points, results)),
        e1=[(out["components"] == 2 ** pt["l_minus"], out["effective"] == pt["l_minus"] + 1)
            for pt, out in zip(points, results) if pt["e"] == 1 < pt["d"]],
        n_flows=len(flows), n_sheet=sum(all(k for k, c in zip(out["sign_kept"], out["c"]) if c < 0) for out in flows),
        drift=max((out["drift"] for out in flows), default=0.0))
