"""The checks of the chapter markov_data (Markov data and its two yardsticks; Sec. 2 of Makkuva et al.): the
stationary law, the two entropies, the loss of the kernel and of the marginal, and the sampler's frequencies. Each
function returns its measurements with the text it prints (``.text``) as a ``types.SimpleNamespace``; the chapter
records the claims.

* :func:`expected_loss`: Independent reference: the expected next-symbol cross-entropy of a bigram predictor in its
  logits, pi_0 CE(p, sigma(u0)) + pi_1 CE(1 - q, sigma(u1)) with CE(t, sigma(u)) = softplus(u) - t u.
* :func:`stationary`, :func:`entropies`: eq-stationary, eq-entropy-rate and eq-marginal-entropy in closed form
  against numpy's eigenvector and ``MarkovChain``.
* :func:`yardstick_losses`: the cross-entropy of the kernel and of pi_1 on sampled sequences.
* :func:`loss_minimizers`: the kernel and pi_1 minimize the exact loss (a grid of logits).
* :func:`yardstick_gap`: H(pi) - entropy rate >= 0, = 0 iff p + q = 1, = the mutual information I(x_n; x_n+1).
* :func:`sampler_frequencies`, :func:`run_lengths`, :func:`kernel_frequencies`: exact binomial tests of the sampler.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..book import inference
from ..book.formatting import bound, fixed
from ..numerics import checks
from . import checks as markov_checks
from .chain import MarkovChain, binary_entropy

__all__ = ["expected_loss", "stationary", "entropies", "yardstick_losses", "loss_minimizers", "yardstick_gap",
           "sampler_frequencies", "run_lengths", "kernel_frequencies"]


def _pq(p, q):
    return checks.probability("p", p), checks.probability("q", q)


def expected_loss(u0, u1, p, q):
    """Independent reference: pi_0 CE(p, sigma(u0)) + pi_1 CE(1 - q, sigma(u1)) in the logits (u0, u1) of the
    predicted P(1 | 0) and P(1 | 1), CE(t, sigma(u)) = softplus(u) - t u, pi = (q, p) / (p + q)."""
    p, q = _pq(p, q)
    return (q * (np.logaddexp(0, u0) - p * u0) + p * (np.logaddexp(0, u1) - (1 - q) * u1)) / (p + q)


def stationary(p, q):
    """eq-stationary: pi = (q, p) / (p + q) against numpy's left eigenvector of P for the eigenvalue 1
    (``err_eig``) and ``MarkovChain.stationary`` (``err_lib``)."""
    p, q = _pq(p, q)
    chain = MarkovChain(p, q)
    eigvals, eigvecs = np.linalg.eig(chain.kernel.T)
    pi_eig = np.real(eigvecs[:, np.argmin(np.abs(eigvals - 1))])
    pi_closed = np.array([q, p]) / (p + q)
    err_eig = float(np.abs(pi_eig / pi_eig.sum() - pi_closed).max())  # LAPACK: a rounding error, printed as a bound
    err_lib = float(np.abs(chain.stationary - pi_closed).max())
    text = (f"closed form pi = ({fixed(pi_closed[0], 10)}, {fixed(pi_closed[1], 10)})\nmax |eigenvector - closed "
            f"form| {bound(err_eig, 1e-13)}; max |MarkovChain.stationary - closed form| {bound(err_lib, 1e-15)}")
    return SimpleNamespace(pi=pi_closed, err_eig=err_eig, err_lib=err_lib, text=text)


def entropies(p, q):
    """eq-entropy-rate (q h(p) + p h(q)) / (p + q) and eq-marginal-entropy h(p / (p + q)), h = ``binary_entropy``,
    against ``MarkovChain.entropy_rate`` and ``marginal_entropy`` (sum_i pi_i H(P_i) and H(pi) from the kernel)."""
    p, q = _pq(p, q)
    chain = MarkovChain(p, q)
    rate = float((q * binary_entropy(p) + p * binary_entropy(q)) / (p + q))
    marginal = float(binary_entropy(p / (p + q)))
    err_rate, err_pi = abs(rate - chain.entropy_rate), abs(marginal - chain.marginal_entropy)
    text = (f"entropy rate (closed form) {fixed(rate, 10)}; |markovlib - closed form| {bound(err_rate, 1e-15)}\n"
            f"H(pi) (closed form)        {fixed(marginal, 10)}; |markovlib - closed form| {bound(err_pi, 1e-15)}")
    return SimpleNamespace(rate=rate, marginal=marginal, err_rate=err_rate, err_pi=err_pi, text=text)


def yardstick_losses(x, p, q):
    """The cross-entropy of the kernel (bigram) and of pi_1 (unigram) on the sampled sequences ``x`` (batch, length)
    against the entropy rate and H(pi) (closed forms): a z-test over the independent sequences (``z`` the largest
    |z|, ``pvalues`` by predictor)."""
    p, q = _pq(p, q)
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"x must be a (batch, length >= 2) array of sequences, got shape {x.shape}")
    ent = entropies(p, q)
    prev, nxt = x[:, :-1], x[:, 1:]
    rows, pvalues = [f"{'predictor':<22}{'predicted':>11}{'measured':>11}{'std err':>10}{'|z|':>7}"], {}
    z_max = 0.0
    for name, predictor, truth in [("bigram (the kernel)", np.where(prev == 1, 1 - q, p), ent.rate),
                                   ("unigram (pi_1)", np.full(prev.shape, p / (p + q)), ent.marginal)]:
        per_token = -np.log(np.where(nxt == 1, predictor, 1 - predictor))  # cross-entropy of each next symbol
        mt = inference.mean_test(per_token.mean(axis=1), truth)  # sequences are independent: their error
        pvalues[f"loss of the {name}"] = mt.pvalue
        z_max = max(z_max, mt.z)
        rows.append(f"{name:<22}{truth:>11.5f}{fixed(mt.mean, 3):>11}{mt.std_err if mt.std_err > 1e-13 else 0:>10.0e}"
                    f"{fixed(mt.z, 1):>7}")
    return SimpleNamespace(z=float(z_max), pvalues=pvalues, text="\n".join(rows))


def loss_minimizers(p, q, n=1201, u_max=7.0):
    """The exact loss (``expected_loss``) on an n x n grid of logits in [-u_max, u_max]^2 (step delta): its argmin
    lies ``steps`` grid steps from the kernel (logit p, logit(1 - q)) and exceeds the entropy rate by ``ex_rate``;
    on the diagonal (constant predictors) ``steps_d`` from logit pi_1, exceeding H(pi) by ``ex_pi``. Both excesses
    lie in [0, delta^2/32] (``tol``) up to rounding."""
    p, q = _pq(p, q)
    n = checks.positive_int("n", n)
    ent = entropies(p, q)
    u = np.linspace(-u_max, u_max, n)
    delta = u[1] - u[0]
    U0, U1 = np.meshgrid(u, u, indexing="ij")
    Lg = expected_loss(U0, U1, p, q)
    i, j = np.unravel_index(np.argmin(Lg), Lg.shape)
    diag = expected_loss(u, u, p, q)
    k = int(np.argmin(diag))
    logit = lambda t: np.log(t / (1 - t))  # noqa: E731
    excess = lambda v: bound(v, 1e-12) if abs(v) < 1e-12 else f"{v:.1e}"  # noqa: E731  (rounding level as a bound)
    steps = float(max(abs(u[i] - logit(p)), abs(u[j] - logit(1 - q))) / delta)
    steps_d = float(abs(u[k] - logit(p / (p + q))) / delta)
    ex_rate, ex_pi, tol = float(Lg.min() - ent.rate), float(diag.min() - ent.marginal), delta ** 2 / 32
    sig = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    text = (f"logit grid of step {delta:.4f}: argmin (f0, f1) = ({sig(u[i]):.4f}, {sig(u[j]):.4f}) vs kernel (p, 1-q) "
            f"= ({p:.4f}, {1 - q:.4f}); min - entropy rate {excess(ex_rate)} (tolerance {tol:.1e})\n"
            f"diagonal argmin f = {sig(u[k]):.4f} vs pi_1 = {p / (p + q):.4f}; min - H(pi) {excess(ex_pi)}")
    return SimpleNamespace(steps=steps, steps_d=steps_d, ex_rate=ex_rate, ex_pi=ex_pi, tol=tol, n=n,
                           ex_rate_text=excess(ex_rate), ex_pi_text=excess(ex_pi), text=text)


def yardstick_gap(gap_margin, n=99):
    """H(pi) - entropy rate on an n x n grid of (p, q) in [0.01, 0.99]^2: ``neg`` (its most negative value, >= 0 up
    to rounding), ``on_line`` (max |gap| on p + q = 1), ``off_line`` (min gap at |p + q - 1| >= gap_margin), and
    ``err_mi``, the largest |gap - I(x_n; x_n+1)|, the mutual information summed from the joint law."""
    gap_margin, n = checks.positive_real("gap_margin", gap_margin), checks.positive_int("n", n)
    grid = np.linspace(0.01, 0.99, n)
    PP, QQ = np.meshgrid(grid, grid, indexing="ij")
    gap = binary_entropy(PP / (PP + QQ)) - (QQ * binary_entropy(PP) + PP * binary_entropy(QQ)) / (PP + QQ)
    pi0, pi1 = QQ / (PP + QQ), PP / (PP + QQ)
    joint = [(pi0 * (1 - PP), pi0, pi0), (pi0 * PP, pi0, pi1), (pi1 * QQ, pi1, pi0), (pi1 * (1 - QQ), pi1, pi1)]
    mutual_info = sum(j * np.log(j / (m_row * m_col)) for j, m_row, m_col in joint)
    err_mi = float(np.abs(gap - mutual_info).max())
    on_line = float(np.abs(gap[np.isclose(PP + QQ, 1.0)]).max())
    # the tolerance keeps the grid points at distance exactly gap_margin, which float rounding of the grid would drop
    off_line = float(gap[np.abs(PP + QQ - 1) >= gap_margin - 1e-9].min())
    neg = float(gap.min())
    text = (f"gap >= 0 on the grid up to {bound(max(-neg, 0.0), 1e-14)}; max |gap| on p+q=1: {bound(on_line, 1e-14)}; "
            f"min gap off the line (|p+q-1| >= {gap_margin:g}): {off_line:.2e}\n"
            f"max |gap - mutual information I(x_n; x_n+1)| over the grid: {bound(err_mi, 1e-14)}")
    return SimpleNamespace(grid=grid, gap=gap, neg=neg, on_line=on_line, off_line=off_line, err_mi=err_mi, text=text)


def _binomial_row(truth, k, n):
    z = abs(k / n - truth) / np.sqrt(truth * (1 - truth) / n)
    return z, float(markov_checks.binom_pvalue(k, n, truth))


def sampler_frequencies(chain, batch, length, seed):
    """Exact binomial tests of ``chain.sample`` (numpy and torch backends, ``batch`` x ``length``, seed ``seed``):
    the transitions P(1|0) = p, P(0|1) = q (``pv_trans``, ``z_trans``) and the stationary marginal at the first,
    middle and last position (``pv_marg``, ``z_marg``); ``pvalues`` by test name."""
    batch, length = checks.positive_int("batch", batch), checks.positive_int("length", length)
    p, q = chain.p, chain.q
    rows = [f"{'backend':<8}{'quantity':<22}{'predicted':>10}{'measured':>10}{'count':>9}{'|z|':>7}{'p-value':>9}"]
    out = dict(z_trans=[], z_marg=[], pv_trans=[], pv_marg=[])
    pvalues = {}
    for backend in ("numpy", "torch"):
        xs = np.asarray(chain.sample(batch, length, seed=seed, backend=backend))
        (k01, n0), (k10, n1) = markov_checks.transition_counts(xs)
        cases = [("P(1|0) = p", p, k01, n0), ("P(0|1) = q", q, k10, n1)]
        cases += [(f"P(x_{pos + 1} = 1) = pi_1", p / (p + q), int(xs[:, pos].sum()), batch)
                  for pos in (0, length // 2, length - 1)]
        for i, (name, truth, k, n) in enumerate(cases):
            z, pv = _binomial_row(truth, k, n)
            pvalues[f"{backend}: {name}"] = pv
            out["z_trans" if i < 2 else "z_marg"].append(z)
            out["pv_trans" if i < 2 else "pv_marg"].append(pv)
            rows.append(f"{backend:<8}{name:<22}{truth:>10.4f}{fixed(k / n, 3):>10}{k:>9}{fixed(z, 1):>7}{pv:>9.2g}")
    return SimpleNamespace(**out, pvalues=pvalues, text="\n".join(rows))


def run_lengths(x, p, q, kmax):
    """Run lengths of the sampled sequences ``x``, selected by their start (``checks.runs_from_start``): per state
    (0: Geom(p), 1: Geom(q)) the counts in the bins 1..kmax and > kmax against ``checks.geometric_bins`` by exact
    binomial tests. ``p_min`` the smallest p-value, ``n_runs`` and ``measured`` (fractions in the bins 1..kmax)
    per state, ``pvalues`` by bin."""
    p, q = _pq(p, q)
    kmax = checks.positive_int("kmax", kmax)
    run_len, run_state = markov_checks.runs_from_start(x, kmax)
    pv_all, n_runs, measured, pvalues = [], [], [], {}
    for state, r in ((0, p), (1, q)):
        lens = run_len[run_state == state]
        counts = np.bincount(lens, minlength=kmax + 2)[1:]  # bins 1..kmax, then kmax + 1 = "longer than kmax"
        pv = markov_checks.binom_pvalue(counts, lens.size, markov_checks.geometric_bins(r, kmax))
        pv_all.append(pv)
        n_runs.append(int(lens.size))
        measured.append(counts[:-1] / lens.size)
        for k, pvk in zip(list(range(1, kmax + 1)) + [f">{kmax}"], pv):
            pvalues[f"runs of {state}, length {k}"] = float(pvk)
    p_min = float(np.concatenate(pv_all).min())
    text = (f"run-length law: {n_runs[0]} runs of 0, {n_runs[1]} runs of 1; {2 * (kmax + 1)} bins (k = 1..{kmax} and "
            f"k > {kmax}); smallest exact binomial p-value {p_min:.2g}")
    return SimpleNamespace(p_min=p_min, n_runs=n_runs, measured=measured, pvalues=pvalues, text=text)


def kernel_frequencies(kernel, batch, length, seed):
    """A K-state chain (``MarkovChain.from_kernel``): exact binomial tests of its K^2 transition counts in
    ``batch`` x ``length`` sampled tokens (``pv`` per entry, ``z`` the largest |z|, ``pvalues`` by entry)."""
    kernel = np.asarray(kernel, dtype=float)
    chain = MarkovChain.from_kernel(kernel)
    x = chain.sample(checks.positive_int("batch", batch), checks.positive_int("length", length), seed=seed)
    K = kernel.shape[0]
    counts = np.zeros((K, K), dtype=int)
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    n_from = counts.sum(axis=1, keepdims=True)
    z = float((np.abs(counts / n_from - kernel) / np.sqrt(kernel * (1 - kernel) / n_from)).max())
    pv = markov_checks.binom_pvalue(counts, np.broadcast_to(n_from, counts.shape), kernel)
    pvalues = {f"{K}-state P({b}|{a})": float(v) for (a, b), v in np.ndenumerate(pv)}
    text = (f"stationary law: {chain.stationary.round(4)}  entropy rate: {fixed(chain.entropy_rate, 4)}  H(pi): "
            f"{fixed(chain.marginal_entropy, 4)}\nestimated kernel (Monte Carlo):\n{(counts / n_from).round(2)}\n"
            f"{K * K} entries: max |z| {fixed(z, 1)}, min exact binomial p-value {pv.min():.2g}")
    return SimpleNamespace(pv=pv, z=z, pvalues=pvalues, text=text)
