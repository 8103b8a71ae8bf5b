"""The chapter ``attention``'s checks of the critical sets beyond their Hessians (Makkuva et al., Thms 9 and 10,
Remark 5) and the symbolic check of Lemma 14.

* :func:`perturbation_check`: Thm 10's classification of degenerate points by the sign of L - H(pi) around them
  (``perturbation_verdict``, with the independent ``reference.attention_loss``) against ``attention.classify``.
* :func:`bias_kink`: Remark 5, the one-sided d/de (dL/db) = -+ pi0 pi1 e of the full model on Sigma (its R^4
  Hessian is undefined there), and the smooth reduced Hessian there.
* :func:`root_search`: multistart root searches of grad L = 0 in (e, w, a) (Thm 10, reduced loss) and in (e, w, a, b)
  (Thm 9, bias free), with the gradient of the independent torch loss ``reference.attention_loss`` (autograd), each
  root placed on Gamma* = {c = c*}, the plane e = 0 or Sigma = {w = -1/sqrt2, a = -1/e^2} by closed-form tests
  (``checks.place_roots``), and named by ``attention.classify``.
* :func:`energy_identity`: Lemma 14's grad E . grad c = 0 for E = e^2 - 2a^2 - w^2 - sign(w) log|w| and
  c = e^2 (1 + a e^2)(1 + 2w|w|), simplified by sympy separately for w > 0 and w < 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..book.formatting import bound, fixed, yes_no
from ..book.inference import wilson_interval
from ..numerics import checks as nchecks
from ..numerics.roots import multistart_roots
from . import attention, canonical, checks, reference
from .attention_model import LinearModel, as_generator
from .chain import MarkovChain

__all__ = ["PerturbationCheck", "perturbation_verdict", "perturbation_check", "BiasKink", "bias_kink", "RootSearch",
           "root_search", "energy_identity", "SETS"]

SETS = ("Gamma*", "plane e=0", "Sigma")
W_SAD = canonical.W_SADDLE



@dataclass
class PerturbationCheck:
    """Verdicts of the perturbation test against ``attention.classify``: rows, ok, n_agree of n_points."""
    rows: list
    ok: bool
    n_agree: int
    n_points: int

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}  {'point (e, w, a)':<26}{'Thm 10 says':<12}{'L < H(pi)':>10}{'L > H(pi)':>10}  "
               "verdict (4000 points, r = 0.01)"]
        for p_, q_, pt, kind, n_below, n_above, verdict in self.rows:
            out.append(f"{p_:>5}{q_:>5}  {'(%.1f, %.3f, %.3f)' % pt:<26}{kind:<12}{n_below:>10}{n_above:>10}  "
                       f"{verdict}")
        return "\n".join(out)


PERTURB_POINTS = [(0.0, 0.3, 0.5), (0.0, -0.2, -1.5), (0.0, -1.2, 0.2), (0.0, -2.0, -0.8), (0.0, W_SAD, 0.7),
                  (1.1, W_SAD, -1 / 1.1**2)]


def perturbation_verdict(point, p, q, rng, r=1e-2, n=4000, tol=1e-13):
    """The sign test of Thm 10's proof: L - H(pi) (``reference.attention_loss_np``) at ``n`` points uniform in the
    ball of radius ``r`` around ``point``; a difference counts as a sign beyond ``tol``. Returns (verdict, n_below,
    n_above), verdict 'local_min' (never below), 'local_max' (never above), 'saddle' (both) or 'flat'."""
    rng, r, n = as_generator(rng), nchecks.positive_real("r", r), nchecks.positive_int("n", n)
    d = rng.normal(size=(n, 3))
    d *= (r * rng.uniform(size=(n, 1)) ** (1 / 3)) / np.linalg.norm(d, axis=1, keepdims=True)
    dL = reference.attention_loss_np(np.asarray(point, dtype=float) + d, p, q) - MarkovChain(p, q).marginal_entropy
    n_below, n_above = int((dL < -tol).sum()), int((dL > tol).sum())
    verdict = ("local_min" if n_below == 0 and n_above > 0 else "local_max" if n_above == 0 and n_below > 0
               else "saddle" if n_below > 0 and n_above > 0 else "flat")
    return verdict, n_below, n_above


def perturbation_check(pairs, rng) -> PerturbationCheck:
    """:func:`perturbation_verdict` at six degenerate points per chain (the plane e = 0 on both sides of w_sad, on
    the line w = w_sad, and a point of Sigma) against ``attention.classify``."""
    rows, ok, n_agree = [], True, 0
    for p_, q_ in [(nchecks.probability("p", p_), nchecks.probability("q", q_)) for p_, q_ in pairs]:
        for pt in PERTURB_POINTS:
            kind = attention.classify(*pt, p_, q_)
            verdict, n_below, n_above = perturbation_verdict(pt, p_, q_, rng)
            ok &= verdict == kind
            n_agree += int(verdict == kind)
            rows.append((p_, q_, pt, kind, n_below, n_above, verdict))
    return PerturbationCheck(rows, ok, n_agree, len(rows))


@dataclass
class BiasKink:
    """Remark 5 at a point of Sigma: one-sided d/de (dL/db) of the full model (d_plus from the k < 0 side, d_minus
    from k > 0) and their predictions -+ pi0 pi1 e; the reduced gradient's one-sided differences (jump, and distance
    from the Hessian's column); L - H(pi) at +-0.01 along the Hessian's negative and positive eigenvectors."""
    e: float
    pi0pi1: float
    d_plus: float
    d_minus: float
    pred_plus: float
    pred_minus: float
    r_plus: np.ndarray
    r_minus: np.ndarray
    column: np.ndarray
    path: dict

    @property
    def red_jump(self) -> float:
        return float(np.abs(self.r_plus - self.r_minus).max())

    @property
    def red_col(self) -> float:
        return float(np.abs(self.r_plus - self.column).max())

    def report(self) -> str:
        vec = lambda v: "(" + ", ".join(fixed(x, 4) for x in v) + ")"  # noqa: E731
        return "\n".join([
            f"full model, d/de (dL/db) at Sigma point e={self.e}: from the k<0 side {fixed(self.d_plus, 4)} (predicted "
            f"{fixed(self.pred_plus, 4)}), from the k>0 side {fixed(self.d_minus, 4)} (predicted "
            f"{fixed(self.pred_minus, 4)})",
            f"reduced loss, d/de grad L: k<0 side {vec(self.r_plus)}, k>0 side {vec(self.r_minus)}, "
            f"Hessian column {vec(self.column)}",
            "reduced loss at +-0.01 along the Hessian's eigenvectors: below H(pi) on both sides along the negative "
            f"one: {yes_no(max(self.path['negative']) < 0)}; above H(pi) on both sides along the positive one: "
            f"{yes_no(min(self.path['positive']) > 0)}"])


def bias_kink(lin: LinearModel, p, q, e=1.1, h=1e-6) -> BiasKink:
    """Remark 5 at the point (e, -1/sqrt2, -1/e^2) of Sigma: the bias b* = beta*(0) (f = 0 on Sigma), one-sided
    differences (step ``h``) in e of the full model's dL/db (autograd), whose jump is 2 pi0 pi1 e (the bias constant
    of eq-att-c switches across a = -1/e^2), and of the reduced ``canonical.grad``, which is smooth there."""
    p, q = nchecks.probability("p", p), nchecks.probability("q", q)
    e, h = nchecks.positive_real("e", e), nchecks.positive_real("h", h)
    pi0, pi1 = q / (p + q), p / (p + q)
    a_s = -1 / e**2
    b_s = float(canonical.optimal_beta(0.0, p, q))
    dL_db = lambda e_: float(lin.grad(e_, W_SAD, a_s, b_s, p, q, wrt=[3])[0])  # noqa: E731
    d_plus, d_minus = (dL_db(e + h) - dL_db(e)) / h, (dL_db(e) - dL_db(e - h)) / h
    red = lambda e_: np.array(canonical.grad(e_, W_SAD, p, q, a=a_s))  # noqa: E731
    r_plus, r_minus = (red(e + h) - red(e)) / h, (red(e) - red(e - h)) / h
    H = attention.hessian(e, W_SAD, a_s, p, q)
    evecs = np.linalg.eigh(H)[1]
    theta = np.array([e, W_SAD, a_s])
    H_pi = MarkovChain(p, q).marginal_entropy
    path = {}
    for name, i in (("negative", 0), ("positive", 2)):
        pts = theta[None, :] + np.array([-1e-2, 1e-2])[:, None] * evecs[:, i][None, :]
        path[name] = canonical.loss(pts[:, 0], pts[:, 1], p, q, a=pts[:, 2]) - H_pi
    return BiasKink(e, pi0 * pi1, d_plus, d_minus, -pi0 * pi1 * e, pi0 * pi1 * e, r_plus, r_minus, H[:, 0], path)




@dataclass
class RootSearch:
    """rows: (dim, p, q, starts, roots kept, escapes, counts per set incl. 'elsewhere'); the largest |grad L| at a
    root (g_worst); roots that ``attention.classify`` names 'regular' (n_regular, 0 when it agrees)."""
    rows: list
    g_worst: float
    n_regular: int

    @property
    def agrees(self) -> bool:
        return self.n_regular == 0

    @property
    def n_starts(self) -> int:
        return sum(r[3] for r in self.rows)

    @property
    def n_roots(self) -> int:
        return sum(r[4] for r in self.rows)

    def totals(self, dim=None) -> dict:
        """Roots per set (and 'elsewhere') over the chains, of dimension ``dim`` (3 or 4) or of both; 'starts'."""
        rows = [r for r in self.rows if dim is None or r[0] == dim]
        out = {k: sum(r[6][k] for r in rows) for k in (*SETS, "elsewhere")}
        out["starts"] = sum(r[3] for r in rows)
        out["chains"] = len(rows)
        out["roots"] = sum(r[4] for r in rows)
        return out

    def report(self) -> str:
        out = [f"{'dim':>4}{'chains':>8}{'starts':>8}{'a third found a root':>22}{'Gamma* found':>14}"
               f"{'plane found':>13}{'Sigma found':>13}{'elsewhere':>11}{'markovlib classify agrees':>27}"]
        for dim in (3, 4):
            t = self.totals(dim)
            out.append(f"{dim:>4}{t['chains']:>8}{t['starts']:>8}{yes_no(3 * t['roots'] > t['starts']):>22}"
                       f"{yes_no(t['Gamma*'] > 0):>14}{yes_no(t['plane e=0'] > 0):>13}{yes_no(t['Sigma'] > 0):>13}"
                       f"{t['elsewhere']:>11}{yes_no(self.agrees):>27}")
        lo, _ = wilson_interval(self.n_roots, self.n_starts)
        out.append(f"starts that found a root: more than a third: {yes_no(3 * self.n_roots > self.n_starts)} "
                   f"(Wilson 95% lower end above 1/4: {yes_no(lo > 0.25)}); |grad L| at every root "
                   f"{bound(self.g_worst, 1e-10)}")
        return "\n".join(out)


def root_search(pairs, n_starts, box, set_tol, rng) -> RootSearch:
    """Thms 9 and 10 by root search, for each chain of ``pairs`` in 3-D and 4-D: ``n_starts`` starts uniform in
    [-box, box]^k, plus n_starts // 4 within 0.3 of random points of Sigma and as many within 0.1 of the plane e = 0,
    solved to |grad L| < 1e-10 (``numerics.roots.multistart_roots``). Roots beyond 5 box are escapes unless they lie on
    the plane (critical for every (w, a)). ``set_tol`` is the tolerance of the closed-form placement; ``rng`` a numpy
    Generator."""
    n_starts, box = nchecks.positive_int("n_starts", n_starts), nchecks.positive_real("box", box)
    set_tol = nchecks.positive_real("set_tol", set_tol)
    rng = as_generator(rng)
    rows, g_worst, n_regular = [], 0.0, 0
    for dim in (3, 4):
        for p_, q_ in pairs:
            n_sig = max(1, n_starts // 4)
            b0 = reference.optimal_beta_np(0.0, p_, q_)
            e_sig = rng.uniform(0.5, 1.5, n_sig) * rng.choice([-1.0, 1.0], n_sig)
            near = np.stack([e_sig, np.full(n_sig, canonical.W_SADDLE), -1 / e_sig**2, np.full(n_sig, b0)], 1)[:, :dim]
            plane_near = np.stack([rng.uniform(-0.1, 0.1, n_sig), rng.uniform(-box, box, n_sig),
                                   rng.uniform(-box, box, n_sig), b0 + rng.uniform(-0.3, 0.3, n_sig)], 1)[:, :dim]
            starts = np.vstack([rng.uniform(-box, box, (n_starts, dim)),
                                near + rng.uniform(-0.3, 0.3, (n_sig, dim)), plane_near])
            roots, found = multistart_roots(lambda x: reference.attention_grad(x, p_, q_), starts, tol=1e-10)
            far = found & (np.abs(np.nan_to_num(roots)).max(axis=1) > 5 * box)
            escaped = far & ~checks.place_roots(np.nan_to_num(roots), p_, q_, set_tol)["plane e=0"]
            R = roots[found & ~escaped]
            counts = {k: int(v.sum()) for k, v in checks.place_roots(R, p_, q_, set_tol).items()}
            g_worst = max([g_worst] + [float(np.linalg.norm(reference.attention_grad(x, p_, q_))) for x in R])
            n_regular += int(np.sum(attention.classify(R[:, 0], R[:, 1], R[:, 2], p_, q_, atol=set_tol) == "regular"))
            rows.append((dim, p_, q_, len(starts), len(R), int(escaped.sum()), counts))
    return RootSearch(rows, g_worst, n_regular)


def energy_identity() -> dict:
    """Lemma 14: grad E . grad c simplified by sympy, with w = s W, W > 0 (|w| = W, w|w| = s W^2, sign w = s), for
    s = 1 and s = -1; a dict {'w > 0': expr, 'w < 0': expr} (both 0 when the lemma holds)."""
    es, as_, W = sp.symbols("e a W", real=True)
    out = {}
    for s in (1, -1):
        c_sym = es**2 * (1 + as_ * es**2) * (1 + 2 * s * W**2)
        E_sym = es**2 - 2 * as_**2 - W**2 - s * sp.log(W)
        dot = sum(sp.diff(E_sym, v) * sp.diff(c_sym, v) for v in (es, W, as_))  # d/dw = s d/dW, twice: s^2 = 1
        out[f"w {'>' if s > 0 else '<'} 0"] = sp.simplify(dot)
    return out
