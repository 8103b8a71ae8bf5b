"""The chapter ``attention``'s checks of the full model and of the reduced landscape (Makkuva et al., Sec. 4.1 and
App. G): the attention scalar a in the torch model, the gradients of Lemma 13, the critical sets of Thm 10 and the
bias kink of Remark 5. Every check compares markovlib with a route that does not call it: the full model
(``transformer.model.MarkovTransformer`` with linear attention) and the torch losses of :mod:`.reference`.

* :func:`full_model_check`: the residual stream after attention and the logits of the full model with rank-one weights
  against (eq-att-y) y_n = e (1 + a e^2)(x_n - 1/2) alpha and (eq-att-c) logit_n = c x_n + beta, and the logit gap
  against ``canonical.coefficient`` (App. G).
* :class:`LinearModel`: the full model with differentiable canonical weights (e, w, a, b) along a random direction;
  its exact population loss (``reference.full_model_loss``) and autograd gradients.
* :func:`gradient_check`: Lemma 13, ``canonical.grad`` against autograd of the full model, at a bias and at b*.
* :func:`hessian_check`: Thm 10, ``attention.hessian`` on the three critical sets against the proof's closed forms
  and finite differences of ``reference.attention_loss``.

(Thm 10's perturbation tests and Remark 5's bias kink are in :mod:`.attention_landscape`.)

Each check returns a result with the measured quantities and ``report()``, the table the chapter prints.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..book.formatting import bound
from ..numerics import checks
from ..numerics.numdiff import fd_hessian
from . import attention, canonical, reference

__all__ = ["FullModelCheck", "full_model_check", "LinearModel", "GradientCheck", "gradient_check", "HessianCheck",
           "hessian_check", "critical_points", "as_generator"]

W_SAD = canonical.W_SADDLE
CASES = [(1.3, 0.35), (-1.3, 0.35), (1.3, -3.0), (-1.3, -3.0), (0.7, 0.0)]  # (e, a): both signs of e and of k


def as_generator(rng):
    """``rng`` if it is a numpy Generator (np.random.default_rng(seed)), else ValueError: the chapter's checks draw
    from generators they are given, never from numpy's global state."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    return rng


def _pairs(name, pairs):
    out = [(checks.probability(f"{name} p", p), checks.probability(f"{name} q", q)) for p, q in pairs]
    if not out:
        raise ValueError(f"{name} must hold at least one chain [p, q]")
    return out


def _ints(name, xs):
    out = [checks.positive_int(name, x) for x in xs]
    if not out:
        raise ValueError(f"{name} must hold at least one positive integer")
    return out


