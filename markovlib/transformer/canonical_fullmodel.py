"""The chapter canonical_model's checks of the canonical model (reference App. B, C; the paper's Lemmas 2, 5, 6) in
the full softmax transformer loaded with canonical weights (``markovlib.transformer.model.canonical_full_model``).

Each function is one step of the chapter: it returns a dict with ``table`` (the printed text, stable digits only)
and the largest errors the chapter records. The formulas it compares with are written out here or in
:mod:`markovlib.markov.canonical_reference`.

- :func:`full_loss`: the exact population loss (all 2^N sequences) at canonical scalars (e, w, b).
- :func:`logit_streams`: every stream against the closed forms (eq-can-embedding, eq-can-ffn, eq-can-logit), and
  W_1, W_2 rank one by numpy's SVD.
- :func:`scalars_roundtrip`: ``canonical_scalars`` inverts the construction.
- :func:`sign_of_e`: the sign of e and the bias (eq-can-logit-neg).
- :func:`lemma2_points`: Lemma 2 against the exact and the sampled loss.
- :func:`bias_stationarity`: dL/db = 0 at the optimal bias (autograd), and a minimum.
- :func:`level_sets`: min over b of the loss is g(c) on level sets of c (Lemma 6).
- :func:`envelope`: autograd = g'(c) grad c (the envelope theorem).
- :func:`w_axis`: on e = 0 the loss is H(pi) and the gradient vanishes.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from scipy.special import logit

from ..book import inference
from ..book.formatting import bound, fixed
from ..markov import canonical
from ..markov.canonical_reference import lemma2_rhs
from ..markov.chain import binary_entropy
from ..markov.checks import min_over_bias
from ..numerics import checks
from .exact import exact_loss
from .inits import random_alpha
from .model import canonical_full_model
from .readout import canonical_logit_offset, canonical_scalars, optimal_canonical_bias


def full_loss(e, w, b, chain, n_exact, seed) -> float:
    """The full model's exact population loss (all 2^n_exact sequences) at canonical scalars (e, w, b)."""
    n_exact = checks.positive_int("n_exact", n_exact)
    return float(exact_loss(canonical_full_model(e, w, b, max_len=n_exact, seed=seed), chain, n_exact).detach())


