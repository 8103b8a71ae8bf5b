"""Part III's explorers, headless (Nurisso et al., "Topological obstruction to the training of shallow ReLU neural
networks", NeurIPS 2024).

* :func:`draw_invariant_set` -- for ``l_plus`` neurons with balance c_k = +c and ``l_minus`` pathological neurons
  with c_k = -c (Eq. (12)), the Betti numbers of H(c) (Thm 1, the Poincare polynomial), its connected components
  (Cor. 1, Cor. 2) and effective components (Thm 2, Cor. 3), drawn as bars; at d = 2, e = 1 also the quadrics
  Q(c) = {||w||^2 - a^2 = c} in 3-D (Prop. 2, Fig. 2a: one sheet for c > 0, two for c < 0) with each neuron's
  gradient-descent trajectory (step 0.01, close to the flow) in its own coordinates (w_k, a_k), which stays on its
  quadric (Lemma 1); a pathological neuron stays on its sheet, so its output weight keeps its sign (Prop. 3).
* :func:`draw_obstruction` -- App. F's probability of at least one pathological neuron at initialization,
  against the width l at input dimension d, for Kaiming and Xavier normal initializations (Fig. 5).

Each function draws one static figure and returns what it displays, so the tests and the rendered book's static
explorer (:func:`markovlib.book.explorers.static_explorer`) can read it.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..book import plotting
from . import invariant_set as T
from . import shallow_relu as S

C_ABS = 1.0  # |c_k| of every neuron drawn (the pictures scale with sqrt(|c|))
FLOW_LR = 0.01  # gradient-descent step of the trajectories (close to the flow)
FLOW_STEPS = 1500  # gradient-descent steps of the trajectories
N_DATA = 40  # Gaussian training inputs of the trajectories
MAX_NEURONS = 6  # l_plus + l_minus at most this (the bars stay readable)
L_CURVE = np.unique(np.round(np.logspace(0, 4, 120)).astype(int))  # widths of the App. F curves


def _count(name, value, lo, hi) -> int:
    """An integer in [lo, hi]; an integral float (a live slider's value) is accepted."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    if not float(value).is_integer() or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def balances(l_plus, l_minus, c_abs=C_ABS) -> np.ndarray:
    """c = (+c_abs, ..., +c_abs, -c_abs, ..., -c_abs): ``l_plus`` positive balances, then ``l_minus`` negative."""
    lp = _count("l_plus", l_plus, 0, MAX_NEURONS)
    lm = _count("l_minus", l_minus, 0, MAX_NEURONS)
    if isinstance(c_abs, bool) or not isinstance(c_abs, numbers.Real) or not (np.isfinite(c_abs) and c_abs > 0):
        raise ValueError(f"c_abs must be a finite real > 0, got {c_abs!r}")
    return np.array([float(c_abs)] * lp + [-float(c_abs)] * lm)


def poly_text(coeffs) -> str:
    """A Poincare polynomial's coefficients (lowest degree first) as text, e.g. [2, 2] -> '2 + 2x'."""
    terms = []
    for k, b in enumerate(coeffs):
        if b == 0:
            continue
        power = "" if k == 0 else ("x" if k == 1 else f"x^{k}")
        terms.append(str(b) if k == 0 else (power if b == 1 else f"{b}{power}"))
    return " + ".join(terms) if terms else "0"


def flow_on_quadrics(c, *, seed=0, steps=FLOW_STEPS, lr=FLOW_LR):
    """Gradient descent (MSE, ``shallow_relu.gradient_descent``) of a network with d = 2, e = 1 and balances ``c``
    (one per neuron, each nonzero), started on H(c): neuron k gets a random direction and (w_k, a_k) with
    ||w_k||^2 - a_k^2 = c_k. The teacher relu(x_1) - relu(x_2) needs a negative output weight. Returns
    (W1_path (T, l, 2), a_path (T, l), balance drift (l,))."""
    c = np.asarray(c, dtype=float)
    if c.ndim != 1 or c.size < 1 or np.any(c == 0) or not np.all(np.isfinite(c)):
        raise ValueError(f"c must be a non-empty vector of finite nonzero balances, got {c!r}")
    rng = np.random.default_rng([seed, c.size])
    X = rng.standard_normal((N_DATA, 2))
    y = np.maximum(X[:, 0], 0.0) - np.maximum(X[:, 1], 0.0)
    angle = rng.uniform(0, 2 * np.pi, c.size)
    size = rng.uniform(0.2, 0.8, c.size)  # |a| for c > 0, ||w|| for c < 0
    sign = rng.choice([-1.0, 1.0], c.size)
    outer = np.sqrt(np.abs(c) + size**2)  # ||w|| for c > 0, |a| for c < 0
    r_w = np.where(c > 0, outer, size)
    a = sign * np.where(c > 0, size, outer)
    W1 = r_w[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    run = S.gradient_descent(W1, a, X, y, lr=lr, steps=steps, save_every=25)
    return run.W1_path, run.W2_path, run.balance_drift


def _quadric(ax, c, colour, reach=2.0):
    """The wireframe of Q(c) = {w_1^2 + w_2^2 - a^2 = c} (Prop. 2): one sheet for c > 0, two for c < 0."""
    phi = np.linspace(0, 2 * np.pi, 25)
    if c > 0:
        t = np.linspace(-reach, reach, 9)
        P, A = np.meshgrid(phi, t)
        R = np.sqrt(c + A**2)
        ax.plot_wireframe(R * np.cos(P), R * np.sin(P), A, color=colour, lw=0.4, alpha=0.45)
        return
    r = np.linspace(0, reach, 7)
    P, R = np.meshgrid(phi, r)
    for s in (1.0, -1.0):
        ax.plot_wireframe(R * np.cos(P), R * np.sin(P), s * np.sqrt(R**2 - c), color=colour, lw=0.4, alpha=0.45)


def _betti_panel(ax, betti, d, e, lp, lm, n_comp, n_eff):
    ax.bar(range(len(betti)), betti, color=plotting.MAXIMA, width=0.6)
    for k, b in enumerate(betti):
        ax.text(k, b, str(b), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(betti)))
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("degree k")
    ax.set_ylabel("Betti number $b_k$")
    ax.set_ylim(0, 1.25 * max(betti))
    ax.set_title(f"d = {d}, e = {e}, $l_+$ = {lp}, $l_-$ = {lm}\nP(x) = {poly_text(betti)}\n"
                 f"components {n_comp}, effective {n_eff}", fontsize=8)


def draw_invariant_set(d, l_plus, l_minus, e=1, fig=None, *, seed=0) -> dict:
    """Draw the topology of H(c) for ``l_plus`` neurons with c_k = +1 and ``l_minus`` with c_k = -1 (pathological),
    input dimension ``d`` in [1, 6], output dimension ``e`` in [1, 6], l_plus + l_minus in [1, 6] (Thm 1, Cor. 1,
    Thm 2). Left: the Betti numbers. Right: at d = 2, e = 1 the quadrics in 3-D with the trajectories
    (:func:`flow_on_quadrics`), otherwise each neuron's quadric as a product of a sphere and a Euclidean space
    (Prop. 2), in words.

    Returns {"betti", "poincare" (text), "components", "effective", "c", and at d = 2, e = 1 "drift" (largest
    |c_k(t) - c_k(0)| along the trajectories) and "sign_kept" (per neuron: the output weight never changed sign)}.
    """
    import matplotlib.pyplot as plt

    d = _count("d", d, 1, 6)
    e = _count("e", e, 1, 6)
    c = balances(l_plus, l_minus)
    lp, lm = int(np.sum(c > 0)), int(np.sum(c < 0))
    if lp + lm < 1:
        raise ValueError(f"l_plus + l_minus must be at least 1 (one neuron), got {lp} + {lm}")
    if lp + lm > MAX_NEURONS:
        raise ValueError(f"l_plus + l_minus must be at most {MAX_NEURONS}, got {lp} + {lm}")
    if fig is None:
        fig = plt.figure(figsize=(6.0, 4.1))
    betti = T.betti_numbers(d, e, c)
    n_comp, n_eff = T.n_components(d, e, c), T.n_effective_components(d, e, c)
    out = {"betti": betti, "poincare": poly_text(betti), "components": n_comp, "effective": n_eff,
           "c": c.tolist()}
    grid = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.6])
    _betti_panel(fig.add_subplot(grid[0]), betti, d, e, lp, lm, n_comp, n_eff)
    if d == 2 and e == 1:
        ax = fig.add_subplot(grid[1], projection="3d")
        W1p, ap, drift = flow_on_quadrics(c, seed=seed)
        for sign, colour in ((1.0, plotting.GLOBAL), (-1.0, plotting.LOCAL)):
            if np.any(np.sign(c) == sign):
                _quadric(ax, sign * C_ABS, colour)
        kept = []
        for k in range(c.size):
            colour = plotting.LOCAL if c[k] < 0 else plotting.GLOBAL
            ax.plot(W1p[:, k, 0], W1p[:, k, 1], ap[:, k], color="k", lw=1.4)
            ax.scatter(*W1p[0, k], ap[0, k], color=colour, s=12, depthshade=False)
            ax.scatter(*W1p[-1, k], ap[-1, k], color="k", marker="x", s=14, depthshade=False)
            kept.append(bool(np.all(np.sign(ap[:, k]) == np.sign(ap[0, k]))))
        ax.set(xlim=(-2.3, 2.3), ylim=(-2.3, 2.3), zlim=(-2.3, 2.3))
        ax.set_xlabel("$w_1$", labelpad=-8)
        ax.set_ylabel("$w_2$", labelpad=-8)
        ax.set_zlabel("$a$", labelpad=-8)
        ax.tick_params(labelsize=6, pad=-2)
        ax.set_title("quadrics (green c = +1, red c = -1)\nand gradient-descent paths (o start, x end)", fontsize=8)
        out.update(drift=float(np.max(drift)), sign_kept=kept)
    else:
        ax = fig.add_subplot(grid[1])
        ax.axis("off")
        lines = [r"each neuron's quadric $Q(c_k)$ (Prop. 2):"]
        if lp:
            lines.append(f"$c_k > 0$ ({lp}x): $S^{{{d - 1}}} \\times \\mathbb{{R}}^{{{e}}}$")
        if lm:
            lines.append(f"$c_k < 0$ ({lm}x): $S^{{{e - 1}}} \\times \\mathbb{{R}}^{{{d}}}$")
        if 1 in (d, e):
            lines.append(r"$S^0$ = two points: a disconnected factor")
        lines.append("3-D view at d = 2, e = 1")
        ax.text(0.02, 0.5, "\n".join(lines), va="center", fontsize=8, transform=ax.transAxes)
    return out


