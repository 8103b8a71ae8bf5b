# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Markov data and its two yardsticks
#
# Every experiment in this book trains a model on sequences from a first-order Markov chain. Before any model
# appears, this chapter pins down the data: its kernel, its stationary law, and the two numbers every later loss
# curve is measured against, the **entropy rate** (what a model that uses the previous symbol can reach: the
# *bigram* predictor) and the **marginal entropy** $H(\pi)$ (what a model that ignores it reaches: the *unigram*
# predictor). It also checks the sampler that feeds every experiment.
#
# ## What this chapter shows
#
# 1. The binary chain of {cite:t}`makkuva2024local` (Sec. 2), $p = P(1\mid 0)$, $q = P(0\mid 1)$, has the
#    stationary law $\pi = (q, p)/(p+q)$: closed form and eigenvector agree to {glue:text}`md_err_stationary`
#    ([Sec. 1](#sec-markov-data-stationary)).
# 2. Its entropy rate $\frac{q\,h(p) + p\,h(q)}{p+q}$ ({glue:text}`md_entropy_rate` nats here) is the best any
#    next-symbol predictor reaches (the global minimum of Thm 4), and $H(\pi) = h(\frac{p}{p+q})$
#    ({glue:text}`md_marginal_entropy` nats) the best a predictor that ignores the context reaches (the bad local
#    minimum of Thm 5) ([Sec. 2](#sec-markov-data-yardsticks)).
# 3. The two coincide exactly on $p + q = 1$ (i.i.d. data); their gap is the mutual information of consecutive
#    symbols, at least {glue:text}`md_min_gap` nats at distance {glue:text}`md_gap_margin` from the line
#    ([Sec. 3](#sec-markov-data-gap)).
# 4. The vectorized sampler has the right transition frequencies, the stationary marginal at every position and
#    geometric run lengths, for both backends: {glue:text}`md_n_tests` exact binomial tests, family-wise false
#    alarm at most {glue:text}`md_family_alpha` ([Sec. 4](#sec-markov-data-sampler),
#    [Sec. 5](#sec-markov-data-family)).
#
# Claims 1 to 3 are identities (claim 3 on a grid over the whole square); claim 4 holds for $p, q$ in Part I's
# theory range on either side of $p + q = 1$ or on it; the table below gives every parameter's range and reason.
#
# ## Parameters
#
# The defaults are the paper's Fig. 4 chain. Beside them, CI runs the chapter at the second parameter set
# `book/ci_params/markov_data.yaml`, a chain at a corner of the range with the smallest sizes accepted; chains at
# the other corners, on both sides of $p + q = 1$ and on it, with other seeds, were also run.

# %% tags=["parameters"]
p: float = 0.5  # P(1 | 0) of the chain, in [0.02, 0.98] (paper's Fig. 4: p 0.5, q 0.8, so p + q > 1)
q: float = 0.8  # P(0 | 1) of the chain, in [0.02, 0.98]
batch: int = 2048  # sampled sequences of the statistical checks (at least 256)
length: int = 512  # length of each sampled sequence (at least 64)
seed: int = 0  # seed of the samplers (numpy and torch generators)
n_sigma: float = 5.0  # level of every frequency test: the two-sided normal tail of n_sigma (5 gives 5.7e-7)
kmax: int = 12  # run lengths are tested in the bins 1, 2, ..., kmax and longer than kmax (at most length / 4)
gap_margin: float = 0.05  # the yardsticks must differ at the grid points with |p + q - 1| at least gap_margin

# %%
from markovlib.book import params
from markovlib.markov import checks

