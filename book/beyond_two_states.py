# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: markovlib
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   markovlib:
#     typed_numbers:
#       '0.0004': an outside review's figure (Sec. 3b; not re-run here)
#       '0.0005': an outside review's figure (Sec. 3b; not re-run here)
#       '0.0019': an outside review's figure (Sec. 3b; not re-run here)
#       '0.0091': an outside review's figure (Sec. 3b; not re-run here)
#       '0.0107': an outside review's figure (Sec. 3b; not re-run here)
#       '0.0136': an outside review's figure (Sec. 3b; not re-run here)
#       '0.05': an outside review's total variation (Sec. 3; not re-run here)
#       '0.54': a p of the stored grid at K = 10 (manifest.json of the stored set)
#       '0.6': the same scan (Sec. 2; not re-run here)
#       '0.9': the same scan (Sec. 2; not re-run here)
#       '0.95': a p of the stored grid at K = 10 (manifest.json of the stored set)
#       '0.99': a p of the stored grid at K = 10 (manifest.json of the stored set)
#       '100': the window of kstate_stored.classify_runs (back = 100 steps)
#       '10000': an outside review's continued runs (Sec. 3b; not stored, not re-run
#         here)
#       '12': review B's failing run (Sec. 2, changed claims; not re-run here)
#       '15': a scan over seeds made while writing the chapter (Sec. 2, the sign count
#         at d = 2 to 4; not re-run here)
#       '15000': an outside review's continued runs (Sec. 3b; not stored, not re-run
#         here)
#       '18': the same scan at d = 8 (Sec. 2; not re-run here)
#       '2': the seed an outside review re-executed (Sec. 3; not re-run here)
#       '4000': an outside review's runs at p = 0.967 (Sec. 3b; not re-run here)
#       '95': the confidence level of the Wilson intervals (markovlib.book.inference)
# ---

# %% [markdown]
# # Beyond two states: K-state and lag-k chains
#
# The core paper {cite:p}`makkuva2024local` studies binary chains and leaves multi-state and higher-order chains
# open (Sec. 5.3), while the authors' code already runs both: K-state *symmetric* chains (stay with probability
# $1 - p$, move to each other state with $p/(K-1)$) and higher-order chains. This chapter takes the package's
# K-state single-layer transformer (embedding $E \in \mathbb R^{K\times d}$ tied to a $K$-logit head with biases $b$)
# and asks which parts of the two-state picture carry over. Secs. 1 and 2 are derived and checked; Secs. 3 and 4 are
# measurements, and the text says where one ends and the other begins.
#
# ## What this chapter shows
#
# 1. The yardsticks are $H(\pi) = \log K$ and $h(p) + p\log(K-1)$ ({glue:text}`yardstick_err`); they meet at
#    $p^* = (K-1)/K$ ([Sec. 1](#beyond-sec-yardsticks)).
# 2. $E = 0$ with $\operatorname{softmax}(b) = \pi$ is critical with loss $H(\pi)$ (gradient over rounding
#    {glue:text}`critical_ratio`; [Sec. 2](#beyond-sec-critical)).
# 3. Its Hessian along the embedding has a closed form ({glue:text}`hessian_err` from autograd); a guideline-like
#    layer reverses its sign in {glue:text}`flip_count` ([Sec. 2](#beyond-sec-hessian)).
# 4. The flow conserves the neuron balances and two attention Gram differences ({glue:text}`conserved_rates`), but
#    nothing involving $E$ ([Sec. 2](#beyond-sec-conserved)).
# 5. After 500 Adam steps the standard init on the switching side misses the entropy rate in
#    {glue:text}`std_switching` (counts, not claims; [Sec. 3](#beyond-sec-grid)).
# 6. Over 5000 steps SGD ends at $H(\pi)$ on the switching side ({glue:text}`phase_sgd_trap`), Adam leaves it
#    ({glue:text}`phase_adam_leaves`), and for $K - 1 \le d$ an untied head reaches the entropy rate
#    ({glue:text}`phase_untied_sw`; [Sec. 3b](#beyond-sec-phase)).
# 7. On lag-$k$ chains trained runs come near the entropy rate only at $k = 1$ ({glue:text}`lag1_near`;
#    [Sec. 4](#beyond-sec-lag)).

# %% tags=["parameters"]
K_list: list = [3, 5, 10]  # numbers of states of the yardstick checks (the authors run 5 and 10)
p_list: list = [0.05, 0.3, 0.95]  # switching probabilities of the yardstick checks, in [0.05, 0.99]
K_exact: int = 3  # states of the exact-enumeration checks (3 or 4)
N_exact: int = 5  # sequence length of the exact population loss (K_exact^N_exact sequences enumerated)
p_sides: list = [0.2, 0.95]  # one p on each side of p* for the Hessian checks (lambda at least lam_margin from 0)
lam_margin: float = 0.1  # side-dependent statements keep |lambda| at least this
d: int = 8  # embedding dimension (paper: 8); feed-forward width 4d
std_random: float = 0.5  # scale of the random weights of the exact checks (large, so J is far from I)
std_small: float = 0.02  # scale of the standard init of the small-weight corollary (paper: 0.02), at most 0.05
n_dirs: int = 3  # random embedding directions per Hessian check
n_flip: int = 20  # guideline-like layers (one random centred direction each) per side of p* for the sign count (at least 20)
d_flip: int = 8  # embedding dimension of the guideline-like layers of the sign count (at least 8; paper: 8)
flip_rate: float = 0.5  # fixed before the data: on each side of p* the sign of Q is reversed for more than this fraction of draws
ratio_tol: float = 0.1  # fixed before the data: small weights, |Q / prediction - 1| below this
mc_batch: int = 400  # Monte Carlo: sequences (split into 10 groups for the standard errors)
mc_length: int = 200  # Monte Carlo: symbols per sequence
mc_z: float = 5.0  # fixed before the data: plug-in estimates within their bias bound plus this many standard errors
mc_alpha: float = 0.05  # family-wise false-alarm bound of the Monte Carlo checks that mc_z must keep (Bonferroni)
resolution: float = 0.02  # nats; a stored cell is classified only if L_0 - L_1 and L_(K-2) - L_(K-1) are at least this (the held-out noise is measured in Sec. 3b)
falling_tol: float = 0.002  # nats; a stored curve is still falling if it dropped by more than this over its last 100 steps (Sec. 3b: phase_falling_back steps)
slice_K: int = 3  # the stored cell re-executed here: K 3 (the read-out claim is stated for K 3)
slice_p: float = 0.967  # its p (p > p* at K 3: the standard init ends on a rung after 500 steps, the guideline-like one at the entropy rate)
slice_seed: int = 0  # the seed trained for 500 steps for the read-out (must be a stored seed)
slice_prefix: int = 50  # steps; every stored seed of the cell is re-executed and compared over this deterministic prefix
tv_tol: float = 0.05  # fixed before the data: total variation per row of a settled run's read-out vs its lumped predictor
lag1_tol: float = 0.01  # nats; fixed before the data: the best stored lag-1 run ends within this of the entropy rate
lag_gap: float = 0.1  # nats; fixed before the data: no stored run with lag k at least 2 comes within this of the entropy rate
slice_tol: float = 2e-6  # nats; 4x the largest difference over the first 50 steps of all 120 stored runs in both CI numeric configurations
phase_count: int = 8  # fixed after the first seed of nine cells: a phase claim holds in at least this many seeds of every resolved cell
phase_falling_back: int = 1000  # steps; a phase run is still falling if it dropped by more than falling_tol over its last this many steps
batch_spread_ratio: float = 0.5  # fixed after a review measured the held-out noise: a run's own batch removes it (seed spread at most this fraction of the raw; a wrong batch gives about 1.4)
phase_slice_seeds: list = [0]  # phase runs re-executed in the cell (slice_K, slice_p), all five arms (seeds 0 to 2 were measured)
phase_slice_steps: int = 250  # steps re-executed per phase run (a multiple of 250, at most the measured 250)
phase_slice_tol: float = 3e-3  # nats; 4x the largest difference over the first 250 steps of the measured phase runs, both CI configurations
seed: int = 0  # seed of the random weights, directions and samples

# %%
from markovlib.book import specs
SPEC = specs.load("beyond_two_states")
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# The table above gives each parameter's accepted range and the reason for it. CI runs the chapter at
# `book/ci_params/beyond_two_states.yaml` (the edges: $K = 3$ and $12$, $p = 0.05$ and $0.99$, chains at
# $|\lambda|$ = `lam_margin` on both sides of $p^*$, the largest weight scales, the smallest Monte Carlo sample, and a
# stored slice on the other side of $p^*$). Next, the chapter's imports and its record of checks.

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from markovlib.beyond import drawings as beyond_drawings
from markovlib.beyond import kstate_checks, kstate_drawings, kstate_exact, kstate_grid, kstate_phase, kstate_reference
from markovlib.beyond import kstate_stored
from markovlib.book import explorers, plotting, stored, widgets
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results

plotting.use_style()
verified = Verification()
rng = np.random.default_rng(seed)
DATA = stored.data_dir("beyond_two_states")