def draw_obstruction(d, l, ax=None) -> dict:
    """Draw App. F's probability P(d, l) of at least one pathological neuron at initialization (e = 1) against the
    width l in [1, 10^4], at input dimension ``d`` in [1, 100], for Kaiming and Xavier normal initializations
    (``invariant_set.obstruction_probability``, the paper's Fig. 5), with the width ``l`` in [1, 10^4] marked.
    Returns {"kaiming": P at (d, l), "xavier": P at (d, l)}."""
    import matplotlib.pyplot as plt

    d = _count("d", d, 1, 100)
    l = _count("l", l, 1, 10_000)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.1))
    out = {}
    for scheme, colour in (("kaiming", plotting.MAXIMA), ("xavier", plotting.SADDLE)):
        ax.semilogx(L_CURVE, T.obstruction_probability(d, L_CURVE, scheme), color=colour, lw=1.8,
                    label=scheme.capitalize())
        out[scheme] = T.obstruction_probability(d, l, scheme)
        ax.plot([l], [out[scheme]], "o", color=colour, mec="k", ms=6, zorder=5)
    ax.axvline(l, color="k", lw=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("hidden neurons l")
    ax.set_ylabel("P[at least one pathological neuron]")
    ax.set_title(f"App. F at d = {d}, l = {l}: Kaiming {out['kaiming']:.3g}, Xavier {out['xavier']:.3g}",
                 fontsize=9)
    ax.legend(loc="center right", fontsize=8)
    return out