FAMILY_ALPHA_MAX = 0.01  # largest accepted family-wise false-alarm bound of the frequency tests
# the run makes 2 loss tests, 2 x 5 transition/marginal tests, 2 x (kmax + 1) run-length tests and 9 three-state
# tests; n_sigma must keep their family-wise false-alarm bound (Bonferroni) at or below FAMILY_ALPHA_MAX
SPEC = params.declare(
    p=params.Real(*params.THEORY_RANGE, why="Part I's theory range; on the line p + q = 1 too (claims 1-4 hold there)"),
    q=params.Real(*params.THEORY_RANGE, why="Part I's theory range"),
    batch=params.Int(256, why="enough sequences for the exact tests at the edges of the range"),
    length=params.Int(64, why="long enough for the run-length bins"),
    seed=params.Int(0, why="any seed"),
    n_sigma=params.Real(3.0, 8.0, why="a level fixed before the data; the lower end is raised by the family bound"),
    kmax=params.Int(2, why="at least two run-length bins"),
    gap_margin=params.Real(0.0, 1.0, closed=False, why="a distance from the line p + q = 1"),
    require=[
        ("kmax <= length // 4", lambda v: v["kmax"] <= v["length"] // 4,
         "every selected run is followed for kmax steps inside the window"),
        ("n_sigma >= n_sigma_min(n_tests, 0.01)",
         lambda v: v["n_sigma"] >= checks.n_sigma_min(2 + 10 + 2 * (v["kmax"] + 1) + 9, FAMILY_ALPHA_MAX),
         "the family-wise false-alarm bound of all the run's tests stays at or below 0.01 (Bonferroni)"),
    ],
)
globals().update(SPEC.check(globals()))
n_tests_planned = 2 + 10 + 2 * (kmax + 1) + 9
SPEC.table()

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from markovlib.book import inference, plotting
from markovlib.book.formatting import bound, fixed
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.markov.chain import MarkovChain, binary_entropy

plotting.use_style()
chain = MarkovChain(p, q)
verified = Verification()  # one record per claim; the "What was verified" table is generated from it
level = 2 * stats.norm.sf(n_sigma)  # two-sided level of every frequency test
tests = {}  # name -> exact p-value of every frequency test of the run (for the family-wise statement)
print(chain)
print("kernel P =\n", chain.kernel)

# %% [markdown]
# (sec-markov-data-stationary)=
# ## The stationary law
#
# A chain started from $\pi$ stays at $\pi$ when $\pi P = \pi$. For the binary kernel
# $P = \begin{pmatrix} 1-p & p \\ q & 1-q \end{pmatrix}$ the first coordinate of $\pi P = \pi$ reads
# $\pi_0 (1-p) + \pi_1 q = \pi_0$, i.e. the flows balance, $\pi_0\, p = \pi_1\, q$. With $\pi_0 + \pi_1 = 1$:
#
# $$
# \pi = \left(\frac{q}{p+q},\ \frac{p}{p+q}\right).
# $$ (eq-stationary)
#
# The sequences of the paper start from $\pi$ ("already mixed"), so every position has this marginal. We check
# the closed form against the left eigenvector of $P$ for eigenvalue 1, computed independently by numpy.

# %%
eigvals, eigvecs = np.linalg.eig(chain.kernel.T)
pi_eig = np.real(eigvecs[:, np.argmin(np.abs(eigvals - 1))])
pi_eig = pi_eig / pi_eig.sum()
pi_closed = np.array([q, p]) / (p + q)
err_eig = float(np.abs(pi_eig - pi_closed).max())  # LAPACK eigenvector: a rounding error, printed as a bound
err_lib = float(np.abs(chain.stationary - pi_closed).max())
print(f"closed form pi = ({fixed(pi_closed[0], 10)}, {fixed(pi_closed[1], 10)})")
print(f"max |eigenvector - closed form| {bound(err_eig, 1e-13)}; max |MarkovChain.stationary - closed form| "
      f"{bound(err_lib, 1e-15)}")

# %% tags=["hide-input"]
_ = verified.record("stationary law (eq-stationary)", err_eig < 1e-12 and err_lib < 1e-14,
                    check="closed form vs numpy's left eigenvector of P (eigenvalue 1) and MarkovChain.stationary",
                    measured=f"eigenvector {bound(err_eig, 1e-13)}, markovlib {bound(err_lib, 1e-15)}",
                    tolerance="1e-12 (eigenvector), 1e-14 (markovlib)", kind="independent")
_ = glue("md_err_stationary", bound(err_eig, 1e-13))