def logit_streams(chain, dims, e_values, w_values, b0, seed) -> dict:
    """For each d of ``dims``, e, w: the full model's streams x, y, z and logits on 4 x 64 sampled tokens against
    e(x - 1/2) alpha, x, e[(x - 1/2) + 2w|w| ReLU-part] alpha and c x - e^2/2 + b0 (- 2w|w|e^2 for e < 0), relative
    to the largest logit or stream (``worst``); 1 - top singular fraction of W_1, W_2 by numpy's SVD (``rank_one``;
    at w = 0 both zero, counted in ``n_zero``). The table prints the smallest and largest d and the first w."""
    dims = [checks.positive_int("dims", d) for d in dims]
    x_chk = chain.sample(4, 64, seed=seed, backend="torch")
    xs = x_chk.double()
    lines = [f"{'d':>3}{'e':>6}{'w':>6}{'c':>9}{'max|x - (eq)|':>15}{'max|y - x|':>12}{'max|z - (eq)|':>15}"
             f"{'max|logit - (eq)|':>19}{'1 - top s.f.':>15}"]
    worst, rank_one, n_zero = 0.0, 0.0, 0
    for k, d in enumerate(dims):
        for e in e_values:
            for w in w_values:
                model = canonical_full_model(e, w, b0, d=d, max_len=64, seed=seed + k)
                alpha = torch.as_tensor(random_alpha(d, seed + k))
                with torch.no_grad():
                    logits, hid = model(x_chk, return_hidden=True)
                c = e**2 * (1 + 2 * w * abs(w))
                relu = e * xs / 2 if e > 0 else abs(e) * (1 - xs) / 2  # ReLU(e (x - 1/2))
                x_pred = (e * (xs - 0.5))[..., None] * alpha
                z_pred = (e * (xs - 0.5) + 4 * w * abs(w) * relu)[..., None] * alpha  # ||u||^2 = 4
                logit_pred = c * xs - e**2 / 2 + b0 - (2 * w * abs(w) * e**2 if e < 0 else 0.0)
                scale = max(1.0, float(logit_pred.abs().max()), float(z_pred.abs().max()))
                errs = [float((hid["x"] - x_pred).abs().max()) / scale,
                        float((hid["y"] - hid["x"]).abs().max()) / scale,
                        float((hid["z"] - z_pred).abs().max()) / scale,
                        float((logits - logit_pred).abs().max()) / scale]
                svs = [np.linalg.svd(W.detach().numpy(), compute_uv=False) for W in (model.W_1, model.W_2)]
                if w == 0:  # both matrices are zero (rank 0): the singular fraction is undefined, check them exactly
                    n_zero += int(all(float(s.max()) == 0.0 for s in svs))
                    fr = (1.0, 1.0)
                else:
                    fr = tuple(float(s[0] ** 2 / (s ** 2).sum()) for s in svs)
                rank_one = max(rank_one, 1 - min(fr))
                worst = max(worst, *errs)
                if d in (dims[0], dims[-1]) or w == w_values[0]:
                    lines.append(f"{d:>3}{e:>6}{w:>6}{c:>9.4f}" + "".join(
                        f"{bound(v, 1e-13):>{wd}}" for v, wd in zip(errs, (15, 12, 15, 19)))
                        + f"{bound(1 - min(fr), 1e-14):>15}")
    n = len(dims) * len(e_values) * len(w_values)
    lines.append(f"{n} models, worst error over all streams (relative to the largest logit or stream): "
                 f"{bound(worst, 1e-13)}")
    return dict(table="\n".join(lines), worst=worst, rank_one=rank_one, n_zero=n_zero, n=n,
                n_w0=len(dims) * len(e_values) * sum(1 for w in w_values if w == 0))


def scalars_roundtrip(e_values, w_values, b0, max_len, seed) -> dict:
    """``canonical_scalars`` of canonical_full_model(e, w, b0) (d = 8): the largest error in (e, w, b, ||u|| = 2)
    relative to max(1, |e|, |w|, |b0|) (``err``; at w = 0 the embedding e alpha), negative entries of u (``neg``)."""
    alpha0 = random_alpha(8, seed)  # the direction of canonical_full_model(..., d=8, seed=seed)
    err, neg = 0.0, 0
    for e in e_values:
        for w in w_values:
            sc = canonical_scalars(canonical_full_model(e, w, b0, max_len=max_len, seed=seed), check=False)
            # for w = 0, W_1 = 0 fixes no sign of alpha: only the embedding e alpha is defined
            e_err = abs(sc.e - e) if w != 0 else float(np.abs(sc.e * sc.alpha - e * alpha0).max())
            errs = (e_err, abs(sc.w - w), abs(sc.b - b0), abs(float(np.linalg.norm(sc.u)) - 2.0))
            err = max(err, max(errs) / max(1.0, abs(e), abs(w), abs(b0)))
            neg += int((sc.u < 0).sum())
    n = len(e_values) * len(w_values)
    line = (f"canonical_scalars on {n} models: max relative error in (e, w, b, ||u||) {bound(err, 1e-13)}; "
            f"negative entries of u: {neg}")
    return dict(table=line, err=err, neg=neg, n=n)