# %% [markdown]
# (beyond-sec-yardsticks)=
# ## 1. The symmetric K-state family and its two yardsticks
#
# The kernel of the authors' K-state chains is
#
# $$
# P_{ij} = \begin{cases} 1 - p & i = j \\ \dfrac{p}{K-1} & i \ne j \end{cases}
# \qquad\Longleftrightarrow\qquad
# P = \lambda I + (1 - \lambda)\,\frac{\mathbf 1\mathbf 1^\top}{K}, \quad \lambda = 1 - \frac{Kp}{K-1}.
# $$ (beyond-kernel)
#
# ```{prf:proposition} Yardsticks of the symmetric chain
# :label: beyond-prop-yardsticks
#
# For $K \ge 2$ and $0 < p < 1$ the chain is irreducible with uniform stationary law $\pi = \mathbf 1/K$. Its
# unigram loss (the loss of the best context-free predictor, which predicts $\pi$) is $H(\pi) = \log K$, its
# entropy rate (the loss of the bigram predictor $P(\cdot \mid x_n)$, the best of all predictors) is
# $h(p) + p\log(K-1)$, with $h$ the binary entropy. The eigenvalues of $P$ are $1$ (once) and $\lambda$
# ($K - 1$ times, on the centred vectors $\mathbf 1^\perp$).
# ```
#
# ```{prf:proof}
# $P$ is symmetric with rows summing to one, so its columns do as well and $\mathbf 1^\top P = \mathbf 1^\top$:
# the uniform law is stationary, and it is the only one because all entries are positive. The unigram
# predictor's loss is the cross-entropy of $\pi$ with itself, $H(\pi) = \log K$. Each row of $P$ is one mass
# $1 - p$ and $K - 1$ masses $p/(K-1)$, with entropy $-(1-p)\log(1-p) - p\log\frac{p}{K-1} = h(p) + p\log(K-1)$;
# the entropy rate $\sum_i \pi_i H(P_i)$ is this common value. In the form {eq}`beyond-kernel`,
# $P\mathbf 1 = \mathbf 1$ and $Pv = \lambda v$ for $\mathbf 1^\top v = 0$.
# ```
#
# Check: the closed forms against an independent eigen-decomposition of $P$ (stationary law from the left
# eigenvector, entropies of its rows), against the package's `MarkovChain` code (`SymmetricChain`, which uses
# the generic entropy-rate formula), and against plug-in estimates from sampled sequences. Each estimate must lie within its
# bias bound plus `mc_z` standard errors of the closed form; both are derived here ($n$ = `mc_batch` $\times$
# (`mc_length` $- 1$) transitions, $\hat\pi$ the empirical marginal, $\delta = \hat\pi - \pi$).
#
# *The marginal's bias under dependence.* (i) Taylor: $H(\hat\pi) = H(\pi) - \sum_i (1 + \log\pi_i)\delta_i
# - \sum_i \delta_i^2/2\pi_i + O(|\delta|^3)$. (ii) $\sum_i\delta_i = 0$ and $\pi$ is uniform, so the linear term is
# $-(1 - \log K)\sum_i\delta_i = 0$: the error is second order and negative, with mean
# $-\sum_i \operatorname{Var}(\hat\pi_i)/2\pi_i$. (iii) The indicator $u_t = 1\{x_t = i\}$ has
# $\operatorname{Cov}(u_t, u_{t+s}) = \pi_i(P^s_{ii} - \pi_i) = \pi_i(1 - \pi_i)\lambda^s$, because
# $P^s = \lambda^s I + (1 - \lambda^s)\mathbf 1\mathbf 1^\top/K$ by {eq}`beyond-kernel`. (iv) For a sequence of $m$
# symbols, $\operatorname{Var}(\bar u) = \frac{\pi_i(1 - \pi_i)}{m}\big[1 + 2\sum_{s=1}^{m-1}(1 - s/m)\lambda^s\big]$;
# the bracket is at most $\sum_{s\in\mathbb Z}\lambda^{|s|} = (1 + \lambda)/(1 - \lambda)$ for $\lambda \ge 0$, and
# at most $1$ for $\lambda < 0$ (each negative odd term outweighs the even term after it), so at most
# $(1 + |\lambda|)/(1 - |\lambda|)$ in both cases. (v) The sequences are independent and $\sum_i(1 - \pi_i) = K - 1$,
# so the bias is at most $(K - 1)/2n_{\rm eff}$ with $n_{\rm eff} = n(1 - |\lambda|)/(1 + |\lambda|)$ (the pooled
# previous and next symbols are, to leading order in $1/$`mc_length`, one sequence counted twice). Its standard error
# is estimated from 10 independent groups of sequences; by (ii) a group's error, and its spread, are about ten times
# the pooled estimate's, so the group estimate is about $\sqrt{10}$ times the pooled estimate's true spread.
#
# *The entropy rate.* The plug-in $\sum_i \hat\pi_i H(\hat P_{i\cdot})$ is, row by row, the plug-in entropy of $K$
# cells from about $n/K$ draws, low by about $K(K - 1)/2n$ (Miller–Madow); the bound used is $(K^2 - 1)/2n$. To first
# order its error is $\frac1n\sum_t\big(-\log P_{x_t x_{t+1}} - h\big)$ with $h$ the entropy rate (the term
# $\sum_i\delta_i(H(P_{i\cdot}) - h)$ vanishes: every row has entropy $h$). Each summand has mean zero given the past
# (a martingale difference) and conditional variance $\sigma_1^2 = \sum_j P_{ij}\log^2 P_{ij} - h^2$, the same for
# every $i$; so the first-order standard error is $\sigma_1/\sqrt n$, with no correction for dependence
# (`kstate_checks.transition_log_sd`). The check uses the larger of $\sigma_1/\sqrt n$ and the 10-group estimate
# ($\sigma_1 = 0$ at $p^*$, where the rows are uniform and the error is second order, as for the marginal).
#
# *Changed claims (issue 35):* the entropy rate's standard error was the 10-group estimate alone, which has the
# spread of a chi-square with 9 degrees of freedom: at $K = 6$, $p = 0.1$ with the default sample and seed it came
# out at 0.38 of $\sigma_1/\sqrt n$, and the check failed at 1.2 of its tolerance although the error was 2.4 true
# standard errors. A review script ran the fixed check over $K \in \{3, 4, 5, 6, 8, 10, 12\}$ and ten $p$ from 0.05 to
# 0.99, at both sample sizes of CI with 8 seeds each: its largest error was 0.62 of the tolerance (not re-run here).
# The row prints the largest error as a fraction of its tolerance.
#
# *Changed claims (review B):* `mc_z` was accepted down to 3 for any grid and failed at 100 chains; it is now
# bounded below by the number of Monte Carlo tests (the validation above). The closed forms hold on all of $(0, 1)$;
# `p_list` stays in $[0.05, 0.99]$ because the Monte Carlo checks need the chain to mix within `mc_length` symbols.

# %%
ys = kstate_exact.yardstick_table(K_list, p_list, mc_batch=mc_batch, mc_length=mc_length, mc_z=mc_z, seed=seed)
err_eig, err_pkg, err_eigval, mc_worst = ys["err_eig"], ys["err_pkg"], ys["err_eigval"], ys["mc_worst"]
print(ys["table"].to_string(index=False))
print(f"Monte Carlo: largest |error| / (bias bound + {mc_z:g} standard errors) = {fixed(mc_worst, 1)}")

# %% tags=["hide-input"]
_ = glue("yardstick_err", f"{bound(max(err_eig, err_pkg), 1e-13)}; Monte Carlo {fixed(mc_worst, 1)} of its tolerance")
_ = verified.record("yardsticks: closed forms = eigen-decomposition", err_eig < 1e-12,
                    check=f"numpy eig of P^T, K in {K_list}, p in {p_list}", measured=bound(err_eig, 1e-13),
                    tolerance="1e-12", kind="independent")
_ = verified.record("yardsticks: closed forms = the package's MarkovChain", err_pkg < 1e-12,
                    check="SymmetricChain.entropy_rate / marginal_entropy (generic formulas)",
                    measured=bound(err_pkg, 1e-13), tolerance="1e-12", kind="same code")
_ = verified.record("eigenvalues of P: 1 and lambda = 1 - Kp/(K-1)", err_eigval < 1e-12, check="numpy eig",
                    measured=bound(err_eigval, 1e-13), tolerance="1e-12", kind="independent")
_ = verified.record("yardsticks: Monte Carlo plug-in estimates", mc_worst < 1,
                    check=f"{mc_batch} x {mc_length} sampled symbols per chain, plug-in entropies",
                    measured=f"largest error / tolerance {fixed(mc_worst, 1)}",
                    tolerance=f"bias bound + {mc_z:g} standard errors", kind="independent")

# %% [markdown]
# **The analogue of $p + q = 1$.** At $p^* = (K-1)/K$, $\lambda = 0$ and {eq}`beyond-kernel` is
# $P = \mathbf 1\mathbf 1^\top/K$: every row is uniform, the chain is i.i.d., and the bigram predictor *is*
# the unigram predictor, $h(p^*) + p^*\log(K-1) = \log K$. For $K = 2$, $p^* = 1/2$ is the point $p = q = 1/2$
# of the line $p + q = 1$, and $\lambda = 1 - 2p = 1 - p - q$ is the binary chain's second eigenvalue. For
# $p < p^*$ ($\lambda > 0$) the chain is *persistent* (it stays more often than an i.i.d. draw would), for
# $p > p^*$ ($\lambda < 0$) it is *switching*; the switching side $p \in (p^*, 1)$ shrinks as $K$ grows,
# and on it the two yardsticks are close: $\log K - (h(p) + p\log(K-1)) \le \log K - \log(K-1) \approx 1/K$.

# %%
err_iid, lines = kstate_exact.iid_point_check(K_list)
print("\n".join(lines))

# %% tags=["hide-input"]
_ = verified.record("at p* = (K-1)/K: lambda = 0, identical rows, entropy rate = log K", err_iid < 1e-12,
                    check=f"the package's closed forms at K in {K_list} (true by algebra)", measured=bound(err_iid, 1e-13),
                    tolerance="1e-12", kind="identity")