# %% [markdown]
# (sec-markov-data-yardsticks)=
# ## Two yardsticks: the entropy rate and $H(\pi)$
#
# A model predicts $f(\text{context}) = \hat P(x_{n+1} = 1 \mid \text{context})$ and pays the cross-entropy
# $\mathbb{E}[-\log \hat P(x_{n+1})]$ in nats. Write $h(x) = -x\log x - (1-x)\log(1-x)$.
#
# **Bigram yardstick.** A predictor that sees $x_n$ chooses one probability $f_0 = f(0)$ after a 0 and
# $f_1 = f(1)$ after a 1. Given $x_n = i$, the expected loss is the cross-entropy between the row $P_i$ and
# $\mathrm{Bern}(f_i)$, which by Gibbs' inequality is at least $h(P_{i1})$, with equality iff $f_i = P_{i1}$.
# Averaging over $x_n \sim \pi$:
#
# $$
# \min_{f_0, f_1} \mathcal L = \pi_0\, h(p) + \pi_1\, h(q) = \frac{q\,h(p) + p\,h(q)}{p+q} = H(x_{n+1}\mid x_n),
# $$ (eq-entropy-rate)
#
# the entropy rate, reached by the kernel itself. Since the chain is first order, a longer context cannot help
# (given $x_n$, $x_{n+1}$ is independent of the past), so this is the best any next-token predictor can do: the
# global minimum of Thm 4.
#
# **Unigram yardstick.** A predictor that ignores the context uses one $f$ for every position; since every
# position has marginal $\pi$, its loss is the cross-entropy between $\pi$ and $\mathrm{Bern}(f)$, minimized at
# $f = \pi_1$:
#
# $$
# \min_f \mathcal L = h(\pi_1) = h\!\left(\frac{p}{p+q}\right) = H(\pi).
# $$ (eq-marginal-entropy)
#
# This is the loss of the bad local minimum of Thm 5. Conditioning reduces entropy, so
# $H(x_{n+1}\mid x_n) \le H(\pi)$, with equality iff $x_{n+1}$ is independent of $x_n$, i.e. both rows of $P$
# are equal: $1 - p = q$, that is $p + q = 1$.
#
# %% [markdown]
# First the closed forms, with $h$ = `binary_entropy` (a separate function from the kernel entropies
# $\sum_i \pi_i H(P_i)$ and $H(\pi)$ that `MarkovChain` computes from the kernel):

# %%
H_rate_closed = float((q * binary_entropy(p) + p * binary_entropy(q)) / (p + q))
H_pi_closed = float(binary_entropy(p / (p + q)))
err_rate = abs(H_rate_closed - chain.entropy_rate)
err_pi = abs(H_pi_closed - chain.marginal_entropy)
print(f"entropy rate (closed form) {fixed(H_rate_closed, 10)}; |markovlib - closed form| {bound(err_rate, 1e-15)}")
print(f"H(pi) (closed form)        {fixed(H_pi_closed, 10)}; |markovlib - closed form| {bound(err_pi, 1e-15)}")

# %% tags=["hide-input"]
verified.record("entropy rate (eq-entropy-rate)", err_rate < 1e-14,
                check="closed form (q h(p) + p h(q)) / (p + q), h = binary_entropy, vs MarkovChain.entropy_rate "
                      "(sum_i pi_i H(P_i) from the kernel)",
                measured=bound(err_rate, 1e-15), tolerance="1e-14", kind="independent")
verified.record("marginal entropy (eq-marginal-entropy)", err_pi < 1e-14,
                check="closed form h(p / (p + q)), h = binary_entropy, vs MarkovChain.marginal_entropy",
                measured=bound(err_pi, 1e-15), tolerance="1e-14", kind="independent")
_ = glue("md_entropy_rate", fixed(H_rate_closed, 4))
_ = glue("md_marginal_entropy", fixed(H_pi_closed, 4))

# %% [markdown]
# Then against data: on sampled sequences, the empirical cross-entropy of the kernel predictor estimates the
# entropy rate and that of the constant predictor $\pi_1$ estimates $H(\pi)$; each must land within $n_\sigma$
# standard errors (the mean of {glue:text}`md_batch` independent per-sequence losses, so the central limit theorem
# applies; a Student-t test). A predictor whose loss is the same on every sequence
# ($\pi_1$ when $p = q$) has a standard error of rounding size: `inference.mean_test` floors it at the rounding
# level of a float64 mean, so that $|z|$ measures statistics, not rounding.

# %%
x = chain.sample(batch, length, seed=seed)
prev, nxt = x[:, :-1], x[:, 1:]
rows = []
for name, predictor, truth in [
    ("bigram (the kernel)", np.where(prev == 1, 1 - q, p), H_rate_closed),
    ("unigram (pi_1)", np.full(prev.shape, p / (p + q)), H_pi_closed),
]:
    per_token = -np.log(np.where(nxt == 1, predictor, 1 - predictor))  # cross-entropy of each next symbol
    mt = inference.mean_test(per_token.mean(axis=1), truth)  # sequences are independent: use them for the error
    tests[f"loss of the {name}"] = mt.pvalue
    rows.append((name, truth, mt.mean, mt.std_err, mt.z))
# Monte Carlo estimates print at 3 decimals (their standard error is ~1e-4), |z| at one decimal
print(f"{'predictor':<22}{'predicted':>11}{'measured':>11}{'std err':>10}{'|z|':>7}")
for name, truth, est, se, z in rows:
    print(f"{name:<22}{truth:>11.5f}{fixed(est, 3):>11}{se if se > 1e-13 else 0:>10.0e}{fixed(z, 1):>7}")
