"""The checks of the chapter loss_landscape on the reduced loss, its gradients and its critical points (Lemmas 2, 3,
5-7; Thms 1, 6; Remark 1). Each function runs one step of the chapter against an independent route (torch autograd
of ``reference``, root searches confirmed by autograd, the full transformer) and returns its measurements with the
table it prints (``.text``) as a ``types.SimpleNamespace``; the chapter records the claims.

* :func:`reduced_loss_facts`: g(c*) = entropy rate, g(0) = H(pi), g'(0) = pq(p+q-1)/(p+q)^2, g'' > 0 (eq-c-star).
* :func:`autograd_gradients`: Lemmas 7 and 3 against torch autograd at random points.
* :func:`critical_roots`: Thm 1, every root of grad L found from random starts lies on Gamma* or the w-axis (in
  (e, w, b) with ``bias=True``: Thm 6, on the lifted sets with b = b*).
* :func:`gamma_side`: Thm 1 (i) on the roots off the axis; the other side never reaches the entropy rate.
* :func:`full_model_axis`: the w-axis is critical for the full single-layer transformer (every parameter).
* :func:`loss_ordering`: Remark 1 on a grid of chains.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch

from ..book.formatting import bound, fixed, yes_no
from ..numerics import checks
from ..numerics.roots import multistart_roots
from . import canonical, reference
from .chain import MarkovChain
from .checks import floor_text
from .energy_checks import chains

__all__ = ["reduced_loss_facts", "autograd_gradients", "critical_roots", "gamma_side", "full_model_axis",
           "loss_ordering"]

EPS = float(np.finfo(float).eps)


def reduced_loss_facts(pq):
    """eq-c-star and eq-g-prime-zero per chain: the torch first-order condition F_beta = 0 at ``reference``'s optimal
    beta, g(c*) and g(0) of the torch loss against ``MarkovChain``'s entropies, markovlib's g'(c*) = 0, g'(0) and
    beta*(0) against the closed forms; g'' > 0 on 601 points of [-30, 30]; c* > 0 iff p + q < 1. ``worst`` is the
    largest error (``ok``: below 1e-12 everywhere, g'' > 0, the sign of c* right)."""
    pq = chains("pq", pq)
    rows, ok, worst = [], True, 0.0
    for p, q in pq:
        chain, cs, pi1 = MarkovChain(p, q), canonical.c_star(p, q), p / (p + q)
        c = torch.linspace(-8, 8, 33, dtype=torch.float64)
        beta = reference.optimal_beta(c, p, q).requires_grad_(True)
        (F_beta,) = torch.autograd.grad(reference.logistic_loss(c, beta, p, q).sum(), beta)
        c2 = torch.tensor([cs, 0.0], dtype=torch.float64)
        g_star, g_zero = reference.logistic_loss(c2, reference.optimal_beta(c2, p, q), p, q).tolist()
        gp0 = p * q * (p + q - 1) / (p + q) ** 2
        errors = [float(F_beta.abs().max()), abs(g_star - chain.entropy_rate), abs(g_zero - chain.marginal_entropy),
                  abs(float(canonical.reduced_loss_grad(cs, p, q))),
                  abs(float(canonical.reduced_loss_grad(0.0, p, q)) - gp0),
                  abs(float(canonical.sigmoid(canonical.optimal_beta(0.0, p, q))) - pi1),
                  abs(float(canonical.optimal_beta(0.0, p, q)) - math.log(p / q))]
        g2 = float(canonical.reduced_loss_hess(np.linspace(-30, 30, 601), p, q).min())
        ok &= max(errors) < 1e-12 and g2 > 0 and (cs > 0) == (p + q < 1)
        worst = max(worst, max(errors))
        rows.append((p, q, cs, g_star, chain.entropy_rate, g_zero, chain.marginal_entropy, gp0, max(errors), g2))
    text = [f"{'p':>5}{'q':>5}{'c*':>9}{'g(c*)':>9}{'H rate':>9}{'g(0)':>9}{'H(pi)':>9}{'g1(0)':>9}{'max err':>10}"
            f"{'min g2':>9}"]
    text += [f"{p:>5.2f}{q:>5.2f}" + "".join(f"{fixed(x, 4):>9}" for x in r[2:8]) + f"{bound(r[8], 1e-13):>10}"
             f"{r[9]:>9.1e}" for r in rows for p, q in [r[:2]]]
    return SimpleNamespace(ok=bool(ok), worst=worst, g2_min=min(r[9] for r in rows),
                           n_sign=sum((r[2] > 0) == (r[0] + r[1] < 1) for r in rows), n=len(rows), text="\n".join(text))


def autograd_gradients(pq, n_random, box, rng):
    """Lemmas 7 and 3: ``canonical.grad`` against torch autograd of ``reference.reduced_loss`` and
    ``reference.loss_with_bias`` at ``n_random`` uniform points of [-box, box]^2 per chain (b uniform in [-2, 2]).
    ``max_rel`` = {"reduced": ..., "bias": ...}, the largest error relative to the largest gradient; ``loss_err``
    the largest absolute difference of the losses themselves; ``points[(p, q)]`` = (theta, b) for later checks."""
    pq, n_random, box = chains("pq", pq), checks.positive_int("n_random", n_random), checks.positive_real("box", box)
    max_rel, points, loss_err = {"reduced": 0.0, "bias": 0.0}, {}, 0.0
    for p, q in pq:
        th, b = rng.uniform(-box, box, (n_random, 2)), rng.uniform(-2, 2, n_random)
        points[(p, q)] = (th, b)
        g_lib = np.stack(canonical.grad(th[:, 0], th[:, 1], p, q), -1)
        max_rel["reduced"] = max(max_rel["reduced"], np.abs(reference.autograd_grad(th, p, q) - g_lib).max()
                                 / np.abs(g_lib).max())
        g_lib3 = np.stack(canonical.grad(th[:, 0], th[:, 1], p, q, b=b), -1)
        max_rel["bias"] = max(max_rel["bias"], np.abs(reference.autograd_grad(np.column_stack([th, b]), p, q)
                                                      - g_lib3).max() / np.abs(g_lib3).max())
        L_lib = canonical.loss(th[:, 0], th[:, 1], p, q)
        loss_err = max(loss_err, float(np.abs(reference.reduced_loss(torch.tensor(th), p, q).numpy() - L_lib).max()))
    what = "max |grad_autograd - grad_markovlib| / max|grad| ="
    text = (f"{len(pq)} chains x {n_random} random points\n"
            f"Lemma 7 (no bias):  {what} {bound(max_rel['reduced'], 1e-11)}\n"
            f"Lemma 3 (bias):     {what} {bound(max_rel['bias'], 1e-11)}")
    return SimpleNamespace(max_rel=max_rel, points=points, loss_err=loss_err, text=text)


def critical_roots(pq, n_starts, rng, max_no_root, min_gamma_roots=0, bias=False):
    """Thm 1 (Thm 6 with ``bias``): ``multistart_roots`` on grad L from ``n_starts`` uniform starts in [-2, 2]^2 (b in
    [-3, 3]) per chain; each root is confirmed by torch autograd (``torch_grad``, the largest) and sorted: on the axis
    (|e| < 1e-4), on Gamma* (|c - c*| < 1e-8), or elsewhere (``other``, the theorem says none). With ``bias``,
    ``b_err`` = max |b - b*(e, w)|. ``ok``: none elsewhere, at most max_no_root of the starts stalled, at least
    min_gamma_roots on Gamma* (without bias), |b - b*| < 1e-6, torch |grad| < 1e-9. ``gamma_roots[(p, q)]``: the roots
    on Gamma*."""
    pq, n_starts = chains("pq", pq), checks.positive_int("n_starts", n_starts)
    if not 0 <= max_no_root <= 1:
        raise ValueError(f"max_no_root must be a fraction in [0, 1], got {max_no_root!r}")
    head = ("off the lifted sets", "max|b-b*|") if bias else ("off the critical set", "on Gamma*")
    rows = [f"{'p':>5}{'q':>5}{'starts':>8}{head[0]:>{len(head[0]) + 2}}{'stalled':>10}{head[1]:>11}"
            f"{'torch |grad|':>14}"]
    ok, gamma_roots, worst_t, worst_b, other_total, worst_stall, fewest = True, {}, 0.0, 0.0, 0, 0, n_starts
    for p, q in pq:
        k = 3 if bias else 2
        starts = rng.uniform(-2, 2, (n_starts, 2))
        if bias:
            starts = np.column_stack([starts, rng.uniform(-3, 3, n_starts)])
        b_of = (lambda x: x[2]) if bias else (lambda x: None)
        roots, found = multistart_roots(lambda x, p=p, q=q: np.array(canonical.grad(x[0], x[1], p, q, b=b_of(x))),
                                        starts, jac=lambda x, p=p, q=q: canonical.hessian(x[0], x[1], p, q, b=b_of(x)),
                                        tol=1e-10)
        roots = roots[found].reshape(-1, k)
        g_t = float(np.abs(reference.autograd_grad(roots, p, q)).max()) if len(roots) else 0.0
        on_axis = np.abs(roots[:, 0]) < 1e-4
        on_gamma = ~on_axis & (np.abs(canonical.coefficient(roots[:, 0], roots[:, 1]) - canonical.c_star(p, q)) < 1e-8)
        other, stalled, n_gamma = int(np.sum(~on_axis & ~on_gamma)), n_starts - int(found.sum()), int(on_gamma.sum())
        b_err = (float(np.abs(roots[:, 2] - canonical.optimal_bias(roots[:, 0], roots[:, 1], p, q)).max())
                 if bias and len(roots) else 0.0)
        gamma_roots[(p, q)] = roots[on_gamma]
        ok &= (other == 0 and stalled <= max_no_root * n_starts and g_t < 1e-9 and b_err < 1e-6
               and (bias or n_gamma >= min_gamma_roots))
        worst_t, worst_b, other_total = max(worst_t, g_t), max(worst_b, b_err), other_total + other
        worst_stall, fewest = max(worst_stall, stalled), min(fewest, n_gamma)
        stall_txt = "<= " + format(max_no_root, ".0%") if stalled <= max_no_root * n_starts else str(stalled)
        last = bound(b_err, 1e-8) if bias else (">= " + str(min_gamma_roots) if n_gamma >= min_gamma_roots
                                                else str(n_gamma))
        rows.append(f"{p:>5.2f}{q:>5.2f}{n_starts:>8}{other:>{len(head[0]) + 2}}{stall_txt:>10}{last:>11}"
                    f"{bound(g_t, 1e-11):>14}")
    return SimpleNamespace(ok=bool(ok), other=other_total, torch_grad=worst_t, b_err=worst_b, worst_stall=worst_stall,
                           fewest_gamma=fewest, gamma_roots=gamma_roots, text="\n".join(rows))


def gamma_side(pq, gamma_roots, min_gamma_roots, rounding_ulps):
    """Thm 1 (i) on the roots off the axis (``critical_roots``' ``gamma_roots``): they lie on w < -1/sqrt2 iff
    p + q > 1, with torch loss = entropy rate and the kernel prediction sigma(beta*) = p, sigma(c* + beta*) = 1 - q
    (both to 1e-10); on a grid of the other side (w at least 0.01 from -1/sqrt2) the torch loss stays at or above
    H(pi) - rounding_ulps eps. ``n_side`` chains have their roots on the predicted side."""
    pq = chains("pq", pq)
    tau = checks.positive_real("rounding_ulps", rounding_ulps) * EPS
    rows = [f"{'p':>5}{'q':>5}{'Gamma* roots':>14}{'side of -1/sqrt2':>18}{'|L - H_rate|':>14}{'kernel err':>12}"
            f"{'wrong side: min L - H(pi)':>27}"]
    ok, n_side, worst = True, 0, dict(loss=0.0, kernel=0.0, wrong=0.0)
    e_w, w_sad = np.linspace(-3, 3, 241), canonical.W_SADDLE
    for p, q in pq:
        chain, r = MarkovChain(p, q), gamma_roots[(p, q)]
        side_ok = bool(np.all((r[:, 1] < w_sad) == (p + q > 1)))
        T = torch.tensor(r)
        lerr = float((reference.reduced_loss(T, p, q) - chain.entropy_rate).abs().max()) if len(r) else 0.0
        c_r = reference.coefficient(T[:, 0], T[:, 1])
        beta_r = reference.optimal_beta(c_r, p, q)
        kerr = float(torch.maximum((torch.sigmoid(beta_r) - p).abs(), (torch.sigmoid(c_r + beta_r) - (1 - q)).abs())
                     .max()) if len(r) else 0.0
        w_wrong = np.linspace(w_sad + 0.01, 3, 200) if p + q > 1 else np.linspace(-3, w_sad - 0.01, 200)
        Eg, Wg = np.meshgrid(e_w, w_wrong, indexing="ij")
        L_wrong = reference.reduced_loss(torch.tensor(np.stack([Eg, Wg], -1)), p, q).numpy()
        gap = float(L_wrong.min() - chain.marginal_entropy)  # >= 0 up to rounding
        ok &= side_ok and lerr < 1e-10 and kerr < 1e-10 and gap > -tau
        n_side += side_ok
        worst = dict(loss=max(worst["loss"], lerr), kernel=max(worst["kernel"], kerr), wrong=min(worst["wrong"], gap))
        side_txt = "w < -1/sqrt2" if p + q > 1 else "w > -1/sqrt2"
        rows.append(f"{p:>5.2f}{q:>5.2f}{'>= ' + str(min_gamma_roots):>14}{side_txt + ': ' + yes_no(side_ok):>18}"
                    f"{bound(lerr, 1e-12):>14}{bound(kerr, 1e-12):>12}{floor_text(gap):>27}")
    return SimpleNamespace(ok=bool(ok), n_side=n_side, worst=worst, text="\n".join(rows))


def full_model_axis(pq, d, length, seed, *, model, exact_loss, optimal_bias, w=np.linspace(-2.5, 2.5, 11)):
    """The w-axis on the full transformer, width ``d``, with its exact loss over all 2^length sequences: at e = 0,
    b = log(p/q) the largest |dL/dparameter| over every parameter (``axis_grad``) and |L - H(pi)| (``axis_loss``); at
    e = 0.3 with its own optimal bias the smallest such gradient (``off``, which must be nonzero). ``ok``: 1e-12,
    1e-12 and > 1e-6, in float64 (torch's default dtype must be float64). The model comes from the chapter (Part I's
    transformer sits above this module): ``model(e, w, b, d=, max_len=, seed=)``
    (``transformer.model.canonical_full_model``), ``exact_loss(model, chain, length)`` (``transformer.exact``),
    ``optimal_bias(e, w, a, p, q)`` (``transformer.readout.optimal_canonical_bias``)."""
    if not all(callable(f) for f in (model, exact_loss, optimal_bias)):
        raise ValueError("model, exact_loss and optimal_bias must be callables (the transformer's functions)")
    if torch.get_default_dtype() != torch.float64:
        raise ValueError("torch's default dtype must be float64 (torch.set_default_dtype(torch.float64)): the claims "
                         "are at 1e-12")
    pq, d, length = chains("pq", pq), checks.positive_int("d", d), checks.positive_int("length", length)
    axis_grad, axis_loss, off = 0.0, 0.0, np.inf
    for p, q in pq:
        chain = MarkovChain(p, q)
        for wi in np.asarray(w, dtype=float):
            for e in (0.0, 0.3):
                b = math.log(p / q) if e == 0 else optimal_bias(e, wi, 0.0, p, q)
                net = model(e, float(wi), b, d=d, max_len=length, seed=seed)
                loss = exact_loss(net, chain, length)
                grads = torch.autograd.grad(loss, list(net.parameters()), allow_unused=True)
                gmax = max(float(g.abs().max()) for g in grads if g is not None)
                if e == 0:
                    axis_grad = max(axis_grad, gmax)
                    axis_loss = max(axis_loss, abs(float(loss.detach()) - chain.marginal_entropy))
                else:
                    off = min(off, gmax)
    text = (f"full transformer (d = {d}, N = {length}), {np.size(w)} axis points x {len(pq)} chains:\n"
            f"  at e = 0:   max |dL/dparameter| = {bound(axis_grad, 1e-13)}, |L - H(pi)| = {bound(axis_loss, 1e-13)}\n"
            f"  at e = 0.3: smallest max |dL/dparameter| = {off:.1e}")
    return SimpleNamespace(ok=bool(axis_grad < 1e-12 and axis_loss < 1e-12 and off > 1e-6), axis_grad=axis_grad,
                           axis_loss=axis_loss, off=off, n_w=int(np.size(w)), text=text)


def loss_ordering(lo=0.02, hi=0.98, n=25):
    """Remark 1 on an n x n grid of chains in [lo, hi]^2 (p + q = 1 skipped): the torch loss (``reference``) at a
    point of Gamma* (with and without bias) is the entropy rate, at a local minimum, a local maximum and the saddle
    (with and without bias) it is H(pi). ``err`` the largest error, ``gaps`` the H(pi) - entropy rate per chain."""
    n = checks.positive_int("n", n)
    if not 0 < lo < hi < 1:
        raise ValueError(f"need 0 < lo < hi < 1, got lo = {lo!r}, hi = {hi!r}")
    err, gaps, w_sad = 0.0, [], canonical.W_SADDLE
    for p in np.linspace(lo, hi, n):
        for q in np.linspace(lo, hi, n):
            if canonical.is_iid(p, q):
                continue
            chain, w_g = MarkovChain(p, q), -1.5 if p + q > 1 else 0.5
            e_g = float(canonical.critical_sets(p, q).global_min_e(w_g))
            b_g = float(canonical.optimal_bias(e_g, w_g, p, q))
            t = lambda *x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
            L_glob = [float(reference.reduced_loss(t(e_g, w_g), p, q)),
                      float(reference.loss_with_bias(t(e_g, w_g, b_g), p, q))]
            ws = (0.3, -1.2, w_sad) if p + q > 1 else (-1.2, 0.3, w_sad)
            L_rest = [float(reference.reduced_loss(t(0.0, w), p, q)) for w in ws]
            L_rest += [float(reference.loss_with_bias(t(0.0, w, math.log(p / q)), p, q)) for w in ws]
            err = max(err, float(np.abs(np.array(L_glob) - chain.entropy_rate).max()),
                      float(np.abs(np.array(L_rest) - chain.marginal_entropy).max()))
            gaps.append(chain.marginal_entropy - chain.entropy_rate)
    text = (f"{len(gaps)} chains (p + q != 1): L(Gamma*) = entropy rate, L(min) = L(max) = L(saddle) = H(pi) to "
            f"{bound(err, 1e-13)}; smallest gap H(pi) - entropy rate = {min(gaps):.2e}")
    return SimpleNamespace(ok=bool(err < 1e-12 and min(gaps) > 0), err=err, gaps=gaps, text=text)