def sign_of_e(chain, e_values, w_values, b0, *, length, batch, n_exact, seed) -> dict:
    """For |e| of ``e_values`` and each w: logits at (-e, b0 + 2w|w|e^2) against (e, b0) on batch x length sampled
    tokens (``logit``, relative); min over b of the exact loss at e and -e (``min``, Brent); the exact loss at
    optimal_canonical_bias(-e) against g(c) and the bias against optimal_bias + 2w|w|e^2 (``opt``, relative to
    max(1, |b|, |c|)); L(-e, b0) - L(e, b0) against Lemma 2's form at the intercepts beta, beta - 2w|w|e^2
    (``sign``, relative to the loss) and its largest size (``gap``) over ``n_sign`` pairs with w != 0."""
    p, q = chain.p, chain.q
    x_long = chain.sample(batch, length, seed=seed + 1, backend="torch")
    lines = [f"{'e':>6}{'w':>6}{'rel. |logit(-e, b + 2w|w|e^2) - logit(e, b)|':>46}{'L(-e, b) - L(e, b)':>20}"
             f"{'min_b L(-e) - min_b L(e)':>26}{'L(-e, b*_full) - g(c)':>23}"]
    r = dict(logit=0.0, min=0.0, opt=0.0, sign=0.0, gap=0.0, n_sign=0)

    def loss(e, w, b):
        return full_loss(e, w, b, chain, n_exact, seed)

    for e in sorted({abs(v) for v in e_values}):
        for w in w_values:
            shift = 2 * w * abs(w) * e**2
            with torch.no_grad():
                lg_pos = canonical_full_model(e, w, b0, max_len=length, seed=seed)(x_long)
                lg_neg = canonical_full_model(-e, w, b0 + shift, max_len=length, seed=seed)(x_long)
            diff = float((lg_pos - lg_neg).abs().max()) / max(1.0, float(lg_pos.abs().max()))
            L_pos, L_neg = loss(e, w, b0), loss(-e, w, b0)
            m_pos, _ = min_over_bias(lambda b: loss(e, w, b))
            m_neg, _ = min_over_bias(lambda b: loss(-e, w, b))
            b_full = optimal_canonical_bias(-e, w, 0.0, p, q)
            L_opt, g_c = loss(-e, w, b_full), float(canonical.reduced_loss(canonical.coefficient(e, w), p, q))
            r["logit"], r["min"] = max(r["logit"], diff), max(r["min"], abs(m_neg - m_pos))
            scale = max(1.0, abs(b_full), float(abs(canonical.coefficient(e, w))))
            r["opt"] = max(r["opt"], abs(L_opt - g_c) / scale,
                           abs(b_full - (float(canonical.optimal_bias(-e, w, p, q)) + shift)) / scale)
            if w != 0:  # the prediction of Lemma 2 (written out) for the shift of the intercept by -s
                beta0, c = b0 - e**2 / 2, e**2 * (1 + 2 * w * abs(w))
                d_pred = float(lemma2_rhs(c, beta0 - shift, p, q) - lemma2_rhs(c, beta0, p, q))
                r["sign"] = max(r["sign"], abs((L_neg - L_pos) - d_pred) / max(1.0, abs(L_pos)))
                r["gap"], r["n_sign"] = max(r["gap"], abs(L_neg - L_pos)), r["n_sign"] + 1
            lines.append(f"{e:>6}{w:>6}{bound(diff, 1e-12):>46}{L_neg - L_pos:>20.6f}"
                         f"{bound(m_neg - m_pos, 1e-12):>26}{bound((L_opt - g_c) / scale, 1e-13):>23}")
    r["table"] = "\n".join(lines)
    return r