z_loss = max(z for *_, z in rows)

# %% tags=["hide-input"]
_ = verified.record("empirical losses match both yardsticks", z_loss < n_sigma,
                    check=f"Monte Carlo: cross-entropy of the kernel and of pi_1 on {batch} x {length} sampled tokens",
                    measured=f"max |z| = {fixed(z_loss, 1)}", tolerance=f"|z| < {n_sigma:g}", kind="independent")
_ = glue("md_batch", str(batch))

# %% [markdown]
# The bigram minimum is a minimum over *all* pairs $(f_0, f_1)$, and the unigram minimum is the best point of the
# diagonal $f_0 = f_1$. The check evaluates the exact expected loss $\pi_0\,\mathrm{CE}(p, f_0) +
# \pi_1\,\mathrm{CE}(1-q, f_1)$ on a grid that is uniform in the logits $u_i = \log\frac{f_i}{1 - f_i}$, so that
# it resolves kernels near 0 and 1 as well as near $\frac12$. In the logit, $\mathrm{CE}(t, \sigma(u)) =
# \log(1 + e^u) - t u$ has second derivative $\sigma'(u) \le \frac14$, so on a grid of step $\delta$ the best grid
# point lies within $\delta/2$ of the minimizer in each coordinate and exceeds the minimum by at most
# $\frac12\cdot\frac14\,(\delta/2)^2 = \delta^2/32$: the tolerance of the check, derived before the run. The figure
# shows the same loss in the probabilities: the global minimum sits at the kernel $(p, 1-q)$ with value the entropy
# rate, and the best constant predictor sits on the diagonal at $\pi_1$ with value $H(\pi)$.

# %%
def expected_loss(u0, u1):
    """Independent reference: pi_0 CE(p, sigma(u0)) + pi_1 CE(1 - q, sigma(u1)) in the logits u
    (CE(t, sigma(u)) = softplus(u) - t u)."""
    return pi_closed[0] * (np.logaddexp(0, u0) - p * u0) + pi_closed[1] * (np.logaddexp(0, u1) - (1 - q) * u1)


u = np.linspace(-7.0, 7.0, 1201)  # logits of f in [9e-4, 1 - 9e-4], which contains [0.02, 0.98]
delta = u[1] - u[0]
U0, U1 = np.meshgrid(u, u, indexing="ij")
Lg = expected_loss(U0, U1)
i, j = np.unravel_index(np.argmin(Lg), Lg.shape)
diag = expected_loss(u, u)
k = np.argmin(diag)
logit = lambda t: np.log(t / (1 - t))  # noqa: E731
excess = lambda v: bound(v, 1e-12) if abs(v) < 1e-12 else f"{v:.1e}"  # noqa: E731  (rounding level as a bound)
steps = max(abs(u[i] - logit(p)), abs(u[j] - logit(1 - q))) / delta
steps_d = abs(u[k] - logit(p / (p + q))) / delta
ex_rate, ex_pi = Lg.min() - H_rate_closed, diag.min() - H_pi_closed
tol_grid = delta**2 / 32
print(f"logit grid of step {delta:.4f}: argmin (f0, f1) = ({1 / (1 + np.exp(-u[i])):.4f}, {1 / (1 + np.exp(-u[j])):.4f})"
      f" vs kernel (p, 1-q) = ({p:.4f}, {1 - q:.4f}); min - entropy rate {excess(ex_rate)} (tolerance {tol_grid:.1e})")
print(f"diagonal argmin f = {1 / (1 + np.exp(-u[k])):.4f} vs pi_1 = {p / (p + q):.4f}; min - H(pi) {excess(ex_pi)}")

# %% tags=["hide-input"]
verified.record("the kernel minimizes the loss (global minimum)",
                steps <= 0.5 + 1e-9 and -1e-14 <= ex_rate <= tol_grid,
                check=f"argmin of the exact loss on a {u.size} x {u.size} grid of logits (f0, f1)",
                measured=f"argmin {fixed(steps, 2)} grid steps from the kernel; min - rate {excess(ex_rate)}",
                tolerance=f"half a step; 0 <= min - rate <= delta^2/32 = {tol_grid:.1e}", kind="independent")