# %% [markdown]
# ## 2. What of the canonical picture carries over
#
# (beyond-sec-critical)=
# ### The unigram critical set
#
# Write the K-state model as $h_n = E^\top e_{x_n} + p_n$ (token row plus positional embedding),
# $z_n = \Phi_n(h_1, \dots, h_n)$ for the layer (attention and feed-forward with their residual connections;
# `multistate.block`), and $\ell_n = E z_n + b \in \mathbb R^K$ for the logits predicting $x_{n+1}$. The
# population loss averages $\mathrm{CE}(\ell_n, x_{n+1})$ over $n < N$ and over sequences of the chain started
# from $\pi$.
#
# ```{prf:proposition} The unigram critical set, any K
# :label: beyond-prop-critical
#
# For every chain, every $K \ge 2$ and every value of the positional, attention and feed-forward weights, the
# points with $E = 0$ and $\operatorname{softmax}(b) = \pi$ are critical points of the population loss, with
# loss $H(\pi)$. (For $K = 2$ this is the $e = 0$ set of the binary model, {prf:ref}`thm-5`.)
# ```
#
# ```{prf:proof}
# At $E = 0$ the logits are $\ell_n = b$ for every context, so the loss is the cross-entropy of
# $\operatorname{softmax}(b) = \pi$ with the law of $x_{n+1}$, which is $\pi$: $H(\pi)$. Every weight other
# than $E$ and $b$ enters the logits only through $E z_n$, so its gradient carries a factor $E = 0$. The
# gradient in $b$ is $\mathbb E[\operatorname{softmax}(b) - e_{x_{n+1}}] = \pi - \pi = 0$. In $E$, the head
# contributes $\mathbb E[(\pi - e_{x_{n+1}}) z_n^\top]$ where $z_n = z^0_n$, the stream of the positional
# embeddings alone, is the same for every context, so this is $(\pi - \pi) z_n^{0\top} = 0$; the input path
# contributes $\partial \ell_n / \partial h_i = E\, \partial z_n / \partial h_i = 0$.
# ```
#
# Check: autograd on the exact population loss (all $K^N$ sequences enumerated by `markovlib.transformer.exact`), with
# random weights of scale `std_random` in every matrix, a random chain and the symmetric chains of `p_sides`.
#
# *The rounding scale of the check.* The gradient is zero only in exact arithmetic, and its rounding grows with the
# activations, so the tolerance is relative to them. By the proof, the gradients of the weights other than $E$ and $b$
# carry the factor $E = 0$ and are exactly zero in floating point too. The two others are sums whose exact value is
# zero: the gradient in $b$ is $\sum_x P(x)\frac{1}{N-1}\sum_{n<N}(\operatorname{softmax}(b) - e_{x_{n+1}})$ and the
# head's gradient in $E$ is the same sum with each term multiplied by $z^{0\top}_n$. For every entry the absolute
# values of the terms add up to at most $2\max(1, \max_{n,j}|z^0_{n,j}|)$ (the weights $P(x)/(N-1)$ add up to one
# per position, and $|\operatorname{softmax}(b)_k - \delta_{k,y}|$ summed over the targets is at most 2), and a
# floating-point sum of at most $M$ terms is off by at most $\gamma_M = Mu/(1 - Mu)$ times the sum of their absolute
# values, in any order of summation ($u = 2^{-53}$, Higham, *Accuracy and Stability of Numerical Algorithms*, Sec.
# 4.2). We take $M = NK^N$: the $(N-1)K^N$ terms, and $K^N$ more for the few roundings inside each term (the
# sequence weights, the softmax). So the check requires the largest gradient entry below
#
# $$
# \tau = 2\gamma_M \max\big(1, \max_{n,j}|z^0_{n,j}|\big),
# $$
#
# with $z^0$ the layer's output on the positional embeddings alone (`multistate.block`), and prints the ratio to
# $\tau$. At `std_random` $= 2$, $\max|z^0|$ grows quickly with $d$ (about $4 \cdot 10^3$ at $d = 8$, $6 \cdot 10^5$ at
# $d = 64$) and the rounding with it, which an absolute tolerance cannot follow. *Negative control:* the same ratio
# at two points off the set, the embedding moved to $E = 10^{-3}E_1$ and, separately, the bias moved to
# $b = \log\pi + 10^{-3}b_1$ (random unit directions $E_1$, $b_1$), must exceed one: the scaled tolerance still
# sees a gradient that is not zero.
#
# *Changed claims (review revC):* this check required the largest gradient entry below an absolute $10^{-12}$ and
# failed inside the stated range ($6.4 \cdot 10^{-12}$ at $d = 16$, `std_random` $= 2$; $5 \cdot 10^{-11}$ at $d = 32$),
# because the residual is rounding that grows with the activations; the tolerance is now $\tau$, the row prints the
# gradient over $\tau$ (at most 0.02 measured over $d$ from 2 to 256, `std_random` from 0.05 to 2, $N_{\text{exact}}$
# from 3 to 6), and the negative control must exceed $\tau$. `p_sides` exactly at $|\lambda| =$ `lam_margin` was
# refused by the rounding of $\lambda$; the validation allows a slack of $10^{-12}$.

# %% [markdown]
# The three chains of the exact checks (the symmetric chains of `p_sides` and a random kernel), and the model on the
# critical set: `multistate.zero_embedding_model` ($E = 0$, $b = \log\pi$, every other weight random).

# %%
chains_exact = kstate_exact.exact_chains(K_exact, p_sides, rng)
crit = kstate_exact.critical_set_check(chains_exact, d=d, length=N_exact, std=std_random, seed=seed)
grad_ratio, loss_err, control_ratio = crit["grad_ratio"], crit["loss_err"], crit["control_ratio"]
GRAD_PRINT, CONTROL_STEP = kstate_exact.GRAD_PRINT, kstate_exact.CONTROL_STEP
print(f"E = 0, softmax(b) = pi, random weights (std {std_random}), {len(chains_exact)} chains x 2 attentions:")
print(f"  largest gradient entry / rounding scale tau {bound(grad_ratio, GRAD_PRINT)}, |loss - H(pi)| {bound(loss_err, 1e-13)}")
print(f"  negative control (E or b moved by {CONTROL_STEP:g}): smallest largest-gradient-entry / tau {control_ratio:.0e}")

# %% tags=["hide-input"]
_ = glue("critical_ratio", bound(grad_ratio, GRAD_PRINT))
_ = verified.record("E = 0, softmax(b) = pi is critical, loss H(pi) (any chain)", grad_ratio < 1 and loss_err < 1e-12,
                    check=f"autograd on the exact loss, K = {K_exact}, N = {N_exact}, softmax and no attention; gradient "
                          "relative to its rounding scale tau = 2 gamma_M max(1, max|z0|), M = N K^N",
                    measured=f"gradient / tau {bound(grad_ratio, GRAD_PRINT)}, loss {bound(loss_err, 1e-13)}",
                    tolerance="gradient / tau 1, loss 1e-12", kind="independent")
_ = verified.record("... and the scaled tolerance catches a gradient off the critical set (negative control)",
                    control_ratio > 1,
                    check=f"the same ratio with E moved to {CONTROL_STEP:g} E1 or b to log pi + {CONTROL_STEP:g} b1 "
                          "(random unit directions), every chain and attention",
                    measured=f"smallest gradient / tau {control_ratio:.0e}", tolerance="gradient / tau above 1",
                    kind="independent")

# %% [markdown]
# (beyond-sec-hessian)=
# ### Its Hessian along the embedding
#
# Whether the critical set traps depends on the second order. Let $z^0_n$ be the stream of the positional
# embeddings alone, $J_{n,i} = \partial z_n/\partial h_i$ the layer's Jacobian there, $S = \operatorname{diag}
# \pi - \pi\pi^\top$, and $C_m[k, j] = P(x_i = k, x_{i+m} = j) - \pi_k\pi_j = \pi_k(P^m - \mathbf 1\pi^\top)_{kj}$
# the lagged covariance of the chain.
#
# ```{prf:proposition} Second derivative along the embedding
# :label: beyond-prop-hessian
#
# At a point of {prf:ref}`beyond-prop-critical`, along $E = tE_0$ with all other weights fixed,
#
# $$
# Q(E_0) = \frac{d^2}{dt^2}\mathcal L\Big|_{t=0} = \frac{1}{N-1}\sum_{n<N}\Big[(E_0 z^0_n)^\top S\,(E_0 z^0_n)
#  - 2\sum_{i\le n}\operatorname{tr}\big(E_0 J_{n,i} E_0^\top\, C_{n+1-i}\big)\Big].
# $$ (beyond-hessian)
# ```
#
# ```{prf:proof}
# With $E = tE_0$ the inputs are $h_i = p_i + tE_0^\top e_{x_i}$, so $z_n = z^0_n + t\sum_{i\le n} J_{n,i}E_0^\top
# e_{x_i} + O(t^2)$ and $\ell_n - b = t\,\delta_1 + t^2\delta_2 + O(t^3)$ with $\delta_1 = E_0 z^0_n$ and
# $\delta_2 = \sum_{i\le n} E_0 J_{n,i} E_0^\top e_{x_i}$. The cross-entropy expands as
# $\mathrm{CE}(b + \delta, y) = \mathrm{CE}(b, y) + (\pi - e_y)^\top\delta + \tfrac12\delta^\top S\delta + O(\delta^3)$
# since $\operatorname{softmax}(b) = \pi$. The $t^2$ coefficient, times two, is
# $\mathbb E[2(\pi - e_{x_{n+1}})^\top\delta_2 + \delta_1^\top S\delta_1]$ (the term $(\pi - e_y)^\top\delta_1$ has
# mean zero because $\delta_1$ does not depend on the context). Finally
# $\mathbb E[(\pi - e_{x_{n+1}})^\top M e_{x_i}] = \sum_{j,k} M_{jk}(\pi_j\pi_k - P(x_i = k, x_{n+1} = j))
# = -\operatorname{tr}(M C_{n+1-i})$.
# ```
#
# The mixed second derivatives between $E$ and the weights other than $b$ vanish (the gradient in $E$ is zero
# on the whole set, for every value of those weights), and the loss is constant along those weights, so
# {eq}`beyond-hessian` is the part of the Hessian that decides; the flat directions make the set degenerate,
# and higher orders along them are not analysed here.
#
# Check: $Q(E_0)$ from `multistate.zero_embedding_hessian` (Jacobians by autograd on the layer alone, lagged
# covariances in closed form) against autograd's second derivative of the exact population loss along
# $tE_0$, for random weights, `n_dirs` random directions, both attentions, the three chains.

# %%
rel_err, q_values = kstate_exact.hessian_check(chains_exact, d=d, length=N_exact, std=std_random, seed=seed,
                                               n_dirs=n_dirs, rng=rng)
print(f"{len(q_values)} second derivatives, range of Q [{fixed(min(q_values), 1)}, {fixed(max(q_values), 1)}]; "
      f"largest relative difference to autograd {bound(rel_err, 1e-11)}")

# %% tags=["hide-input"]
_ = verified.record("Hessian along E at E = 0: formula (beyond-hessian) = autograd", rel_err < 1e-9,
                    check=f"autograd second derivative of the exact loss, {len(q_values)} (chain, attention, direction)",
                    measured=bound(rel_err, 1e-11), tolerance="1e-9 relative", kind="independent")
_ = glue("hessian_err", bound(rel_err, 1e-11))