@dataclass
class FullModelCheck:
    """Rows (d, N, e, a, w, 1 + a e^2, err_y, err_logit, err_gap) and the worst error."""
    rows: list
    worst: float

    def report(self) -> str:
        step = max(1, len(self.rows) // 20)
        out = [f"{'d':>2}{'N':>4}{'e':>6}{'a':>6}{'w':>6}{'1+ae^2':>8}  {'max|y-(eq)|':>12}{'max|logit-(eq)|':>16}"
               f"{'|gap-c|':>9}"]
        for d, N, e_, a_, w_, k_, ey, el, ec in self.rows[::step]:
            out.append(f"{d:>2}{N:>4}{e_:>6.1f}{a_:>6.2f}{w_:>6.1f}{k_:>8.2f}  {bound(ey, 1e-11):>12}"
                       f"{bound(el, 1e-11):>16}{bound(ec, 1e-11):>9}")
        out.append(f"{len(self.rows)} configurations (every 1 in {step} shown); worst error {bound(self.worst, 1e-11)}")
        return "\n".join(out)


def full_model_check(dims, lengths, rng, build) -> FullModelCheck:
    """The full model with linear attention and rank-one weights (App. G) against (eq-att-y) and (eq-att-c):
    y_n = e k (x_n - 1/2) alpha with k = 1 + a e^2, logit_n = f m x_n + beta with f = e^2 k, m = 1 + 2w|w|,
    beta = b - f/2 - [e k < 0] 2w|w| f, and logit(1) - logit(0) = ``canonical.coefficient(e, w, a)``; over the
    embedding dimensions ``dims``, the sequence lengths ``lengths``, both signs of e and of k, and w in {0.6, -0.9}.
    ``rng`` (a numpy Generator) draws the directions, biases and sequences."""
    dims, lengths, rng = _ints("dims", dims), _ints("lengths", lengths), as_generator(rng)
    if not callable(build):
        raise ValueError(f"build must build the model (MarkovTransformer.canonical), got {build!r}")
    rows, worst = [], 0.0
    for d in dims:
        alpha = rng.choice([-1.0, 1.0], d) / math.sqrt(d)
        for N in lengths:
            for e_, a_ in CASES:
                for w_ in (0.6, -0.9):
                    b_ = float(rng.normal())
                    model = build(e_, w_, a_, b_, d=d, max_len=N, alpha=alpha, attention="linear")
                    x = torch.as_tensor(rng.integers(0, 2, (6, N)))
                    with torch.no_grad():
                        logits, hid = model(x, return_hidden=True)
                        gap = (model(torch.tensor([[1]])) - model(torch.tensor([[0]]))).item()
                    xs = x.numpy().astype(float)
                    k_ = 1 + a_ * e_**2
                    y_pred = (e_ * k_ * (xs - 0.5))[..., None] * alpha
                    f_, m_ = e_**2 * k_, 1 + 2 * w_ * abs(w_)
                    beta = b_ - f_ / 2 - (2 * w_ * abs(w_) * f_ if e_ * k_ < 0 else 0.0)
                    err_y = float(np.abs(hid["y"].numpy() - y_pred).max())
                    err_l = float(np.abs(logits.numpy() - (f_ * m_ * xs + beta)).max())
                    err_c = abs(gap - float(canonical.coefficient(e_, w_, a_)))
                    worst = max(worst, err_y, err_l, err_c)
                    rows.append((d, N, e_, a_, w_, k_, err_y, err_l, err_c))
    return FullModelCheck(rows, worst)


class LinearModel:
    """The full model ``model`` (a ``transformer.model.MarkovTransformer(d, 1, attention="linear")``) with canonical
    weights built from torch scalars (e, w, a, b) along a direction alpha (random signs / sqrt(d)) and u >= 0,
    |u|^2 = 4, both drawn from ``rng`` (W_Q = 4a alpha alpha^T, W_K = W_V = W_O = alpha alpha^T: another factorization
    of the same a)."""

    def __init__(self, rng, model):
        rng = as_generator(rng)
        if getattr(model, "attention", None) != "linear" or not hasattr(model, "d"):
            raise ValueError("model must be a MarkovTransformer with linear attention")
        d = model.d
        self.alpha = torch.as_tensor(rng.choice([-1.0, 1.0], d) / math.sqrt(d))
        u = torch.as_tensor(rng.uniform(0.5, 1.5, 4 * d))
        self.u = 2 * u / u.norm()
        self.model = model

    def loss(self, e, w, a, b, p, q):
        """The exact population loss (``reference.full_model_loss``) at torch scalars (e, w, a, b)."""
        return reference.full_model_loss(self.model, e, w, a, b, self.alpha, self.u, p, q)

    def grad(self, e, w, a, b, p, q, wrt=None):
        """torch autograd of :meth:`loss` in (e, w, a, b) (or in the indices ``wrt``) at floats."""
        th = [torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in (e, w, a, b)]
        sel = th if wrt is None else [th[i] for i in wrt]
        return np.array([float(g) for g in torch.autograd.grad(self.loss(*th, p, q), sel)])

    def grad_norm_at_optimal_bias(self, e, w, a, p, q) -> float:
        """|grad| of the loss in (e, w, a, b) at the full model's optimal bias (``reference.optimal_bias_full``)."""
        return float(np.linalg.norm(self.grad(e, w, a, reference.optimal_bias_full(e, w, a, p, q), p, q)))


@dataclass
class GradientCheck:
    """Lemma 13: relative errors of ``canonical.grad`` at a bias (worst_b) and reduced (worst_r), |dL/db| at b*
    (worst_db), |full model loss - reference.attention_loss| (worst_ind), and the table's rows."""
    rows: list
    worst_b: float
    worst_r: float
    worst_db: float
    worst_ind: float

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}{'e':>6}{'w':>6}{'a':>6}{'e(1+ae^2)':>10}  {'rel err, bias b':>15}"
               f"{'rel err, reduced':>17}{'|dL/db| at b*':>14}{'|L - L_indep|':>14}"]
        for p_, q_, e_, w_, a_, et, err_b, err_r, db, err_ind in self.rows:
            out.append(f"{p_:>5}{q_:>5}{e_:>6.1f}{w_:>6.1f}{a_:>6.1f}{et:>10.3f}  "
                       f"{('-' if np.isnan(err_b) else bound(err_b, 1e-10)):>15}{bound(err_r, 1e-10):>17}"
                       f"{bound(db, 1e-10):>14}{('-' if np.isnan(err_ind) else bound(err_ind, 1e-12)):>14}")
        return "\n".join(out)