_ = verified.record("pi_1 minimizes the loss among constant predictors",
                    steps_d <= 0.5 + 1e-9 and -1e-14 <= ex_pi <= tol_grid,
                    check="argmin of the exact loss on the diagonal f0 = f1 (same logit grid)",
                    measured=f"argmin {fixed(steps_d, 2)} grid steps from pi_1; min - H(pi) {excess(ex_pi)}",
                    tolerance=f"half a step; 0 <= min - H(pi) <= {tol_grid:.1e}", kind="independent")

# %% [markdown]
# The same loss in the probabilities $(f_0, f_1)$: the star (the kernel) is the global minimum, the dot on the
# diagonal ($\pi_1$) the best constant predictor.

# %%
f = np.linspace(0.005, 0.995, 397)
F0, F1 = np.meshgrid(f, f, indexing="ij")
L = expected_loss(logit(F0), logit(F1))
fig, ax = plt.subplots(figsize=(5.6, 4.6))
cs = ax.contourf(f, f, L.T, levels=np.linspace(L.min(), L.min() + 1.0, 21), extend="max")
fig.colorbar(cs, ax=ax, label="expected loss (nats)")
ax.plot(f, f, color="w", lw=1, ls="--", label="constant predictors $f_0 = f_1$")
ax.plot(p, 1 - q, "*", color=plotting.GLOBAL, mec="w", ms=16, label="kernel: entropy rate (bigram)")
ax.plot(p / (p + q), p / (p + q), "o", color=plotting.LOCAL, mec="w", ms=9, label=r"$\pi_1$: $H(\pi)$ (unigram)")
ax.set_xlabel(r"$f_0 = \hat P(1 \mid 0)$")
ax.set_ylabel(r"$f_1 = \hat P(1 \mid 1)$")
ax.set_title(f"Loss of bigram predictors, p={p}, q={q}")
ax.legend(loc="upper left", fontsize=8)
ax.grid(False)
plt.show()

# %% [markdown]
# (sec-markov-data-gap)=
# ## Where the two yardsticks part
#
# Over the whole $(p, q)$ square the gap $H(\pi) - H(x_{n+1}\mid x_n)$ is the mutual information between
# consecutive symbols: it vanishes exactly on the line $p + q = 1$ and grows towards the corners where the chain is
# nearly deterministic. (Independently of the two closed forms: with the joint law $\pi_i P_{ij}$ of
# $(x_n, x_{n+1})$, whose two marginals are both $\pi$, $I = \sum_{ij} \pi_i P_{ij}\log\frac{P_{ij}}{\pi_j}$; the
# cell computes it directly and compares.) On the grid below, at distance at least {glue:text}`md_gap_margin` from
# the line, the gap is at least {glue:text}`md_min_gap` nats. This gap is what a model loses by falling into the
# unigram minimum; the rest of Part I asks which initializations lead there. The switching factor $s = p + q$ will
# decide the shape of the loss landscape ($s > 1$: the bad minimum exists).

# %%
grid = np.linspace(0.01, 0.99, 99)
PP, QQ = np.meshgrid(grid, grid, indexing="ij")
gap = binary_entropy(PP / (PP + QQ)) - (QQ * binary_entropy(PP) + PP * binary_entropy(QQ)) / (PP + QQ)
on_line = np.isclose(PP + QQ, 1.0)
off_line = np.abs(PP + QQ - 1) >= gap_margin
# independent reference (do not replace with markovlib): mutual information of (x_n, x_{n+1}) from the joint law
P01, P10 = PP, QQ
pi0_g, pi1_g = QQ / (PP + QQ), PP / (PP + QQ)
joint = [(pi0_g * (1 - P01), pi0_g), (pi0_g * P01, pi1_g), (pi1_g * P10, pi0_g), (pi1_g * (1 - P10), pi1_g)]
mutual_info = sum(j * np.log(j / (m_row * m_col)) for (j, m_col), m_row in zip(joint, (pi0_g, pi0_g, pi1_g, pi1_g)))
err_mi = float(np.abs(gap - mutual_info).max())
min_off = float(gap[off_line].min())
max_on = float(np.abs(gap[on_line]).max())
print(f"gap >= 0 on the grid up to {bound(max(-gap.min(), 0.0), 1e-14)}; max |gap| on p+q=1: {bound(max_on, 1e-14)}; "
      f"min gap off the line (|p+q-1| >= {gap_margin:g}): {min_off:.2e}")
print(f"max |gap - mutual information I(x_n; x_n+1)| over the grid: {bound(err_mi, 1e-14)}")