# %% [markdown]
# ```{prf:corollary} Small weights: the sign of lambda decides
# :label: beyond-cor-small-init
#
# For the symmetric chain $C_m = \lambda^m\,\Pi/K$ and $S = \Pi/K$, with $\Pi = I - \mathbf 1\mathbf 1^\top/K$.
# When every weight other than $E$ and $b$ is small (the standard initialization, scale $\sigma$), $z^0_n =
# O(\sigma)$, $J_{n,n} = I + O(\sigma^2)$ and $J_{n,i} = O(\sigma^2)$ for $i < n$, so
#
# $$
# Q(E_0) = -\frac{2\lambda}{K}\,\lVert \Pi E_0\rVert^2 + O(\sigma^2)\,\lVert E_0\rVert^2 .
# $$
#
# For $p > p^*$ ($\lambda < 0$) the critical set is a minimum along every centred direction of the embedding
# (the trap of the binary chain with $p + q > 1$, {prf:ref}`thm-11`), for $p < p^*$ ($\lambda > 0$) every
# centred direction descends. If instead the feed-forward layer has $J_{n,n} \approx -I$ the sign of $Q$ is
# reversed (the guideline-like layer below has $J_{n,n} = -I$ on average only; see the check).
# ```
#
# ```{prf:proof}
# $C_m = \pi_k(P^m - \mathbf 1\pi^\top)$ with $\pi = \mathbf 1/K$ and $P^m = \lambda^m I + (1-\lambda^m)
# \mathbf 1\mathbf 1^\top/K$ gives $C_m = \lambda^m\Pi/K$; $S = I/K - \mathbf 1\mathbf 1^\top/K^2 = \Pi/K$. The
# first term of {eq}`beyond-hessian` is $O(\sigma^2)$, the attention terms $i < n$ carry $W_O W_V = O(\sigma^2)$,
# and the $i = n$ term is $-2\lambda\operatorname{tr}(E_0 J_{n,n} E_0^\top\Pi)/K$ with $J_{n,n} = I + W_2 D_n W_1 +
# (\text{attention path through } W_O W_V) = I + O(\sigma^2)$; $\operatorname{tr}(E_0E_0^\top\Pi) =
# \lVert\Pi E_0\rVert^2$.
# ```
#
# The guideline-like feed-forward layer ($W_2 = -W_1^\top$, $W_1 \sim N(0, 1/d)$, $r = 4d$ units) has
# $\mathbb E[W_2 D W_1] = -\mathbb E[W_1^\top D W_1] = -\tfrac{r}{2}\cdot\tfrac1d I = -2I$ (each unit is active with
# probability $1/2$ by the symmetry of $W_1$), so $\mathbb E[J_{n,n}] \approx -I$, but one draw is not $-I$: the
# spectrum of $W_1^\top D W_1$ spreads (a Wishart matrix with about $2d$ samples in $d$ dimensions), and for a given
# direction the sign of $Q$ is reversed only most of the time.
#
# Check: at the standard initialization of scale `std_small`, $Q(E_0)$ over $-\tfrac{2\lambda}{K}\lVert\Pi
# E_0\rVert^2$ is within `ratio_tol` = 0.1 of one on both sides of $p^*$ (centred directions); for `n_flip` guideline-like
# layers per side, each with a random centred direction, the sign of $Q$ is the opposite of that prediction in more
# than a fraction `flip_rate` of the draws on each side of $p^*$ (one count per side, with its Wilson interval and
# Bonferroni over the two sides: not every draw reverses the sign). The count is claimed for layers of dimension
# `d_flip` $\ge 8$ (the paper's $d$) and `n_flip` $\ge 20$ per side: at $d = 2$ to $4$ a scan over 15 seeds
# ($K_{\text{exact}} = 3, 4$, $N_{\text{exact}} = 3, 5$, $|\lambda| = 0.1$) found each side reversing in only
# about 0.6 to 0.9 of the draws, too close to one half for `n_flip` = 20 draws to decide, while at $d = 8$ every side of every seed
# reversed in at least 18 of 20.
#
# *Changed claims (review B):* the sign count pooled both sides of $p^*$ and was accepted at $d = 2$,
# $N_{\text{exact}} = 3$, `n_flip` $= 10$, where it failed (12 of 20); it is now one count per side with Bonferroni
# over the two, claimed for `d_flip` $\ge 8$ and `n_flip` $\ge 20$.

# %%
small = kstate_exact.small_weight_check(K_exact, p_sides, d=d, length=N_exact, std=std_small, n_dirs=n_dirs,
                                        n_flip=n_flip, d_flip=d_flip, seed=seed, rng=rng)
flipped, flips_side, ratio_dev = small["flipped"], small["sides"], small["ratio_dev"]
print("\n".join(small["lines"]))

# %% tags=["hide-input"]
_ = glue("flip_count", f"{fraction(flips_side[0][2], n_flip)} draws for p < p* and "
                       f"{fraction(flips_side[1][2], n_flip)} for p > p* (d = {d_flip})")
_ = verified.record("small weights: Q = -(2 lambda/K) |Pi E0|^2 (sign set by lambda)", ratio_dev < ratio_tol,
                    check=f"zero_embedding_hessian at std {std_small}, p in {p_sides}, {n_dirs} centred directions each",
                    measured=f"largest |ratio - 1| {fixed(ratio_dev, 3)}", tolerance=f"{ratio_tol:g}", kind="same code")
for (p, lam, k_side), side in zip(flips_side, ("p < p*", "p > p*")):
    _ = verified.record_count(f"the guideline-like feed-forward layer reverses the sign of Q, {side}", k_side, n_flip,
                              rate=flip_rate, unit="draws", kind="same code", family=2,
                              check=f"sign of zero_embedding_hessian, {n_flip} layers at p = {p} (lambda "
                                    f"{fixed(lam, 3)}), d = {d_flip}, one random direction each; Bonferroni over "
                                    "the two sides")

# %% [markdown]
# ### Explorer: K and p
#
# Drag $K$ and $p$: the two yardsticks of the symmetric chain, the ladder $L_m$ between them, $p^*$, and the sign of
# $Q$ at a small standard initialization (std 0.02, a random centred direction), computed by
# `zero_embedding_hessian` for each frame. {prf:ref}`beyond-cor-small-init` predicts $Q > 0$, a trap along $E$,
# exactly on the side $\lambda < 0$ ($p > p^*$), at a distance from $\lambda = 0$; close to $\lambda = 0$ the
# corollary's term vanishes and a term of order $\mathrm{std}^2$ competes, so the corollary does not decide the
# sign there. The grid's frames with $|\lambda| <$ `lam_margin`: {glue:text}`near_frames`.
# (The explorer no longer says $Q > 0$ on both sides near $p^*$, which no frame showed.)

# %%
ui = widgets.explorer(lambda K, p: beyond_drawings.draw_kstate(int(round(K)), p, seed=seed),
                      K=(2, 12, 1, 3), p=(0.01, 0.99, 0.01, 0.8))
if ui is not None:
    display(ui)
# The rendered book's explorer: the same drawing function on a grid of 4 x 7 = 28 frames (K as in the paper and the
# stored runs, p on both sides of every p*, with the K = 5 frame p = 0.8 exactly at p*).
static = explorers.static_explorer(
    lambda K, p, ax: beyond_drawings.draw_kstate(K, p, ax=ax, seed=seed),
    {"K": [2, 3, 5, 10], "p": [0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 0.99]}, name="beyond_kstate",
    title="the symmetric K-state chain", initial={"K": 3, "p": 0.8}, progress=False,
    value=lambda out: (f"lambda {out['lambda']:+.3f}: Q {'>' if out['trap'] else '<'} 0, "
                       f"E = 0 {'traps' if out['trap'] else 'is left'}"))
static.show()

# %% [markdown]
# Run this notebook in Jupyter to interact with the explorer:
# its sliders redraw the figure live. In the rendered book the sliders under the figure move over frames precomputed
# by the same drawing function, and the line under them gives $\lambda$ and the sign of $Q$.

# %% [markdown]
# Checked over the frames: the sign of $Q$ follows $-\lambda$ on every frame at least `lam_margin` from $p^*$.

# %% tags=["hide-input"]
fs = kstate_exact.frame_signs(static.values, lam_margin)
_ = glue("near_frames", ("; ".join(f"lambda {fixed(lam, 3)}: Q {'>' if trap else '<'} 0" for lam, trap in fs["near"])
                         or "none") + ("" if any(0 < lam < lam_margin for lam, _ in fs["near"]) else
                                       f" (no frame has 0 < lambda < {lam_margin:g}: the persistent side next to p* is not shown)"))
print(f"{static.n_frames} frames; {fs['n_decided']} with |lambda| >= {lam_margin:g}: Q > 0 exactly where lambda < 0 in "
      f"{fs['n_sign']}; the {static.n_frames - fs['n_decided']} near p* show Q > 0 in {sum(t for _, t in fs['near'])}")
_ = verified.record("explorer: the sign of Q at small weights follows -lambda on every frame away from p*",
                    fs["n_sign"] == fs["n_decided"], check=f"zero_embedding_hessian at std 0.02 on the slider grid (K in "
                    f"2, 3, 5, 10; 7 p each), frames with |lambda| >= {lam_margin:g}",
                    measured=f"{fs['n_sign']}/{fs['n_decided']} frames", tolerance="every frame", kind="same code")