GRAD_POINTS = [(0.8, -0.4, 0.5), (-1.1, 0.7, 0.2), (1.2, 0.5, -1.5), (-0.6, -1.1, -4.0)]


def gradient_check(lin: LinearModel, pq_pairs) -> GradientCheck:
    """Lemma 13 at four points (e, w, a) per chain: where e(1 + a e^2) > 0, ``canonical.grad(e, w, p, q, a=a, b=0.3)``
    against autograd of the full model at b = 0.3 (and the full model's loss against ``reference.attention_loss``);
    in every sign case, the reduced ``canonical.grad(e, w, p, q, a=a)`` against autograd at the optimal bias b*,
    where dL/db = 0."""
    pq_pairs = _pairs("pq_pairs", pq_pairs)
    rows, worst = [], dict(b=0.0, r=0.0, db=0.0, ind=0.0)
    for p_, q_ in pq_pairs:
        for e_, w_, a_ in GRAD_POINTS:
            et = e_ * (1 + a_ * e_**2)
            err_b = err_ind = float("nan")
            if et > 0:  # canonical's bias convention applies
                g_c = np.array(canonical.grad(e_, w_, p_, q_, a=a_, b=0.3), dtype=float)
                err_b = float(np.max(np.abs(lin.grad(e_, w_, a_, 0.3, p_, q_) - g_c)) / np.max(np.abs(g_c)))
                with torch.no_grad():
                    t = [torch.tensor(v, dtype=torch.float64) for v in (e_, w_, a_, 0.3)]
                    err_ind = abs(float(lin.loss(*t, p_, q_)) - float(reference.attention_loss(*t, p_, q_)))
                worst["b"], worst["ind"] = max(worst["b"], err_b), max(worst["ind"], err_ind)
            g_t = lin.grad(e_, w_, a_, reference.optimal_bias_full(e_, w_, a_, p_, q_), p_, q_)
            g_r = np.array(canonical.grad(e_, w_, p_, q_, a=a_), dtype=float)
            err_r = float(np.max(np.abs(g_t[:3] - g_r)) / np.max(np.abs(g_r)))
            db = abs(float(g_t[3]))
            worst["r"], worst["db"] = max(worst["r"], err_r), max(worst["db"], db)
            rows.append((p_, q_, e_, w_, a_, et, err_b, err_r, db, err_ind))
    return GradientCheck(rows, worst["b"], worst["r"], worst["db"], worst["ind"])


@dataclass
class HessianCheck:
    """Thm 10 on the three sets: eigenvalues as predicted (ok, worst_ev over n_ev), the relative error against
    finite differences (worst_fd), |grad| of the full model at b* (worst_g), and the table's rows."""
    rows: list = field(default_factory=list)
    ok: bool = True
    worst_fd: float = 0.0
    worst_g: float = 0.0
    worst_ev: float = 0.0
    n_ev: int = 0

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}  {'set':<22}{'point (e, w, a)':<24}{'eigenvalues (analytic)':<34}{'predicted':<30}"
               f"{'|H - H_fd|/|H|':>15}{'|grad|, full':>13}"]
        for p_, q_, name, pt, ev, pred, rel_fd, gnorm in self.rows:
            out.append(f"{p_:>5}{q_:>5}  {name:<22}{'(%.2f, %.3f, %.3f)' % pt:<24}"
                       f"{np.array2string(np.round(ev, 4) + 0.0, precision=4):<34}"
                       f"{np.array2string(np.round(pred, 4) + 0.0, precision=4):<30}{bound(rel_fd, 1e-4):>15}"
                       f"{bound(gnorm, 1e-12):>13}")
        return "\n".join(out)