# %% tags=["hide-input"]
verified.record("entropy rate <= H(pi), equal iff p + q = 1",
                gap.min() > -1e-12 and max_on < 1e-12 and min_off > 0,
                check="the gap of the closed forms on a 99 x 99 grid of (p, q): >= 0, = 0 on the line, > 0 off it",
                measured=f"on the line {bound(max_on, 1e-14)}; min off the line {min_off:.2e}",
                tolerance=f"1e-12; > 0 at |p + q - 1| >= {gap_margin:g}", kind="independent")
verified.record("the gap is the mutual information of consecutive symbols", err_mi < 1e-12,
                check="closed-form gap vs I(x_n; x_n+1) summed from the joint law on the grid",
                measured=bound(err_mi, 1e-14), tolerance="1e-12", kind="independent")
_ = glue("md_gap_margin", f"{gap_margin:g}")
_ = glue("md_min_gap", f"{min_off:.1e}")

# %% [markdown]
# The gap over the square; it vanishes on the dashed line.

# %%
fig, ax = plt.subplots(figsize=(5.4, 4.4))
im = ax.contourf(grid, grid, gap.T, levels=20)
fig.colorbar(im, ax=ax, label=r"$H(\pi) - H(x_{n+1}\mid x_n)$ (nats)")
ax.plot(grid, 1 - grid, color="w", ls="--", label="p + q = 1 (i.i.d.)")
ax.plot(p, q, "*", color="w", ms=12, label=f"this chapter's chain ({p}, {q})")
ax.set_xlabel("p = P(1 | 0)")
ax.set_ylabel("q = P(0 | 1)")
ax.set_title("What the unigram predictor gives up")
ax.legend(loc="upper right", fontsize=8)
ax.grid(False)
plt.show()

# %% [markdown]
# (sec-markov-data-sampler)=
# ## The sampler
#
# Experiments draw millions of tokens, so the sampler is vectorized over positions. A binary chain is a string of
# alternating *runs*; a run of 0s ends at each step with probability $p$, so its length is geometric,
# $\Pr(\text{len} = k) = (1-p)^{k-1} p$, and likewise $\mathrm{Geom}(q)$ for runs of 1s; run lengths are
# independent by the Markov property. `MarkovChain.sample` draws the first symbol from $\pi$, then whole rows of
# run lengths at once ($\mathrm{Geom}(r) = \lceil E / (-\log(1-r)) \rceil$ for $E \sim \mathrm{Exp}(1)$), and
# expands them with `np.repeat` (or `torch.repeat_interleave` on a device). The checks: the transition
# frequencies, the marginal at the first, middle and last positions, and the run-length law, for both backends.
#
# **The tests.** The marginal at one position is a sum of independent indicators over the sequences, so its count
# is exactly binomial. A transition count is a sum over the visits of state $i$ of the indicator "the next symbol
# differs"; each visit is followed by a fresh choice with probability $P_{i,1-i}$ (Markov property), so the count
# minus $P_{i,1-i}$ times the number of visits is a martingale with the binomial variance (Wald's identity), and we
# test it with the binomial law given the number of visits. At $p = 0.02$ the expected count of a rare event in a
# small sample is a few dozen, where the normal tail is far from the binomial one, hence exact tails everywhere.
# $|z|$ is printed for reading.