# %% [markdown]
# (beyond-sec-conserved)=
# ### Conservation laws, and the one that is missing
#
# ```{prf:proposition} What the full model's gradient flow conserves, any K
# :label: beyond-prop-conserved
#
# Along the gradient flow of the population loss (any chain, any $K$, softmax or linear attention) the
# following are constant: the neuron balances $c_k = \lVert W_1[k,:]\rVert^2 - \lVert W_2[:,k]\rVert^2$ of the
# $r$ feed-forward units (as in Part III, {prf:ref}`topo-prop-balance`), the matrix
# $W_QW_Q^\top - W_KW_K^\top$ and the matrix $W_VW_V^\top - W_O^\top W_O$.
# ```
#
# ```{prf:proof}
# Each comes from a symmetry of the loss. ReLU is positively homogeneous, so $W_1[k,:] \to sW_1[k,:]$,
# $W_2[:,k] \to W_2[:,k]/s$ ($s > 0$) leaves the model unchanged; differentiating at $s = 1$ gives
# $\langle W_1[k,:], \nabla_{W_1[k,:]}\rangle = \langle W_2[:,k], \nabla_{W_2[:,k]}\rangle$, and then
# $\dot c_k = -2\langle W_1[k,:], \nabla\rangle + 2\langle W_2[:,k], \nabla\rangle = 0$. The attention scores
# depend on $W_Q^\top W_K$ only, invariant under $W_Q \to GW_Q$, $W_K \to G^{-\top}W_K$; differentiating at
# $G = I + \epsilon A$ for every $A$ gives $\nabla_Q W_Q^\top = W_K\nabla_K^\top$, and
# $\tfrac{d}{dt}(W_QW_Q^\top) = -(\nabla_Q W_Q^\top + W_Q\nabla_Q^\top) = \tfrac{d}{dt}(W_KW_K^\top)$. The
# output depends on $W_OW_V$ only, invariant under $W_V \to GW_V$, $W_O \to W_OG^{-1}$, and the same steps give
# the third law.
# ```
#
# None of these involves the embedding. The binary model's energy ({prf:ref}`thm-2`, Lemma 1 of the paper) is a law
# of the *canonical* two-parameter reduction $(e, w)$, where the embedding and the feed-forward scale are tied into
# two scalars and the loss depends on them only through $c(e, w) = e^2(1 + 2w|w|)$. A function $E$ is conserved by
# that flow exactly when $\nabla E \perp \nabla c$. With $\partial_e c = 2e(1 + 2w|w|)$, $\partial_w c = 4e^2|w|$
# and $\partial_e E = 2e$, this forces $\partial_w E = -(1 + 2w|w|)/|w| = -2w - 1/|w|$, whose antiderivative is
# $-w^2 - \log w$ for $w > 0$ and $-w^2 + \log|w|$ for $w < 0$ (the line $w = 0$ is invariant, so each half plane
# has its own constant):
#
# $$
# E(e, w) = e^2 - w^2 - \mathrm{sign}(w)\log|w|, \qquad w \ne 0 .
# $$ (beyond-energy)
#
# (An earlier version of this chapter printed $e^2 - w^2 + \log|w|$, which is the branch $w < 0$ only.) Check
# below: $\nabla E \cdot \nabla c$ by autograd at random points of both half planes. The K-state model has no
# reduction like $(e, w)$ that we could derive
# (a canonical form would have to fix a $K$-simplex of embedding directions, and the tied head then couples
# them through the softmax), and the tied embedding, used both at the input and in the head, has no
# rescaling symmetry: $E \to sE$ changes the logits. We found no conserved quantity involving $E$, and
# measure that the obvious candidate $\lVert E\rVert^2$ moves. **This is where the theory stops:** without a
# conserved quantity that involves $E$, nothing fixed at initialization decides whether training reaches the
# entropy rate, and Sec. 3 measures it.
#
# Check: the three rates $\dot c_k$, $\tfrac{d}{dt}(W_QW_Q^\top - W_KW_K^\top)$, $\tfrac{d}{dt}(W_VW_V^\top -
# W_O^\top W_O)$ along $\dot\theta = -\nabla\mathcal L$ vanish at random weights, while $\tfrac{d}{dt}\lVert
# E\rVert^2$ does not. The rates are taken by the chapter's own central difference of the quantities along
# autograd's gradient of the exact loss: for a quadratic $Q$, $(Q(\theta - \epsilon g) - Q(\theta + \epsilon g))
# / 2\epsilon = -\nabla Q \cdot g$ exactly, so only rounding remains; `multistate.conservation_rates` (the package's
# closed forms of the same rates) is compared with them.

# %%
rate_max, pkg_err, emb_rates = kstate_exact.conservation_check(chains_exact, d=d, length=N_exact, std=std_random,
                                                               seed=seed)
print(f"conserved rates / (gradient scale x weight scale): {bound(rate_max, 1e-10)}; the package's closed-form "
      f"rates agree to {bound(pkg_err, 2e-10)}; d|E|^2/dt on the same scale: smallest over {len(emb_rates)} chains "
      f"{fixed(min(emb_rates), 2)}")

# %% tags=["hide-input"]
_ = glue("conserved_rates", f"{bound(rate_max, 1e-10)} of the gradient scale, while |E|^2 moves at "
                            f"{fixed(min(emb_rates), 2)} or more")
_ = verified.record("neuron balances and the attention Gram differences are conserved (any K)", rate_max < 1e-9,
                    check="central differences of the quantities along autograd's gradient of the exact loss, random "
                          "weights, 3 chains", measured=bound(rate_max, 1e-10), tolerance="1e-9 relative",
                    kind="independent")
_ = verified.record("multistate.conservation_rates = the rates by central differences", pkg_err < 1e-9,
                    check="the same gradients", measured=bound(pkg_err, 2e-10), tolerance="1e-9 relative",
                    kind="same code")
_ = verified.record("|E|^2 is not conserved (the tied embedding has no rescaling symmetry)", min(emb_rates) > 1e-3,
                    check="the same gradients", measured=f"smallest rate {fixed(min(emb_rates), 2)}",
                    tolerance="rate > 1e-3 relative", kind="independent")

# %% [markdown]
# The binary model's energy {eq}`beyond-energy`: $\nabla E\cdot\nabla c = 0$ in both half planes (autograd of $c$
# and $E$ written out, at random points), while the one-branch form $e^2 - w^2 + \log|w|$ is conserved only for
# $w < 0$.

# %%
en = kstate_exact.energy_check(rng)
print(en["text"])

# %% tags=["hide-input"]
_ = verified.record("the canonical energy E = e^2 - w^2 - sign(w) log|w| is conserved (grad E . grad c = 0, both signs "
                    "of w)", en["orth"] < 1e-12, check=f"torch autograd of c(e, w) = e^2 (1 + 2w|w|) and of E at {en['n']} "
                    "random points", measured=bound(en["orth"], 1e-13), tolerance="1e-12 (cosine)", kind="independent")

# %% [markdown]
# (beyond-sec-grid)=
# ## 3. Is there a unigram trap for K > 2? (measured: Adam, then plain SGD)
#
# Sec. 2 leaves the question to experiment. The corollary predicts where to look: from the standard
# initialization (scale $0.02$, so $E \approx 0$ and $J \approx I$) the unigram set is a minimum along the
# embedding for $p > p^*$ and a saddle for $p < p^*$, as for the binary chain on the two sides of $p + q = 1$.
# **The theory is about the loss and its gradient flow; the stored runs of this section train with Adam** (betas
# $(0.9, 0.95)$, constant learning rate, the manifest's settings). The corollary is a statement about the landscape at the start,
# which Adam sees too, but Adam does not follow the flow: it rescales each coordinate of the gradient and breaks the
# conservation laws at first order in its step (derived, and checked on its first step, in {doc}`closing`), so no part of the gradient-flow
# argument of the binary case carries over to these runs. Sec. 3b below reads a second stored set: the same grid
# at 5000 steps and 10 seeds per cell, with plain SGD (minibatch gradient steps, with no per-coordinate rescaling: its mean step is a gradient-descent step) and an untied
# output head beside Adam (`markovlib.beyond.kstate_training.train_kstate`, `optimizer="sgd"`, `tied=False`).
#
# The **guideline-like initialization** is our K-state reading of the binary guideline point
# $(e, w) = (1, -1)$ of the data-agnostic region (Sec. 5 of the paper): embedding rows of unit scale
# ($E \sim N(0, 1/d)$, the analogue of $e = 1$), and a feed-forward layer $W_1 \sim N(0, 1/d)$,
# $W_2 = -W_1^\top$ whose Jacobian on an input is $I - 2I = -I$ on average (half of the $4d$ units active), the
# analogue of $1 + 2w|w| = -1$ at $w = -1$; attention and positional weights $N(0, 0.02^2)$, biases zero
# (`multistate.init_kstate`). It is balanced, $c_k = 0$ for every unit. It is not derived from a conserved
# quantity (there is none, Sec. 2); it is a guess the experiment tests.
#
# **Plateaus between the two yardsticks.** A first pilot (one seed per cell, run before the grid) ended some
# runs at neither yardstick, at the loss of a predictor that resolves some of the states and lumps the rest:
#
# ```{prf:proposition} The ladder of lumped predictors
# :label: beyond-prop-ladder
#
# For the symmetric chain, the best predictor of $x_{n+1}$ that knows $x_n$ when it is one of $m$ given states
# and only "one of the other $K - m$" otherwise has loss
#
# $$
# L_m = \frac mK\big(h(p) + p\log(K-1)\big) + \frac{K-m}{K}\,H\big(\underbrace{\tfrac{p}{K-1}, \dots}_{m},
# \underbrace{\beta, \dots}_{K-m}\big), \qquad \beta = \frac{1 - p + (K - m - 1)\frac{p}{K-1}}{K - m},
# $$
#
# from $L_0 = \log K$ (unigram) to $L_{K-1}$ = the entropy rate (bigram).
# ```
#
# ```{prf:proof}
# The best predictor given a statistic $g(x_n)$ is the law of $x_{n+1}$ given $g(x_n)$ and its loss is
# $H(x_{n+1} \mid g(x_n))$. Given a resolved state it is that row of $P$, of entropy $h(p) + p\log(K-1)$.
# Given the lumped class (probability $(K - m)/K$, uniform over its states) the next state is a resolved one
# with probability $p/(K-1)$ each and a lumped one with probability $\beta$ each (average of one diagonal
# entry $1 - p$ and $K - m - 1$ entries $p/(K-1)$ over the $K - m$ rows). At $m = K - 1$ the lumped class is
# one state and $L_{K-1}$ is the entropy rate.
# ```
#
# The classification: a run *ends at $H(\pi)$* when its held-out loss at step 500 is nearer $L_0$ than $L_1$, and
# *reaches the entropy rate* when it is nearer $L_{K-1}$ than $L_{K-2}$; a cell is classified only when both
# spacings are at least `resolution` (against the held-out batch's own noise, whose standard deviation over the seeds
# of a cell is measured in Sec. 3b: {glue:text}`phase_noise_sd`). A run is *still falling*
# when its held-out loss dropped by more than `falling_tol` over its last 100 steps. The cells whose plateaus are
# too close to be told apart ({glue:text}`unresolved_cells`) are plotted but not classified. In honesty about the
# order: the script `tools/run_beyond.py` first fixed a cruder threshold (normalized gap $> 0.5$, the column
# `trapped` of `runs.csv`, reported below); the ladder classification was fixed after the pilot and the first seed
# of the grid had shown the plateaus, and before the other four seeds had run; `falling_tol` was fixed after a
# review had pointed at curves still falling at step 500, so the table also prints the counts at half and at twice
# that threshold.
#
# **Counts, not claims.** Every cell has 5 seeds. A count of 5 cannot establish a rate (the one-sided 95 % Wilson
# lower bound of {glue:text}`wilson_5of5`, and a stored claim needs at least 20 runs), so the table prints each cell's counts with
# their 95 % Wilson intervals and the text reports them per cell; none is asserted. The claims of this section are
# those of the re-executed slice below.

# %% [markdown]
# The stored grid, each run classified on the ladder (`kstate_stored.classify_runs`), and its rows against the closed
# forms of Sec. 1.

# %%
grid = kstate_grid.load_grid(DATA, resolution)
runs, curves, settings, col_err = grid["runs"], grid["curves"], grid["settings"], grid["col_err"]
print(grid["text"])