def lemma2_points(chain, cases, *, length, batch, n_exact, seed) -> dict:
    """At each (e, w, b) of ``cases``: (c, beta) from eq-can-logit / eq-can-logit-neg, Lemma 2 written out against
    the exact loss (``exact``), against markovlib's logistic_loss with canonical_logit_offset (``lib``), and against
    the mean loss of ``batch`` sampled sequences of ``length`` (Student t: largest ``z``, smallest ``pvalue``)."""
    p, q = chain.p, chain.q
    lines = [f"{'e':>6}{'w':>6}{'b':>6}{'c':>9}{'beta':>9}{'(lem-2)':>11}{'exact - (lem-2)':>17}{'sampled':>10}"
             f"{'std err':>9}{'|z|':>6}{'lib - (lem-2)':>15}{'canonical.loss':>16}"]
    r = dict(exact=0.0, lib=0.0, z=0.0, pvalue=1.0, n=len(cases))
    for k, (e, w, b) in enumerate(cases):
        c = e**2 * (1 + 2 * w * abs(w))
        beta = b - e**2 / 2 - (2 * w * abs(w) * e**2 if e < 0 else 0.0)
        pred = float(lemma2_rhs(c, beta, p, q))
        L_ex = full_loss(e, w, b, chain, n_exact, seed)
        lib = float(canonical.logistic_loss(float(canonical.coefficient(e, w)),
                                            b + float(canonical_logit_offset(e, w)), p, q))
        xs_k = chain.sample(batch, length, seed=seed + 10 + k, backend="torch")
        model = canonical_full_model(e, w, b, max_len=length, seed=seed)
        with torch.no_grad():
            per_seq = F.binary_cross_entropy_with_logits(model(xs_k[:, :-1]), xs_k[:, 1:].double(),
                                                         reduction="none").mean(1)
        mt = inference.mean_test(per_seq.numpy(), pred)  # Student t with batch - 1 degrees of freedom
        r["pvalue"] = min(r["pvalue"], mt.pvalue)
        r["exact"], r["lib"] = max(r["exact"], abs(L_ex - pred)), max(r["lib"], abs(lib - pred))
        r["z"] = max(r["z"], mt.z)
        can = float(canonical.loss(e, w, p, q, b=b))
        lines.append(f"{e:>6}{w:>6}{b:>6}{c:>9.4f}{beta:>9.4f}{pred:>11.6f}{bound(L_ex - pred, 1e-13):>17}"
                     f"{fixed(mt.mean, 3):>10}{mt.std_err:>9.0e}{fixed(mt.z, 1):>6}{bound(lib - pred, 1e-14):>15}"
                     f"{can:>16.6f}")
    r["table"] = "\n".join(lines)
    return r


def bias_stationarity(chain, points, *, n_exact, seed) -> dict:
    """At each (e, w) of ``points``, at b* = optimal_canonical_bias: |dL/db| by torch autograd of the exact loss
    (``grad``) and the smallest rise of the loss at b* -+ 0.01 (``rise``)."""
    lines = [f"{'e':>6}{'w':>6}{'b*':>10}{'dL/db at b*':>13}{'L(b*-0.01) - L(b*)':>20}{'L(b*+0.01) - L(b*)':>20}"]
    grad_max, rise_min = 0.0, np.inf
    for e, w in points:
        bstar = optimal_canonical_bias(e, w, 0.0, chain.p, chain.q)
        model = canonical_full_model(e, w, bstar, max_len=n_exact, seed=seed)
        L = exact_loss(model, chain, n_exact)
        L.backward()
        gb = float(model.bias.grad)
        Ls = [full_loss(e, w, bstar + s, chain, n_exact, seed) for s in (-0.01, 0.01)]
        grad_max, rise_min = max(grad_max, abs(gb)), min(rise_min, min(Ls) - float(L.detach()))
        lines.append(f"{e:>6}{w:>6}{bstar:>10.5f}{bound(gb, 1e-13):>13}{Ls[0] - float(L.detach()):>20.3e}"
                     f"{Ls[1] - float(L.detach()):>20.3e}")
    return dict(table="\n".join(lines), grad=grad_max, rise=rise_min)