# %%
print(f"{'backend':<8}{'quantity':<22}{'predicted':>10}{'measured':>10}{'count':>9}{'|z|':>7}{'p-value':>9}")
z_trans, z_marg, pv_trans, pv_marg = [], [], [], []
for backend in ("numpy", "torch"):
    xs = np.asarray(chain.sample(batch, length, seed=seed + 1, backend=backend))
    (k01, n0), (k10, n1) = checks.transition_counts(xs)
    cases = [("P(1|0) = p", p, k01, n0), ("P(0|1) = q", q, k10, n1)]
    for pos in (0, length // 2, length - 1):
        cases.append((f"P(x_{pos + 1} = 1) = pi_1", p / (p + q), int(xs[:, pos].sum()), batch))
    for i, (name, truth, kk, n) in enumerate(cases):
        z = abs(kk / n - truth) / np.sqrt(truth * (1 - truth) / n)
        pv = float(checks.binom_pvalue(kk, n, truth))
        tests[f"{backend}: {name}"] = pv
        (z_trans if i < 2 else z_marg).append(z)
        (pv_trans if i < 2 else pv_marg).append(pv)
        print(f"{backend:<8}{name:<22}{truth:>10.4f}{fixed(kk / n, 3):>10}{kk:>9}{fixed(z, 1):>7}{pv:>9.2g}")

# %% tags=["hide-input"]
verified.record("sampler: transition frequencies P(1|0) = p, P(0|1) = q (both backends)", min(pv_trans) > level,
                check=f"Monte Carlo: exact binomial test of the transition counts, {batch} x {length} sampled tokens "
                      "per backend",
                measured=f"min p-value {min(pv_trans):.2g} (max |z| {fixed(max(z_trans), 1)})",
                tolerance=f"p-value > {level:.1e} ({n_sigma:g} sigma)", kind="independent")
_ = verified.record("sampler: stationary marginal at the first, middle, last position (both backends)",
                    min(pv_marg) > level, check=f"Monte Carlo: exact binomial test of the count of 1s over {batch} "
                                                "sequences",
                    measured=f"min p-value {min(pv_marg):.2g} (max |z| {fixed(max(z_marg), 1)})",
                    tolerance=f"p-value > {level:.1e} ({n_sigma:g} sigma)", kind="independent")

# %% [markdown]
# **Run lengths, without the window's bias.** Only runs that start and end inside the sampled window can be
# measured, and selecting them by that is a bias: a run of length $k$ fits in a window of $N$ symbols in about
# $N - k$ positions, so the lengths of the runs that fit follow the geometric law reweighted by $N - 1 - k$, not the
# geometric law. (An earlier version of this chapter tested those fitting runs against the geometric law; near the
# edges of the range, where runs are long, it reports a deviation that is a property of the window, not of the
# sampler.) The test below selects runs by their start only: every run that begins with a switch at a position
# $s \le N - 1 - k_{\max}$ is followed for $k_{\max}$ steps, which the window always contains, and its length is
# binned as $1, \dots, k_{\max}$ or "longer". Whether a run is selected depends only on the symbols before it, and
# given them the run's length is a fresh $\mathrm{Geom}(r)$ (strong Markov property), so the bin counts have
# exactly the geometric law's means and binomial variances (again a martingale). Some bins are rare (in this run
# the rarest has probability {glue:text}`md_rare_example`), so each is tested with the exact binomial tail.

# %%
run_len, run_state = checks.runs_from_start(x, kmax)
ks = np.arange(1, kmax + 1)
pv_runs, n_runs, measured_runs = [], [], []
for state, r in ((0, p), (1, q)):
    lens = run_len[run_state == state]
    counts_k = np.bincount(lens, minlength=kmax + 2)[1:]  # bins 1..kmax, then kmax + 1 = "longer than kmax"
    law = checks.geometric_bins(r, kmax)
    pv = checks.binom_pvalue(counts_k, lens.size, law)
    pv_runs.append(pv)
    n_runs.append(lens.size)
    measured_runs.append(counts_k[:-1] / lens.size)
    for kk, pvk in zip(list(ks) + [f">{kmax}"], pv):
        tests[f"runs of {state}, length {kk}"] = float(pvk)
p_min = float(np.concatenate(pv_runs).min())
print(f"run-length law: {n_runs[0]} runs of 0, {n_runs[1]} runs of 1; {2 * (kmax + 1)} bins (k = 1..{kmax} and "
      f"k > {kmax}); smallest exact binomial p-value {p_min:.2g} (level {level:.1e})")

# %% [markdown]
# The measured fractions of runs against the two geometric laws:

# %%
fig, ax = plt.subplots()
for state, r, color, freq, n_r in ((0, p, plotting.MAXIMA, measured_runs[0], n_runs[0]),
                                   (1, q, plotting.LOCAL, measured_runs[1], n_runs[1])):
    ax.semilogy(ks[freq > 0], freq[freq > 0], "o", color=color, label=f"runs of {state}: measured ({n_r} runs)")
    ax.semilogy(ks, checks.geometric_bins(r, kmax)[:-1], "-", color=color, alpha=0.6, label=f"Geom({r}) law")
ax.set_xlabel("run length k")
ax.set_ylabel("fraction of runs")
ax.set_title("Run lengths are geometric")
ax.legend()
plt.show()

# %% tags=["hide-input"]
_ = verified.record("sampler: run lengths are Geom(p) / Geom(q)", p_min > level,
                    check=f"Monte Carlo: exact binomial test of {2 * (kmax + 1)} run-length bins, runs selected by "
                          f"their start in {batch} sequences",
                    measured=f"min p-value {p_min:.2g} ({n_runs[0]} + {n_runs[1]} runs)",
                    tolerance=f"p-value > {level:.1e} ({n_sigma:g} sigma)", kind="independent")
rare = min((float(checks.geometric_bins(r, kmax)[i]), s_, i) for s_, r in ((0, p), (1, q)) for i in range(kmax + 1))
_ = glue("md_rare_example", f"{rare[0]:.0e} (runs of {rare[1]}, "
                               + (f"length {rare[2] + 1})" if rare[2] < kmax else f"longer than {kmax})"))

# %% [markdown]
# Later chapters (Sec. 5.3 of the paper leaves multi-state chains open) also use K-state chains, built with
# `MarkovChain.from_kernel`. Their sampler loops over positions but never over the batch; the same statistics
# apply, with the stationary law now the left eigenvector of $P$ and the entropy rate $\sum_i \pi_i H(P_i)$.

# %%
P3 = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]])
chain3 = MarkovChain.from_kernel(P3)
x3 = chain3.sample(1024, 256, seed=seed)
counts = np.zeros((3, 3), dtype=int)
np.add.at(counts, (x3[:, :-1].ravel(), x3[:, 1:].ravel()), 1)
n_from = counts.sum(axis=1, keepdims=True)
P_hat = counts / n_from
z = np.abs(P_hat - P3) / np.sqrt(P3 * (1 - P3) / n_from)
pv3 = checks.binom_pvalue(counts, np.broadcast_to(n_from, counts.shape), P3)
for (a, b), pvk in np.ndenumerate(pv3):
    tests[f"3-state P({b}|{a})"] = float(pvk)