# %% tags=["hide-input"]
_ = verified.record("stored rows: yardsticks and lambda = the closed forms", col_err < 1e-12,
                    check=f"runs.csv columns entropy_rate, marginal_entropy, lam, {len(runs)} runs",
                    measured=bound(col_err, 1e-14), tolerance="1e-12", kind="stored data")

# %% [markdown]
# Per cell and init: the counts that reach the entropy rate and that end at $H(\pi)$ with their 95 % Wilson
# intervals, the nearest level of each seed, and how many curves are still falling (at `falling_tol`, and at half
# and twice it).

# %%
print(kstate_grid.grid_table(runs, falling_tol).to_string(index=False))
print(kstate_grid.grid_note(runs, grid["manifest"]))

# %% tags=["hide-input"]
for name, text in kstate_grid.grid_glues(runs, falling_tol).items():
    glue(name, text)

# %%
kstate_drawings.grid_figure(runs)
plt.show()

# %% [markdown]
# **Reading the diagram, cell by cell.** On the persistent side ($p < p^*$) the unigram set is a saddle at small
# weights ({prf:ref}`beyond-cor-small-init`); the standard init reaches the entropy rate in
# {glue:text}`std_persistent`, the guideline-like init in {glue:text}`gl_persistent` (the runs short of it end
# {glue:text}`persistent_short`). On the switching side ($p > p^*$), where the corollary makes the unigram set a minimum
# along every centred embedding direction, the standard init has not reached the entropy rate after {glue:text}`grid_steps` steps in
# {glue:text}`std_switching`; it ends at $H(\pi)$ itself in {glue:text}`std_at_unigram`, so where the plateaus can be
# told apart it sits on a rung $L_m$ of the ladder below the top. In the unresolved cells
# ({glue:text}`unresolved_cells`) every final loss is within {glue:text}`unresolved_near_unigram` of $H(\pi)$. The
# guideline-like init reaches the entropy rate on the switching side in {glue:text}`gl_switching`.
#
# What the data show is *slower learning* from the standard initialization on the switching side: {glue:text}`grid_steps` Adam steps
# end on a plateau of partial predictors, and several of those curves are still falling at step {glue:text}`grid_steps`. By
# themselves they do not show a trap: Sec. 3b runs the same grid ten times longer, with plain SGD beside Adam. The switching side narrows as
# $K$ grows ($p^* \to 1$), and there the delay costs little: at most $\log\frac{K}{K-1}$ nats.

# %% [markdown]
# **Re-executed slice.** The stored runs are deterministic only up to rounding: re-executing them (one thread, the
# manifest's settings) reproduces the stored held-out losses bit for bit in most runs and to a few float32 rounding
# units in the others over the first 50 steps (`slice_prefix`), after which the differences grow (Adam amplifies them). So the slice
# is compared over that deterministic prefix only: every stored seed of the cell (`slice_K`, `slice_p`), both inits,
# is re-executed for `slice_prefix` steps, and its held-out losses at its evaluations up to step `slice_prefix` must match the stored curve
# within `slice_tol` (four times the largest difference measured over the first 50 steps of all {glue:text}`grid_runs` stored runs, in
# both numeric configurations of CI). Beyond the prefix the runs are not compared with the stored ones (a run in
# transit between two rungs at step {glue:text}`grid_steps` can end on either, depending on rounding). The seed `slice_seed` is trained
# live for all {glue:text}`grid_steps` steps, both inits; a run that has *settled* (its held-out loss moved by less than `falling_tol`
# over its last 100 steps) sits on its nearest level $L_m$, and its predictions, read out by the current symbol
# $x_n$, are compared with the lumped predictor of that level (best choice of the $m$ resolved states): a settled
# run predicts like that predictor. A run still falling at step {glue:text}`grid_steps` is in transit and is not read out. This read-out
# claim is stated for $K = 3$: at $K = 5$ after {glue:text}`grid_steps` steps a standard run is near the plateau predictor but not on it
# (a review re-executed $K = 5$, $p = 0.98$, seed 2 and found a total variation above 0.05, the rows not yet
# settled).
# The read-out row is "same code" (it trains through markovlib) and prints its total variation coarsely; its
# threshold `tv_tol`, like the lag thresholds, is a parameter.

# %%
sl = kstate_grid.replay_slice(grid, n_states=slice_K, p=slice_p, seed=slice_seed, prefix=slice_prefix,
                              falling_tol=falling_tol, tv_tol=tv_tol, readout_seed=seed + 77)
prefix_dev, tv_worst, read = sl["prefix_dev"], sl["tv_worst"], sl["read"]
print("\n".join(sl["lines"]))

# %% tags=["hide-input"]
_ = glue("slice_prefix_steps", str(slice_prefix))
_ = glue("grid_steps", str(settings["steps"]))
_ = glue("grid_runs", str(len(runs)))
_ = verified.record(f"re-executed slice: the first {slice_prefix} steps match the stored curves", prefix_dev < slice_tol,
                    check=f"K = {slice_K}, p = {slice_p}, every stored seed, both inits, manifest settings, one thread",
                    measured=bound(prefix_dev, 1e-6), tolerance=f"{slice_tol:g} nats", kind="stored data")
_ = verified.record("a settled run on level L_m predicts like the lumped predictor (ladder, beyond-prop-ladder)",
                    bool(read) and tv_worst < tv_tol,
                    check=f"seed {slice_seed} trained live for {settings['steps']} steps, the settled runs "
                          f"({', '.join(read) if read else 'none'}): mean predicted law given x_n vs the closed-form "
                          "lumped predictor, best resolved set",
                    measured="total variation " + kstate_checks.tv_text(tv_worst, tv_tol),
                    tolerance=f"total variation {tv_tol:g} per row", kind="same code")

# %%
kstate_drawings.slice_figure(curves, slice_K, slice_p)
plt.show()
g_std = sl["cell"][sl["cell"].init == "standard"]
_ = glue("slice_cell_std", f"{fraction((g_std.level == slice_K - 1).sum(), len(g_std))} standard runs at the entropy "
                           f"rate's level and {fraction((g_std.fell > falling_tol).sum(), len(g_std))} still falling")

# %% [markdown]
# The stored curves of this cell show the order of events. On the switching side, from the standard initialization
# the runs start at $H(\pi)$ and stay near it for a while before they fall (the figure); at step {glue:text}`grid_steps` the cell has
# {glue:text}`slice_cell_std`. Whether every run eventually reaches the entropy rate is not decided by {glue:text}`grid_steps` steps.

# %% [markdown]
# (beyond-sec-phase)=
# ### 3b. Ten seeds, 5000 steps: Adam, plain SGD and an untied head
#
# The 500-step grid above leaves two questions: do the switching-side runs from the standard initialization stay
# short of the entropy rate, and is that Adam's doing? The stored set `book/data/beyond_two_states/phase_*`
# (`python tools/run_beyond.py --part phase --workers 2`, manifest `manifest_phase.json`) answers both on the same
# $(K, p)$ grid, with {glue:text}`phase_n` seeds per cell, ten times the steps (5000, evaluated every 250) and five
# arms:
#
# - Adam (betas $(0.9, 0.95)$, lr $2\cdot 10^{-3}$), tied head $E z + b$, the standard and the guideline-like init
#   (the 500-step runs' arms, run longer);
# - plain SGD ($\theta \leftarrow \theta - \eta\nabla$, no momentum, $\eta = 1$), tied, both inits. The rate is the
#   largest of $\{0.1, 0.3, 1, 3\}$ that was stable in a one-seed pilot of 1000 steps at $K = 3$ and $10$ on both
#   sides of $p^*$ ($\eta = 3$ diverged from the guideline-like init at $K = 3$);
# - Adam with an **untied** head: a separate unembedding $U$ (logits $U z + b$, drawn like $E$), the standard init.
#   The tie $E$ in both the input and the output is what makes the binary model's loss depend on $e^2$, and so what
#   makes the canonical model's unigram line a critical set; this arm asks whether the K-state trap needs it.
#
# Each run is classified at step 5000 by the ladder, as above (`resolution` decides which cells are resolved), and
# is *still falling* when its held-out loss dropped by more than `falling_tol` over its last `phase_falling_back`
# steps. **Counts per cell, never pooled.** With {glue:text}`phase_n` seeds a cell's count is not a rate (a stored
# rate needs 20 runs; a count of {glue:text}`phase_count` has a 95 % Wilson lower end of
# {glue:text}`phase_wilson_low`), so each claim below says: *in every resolved cell of the side, at least
# `phase_count` of the seeds*; the table gives every cell's count with its Wilson interval. In honesty about the
# order: `phase_count` and `phase_falling_back` were fixed after the first seed of nine of the twelve cells had been
# seen, before the other nine seeds had run; the claims' directions come from the pilot and that first seed. Two
# claims were restated after five seeds had run: "Adam from the standard init has not reached the entropy rate on
# the switching side" failed at $K = 3$ (four of five seeds had reached it in both cells), so the claim is now that
# Adam *leaves* $H(\pi)$, and the counts that reach the entropy rate are reported beside it; and every arm was classified
# short of the entropy rate in some $K = 10$ seeds, which {prf:ref}`beyond-prop-capacity` explains (derived after that
# look: no $K = 10$ run can reach it), so the claims of reaching it cover the cells with $K - 1 \le d$ only.

# %%
loaded = kstate_phase.load_phase(DATA, resolution, phase_falling_back)  # every phase file against its sha256
phase, phase_curves, phase_manifest, ps_ = loaded["phase"], loaded["curves"], loaded["manifest"], loaded["settings"]
print(loaded["text"])

# %% tags=["hide-input"]
_ = verified.record("phase set: complete, checksums match, yardsticks and lambda = the closed forms",
                    loaded["col_err"] < 1e-12 and bool(phase.finite.all()),
                    check=f"manifest_phase.json sha256, {len(phase)} of {phase_manifest['runs_planned']} planned runs, "
                          "every final loss finite, columns entropy_rate and lam",
                    measured=bound(loaded["col_err"], 1e-14), tolerance="1e-12", kind="stored data")

# %% [markdown]
# Each phase run classified on the ladder at step {glue:text}`phase_steps` (`kstate_phase.load_phase`), per cell and arm, with the runs
# that dropped by more than `falling_tol` over the last `phase_falling_back` steps.

# %%
print(kstate_phase.phase_table(phase, falling_tol, phase_falling_back).to_string(index=False))

