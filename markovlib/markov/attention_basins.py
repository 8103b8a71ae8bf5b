"""The chapter ``attention``'s checks of the 3-D basins (beyond the paper: the rule of ``attention.predict_outcome``,
from the energy and the second invariant) and of Thm 11 (Makkuva et al., standard initialization).

* :func:`basin_check`: integrated outcomes (``flow.integrate_batch``, read from c alone) of N(0, I) starts against the
  rule, with the predicted unigram limits (0, w_inf, A), for several chains; outcomes compared across each side.
* :func:`rule_table`: the 2-D rules (Thms 2 and 8) applied literally in 3-D, counted on the same starts.
* :func:`slice_outcomes`: integrated outcomes and the rule on a grid (e0, w0) at fixed a0.
* :func:`separatrix_escape`: flows from e0 = e_S(0)(1 -+ delta) (the exception to Lemma 15) and the growth of |A|^3.
* :func:`thm11_monte_carlo`: integrated unigram fractions against the rule's probability over sigma (z tests with a
  family-wise error), the small-sigma limits and the rule's trend.
* :func:`rule_probability`: the rule's P(unigram) under N(0, sigma^2 I_3); :func:`reference_spot_check`: the
  reference notes' counts against it (exact binomial test).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, norm

from ..book.formatting import bound, yes_no
from ..book.inference import wilson_interval
from ..numerics import checks
from . import attention, canonical
from .attention_model import as_generator
from .energy import SADDLE_ENERGY, energy
from .flow import horizon, integrate, integrate_batch

__all__ = ["BasinCheck", "basin_check", "rule_table", "slice_outcomes", "separatrix_escape", "Thm11",
           "thm11_monte_carlo", "rule_probability", "reference_spot_check"]

W_SAD = canonical.W_SADDLE



def sides(pq_pairs) -> dict:
    """The chains of ``pq_pairs`` by side of p + q = 1: {'>1': [...], '<1': [...]}."""
    return {">1": [tuple(pq) for pq in pq_pairs if sum(pq) > 1], "<1": [tuple(pq) for pq in pq_pairs if sum(pq) < 1]}


@dataclass
class BasinCheck:
    """theta: the starts (3, n); outcomes: integrated outcome per chain; n_bad mismatches with the rule; max_lim_err
    (unigram limits against (0, w_inf, A)); same_side: identical outcomes per side; n_same (starts with one outcome
    per side); rows of the table."""
    theta: np.ndarray
    outcomes: dict
    n_bad: int
    max_lim_err: float
    same_side: dict
    n_same: int
    rows: list

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}{'n':>6}{'unigram':>9}{'global':>8}{'undecided':>10}{'mismatches':>11}"
               f"{'max |limit - pred|':>20}"]
        for p_, q_, n, uni, glob, und, bad, lim in self.rows:
            out.append(f"{p_:>5}{q_:>5}{n:>6}{uni:>9}{glob:>8}{und:>10}{bad:>11}{bound(lim, 1e-5):>20}")
        for side, ok in self.same_side.items():
            out.append(f"p+q{side}: integrated outcomes identical for the chains "
                       f"{self.chains[side]}: {yes_no(ok)}")
        return "\n".join(out)

    @property
    def chains(self) -> dict:
        return sides(list(self.outcomes))


def basin_check(pq_pairs, n, t_eff, max_steps, rng) -> BasinCheck:
    """The 3-D basin rule (``attention.predict_outcome``) against ``n`` integrated N(0, I_3) starts (``rng``) for each
    chain of ``pq_pairs`` (flows to t_eff / |g'(0)|, at most ``max_steps`` steps): outcomes must agree, the unigram
    limits must be (0, w_inf, A) within 1e-5, and the outcomes of chains on one side of p + q = 1 coincide."""
    n, t_eff = checks.positive_int("n", n), checks.positive_real("t_eff", t_eff)
    th = as_generator(rng).normal(0, 1.0, (3, n))
    lab = attention.planar_label(th[0], th[2])
    outcomes, rows, n_bad, max_lim = {}, [], 0, 0.0
    for p_, q_ in pq_pairs:
        res = integrate_batch(*th[:2], p_, q_, a0=th[2], max_steps=max_steps, t_max=horizon(p_, q_, t_eff),
                              gtol="data")
        pred = attention.predict_outcome(*th, p_, q_, label=lab)
        outcomes[(p_, q_)] = res.outcome
        bad = pred.outcome != res.outcome
        uni = (pred.outcome == "unigram") & ~bad
        lim = (float(np.max(np.abs(np.stack([res.e[uni], res.w[uni] - pred.w[uni], res.a[uni] - pred.a[uni]]))))
               if uni.any() else 0.0)
        max_lim, n_bad = max(max_lim, lim), n_bad + int(bad.sum())
        rows.append((p_, q_, n, int((res.outcome == "unigram").sum()), int((res.outcome == "global_min").sum()),
                     int((res.outcome == "undecided").sum()), int(bad.sum()), lim))
    by_side = sides(list(outcomes))
    same = {s: all(np.array_equal(outcomes[ch[0]], outcomes[pq]) for pq in ch[1:]) for s, ch in by_side.items()}
    n_same = int(np.sum(np.all([np.all([outcomes[pq] == outcomes[ch[0]] for pq in ch], axis=0)
                                for ch in by_side.values()], axis=0)))
    return BasinCheck(th, outcomes, n_bad, max_lim, same, n_same, rows)


def rule_table(basins: BasinCheck) -> tuple[dict, str]:
    """The 2-D rules applied in 3-D with the 3-D energy E, on the starts of ``basins``: {rule: (fails, starts)} and
    the table's text. The first ({w0 < 0, E > E_sad} => global) and 'p+q<1: w0 > w_sad => global' survive; the three
    rules for the local (unigram) minimum do not."""
    th, out = basins.theta, basins.outcomes
    E, w = energy(*th), th[1]
    by_side = sides(list(out))
    rules = [
        ("w0 < 0 and E > E_sad  =>  global (any p, q)", (w < 0) & (E > SADDLE_ENERGY), "global_min", list(out)),
        ("p+q>1: w0 > 0  =>  unigram", w > 0, "unigram", by_side[">1"]),
        ("p+q>1: w_sad <= w0 < 0, E < E_sad  =>  unigram", (w >= W_SAD) & (w < 0) & (E < SADDLE_ENERGY), "unigram",
         by_side[">1"]),
        ("p+q<1: w0 > w_sad  =>  global", w > W_SAD, "global_min", by_side["<1"]),
        ("p+q<1: w0 < w_sad, E < E_sad  =>  unigram", (w < W_SAD) & (E < SADDLE_ENERGY), "unigram", by_side["<1"]),
    ]
    table, text = {}, [f"{'2-D rule applied in 3-D':<50}{'starts':>8}{'holds':>7}{'fails':>7}"]
    for name, region, target, pairs in rules:
        n_in = int(region.sum()) * len(pairs)
        holds = sum(int((out[pq][region] == target).sum()) for pq in pairs)
        table[name] = (n_in - holds, n_in)
        text.append(f"{name:<50}{n_in:>8}{holds:>7}{n_in - holds:>7}")
    return table, "\n".join(text)


def slice_outcomes(p, q, a0, grid_n, t_eff, max_steps, e_lim=2.5, w_lim=2.0):
    """Integrated outcomes on the grid_n x grid_n grid of (e0, w0) in [-e_lim, e_lim] x [-w_lim, w_lim] at fixed
    ``a0``, and the rule's: (E0, W0, integrated outcomes, number of disagreements)."""
    grid_n = checks.positive_int("grid_n", grid_n)
    EG, WG = np.meshgrid(np.linspace(-e_lim, e_lim, grid_n), np.linspace(-w_lim, w_lim, grid_n), indexing="ij")
    A0 = np.full_like(EG, float(a0))
    res = integrate_batch(EG, WG, p, q, a0=A0, max_steps=max_steps, t_max=horizon(p, q, t_eff), gtol="data")
    pred = attention.predict_outcome(EG, WG, A0, p, q)
    return EG, WG, res.outcome, int((pred.outcome != res.outcome).sum())


@dataclass
class Escape:
    """Flows from e_S(0)(1 -+ delta): deltas, labels A of the inner starts (all deltas), the flows (delta, inner,
    outer, their end classes, A) at four deltas, ok (split as predicted, min a = A within 1e-3), the increments of
    |A|^3 per decade and the fit's slope over the last four."""
    deltas: np.ndarray
    A: np.ndarray
    flows: list
    ok: bool
    incr: np.ndarray
    fit: np.ndarray

    def report(self) -> str:
        out = [f"{'delta':>8}{'inside: reached':>17}{'min a':>9}{'A (line)':>10}{'outside: reached':>18}{'min a':>9}"]
        for dl, tr_in, tr_out, k_in, k_out, A_i in self.flows:
            out.append(f"{dl:>8.0e}{k_in:>17}{tr_in.a.min():>9.4f}{A_i:>10.4f}{k_out:>18}{tr_out.a.min():>9.4f}")
        out.append(f"A for delta = 1e-2 ... 1e-8: {np.round(self.A, 4)}")
        out.append(f"growth of |A|^3 per decade of delta: {np.round(self.incr, 4)} (settles to a constant: A -> "
                   f"-infinity like -(log 1/delta)^(1/3)); slope of the fit over delta <= 1e-5: {self.fit[0]:.4f} per "
                   "unit of log(1/delta)")
        return "\n".join(out)

    @property
    def trend_ok(self) -> bool:
        """A decreases, |A|^3 grows, and its last three increments agree within 5 %."""
        last = self.incr[-3:]
        return bool(self.ok and np.all(np.diff(self.A) < 0) and np.all(self.incr > 0)
                    and np.abs(last - last.mean()).max() < 0.05 * last.mean())


def separatrix_escape(p, q, t_eff) -> Escape:
    """The exception to Lemma 15: starts e0 = e_S(0)(1 -+ delta), w0 = 1, a0 = 0 for delta = 1e-2 ... 1e-8 (p + q > 1).
    The inner ones end on the unigram plane at a = A (``planar_label``), the outer ones at a global minimum; |A|^3 grows
    by an asymptotically constant amount per decade of delta (A -> -infinity as delta -> 0)."""
    p, q, t_eff = checks.probability("p", p), checks.probability("q", q), checks.positive_real("t_eff", t_eff)
    eS0 = float(attention.separatrix(0.0))
    deltas = np.array([1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8])
    A = np.asarray(attention.planar_label(eS0 * (1 - deltas), np.zeros_like(deltas)).A, dtype=float)
    cube = np.abs(A) ** 3
    fit = np.polyfit(np.log(1 / deltas[-4:]), cube[-4:], 1)
    flows, ok = [], True
    for dl in deltas[[0, 2, 4, 6]]:
        tr_in = integrate(eS0 * (1 - dl), 1.0, p, q, a0=0.0, t_max=horizon(p, q, t_eff / 2), n_points=300)
        tr_out = integrate(eS0 * (1 + dl), 1.0, p, q, a0=0.0, t_max=horizon(p, q, t_eff / 2), n_points=300)
        k_in = attention.classify(tr_in.e[-1], tr_in.w[-1], tr_in.a[-1], p, q, atol=1e-6)
        k_out = attention.classify(tr_out.e[-1], tr_out.w[-1], tr_out.a[-1], p, q, atol=1e-6)
        A_i = float(attention.planar_label(eS0 * (1 - dl), 0.0).A)
        # near S both integrators' errors are amplified like 1/delta (the lines fan out), hence the loose 1e-3
        ok &= k_in == "local_min" and k_out == "global_min" and abs(tr_in.a.min() - A_i) < 1e-3
        flows.append((dl, tr_in, tr_out, k_in, k_out, A_i))
    return Escape(deltas, A, flows, bool(ok), np.diff(cube), fit)


def rule_probability(p, q, sigma, n, rng) -> float:
    """The rule's P(unigram) under theta0 ~ N(0, sigma^2 I_3), estimated from ``n`` draws of ``rng``."""
    sigma, n = checks.positive_real("sigma", sigma), checks.positive_int("n", n)
    th = as_generator(rng).normal(0, sigma, (3, n))
    return float(np.mean(attention.predict_outcome(*th, p, q).outcome == "unigram"))


@dataclass
class Thm11:
    """rows: (sigma, p + q, unigram count k of n, Wilson interval, rule probability, z, undecided); ok (every
    |z| < z_max and no undecided flow); trend (rule monotone in sigma within trend_se standard errors)."""
    rows: list
    n: int
    n_pred: int
    z_max: float
    ok: bool
    trend: bool
    alpha: float

    def side(self, above: bool) -> list:
        return [r for r in self.rows if (r[1] > 1) == above]

    @property
    def n_undecided(self) -> int:
        return sum(r[7] for r in self.rows)

    def report(self) -> str:
        out = [f"{'sigma':>6}{'side':>7}{'n':>6}{'unigram':>9}{'fraction':>10}{'Wilson 95% CI':>18}"
               f"{'rule (n=%d)' % self.n_pred:>16}{'z':>7}{'undecided':>11}"]
        for sigma, s, k, lo, hi, prob, z, und in self.rows:
            out.append(f"{sigma:>6.2f}{'>1' if s > 1 else '<1':>7}{self.n:>6}{k:>9}{k / self.n:>10.3f}"
                       f"{'[%.3f, %.3f]' % (lo, hi):>18}{prob:>10.4f} +- "
                       f"{math.sqrt(prob * (1 - prob) / self.n_pred):.4f}{z:>7.2f}{und:>11}")
        out.append(f"(z tests at |z| < {self.z_max:.2f}: family-wise error {self.alpha:g} over {len(self.rows)} "
                   f"tests); rule's P(unigram) monotone in sigma: {yes_no(self.trend)}")
        return "\n".join(out)


def thm11_monte_carlo(pairs, sigmas, n, n_pred, alpha, trend_se, t_eff, max_steps, rng) -> Thm11:
    """Thm 11 for the chains ``pairs`` (one per side): for each sigma, ``n`` integrated N(0, sigma^2 I_3) starts and
    the rule's probability from ``n_pred`` draws; |z| of their difference (combined binomial standard errors) below
    the two-sided Bonferroni bound for family-wise error ``alpha`` over sigma x side, no undecided flow; the rule's
    P(unigram) falls with sigma for p + q > 1 and rises for p + q < 1, up to ``trend_se`` standard errors."""
    n, n_pred = checks.positive_int("n", n), checks.positive_int("n_pred", n_pred)
    alpha, trend_se = checks.probability("alpha", alpha), checks.positive_real("trend_se", trend_se)
    rng = as_generator(rng)
    z_max = float(norm.ppf(1 - alpha / (2 * len(pairs) * len(sigmas))))
    rows, ok = [], True
    for sigma in sigmas:
        th_p = rng.normal(0, sigma, (3, n_pred))
        lab_p = attention.planar_label(th_p[0], th_p[2])
        th_m = rng.normal(0, sigma, (3, n))
        for p_, q_ in pairs:
            prob = float(np.mean(attention.predict_outcome(*th_p, p_, q_, label=lab_p).outcome == "unigram"))
            res = integrate_batch(*th_m[:2], p_, q_, a0=th_m[2], max_steps=max_steps, t_max=horizon(p_, q_, t_eff),
                                  gtol="data")
            k, n_und = int((res.outcome == "unigram").sum()), int((res.outcome == "undecided").sum())
            lo, hi = wilson_interval(k, n)
            z = abs(k / n - prob) / math.sqrt(max(prob * (1 - prob), 1e-12) * (1 / n + 1 / n_pred))
            ok &= z < z_max and n_und == 0
            rows.append((sigma, p_ + q_, k, lo, hi, prob, z, n_und))
    se = lambda pr: math.sqrt(max(pr * (1 - pr), 1e-12) / n_pred)  # noqa: E731
    hi_r, lo_r = [r for r in rows if r[1] > 1], [r for r in rows if r[1] < 1]
    trend = all(b[5] - a[5] <= trend_se * math.hypot(se(a[5]), se(b[5])) for a, b in zip(hi_r, hi_r[1:]))
    trend &= all(a[5] - b[5] <= trend_se * math.hypot(se(a[5]), se(b[5])) for a, b in zip(lo_r, lo_r[1:]))
    return Thm11(rows, n, n_pred, z_max, bool(ok), bool(trend), alpha)


def reference_spot_check(seed, n_pred, counts=(((0.9, 0.9), 169), ((0.1, 0.1), 8)), n=200):
    """The reference notes' spot check (``counts``: local outcomes of ``n`` starts N(0, 0.25 I_3) per chain) against
    the rule's probability at sigma = 0.5 (variance 0.25), from ``n_pred`` draws of np.random.default_rng(seed),
    with the exact binomial p-value; and the rule's probability for p = q = 0.9 under the other reading, standard
    deviation 0.25 (the same seed). Returns (table text, that probability)."""
    n_pred = checks.positive_int("n_pred", n_pred)
    th = np.random.default_rng(seed).normal(0, 0.5, (3, n_pred))
    lab = attention.planar_label(th[0], th[2])
    out = [f"{'chain':<12}{'reference local/200':>21}{'rule P(local)':>15}{'expected of 200':>17}"
           f"{'binomial p-value':>18}"]
    for (p_, q_), k in counts:
        prob = float(np.mean(attention.predict_outcome(*th, p_, q_, label=lab).outcome == "unigram"))
        out.append(f"{'p=q=%.1f' % p_:<12}{k:>21}{prob:>15.4f}{n * prob:>17.1f}{binomtest(k, n, prob).pvalue:>18.3f}")
    prob_sd = rule_probability(0.9, 0.9, 0.25, n_pred, np.random.default_rng(seed))
    out.append(f"the other reading (standard deviation 0.25): rule P(local) for p=q=0.9 = {prob_sd:.3f}")
    return "\n".join(out), prob_sd