print("stationary law:", chain3.stationary.round(4), " entropy rate:", fixed(chain3.entropy_rate, 4),
      " H(pi):", fixed(chain3.marginal_entropy, 4))
print("estimated kernel (Monte Carlo):\n", P_hat.round(2))
print(f"9 entries: max |z| {fixed(z.max(), 1)}, min exact binomial p-value {pv3.min():.2g}")

# %% tags=["hide-input"]
_ = verified.record("K-state sampler: transition frequencies", pv3.min() > level,
                    check="Monte Carlo: exact binomial test of the 9 transition counts of a 3-state kernel, "
                          "1024 x 256 sampled tokens",
                    measured=f"min p-value {pv3.min():.2g} (max |z| {fixed(z.max(), 1)})",
                    tolerance=f"p-value > {level:.1e} ({n_sigma:g} sigma)", kind="independent")

# %% [markdown]
# (sec-markov-data-family)=
# ## All the frequency tests together
#
# All frequency tests of the run together: with $m$ tests at level $\alpha$ each, a correct sampler fails one of
# them with probability at most $m\alpha$ (Bonferroni), whatever their dependence. Every test runs at the
# two-sided level of $n_\sigma$ standard deviations, fixed before the data; the parameters cell accepts $n_\sigma$
# only as low as keeps this bound at or below 0.01. *Changed claim:* $n_\sigma$ was accepted down to 3, where the
# bound of 55 tests reached 0.15 and printed rounded down; now such an $n_\sigma$ is refused and the bound prints
# rounded up.

# %%
n_tests = len(tests)
assert n_tests == n_tests_planned, (n_tests, n_tests_planned)  # the count the validation of n_sigma assumed
family_alpha = n_tests * level
family_alpha_up = checks.round_up(family_alpha, 2)  # an upper bound prints rounded up (two digits), never down
assert family_alpha_up >= family_alpha and family_alpha_up <= FAMILY_ALPHA_MAX
worst_test = min(tests, key=tests.get)
print(f"{n_tests} frequency tests at level {level:.1e} each: family-wise false-alarm probability <= "
      f"{family_alpha_up:.1e}; smallest p-value {tests[worst_test]:.2g} ({worst_test})")

# %% tags=["hide-input"]
_ = glue("md_n_tests", str(n_tests))
_ = glue("md_family_alpha", f"{family_alpha_up:.1e}")

# %% [markdown]
# ## What was verified
#
# The table below is generated from the records of the checks above (one row per claim; a failed claim stops
# the chapter where it is checked). The kind of evidence: "independent" marks checks that do not go through the
# markovlib function under test (an independent eigenvector, closed forms written out here, Monte Carlo of the
# sampler against the laws derived here, a grid search).

# %% tags=["hide-input"]
_ = record_results({"entropy_rate": chain.entropy_rate, "marginal_entropy": chain.marginal_entropy,
                    "yardstick_gap": chain.marginal_entropy - chain.entropy_rate, "max_abs_z_loss": z_loss,
                    "max_abs_z_sampler": max(z_trans + z_marg), "min_p_value": min(tests.values()),
                    **verified.summary()})

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("markov_data")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()