# %%
kstate_drawings.phase_figure(phase, ps_["steps"], len(phase_manifest["seeds"]))
plt.show()

# %%
kstate_drawings.switching_figure(phase, phase_curves, ps_["steps"])
plt.show()

# %% [markdown]
# The capacity bound of {prf:ref}`beyond-prop-capacity` (derived below) rests on one step that is checked here
# independently: the chain's log-kernel, its rows centred, has rank $K - 1$ (numpy's rank of the matrix built by
# hand, every stored cell; $\lambda \ne 0$ there).

# %% tags=["hide-input"]
d_phase = int(ps_["d"])
rank_ok = [kstate_reference.centred_log_kernel_rank(K, p) == K - 1 for K, p in sorted(set(zip(phase.K, phase.p)))]
_ = verified.record("the centred log-kernel has rank K - 1 (so reaching the entropy rate needs K - 1 <= d)",
                    all(rank_ok), check="singular values of log P with centred rows (cut 1e-9 of the largest), every stored (K, p)",
                    measured=f"{sum(rank_ok)}/{len(rank_ok)} cells with rank K - 1", tolerance="all cells",
                    kind="independent")

# %% [markdown]
# The claims of Sec. 3b, one record each: a claim holds when at least `phase_count` of the seeds of every cell it
# covers agree (`kstate_stored.cells_counts`, per cell, never pooled).

# %% tags=["hide-input"]
cells = {}  # key -> [(K, p, k, n)] per covered cell
for key, (claim, arm, side, column, want, reachable) in kstate_phase.CLAIMS.items():
    cells[key] = kstate_stored.cells_counts(phase, arm, side, column, want, reachable)
    cover = f"resolved cells with {side}" + (f" and K - 1 <= d = {d_phase}" if reachable else "")
    verified.record(claim, bool(cells[key]) and min(k for *_, k, _ in cells[key]) >= phase_count,
                    check=f"{arm}, every {cover}, step {ps_['steps']}, ladder classification",
                    measured=kstate_stored.counts_text(cells[key]),
                    tolerance=f"at least {phase_count} of the cell's seeds, every cell", kind="stored data")

for name, text in kstate_phase.phase_glues(phase, cells, phase_manifest, falling_tol, phase_count).items():
    glue(name, text)
_ = glue("phase_steps", str(ps_["steps"]))

# %%
# The held-out noise. Each run's loss is measured on one fixed batch of eval_batch sequences, drawn with the seed
# derived from (seed, 0, 1) by numpy's SeedSequence (train_kstate's docstring); the batch is regenerated here and
# scored by the chain's own law (kstate_reference.batch_chain_score); a run's loss minus that score is free of it.
phase, noise_sd = kstate_phase.add_batch_noise(phase, ps_)
print("held-out batch noise (its chain-law score minus the entropy rate), SD over the seeds of each cell:")
print("; ".join(f"K = {K}, p = {p:g}: {fixed(v, 3)}" for (K, p), v in noise_sd.items()))

# %% [markdown]
# The regenerated batches are the runs' own: where every seed of an arm sits at the entropy rate ($K - 1 \le d$) the
# seed spread of the excess is a small fraction of the raw spread (a different batch would add its noise, a ratio of
# about $\sqrt 2$).

# %% tags=["hide-input"]
settled, ratios = kstate_phase.settled_runs(phase)
_ = verified.record("the regenerated held-out batches are the runs' own", float(ratios.max()) < batch_spread_ratio,
                    check=f"seed SD of (final loss - the batch's chain-law score) / seed SD of (final loss - entropy rate), "
                          f"{len(ratios)} cell-arms with every seed at the entropy rate",
                    measured=f"largest ratio {fixed(ratios.max(), 2)}", tolerance=f"below {batch_spread_ratio:g}",
                    kind="stored data")

# %% [markdown]
# The paired noise that remains, and the $K = 10$ runs ($K - 1 > d$) against their own batch.

# %%
k10 = phase[~phase.capacity]
# the paired noise: the seed spread of the excess where every seed sits at the entropy rate (pooled variance)
paired_sd = float(np.sqrt(settled.groupby(["K", "p", "arm"]).excess.var().mean()))
print(f"paired noise (seed SD of the excess in the settled runs, pooled): {fixed(paired_sd, 4)} nats; smallest K = 10 "
      f"excess {fixed(k10.excess.min(), 4)} nats = {k10.excess.min() / paired_sd:.0f} of those")

# %% tags=["hide-input"]
_ = glue("phase_paired_sd", f"{fixed(paired_sd, 4)} nats")
_ = glue("phase_k10_margin", f"{k10.excess.min() / paired_sd:.0f}")
_ = verified.record("K - 1 > d: every stored run ends above the entropy rate on its own held-out batch (beyond-prop-capacity)",
                    bool((k10.excess > 0).all()),
                    check=f"final loss - the batch's chain-law score, {len(k10)} runs with K - 1 > d = {d_phase}",
                    measured=f"smallest excess {fixed(k10.excess.min(), 4)} nats", tolerance="above 0", kind="stored data")
_ = glue("phase_k10_excess", "; ".join(f"{fixed(g.excess.min(), 3)} to {fixed(g.excess.max(), 3)} nats at K = {K}, p = {p:g}"
                                       for (K, p), g in k10.groupby(["K", "p"])))

# %% [markdown]
# The classification against the noise: each final loss moved to the entropy rate plus its excess changes no
# classification where $K - 1 \le d$.

# %% tags=["hide-input"]
phase, flips, n_inside = kstate_phase.noise_corrected(phase, resolution)
_ = verified.record("K - 1 <= d: the held-out noise changes no classification", flips == 0,
                    check=f"ladder classification of the noise-corrected final loss, {n_inside} runs of the resolved "
                          "cells with K - 1 <= d", measured=f"{flips} runs change", tolerance="0 runs", kind="stored data")
_ = glue("phase_over_capacity_corrected", kstate_phase.by_cell_text(phase[~phase.capacity & phase.resolvable],
                                                                    kstate_phase.arm_counts("at_bigram_corrected")))
_ = glue("phase_noise_sd", f"{fixed(noise_sd.min(), 3)} to {fixed(noise_sd.max(), 3)} nats")

# %% [markdown]
# ```{prf:proposition} Reaching the entropy rate needs K - 1 <= d
# :label: beyond-prop-capacity
#
# For the symmetric chain with $\lambda \ne 0$, the K-state model with embedding dimension $d$, tied ($E z + b$) or
# untied ($U z + b$), can predict the next state with the chain's law after every state only if $K - 1 \le d$; for
# $K - 1 > d$ its loss stays above the entropy rate for every choice of weights.
# ```
#
# ```{prf:proof}
# The prediction after a context ending in state $k$ has logits $\ell = E z + b$ (or $U z + b$), which lie in
# $b + \operatorname{range}(E)$ (tied) or $b + \operatorname{range}(U)$ (untied), a space of dimension at most $d$. The chain's law after $k$ has logits
# $\log P_{k\cdot} = c\,e_k + \log\frac{p}{K-1}\,\mathbf 1$ up to a constant, with $c = \log\frac{(1-p)(K-1)}{p} \ne 0$
# exactly when $\lambda \ne 0$. If every state's law is matched, $c(e_k - e_1) \in \operatorname{range}(E \text{ or } U) +
# \operatorname{span}(\mathbf 1)$ for every $k$, so that space is all of $\mathbb R^K$ and $d + 1 \ge K$. The loss
# equals the entropy rate only if the prediction equals the chain's law after almost every context.
# ```
#
# So the stored $K = 10$ cells ($d$ = {glue:text}`phase_d`) cannot reach the entropy rate in any arm, and no claim
# of reaching it is made there. The data agree: scored on its own held-out batch against the chain's law on the
# same batch (which removes the batch's sampling noise, of standard deviation {glue:text}`phase_noise_sd` over the
# seeds of a cell), every $K = 10$ run ends above the entropy rate, by
# {glue:text}`phase_k10_excess`; the smallest is {glue:text}`phase_k10_margin` times the paired noise that remains
# (the seed spread of the same difference in the $K \le 5$ runs that settle at the entropy rate,
# {glue:text}`phase_paired_sd`; the review measured 0.0004 to 0.0005 nats at $K = 10$, $p = 0.95$, so there the margin is three to four times it).
# How close the best predictor of rank $d$ comes is not derived here. An outside review computed it numerically
# (the best logits in an affine subspace of dimension $d = 8$: 0.0107, 0.0136, 0.0019 and 0.0091 nats at
# $p = 0.135$, 0.54, 0.95 and 0.99; not re-run here) and found the seed means of the settled arms at that floor
# within the noise; single runs fall on either side of it, by the same noise. The raw counts of $K = 10$ runs nearer $L_{K-1}$ than $L_{K-2}$
# ({glue:text}`phase_over_capacity`) mix this floor with the held-out noise; corrected for the noise they become
# {glue:text}`phase_over_capacity_corrected`. Nearer is not at, in either reading.
#
# **What the five arms show, cell by cell.** On the switching side, where
# {prf:ref}`beyond-cor-small-init` makes the unigram set a minimum along every centred embedding direction at small
# weights:
#
# - **plain SGD from the standard init ends at $H(\pi)$**: {glue:text}`phase_sgd_trap`. For plain SGD, as for
#   gradient flow on the binary chain and for SGD in the full binary model ({doc}`trap_or_plateau`), the unigram set
#   of the tied model is a trap on this side within {glue:text}`phase_steps` steps;
# - **Adam from the standard init leaves $H(\pi)$**: {glue:text}`phase_adam_leaves`. It climbs down the ladder of
#   plateaus ({glue:text}`phase_adam_levels`) and reaches the entropy rate in {glue:text}`phase_adam_reach`: a
#   plateau, not a trap, at $K = 3$, as for Adam in the binary model, and a slow one. At $K = 5$ no seed reached the
#   entropy rate: an outside review continued three of those runs to 10000 to 15000 steps, and they stayed on the same
#   plateau $L_2$ with no drift (not stored, not re-run here), so there the plateau may be a trap for Adam too. The
#   $K = 3$ counts depend on the horizon: in the same review, three of the runs at $p = 0.967$ reached the entropy
#   rate between steps 4000 and {glue:text}`phase_steps`;
# - **with an untied head, Adam from the same standard init reaches the entropy rate** where
#   {prf:ref}`beyond-prop-capacity` allows it: {glue:text}`phase_untied_sw` (persistent side:
#   {glue:text}`phase_untied_pe`);
# - **the guideline-like init reaches the entropy rate under either optimizer**: Adam {glue:text}`phase_gl_adam_sw`;
#   SGD {glue:text}`phase_gl_sgd_sw`.
#
# On the persistent side, where the unigram set is a saddle at small weights, the standard init reaches the entropy
# rate under Adam ({glue:text}`phase_persist_adam`) and under SGD ({glue:text}`phase_persist_sgd`). The switching
# cells whose plateaus lie closer than `resolution` are not classified; there the normalized gaps at step {glue:text}`phase_steps`, per
# arm over the cell's seeds, are {glue:text}`phase_unresolved`.
#
# So the {glue:text}`grid_steps`-step picture was Adam's, and partly a matter of time: on the switching side the standard init of the
# tied model is trapped at $H(\pi)$ under plain SGD, while Adam leaves it and descends a ladder of partial
# predictors, at $K = 3$ mostly to the entropy rate within {glue:text}`phase_steps` steps, at $K = 5$ not. Both the initialization (the
# guideline-like one learns under SGD too) and the tie (an untied head learns from the standard init under Adam)
# change the outcome; neither effect is derived here for $K > 2$.