def critical_points(p, q):
    """Two points of each set of Thm 10 for the chain (p, q): on Gamma* (m solved from c = c*), on the plane e = 0 on
    both sides of w_sad, and on Sigma = {w = -1/sqrt2, a = -1/e^2}; a list of (set name, (e, w, a))."""
    cs = canonical.c_star(checks.probability("p", p), checks.probability("q", q))
    pts = []
    for e_, a_ in ((0.9, 0.3 if cs > 0 else -2.0), (-1.2, 0.1 if cs > 0 else -1.5)):
        t = cs / (e_**2 * (1 + a_ * e_**2)) - 1
        pts.append(("global minimum", (e_, float(np.sign(t) * np.sqrt(abs(t) / 2)), a_)))
    return pts + [("plane e=0, w>w_sad", (0.0, 0.4, -0.7)), ("plane e=0, w<w_sad", (0.0, -1.3, 0.8)),
                  ("saddle curve Sigma", (0.8, W_SAD, -1 / 0.8**2)), ("saddle curve Sigma", (-1.5, W_SAD, -1 / 1.5**2))]


def hessian_check(lin: LinearModel, pairs) -> HessianCheck:
    """Thm 10 at :func:`critical_points` of each chain: the eigenvalues of ``attention.hessian`` against the proof's
    closed forms (Gamma*: 0, 0, g''(c*)|grad c|^2; plane: 2 g'(0) m(w), 0, 0; Sigma: -lam, 0, lam with
    lam = |g'(0)| 2 sqrt2 sqrt(4e^2 + e^8)), the Hessian against finite differences (h = 1e-4) of the independent
    ``reference.attention_loss``, and the full model's gradient at b*."""
    out = HessianCheck()
    for p_, q_ in _pairs("pairs", pairs):
        g1 = float(canonical.reduced_loss_grad(0.0, p_, q_))
        g2 = float(canonical.reduced_loss_hess(canonical.c_star(p_, q_), p_, q_))
        for name, (e_, w_, a_) in critical_points(p_, q_):
            H = attention.hessian(e_, w_, a_, p_, q_)
            ev = np.linalg.eigvalsh(H)
            if name == "global minimum":
                f_, m_ = e_**2 * (1 + a_ * e_**2), 1 + 2 * w_ * abs(w_)
                gc = np.array([(2 * e_ + 4 * a_ * e_**3) * m_, 4 * abs(w_) * f_, e_**4 * m_])  # grad c
                pred = np.array([0.0, 0.0, g2 * float(gc @ gc)])
            elif name.startswith("plane"):
                pred = np.sort([2 * g1 * (1 + 2 * w_ * abs(w_)), 0.0, 0.0])
            else:
                lam = abs(g1) * 2 * np.sqrt(2) * np.sqrt(4 * e_**2 + e_**8)
                pred = np.array([-lam, 0.0, lam])
            H_fd = fd_hessian(lambda x: float(reference.attention_loss_np(x, p_, q_)), [e_, w_, a_], h=1e-4)
            rel_fd = float(np.abs(H - H_fd).max()) / max(1.0, float(np.abs(H).max()))
            gnorm = lin.grad_norm_at_optimal_bias(e_, w_, a_, p_, q_)
            out.worst_fd, out.worst_g = max(out.worst_fd, rel_fd), max(out.worst_g, gnorm)
            out.ok &= bool(np.allclose(ev, pred, atol=1e-9))
            out.worst_ev, out.n_ev = max(out.worst_ev, float(np.abs(ev - pred).max())), out.n_ev + ev.size
            out.rows.append((p_, q_, name, (e_, w_, a_), ev, pred, rel_fd, gnorm))
    return out