def level_sets(chain, c_levels, e_points, *, n_exact, seed) -> dict:
    """On each level set c(e, w) = c0 of ``c_levels``, at e of ``e_points``: the exact loss at
    optimal_canonical_bias against g(c0) (``lib``) and the loss minimized over b by Brent (bracket (-4, 4)) against
    g(c0) (``min``)."""
    p, q = chain.p, chain.q
    lines = [f"{'c0':>8}{'e':>7}{'w':>9}{'c(e, w)':>10}{'loss at b*':>14}{'(at b*) - g(c0)':>17}"
             f"{'min_b L - g(c0)':>17}"]
    lib_err, min_err = 0.0, 0.0
    for c0 in c_levels:
        for e in e_points:
            w = float(canonical.w_on_level_set(c0, e))
            L = full_loss(e, w, optimal_canonical_bias(e, w, 0.0, p, q), chain, n_exact, seed)
            m, _ = min_over_bias(lambda b: full_loss(e, w, b, chain, n_exact, seed), bracket=(-4.0, 4.0))
            g0 = float(canonical.reduced_loss(c0, p, q))
            lib_err, min_err = max(lib_err, abs(L - g0)), max(min_err, abs(m - g0))
            lines.append(f"{fixed(c0, 4):>8}{e:>7}{w:>9.4f}{fixed(float(canonical.coefficient(e, w)), 4):>10}"
                         f"{L:>14.8f}{bound(L - g0, 1e-13):>17}{bound(m - g0, 1e-12):>17}")
    return dict(table="\n".join(lines), lib=lib_err, min=min_err, n=len(c_levels) * len(e_points))


def envelope(chain, points, *, n_exact, seed) -> dict:
    """At each (e, w) of ``points``, at the optimal bias: dL/de and dL/dw by torch autograd of the exact loss,
    projected on the canonical directions, against g'(c) dc/de = g'(c) 2e(1 + 2w|w|) and g'(c) dc/dw =
    g'(c) 4|w| e^2 (``err``: the largest difference)."""
    p, q = chain.p, chain.q
    lines = ["".join(name.rjust(width) for name, width in (("e", 6), ("w", 6), ("dL/de autograd", 16),
                                                         ("g'(c) dc/de", 14), ("dL/dw autograd", 16),
                                                         ("g'(c) dc/dw", 14)))]
    err = 0.0
    for e, w in points:
        model = canonical_full_model(e, w, optimal_canonical_bias(e, w, 0.0, p, q), max_len=n_exact, seed=seed)
        sc = canonical_scalars(model)
        alpha, u = torch.as_tensor(sc.alpha), torch.as_tensor(sc.u)
        L = exact_loss(model, chain, n_exact)
        L.backward()
        dL_de = float(model.embedding.grad @ alpha - 0.5 * (model.positional.grad @ alpha).sum())
        dL_dw = float(math.copysign(1.0, w) * (u @ model.W_1.grad @ alpha) + alpha @ model.W_2.grad @ u)
        gp = float(canonical.reduced_loss_grad(float(canonical.coefficient(e, w)), p, q))
        pred_e, pred_w = gp * 2 * e * (1 + 2 * w * abs(w)), gp * 4 * abs(w) * e**2
        err = max(err, abs(dL_de - pred_e), abs(dL_dw - pred_w))
        lines.append(f"{e:>6}{w:>6}{dL_de:>16.6f}{pred_e:>14.6f}{dL_dw:>16.6f}{pred_w:>14.6f}")
    lines.append(f"max |autograd - g'(c) grad c| {bound(err, 1e-11)}")
    return dict(table="\n".join(lines), err=err)


def w_axis(chain, w_points, *, n_exact, seed) -> dict:
    """On the w-axis (e = 0, b = logit(pi_1)): the largest |L - H(pi)| of the exact loss (``loss``) and the largest
    autograd gradient over every parameter (``grad``)."""
    pi1 = chain.stationary[1]
    loss_err, grad_max = 0.0, 0.0
    for w in w_points:
        model = canonical_full_model(0.0, w, logit(pi1), max_len=n_exact, seed=seed)
        L = exact_loss(model, chain, n_exact)
        L.backward()
        loss_err = max(loss_err, abs(float(L.detach()) - binary_entropy(pi1)))
        grad_max = max(grad_max, max(float(prm.grad.abs().max()) for prm in model.parameters()))
    line = (f"w-axis, {len(w_points)} points: max |L - H(pi)| {bound(loss_err, 1e-13)}; max |autograd gradient| over "
            f"all parameters {bound(grad_max, 1e-13)}")
    return dict(table=line, loss=loss_err, grad=grad_max)