# %% [markdown]
# **Re-executed phase slice.** Every stored phase run of the cell (`slice_K`, `slice_p`) with a seed in
# `phase_slice_seeds`, in all five arms, is re-executed for `phase_slice_steps` steps (one thread, the manifest's
# settings) and its held-out losses at the evaluations up to there are compared with the stored curve. The seeds
# and steps must lie inside what `python tools/run_slice_prefix.py phase` measured in both numeric configurations of
# CI (the first three seeds of every cell and arm, `phase_slice_steps` = 250 steps: `slice_prefix.csv` of the set); `phase_slice_tol` is fixed from
# that measurement, printed below.

# %%
measured_agree, text = kstate_phase.measured_prefix(DATA, slice_K, slice_p, phase_slice_seeds, phase_slice_steps)
print(text)

# %%
PHASE_PRINT = 1e-3  # printed bound: above every measured difference (6.8e-4), below the tolerance, stable across configurations
phase_dev = kstate_phase.replay_phase_slice(loaded, n_states=slice_K, p=slice_p, seeds=phase_slice_seeds,
                                            steps=phase_slice_steps)
print(f"{len(kstate_phase.ARMS) * len(phase_slice_seeds)} stored phase runs of K = {slice_K}, p = {slice_p:g} "
      f"re-executed for {phase_slice_steps} steps: largest |held-out loss - stored| {bound(phase_dev, PHASE_PRINT)}")

# %% tags=["hide-input"]
_ = verified.record(f"re-executed phase slice: the first {phase_slice_steps} steps match the stored curves",
                    phase_dev < phase_slice_tol,
                    check=f"K = {slice_K}, p = {slice_p:g}, seeds {phase_slice_seeds}, all five arms, one thread",
                    measured=bound(phase_dev, PHASE_PRINT), tolerance=f"{phase_slice_tol:g} nats", kind="stored data")

# %% [markdown]
# (beyond-sec-lag)=
# ## 4. Lag-k switching chains
#
# The authors' code also runs higher-order chains. We use the simplest family whose order is exactly $k$
# and whose yardsticks are closed forms: the **lag-k switching chain** on $K$ states, with $x_1, \dots, x_k$
# i.i.d. uniform and then $x_n = x_{n-k}$ with probability $1 - p$, otherwise one of the other $K - 1$ states
# uniformly (`multistate.lag_switching_sample`). For $k = 1$ it is the symmetric chain of Sec. 1.
#
# ```{prf:proposition} Yardsticks of the lag-k chain
# :label: beyond-prop-lag
#
# For every $k \ge 1$ the marginals are uniform and the entropy rate is $h(p) + p\log(K-1)$, the loss of the
# predictor $P(\cdot \mid x_{n+1-k})$. Any predictor that sees only $x_{n-j+1}, \dots, x_n$ with $j < k$ has
# loss $\log K$; in particular for $k \ge 2$ the bigram (order-1) predictor does no better than the unigram one.
# ```
#
# ```{prf:proof}
# The residue classes $\{n \equiv c \bmod k\}$ are $k$ independent symmetric chains (each starts uniform and
# moves with the kernel {eq}`beyond-kernel`). So $x_{n+1}$ given the whole past depends only on $x_{n+1-k}$,
# with the row entropy $h(p) + p\log(K-1)$, and the marginals stay uniform. The last $j < k$ symbols belong to
# other classes than $x_{n+1}$, which is independent of them and uniform: loss $\log K$.
# ```
#
# Check: plug-in conditional entropies from samples, given $x_{n+1-k}$ and given $x_n$ (tolerances as in Sec. 1).
# Then the measured part: the final loss of the single-layer model over the stored lag runs (standard and
# guideline-like inits, 2 seeds, the Adam settings of Sec. 3, $K = 3$, $p = 0.1$), against $k$, beside the three
# closed forms: per lag, how many runs end within 0.01 nats of the entropy rate, and the best run.

# %%
lag = kstate_grid.lag_table(DATA, lag1_tol)
lag_mc = kstate_exact.lag_mc(lag["K"], lag["p"], lag["lags"], batch=mc_batch, length=mc_length, z=mc_z, seed=seed)
print(f"lag-k Monte Carlo: largest |error| / (bias bound + {mc_z:g} standard errors) = {fixed(lag_mc, 1)}")

# %% tags=["hide-input"]
_ = verified.record("lag-k yardsticks: entropy rate given x_{n+1-k}, log K given x_n (k >= 2)", lag_mc < 1,
                    check=f"plug-in conditional entropies, {mc_batch} x {mc_length} samples per lag",
                    measured=f"largest error / tolerance {fixed(lag_mc, 1)}",
                    tolerance=f"bias bound + {mc_z:g} standard errors", kind="independent")

# %% [markdown]
# The stored lag runs against the closed forms: per lag, how many runs end within `lag1_tol` of the entropy rate,
# and the best run.

# %%
print(lag["table"].to_string(index=False))
best, near, rate_l, short, n_higher, higher = (lag[k] for k in ("best", "near", "rate", "short", "n_higher", "higher"))

# %% tags=["hide-input"]
_ = glue("lag1_near", fraction(*near[1]))
_ = glue("lag_short", f"{fixed(short, 2)} nats over the {n_higher} runs with k >= 2")
_ = verified.record(f"lag 1: the best stored run ends within {lag1_tol:g} nats of the entropy rate", best[1] - rate_l < lag1_tol,
                    check=f"stored lag runs ({near[1][1]} at k = 1): best final loss",
                    measured=f"best excess {fixed(best[1] - rate_l, 4)} nats", tolerance=f"{lag1_tol:g} nats", kind="stored data")
_ = verified.record(f"lag k >= 2: no stored run comes within {lag_gap:g} nats of the entropy rate at this budget",
                    short > lag_gap,
                    check="every stored final loss minus the entropy rate, k in " + str(higher),
                    measured=f"smallest excess {fixed(short, 2)} nats over {n_higher} runs", tolerance=f"{lag_gap:g} nats",
                    kind="stored data")

# %%
kstate_drawings.lag_figure(lag)
plt.show()

# %% [markdown]
# ## Summary: what was derived and what was only measured
#
# *Derived and checked:* the yardsticks of the symmetric K-state family and of the lag-k chains; the i.i.d.
# point $p^* = (K-1)/K$ as the analogue of $p + q = 1$, with the sign of $\lambda$ in the role of the sign of
# $1 - p - q$; the unigram critical set $E = 0$ for every $K$ and its Hessian along the embedding, whose sign
# at small weights is set by $\lambda$; the ladder $L_m$ of lumped predictors; three conservation laws of the
# full model's gradient flow that do not involve the embedding; the binary model's energy {eq}`beyond-energy` in both
# half planes. *Not found:* a conserved quantity involving the embedding, and so an analogue of the energy
# $E(e, w)$ that decides the end point from the initialization.
#
# *Measured only, per cell, 10 seeds, 5000 steps (Sec. 3b):* on the switching side plain SGD from the standard
# init ends at $H(\pi)$ ({glue:text}`phase_sgd_trap`), while Adam from the same init leaves it
# ({glue:text}`phase_adam_leaves`) and reaches the entropy rate in {glue:text}`phase_adam_reach`; with an untied head
# Adam reaches the entropy rate from the standard init ({glue:text}`phase_untied_sw`), and the guideline-like init
# reaches it under Adam ({glue:text}`phase_gl_adam_sw`) and under SGD ({glue:text}`phase_gl_sgd_sw`). For
# $K - 1 > d$ no arm can reach it ({prf:ref}`beyond-prop-capacity`, derived). These are counts of stored runs per
# cell, not rates (a stored rate needs 20 runs).
#
# *Measured only, per cell, with Adam (not gradient flow) and 5 seeds per cell, 500 steps:* on the persistent side
# the standard init reaches the entropy rate in {glue:text}`std_persistent` and the guideline-like init in
# {glue:text}`gl_persistent`; on the switching side the standard init has not reached it in
# {glue:text}`std_switching`, and the guideline-like init reaches it in {glue:text}`gl_switching`; the trained
# single-layer loss of lag-k chains comes within `lag1_tol` (0.01 nats) of the entropy rate only for $k = 1$
# ({glue:text}`lag1_near` runs; for $k \ge 2$ the smallest excess is {glue:text}`lag_short`). These are counts, not
# claims: with 5 seeds no rate can be established; for the switching side the 5000-step counts above replace them.

# %% tags=["hide-input"]
_ = record_results({
    "K_exact": K_exact,
    "hessian_rel_err_below_1e-9": bool(rel_err < 1e-9),
    "small_init_ratio_dev": ratio_dev,
    "guideline_flip_fraction": sum(flipped) / len(flipped),
    "slice_prefix_deviation": prefix_dev,
    "lag1_best_loss": best[1],
    "phase_sgd_trap_min_count": min(k for *_, k, _ in cells["sgd_trap"]),
    "phase_adam_leaves_min_count": min(k for *_, k, _ in cells["adam_leaves"]),
    "phase_untied_switching_min_count": min(k for *_, k, _ in cells["untied p > p*"]),
    "phase_slice_deviation": phase_dev,
    **verified.summary(),
})

# %% [markdown]
# ## What was verified
#
# Every claim of this chapter, the check that carries it and its tolerance, generated from the records above
# (a failed claim stops the chapter where it is checked).

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("beyond_two_states")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()
