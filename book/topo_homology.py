# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
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
#       '3': the three coordinates (w_1, w_2, a) of the drawn quadrics, d = 2 inputs
#         and one output (the explorer draws them at d = 2, e = 1)
# ---

# %% [markdown]
# # The topology of H(c)
#
# Gradient flow on a shallow ReLU network $f(x) = W_2\,\sigma(W_1 x)$ conserves one balance per hidden neuron,
# $c_k = \|w_k\|^2 - \|a_k\|^2$ ($w_k \in \mathbb R^d$, $a_k \in \mathbb R^e$), so a trajectory never leaves the
# invariant set $H(c)$ fixed at initialization. {cite:t}`nurisso2024topological` compute the topology of $H(c)$:
# its Betti numbers, how many connected components it has, which of them a trajectory can reach, and which are the
# same up to the network's symmetries. This chapter derives those results and checks them independently of the
# formulas: persistent homology of point samples, neighbourhood graphs, trained trajectories, and enumerated
# symmetries.
#
# ## What this chapter shows
#
# 1. $P_{H(c)}(x) = (1 + x^{d-1})^{l_+}(1 + x^{e-1})^{l_-}$ (Lemma 1, Prop. 2, Thm 1): persistent homology of
#    samples in {glue:text}`th_n_cases` cases $(d, e, c)$, two samplers, gives {glue:text}`th_ph_counts` counts
#    equal to its coefficients ([persistence](#sec-topo-homology-persistence)), and $b_2 = 1$ on the torus case
#    ([torus](#sec-topo-homology-torus)).
# 2. $b_0$ is $1$, $2^{l_-}$, $2^{l_+}$ or $2^{l_+ + l_-}$ (Cor. 1, Cor. 2), also by neighbour graphs
#    ([persistence](#sec-topo-homology-persistence)).
# 3. A pathological output weight keeps its sign (Prop. 3) in {glue:text}`th_prop3_kept` training runs, while a
#    non-pathological one turns negative in {glue:text}`th_prop3_flip` ([Prop. 3](#sec-topo-homology-prop3)).
# 4. There are $l_- + 1$ effective components, one per sign sum (Thm 2, Cor. 3), by enumerating the symmetries;
#    read per point, Def. 2 differs: {glue:text}`th_def2_points` generic probes reach several sign sums
#    ([effective components](#sec-topo-homology-effective)).
# 5. Lemmas 2 and 3 (connected iff path-connected; one rescaling after one permutation) are shown as identities
#    ([Lemma 2](#sec-topo-homology-lemma2), [Lemma 3](#sec-topo-homology-lemma3)).

# %% [markdown]
# (sec-topo-homology-params)=
# ## Parameters
#
# Betti numbers: the cases of `cases`, signs $+$, $-$ or $0$ per neuron ($c = 0$ for a $\pm$ neuron is its cone, a
# different case); balances $|c_k|$ = `c_abs` (the check is scale-free, see below); each Euclidean factor truncated
# to a ball of radius `trunc` $\sqrt{|c|}$ (at 0.3 and above the truncated factors of the $\pm$ and $\mp$ cases come
# close enough to close the gap that the persistence reads), each cone to radius `cone_radius` $\sqrt{|c|}$;
# `n_landmarks` farthest-point landmarks from `raw_factor` times as many raw points. The torus $b_2$: `torus_c`,
# `torus_points`. Prop. 3: $d \in$ `train_dims`, `width` neurons of which `n_patho` pathological with
# $|c_k|$ = `c_train`, `n_seeds` seeds per $d$, `steps` steps of size `lr`, `n_data` Gaussian points. Thm 2:
# $e = 1$, $d = 2$, $l$ in `enum_widths`, all $l_-$ from 1 to $l$. The cell after the parameters checks them and
# prints their accepted ranges.

# %% tags=["parameters"]
seed = 0  # seed of every random draw
cases = [[2, 1, "+"], [2, 1, "-"], [2, 1, "0"], [1, 1, "0"], [3, 1, "+"], [2, 2, "+"], [2, 1, "+-"], [2, 1, "++"], [1, 2, "+-"], [2, 1, "+0"], [2, 1, "---"]]  # (d, e, signs of c): the Betti-number cases
c_abs = 1.0  # |c_k| of every nonzero balance in the point samples (the unit of length is its square root)
n_landmarks = 300  # farthest-point landmarks per sample (the Rips complex is built on them)
raw_factor = 10  # raw sample points per landmark
trunc = 0.1  # radius of the ball that truncates each Euclidean factor, in units of sqrt(c_abs)
cone_radius = 0.5  # radius at which each cone (c_k 0) is cut, in units of sqrt(c_abs)
persist_min = 0.6  # fixed before the data: a bar is a feature if it lives longer than this (units of sqrt(c_abs))
noise_factor = 2.0  # fixed before the data: and longer than this multiple of the measured landmark spacing
edge_factor = 2.0  # the Rips complex is built up to this multiple of the threshold theta
torus_c = [1.0, 1.0]  # balances (c_1, c_2) of the b2 check with d 2, e 1 and two non-pathological neurons
torus_points = 500  # points sampled on the torus for the b2 check (alpha complex; at least 400)
torus_persist = 0.4  # fixed before the data: a bar counts as a feature beyond this, in units of sqrt(min c_k)
train_dims = [2, 3]  # input dimensions d of the Prop. 3 runs
width = 6  # hidden neurons l of the Prop. 3 runs
n_patho = 3  # pathological neurons among them
c_train = 0.5  # |c_k| of the Prop. 3 runs (the sign of c_k says which neurons are pathological)
n_seeds = 8  # training runs per d
steps = 2000  # gradient-descent steps
lr = 0.01  # step size (close to the flow; range up to 0.01)
n_data = 200  # training points, Gaussian inputs
drift_tol = 0.1  # fixed before the data: largest allowed relative drift |c_k(t) - c_k(0)| / |c_k| for this step size
flip_rate = 0.5  # fixed before the data: a non-pathological output weight turns negative in more than this fraction of runs
enum_widths = [3, 4]  # widths l for the Thm 2 enumeration (every l- from 1 to l)
n_probes = 4  # points probed per component in the Thm 2 enumeration
explorer_drift_tol = 0.05  # fixed before the data: largest balance drift along the trajectories of the explorer (step 0.01)

# %% tags=["hide-input"]
from markovlib.book import specs
SPEC = specs.load("topo_homology")
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import itertools

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from markovlib.book import explorers, plotting, widgets
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.topology import components, homology, homology_checks, homology_drawings, invariant_set
from markovlib.topology import drawings as topo_drawings

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
print("Thm 1 for d = 2, e = 1, c = (+1, -1, -1):", invariant_set.poincare_polynomial(2, 1, [1.0, -1.0, -1.0]))

# %% [markdown]
# ## The invariant set is a product of quadrics
#
# Neuron $k$ owns the coordinates $(w_k, a_k) \in \mathbb R^{d}\times\mathbb R^{e}$, and the network's
# parameter space is the direct sum of the neurons' spaces (the paper's Prop. 1). Each equation
# $\|w_k\|^2 - \|a_k\|^2 = c_k$ involves only neuron $k$'s coordinates, so:
#
# ```{prf:lemma} H(c) is a product (paper's Lemma 1)
# :label: topo-lem-1
#
# $H(c)$ is homeomorphic to $Q_1(c_1)\times\cdots\times Q_l(c_l)$, with
# $Q_k(c_k) = \{(w, a)\in\mathbb R^d\times\mathbb R^e : \|w\|^2 - \|a\|^2 = c_k\}$.
# ```
#
# ```{prf:proposition} The quadrics (paper's Prop. 2)
# :label: topo-prop-2
#
# If $c_k > 0$, $Q_k(c_k) \cong S^{d-1}\times\mathbb R^e$; if $c_k < 0$, $Q_k(c_k) \cong S^{e-1}\times\mathbb R^d$;
# $Q_k(0)$ is a cone, contractible.
# ```
#
# ```{prf:proof}
# For $c > 0$ the map $(w, a) \mapsto (w/\|w\|, a)$ sends $Q(c)$ to $S^{d-1}\times\mathbb R^e$ ($\|w\|^2 = c + \|a\|^2 > 0$),
# with the continuous inverse $(u, a) \mapsto (\sqrt{c + \|a\|^2}\,u, a)$. For $c < 0$ exchange the roles of $w$ and
# $a$. For $c = 0$, $h_t(w, a) = (t w, t a)$, $t\in[0, 1]$, stays in the cone and contracts it to $0$.
# ```
#
# The Poincaré polynomial of a space has its Betti numbers as coefficients; that of $S^{n}$ is $1 + x^{n}$ (for
# $S^0$, two points, it is $2$), that of $\mathbb R^m$ is $1$, and the Künneth formula (field coefficients) makes
# the polynomial of a product the product of the polynomials:
#
# ```{prf:theorem} Betti numbers of H(c) (paper's Thm 1)
# :label: topo-thm-1
#
# With $l_+, l_-, l_0$ the numbers of positive, negative and zero balances,
#
# $$
# P_{H(c)}(x) = (1 + x^{d-1})^{l_+}\,(1 + x^{e-1})^{l_-} .
# $$
# ```
#
# ```{prf:corollary} Connected components (paper's Cor. 1)
# :label: topo-cor-1
#
# $b_0(H(c)) = P_{H(c)}(0)$ is $1$ if $d > 1$ and $e > 1$; $2^{l_-}$ if $e = 1 < d$; $2^{l_+}$ if $d = 1 < e$;
# $2^{l_+ + l_-}$ if $d = e = 1$.
# ```
#
# ```{prf:corollary} Pathological neurons disconnect (paper's Cor. 2)
# :label: topo-cor-2
#
# For $e = 1 < d$, if $l_-$ neurons have $\|a_k\| > \|w_k\|$ (pathological, $c_k < 0$), $H(c)$ has $2^{l_-}$
# connected components.
# ```
#
# `markovlib.topology.invariant_set.n_components` writes Cor. 1 out case by case, and `poincare_polynomial` multiplies the
# factors; their agreement over a grid is a first check, through the same code. The independent checks follow.

# %%
n_grid_ok, n_grid = homology_checks.cor1_grid(max_dim=4, neurons=3)
print("Cor. 1 (case by case) = constant term of Thm 1, and P(-1) = Euler characteristic of the product, "
      f"for d, e in 1..4 and all sign patterns of 3 neurons: {n_grid_ok}/{n_grid} agree")

# %% tags=["hide-input"]
_ = verified.record("Cor. 1 is the constant term of Thm 1", n_grid_ok == n_grid, kind="same code",
                    check="n_components vs poincare_polynomial(...)[0]; P(-1) vs the product of Euler characteristics",
                    measured=f"{n_grid_ok}/{n_grid} (d, e, signs) agree", tolerance="exact, every case")

# %% [markdown]
# (sec-topo-homology-lemma2)=
# ### Connected and path-connected (paper's Lemma 2)
#
# The Betti number $b_0$ counts connected components; gradient flow moves along paths. The two notions agree here:
#
# ```{prf:lemma} Connected iff path-connected (paper's Lemma 2)
# :label: topo-lem-2
#
# $H(c)$ is connected if and only if it is path-connected.
# ```
#
# ```{prf:proof}
# Path-connected spaces are connected. Conversely, let $H(c) \cong \prod_k Q_k(c_k)$ ({prf:ref}`topo-lem-1`) be
# connected. Each factor is then connected, being the image of $H(c)$ under a coordinate projection. A factor with
# $c_k \ne 0$ is a topological manifold ({prf:ref}`topo-prop-2`), and a connected manifold is path-connected. The
# cone $Q_k(0)$ is path-connected whatever $H(c)$ is: its equation $\|w\|^2 = \|a\|^2$ is homogeneous, so the segment
# $t \mapsto t\,(w, a)$, $t \in [0, 1]$, joins any of its points to the origin inside it. A product of
# path-connected spaces is path-connected.
# ```
#
# The check below (an identity: the cone's equation is homogeneous, so it documents the proof rather than testing
# it) walks such paths on cones $Q(0)$ for several $(d, e)$: from a random point to the origin and on
# to a second random point, every point of the path is on the cone to rounding. (The neighbour-graph count of the
# next section, the number of path components of a sample at one scale, equals the persistent $b_0$ in every case:
# the same agreement seen on the samples.)
#

# %%
lem2_err = homology_checks.lemma2_paths(np.random.default_rng([seed, 3]), dims=((1, 1), (2, 1), (3, 2), (5, 4)), pairs=20)
lem2_ok = lem2_err < 1e-10
print("Lemma 2: paths through the apex of Q(0), (d, e) in (1, 1), (2, 1), (3, 2), (5, 4), 20 pairs each: "
      f"largest |‖w‖² - ‖a‖²| along them {bound(lem2_err, 1e-12)}")

# %% tags=["hide-input"]
_ = verified.record("Lemma 2: the cone Q(0) is path-connected through its apex", lem2_ok, kind="identity",
                    check="points of segments from two random points to the origin, residual of the cone's equation "
                          "(homogeneous: true by algebra)", measured=bound(lem2_err, 1e-12), tolerance="1e-10")

# %% [markdown]
# (sec-topo-homology-persistence)=
# ## Betti numbers from point samples (persistent homology)
#
# **Scale.** With $\rho = \sqrt{|c|}$, the map $\theta \mapsto \rho\,\theta$ sends $Q(\pm 1)$ onto $Q(\pm\rho^2)$ and
# $Q(0)$ onto itself, so $H(c)$ for balances $c_k \in \{+|c|, -|c|, 0\}$ is $\rho$ times $H(c/|c|)$. Every length of
# the check (the truncation, the Rips edges, the persistence threshold) is therefore measured in units of $\rho$,
# and the check is the same at every `c_abs` (at `c_abs` $= 0$, every neuron is a cone and $\rho = 1$).
#
# **Truncation.** The quadrics are unbounded; each neuron's quadric is cut by a ball around the origin,
# $\|w_k\|^2 + \|a_k\|^2 \le |c_k| + 2t^2\rho^2$ ($t$ = `trunc`) for $c_k \ne 0$, and $\le 2r^2\rho^2$ for the cone
# ($r$ = `cone_radius`). On $Q(c)$ with $c > 0$ this is $\|a\| \le t\rho$ (and $\|w\| \le t\rho$ for $c < 0$;
# $\|w\| = \|a\| \le r\rho$ on the cone): the map $(w, a) \mapsto (w\sqrt{c + s^2\|a\|^2}/\|w\|,\ s\,a)$, $s$ from 1 to 0, stays on $Q(c)$ inside the
# ball and retracts the cut piece onto the sphere, and the segments to the apex retract the cut cone, so the cut
# keeps the homotopy type. The cut needs no knowledge of Prop. 2: it is a ball.
#
# **Two samplers.** (a) *From the parametrization* of {prf:ref}`topo-prop-2`: for $c_k > 0$, $a_k$ uniform in the
# ball of radius $t\rho$ and $w_k = \sqrt{c_k + \|a_k\|^2}\,u$ with $u$ uniform on $S^{d-1}$ (and exchanged for
# $c_k < 0$; $(r u, r v)$ with $u, v$ on the unit spheres on the cone). These samples are products of spheres and
# balls by construction, so they test the Künneth step, given Prop. 2. (b) *By projection*: a point $z = (w, a)$
# drawn from $\mathcal N(0, R^2 I)$ in $\mathbb R^{d+e}$ ($R$ the ball's radius) is moved to its closest point of
# $Q(c_k)$, $(w/(1 + \lambda), a/(1 - \lambda))$, with the Lagrange multiplier $\lambda \in (-1, 1)$ the root of the
# strictly decreasing $\varphi(\lambda) = \|w\|^2/(1+\lambda)^2 - \|a\|^2/(1-\lambda)^2 - c_k$ (Newton's method,
# safeguarded by bisection); points outside the ball are rejected. Only the defining equation enters, so the
# persistence of these samples tests Prop. 2 and Thm 1 together. The closest point of $H(c)$ splits by neuron
# (each equation involves one neuron's coordinates), so each neuron is projected on its own.
#
# **Persistence.** From `raw_factor` $\times$ `n_landmarks` raw points, farthest-point sampling keeps `n_landmarks`
# landmarks, and $\varepsilon$, their covering radius, is measured on a fresh sample of the same set. Noise bars live
# about as long as the gaps of the sample, features about as long as the radius of their sphere, so the threshold
# scales with both: a bar is a feature when it lives longer than
# $\theta = \max($`persist_min`$\cdot s,\ $`noise_factor`$\cdot\varepsilon)$, with $s$ the smallest radius a feature
# could have ($\rho$, or $r\rho$ when a cone is present: were the cone not contractible, its features would be of
# that size), both factors fixed before the data.
# gudhi builds the Vietoris–Rips complex on the landmarks up to edge length `edge_factor`$\cdot\theta$ (edge
# collapses, then the flag expansion) and computes its persistence; a feature born before $\theta$ that survives to
# the top of the filtration then shows a life above $\theta$ (a circle of radius $\rho$ dies at $\sqrt3\rho$, a
# 2-sphere at $\sqrt{8/3}\rho$, the two sheets of $S^0\times\mathbb R^d$ merge at $2\rho$). Nothing here uses Thm 1:
# the counts are compared with it afterwards. $b_0$ is checked a second time without persistent homology, by the
# connected components of the radius-$\theta$ neighbour graph of the raw points (scikit-learn and scipy).

# %% [markdown]
# For each case and sampler, the next cell draws the raw points and a fresh sample, keeps the landmarks, measures
# their spacing $\varepsilon$, sets the threshold $\theta$, and counts the Rips bars longer than $\theta$
# (`homology.rips_betti`) and the components of the radius-$\theta$ graph (`homology.graph_components`).

# %%
rho, n_raw = float(np.sqrt(c_abs)), raw_factor * n_landmarks
rows, proj_res = homology_checks.sampled_betti(
    cases, np.random.default_rng(seed), c_abs=c_abs, trunc=trunc, cone_radius=cone_radius, n_landmarks=n_landmarks,
    raw_factor=raw_factor, persist_min=persist_min, noise_factor=noise_factor, edge_factor=edge_factor)
print(homology_checks.betti_table(rows))

# %% [markdown]
# The counts are compared with Thm 1's coefficients; the longest noise bar stays below {glue:text}`th_gap_noise`
# $\theta$ and the shortest feature bar above {glue:text}`th_gap_signal` $\theta$:

# %%
n_ph, n_ph_ok = len(rows), sum(r["counts"] == r["want"] for r in rows)
n_graph_ok = sum(r["b0_graph"] == r["P"][0] for r in rows)
ok_by = {name: sum(r["counts"] == r["want"] for r in rows if r["sampler"] == name) for name in ("param", "newton")}
gap_noise, gap_signal = max(r["noise"] for r in rows), min(r["signal"] for r in rows)   # in units of theta
print(f"Newton projection: largest residual of the quadric's equation {bound(proj_res, 1e-9)}")
print(f"longest noise bar < {fixed(np.ceil(gap_noise * 20) / 20, 2)} theta; shortest feature bar, cut at the top edge, "
      f"> {fixed(np.floor(gap_signal * 20) / 20, 2)} theta")

# %% tags=["hide-input"]
_ = glue("th_n_cases", str(len(cases)))
_ = glue("th_ph_counts", fraction(n_ph_ok, n_ph))
_ = glue("th_gap_noise", fixed(np.ceil(gap_noise * 20) / 20, 2))
_ = glue("th_gap_signal", fixed(np.floor(gap_signal * 20) / 20, 2))
_ = verified.record("Thm 1 (Kunneth): Betti numbers of samples built from Prop. 2's parametrization",
                    ok_by["param"] == len(cases),
                    kind="independent", check=f"gudhi Vietoris-Rips persistence on {n_landmarks} landmarks, {len(cases)} "
                                              "cases (d, e, signs); b0, b1, b2 for one neuron; b0, b1 for two; b0 for three",
                    measured=f"{ok_by['param']}/{len(cases)} cases match P", tolerance="exact counts, every case")
_ = verified.record("Prop. 2 + Thm 1: Betti numbers of samples projected onto the quadrics (Newton)",
                    ok_by["newton"] == len(cases),
                    kind="independent", check=f"Gaussian points projected onto each Q(c_k) by Newton's method on its "
                                              f"equation (residual {bound(proj_res, 1e-9)}), then the same persistence",
                    measured=f"{ok_by['newton']}/{len(cases)} cases match P", tolerance="exact counts, every case")
_ = verified.record("Cor. 1 / Cor. 2: components by a neighbour graph", n_graph_ok == n_ph, kind="independent",
                    check=f"connected components of the radius-theta graph on {n_raw} raw points, both samplers",
                    measured=f"{n_graph_ok}/{n_ph} samples: b0 = P(0)", tolerance="exact, every sample")
_ = verified.record("persistence gap (features vs noise)", gap_noise < 1 < gap_signal, kind="independent",
                    check="longest bar below the threshold theta and shortest bar above it, every sample",
                    measured=f"noise < {fixed(np.ceil(gap_noise * 20) / 20, 2)} theta, features > "
                             f"{fixed(np.floor(gap_signal * 20) / 20, 2)} theta",
                    tolerance="noise < theta < features")

# %% [markdown]
# The quadric of one neuron at $d = 2$, $e = 1$ for the three signs of $c$:

# %%
homology_drawings.draw_quadrics(rho)
plt.show()

# %% [markdown]
# (sec-topo-homology-torus)=
# ### $b_2$ of the torus case
#
# For $d = 2$, $e = 1$, $l = 2$ and $c_1, c_2 > 0$, {prf:ref}`topo-thm-1` gives $P(x) = (1 + x)^2$: Betti numbers
# $(1, 2, 1)$, those of a torus. The Rips samples above stop at $b_1$ for two neurons (a Rips complex of a 4-D
# sample up to dimension 3 is too large for the time budget), so $b_2$ is checked on a smaller object with the
# same homotopy type: the slice $a_1 = a_2 = 0$ of $H(c)$, the torus $T_c = \{\|w_1\|^2 = c_1\} \times
# \{\|w_2\|^2 = c_2\}$, a product of two circles in $\mathbb R^4$. It is a deformation retract of $H(c)$: the map
# $r_t(w_k, a_k) = \big(w_k\sqrt{c_k + (1-t)^2 a_k^2}/\|w_k\|,\ (1-t)\,a_k\big)$ stays on $H(c)$ (its balance is
# $c_k + (1-t)^2a_k^2 - (1-t)^2a_k^2 = c_k$), is continuous since $\|w_k\| \ge \sqrt{c_k} > 0$, is the identity
# at $t = 0$, fixes $T_c$, and lands on $T_c$ at $t = 1$. So $H(c)$ and $T_c$ have the same Betti numbers.
# About `torus_points` points, one uniform point in each cell of an $n_1 \times n_2$ grid of the two angles
# ($n_1 : n_2$ as the radii, a stratified sample: evenly spread without the gaps of independent uniform points,
# which made this check fragile at 400 points), are fed to gudhi's alpha complex (exact Delaunay filtration,
# feasible in $\mathbb R^4$ for a few hundred points); bars are measured in $\sqrt{\alpha}$ (a length) and count as
# features beyond `torus_persist` $\cdot\sqrt{\min_k c_k}$, the threshold fixed before the data and scaled with the
# smaller circle (the stated range $\max_k c_k \le 2\min_k c_k$ keeps the sample's spacing, which grows with the
# larger circle, below the threshold). Only dimensions 0 to 2 are compared: the sample also
# lies on the 3-sphere of radius $\sqrt{c_1 + c_2}$, whose 3-dimensional cavity the alpha complex also sees
# (one bar in dimension 3, not a feature of $H(c)$).

# %%
torus, n1, n2 = homology_checks.torus_sample(torus_c, torus_points, np.random.default_rng([seed, 2]))
r_min = float(np.sqrt(min(torus_c)))   # the unit of length of this check
print(f"{len(torus)} points on the torus, {n1} x {n2} angle cells")

# %% [markdown]
# The alpha-complex persistence (`homology.alpha_betti`, bars in $\sqrt{\alpha}$ divided by $\sqrt{\min_k c_k}$, the
# infinite $H_0$ bar capped at $10^3$) against Thm 1:

# %%
t_counts, t_noise, t_signal = homology.alpha_betti(torus, 2, torus_persist, r_min)
t_want = invariant_set.betti_numbers(2, 1, list(torus_c))
t_ok = t_counts == list(t_want) and t_noise < torus_persist < t_signal
print(f"Thm 1, d = 2, e = 1, c = ({fixed(torus_c[0], 2)}, {fixed(torus_c[1], 2)}): {list(t_want)}; "
      f"alpha-complex bars beyond {torus_persist} sqrt(min c) in dimensions 0, 1, 2: {t_counts}")
print(f"longest noise bar < {fixed(np.ceil(t_noise * 20) / 20, 2)} sqrt(min c); shortest feature bar > "
      f"{fixed(np.floor(t_signal * 20) / 20, 2)} sqrt(min c)")

# %% tags=["hide-input"]
_ = verified.record("Thm 1: b2 = 1 for the torus case (d = 2, e = 1, two c_k > 0)", t_ok, kind="independent",
                    check=f"gudhi alpha-complex persistence of {len(torus)} points on the a = 0 slice (a deformation "
                          "retract of H(c))", measured=f"b0, b1, b2 = {t_counts}; noise < "
                                                       f"{fixed(np.ceil(t_noise * 20) / 20, 2)}, features > "
                                                       f"{fixed(np.floor(t_signal * 20) / 20, 2)} (units sqrt(min c))",
                    tolerance=f"exact counts; noise < {torus_persist} < features")

# %% [markdown]
# (sec-topo-homology-prop3)=
# ## Prop. 3: a pathological output weight keeps its sign
#
# ```{prf:proposition} The sign vector identifies the component (paper's Prop. 3)
# :label: topo-prop-3
#
# Let $e = 1 < d$ and let $k_1, \dots, k_{l_-}$ be the neurons with $c_k < 0$. Two points of $H(c)$ lie in the
# same connected component iff their sign vectors $s(\theta) = (\mathrm{sign}\,a_{k_1}, \dots, \mathrm{sign}\,a_{k_{l_-}})$
# agree. In particular, the gradient flow never changes the sign of a pathological output weight.
# ```
#
# ```{prf:proof}
# On $H(c)$, $a_k^2 = \|w_k\|^2 - c_k \ge -c_k > 0$ for a pathological neuron, so $a_k$ never vanishes and its sign
# is constant on a connected set (the intermediate value theorem along a path). Conversely, each factor
# $\{a > 0\}$ or $\{a < 0\}$ of a pathological quadric is a graph over $w \in \mathbb R^d$, hence connected, and
# every other factor is connected ({prf:ref}`topo-prop-2` with $d > 1$), so points with the same sign vector are
# joined by a path.
# ```
#
# The check trains networks by plain gradient descent (step `lr`, close to the flow) on the MSE of a teacher
# $y = -\mathrm{relu}(x_1) - \mathrm{relu}(x_2) + 0.5\,\mathrm{relu}(x_1 + x_2)$ with Gaussian inputs, which needs
# negative output weights. Weights are drawn $\mathcal U(-1, 1)$, all output weights made positive, and neurons
# rescaled ({prf:ref}`topo-prop-4`, below) onto $c_k = -$`c_train` for the first `n_patho` neurons and
# $+$`c_train` for the others. The runs use `markovlib.topology.shallow_relu` (gradient and plain gradient descent), whose gradient is compared once
# with torch autograd.

# %%
grad_err = homology_checks.autograd_gradient(np.random.default_rng(seed + 1), width)  # torch autograd, 50 points
print("markovlib.topology.shallow_relu gradient vs torch autograd:", bound(grad_err, 1e-13))

# %% tags=["hide-input"]
_ = verified.record("training gradient = autograd", grad_err < 1e-12, kind="independent",
                    check="torch autograd of the MSE, 50 points", measured=bound(grad_err, 1e-13), tolerance="1e-12")

# %% [markdown]
# The runs: `n_seeds` per $d$, every output weight saved after every step.

# %%
runs = homology_checks.prop3_runs(train_dims, n_seeds, seed, width=width, n_patho=n_patho, c_train=c_train,
                                  n_data=n_data, lr=lr, steps=steps)
print(f"{len(runs)} runs of {steps} steps")

# %% [markdown]
# Then the signs along every run: the pathological ones must all be kept, and the smallest $|a_k|$ of a
# pathological neuron must respect Prop. 3's bound $a_k^2 \ge -c_k(t)$.

# %%
R = homology_checks.prop3_summary(runs, n_patho)
n_kept, n_flip, n_runs, drift, min_abs, lo, hi = (R[k] for k in ("n_kept", "n_flip", "n_runs", "drift", "min_abs", "lo", "hi"))
print(f"runs with every pathological sign kept at every step: {fraction(n_kept, n_runs)} (95% Wilson interval "
      f"[{fixed(lo, 2)}, {fixed(hi, 2)}])")
print(f"runs where a non-pathological output weight turned negative: {fraction(n_flip, n_runs)}")
print(f"smallest |a_k| of a pathological neuron over all steps {fixed(np.floor(min_abs * 100) / 100, 2)} "
      f"(Prop. 3: sqrt(-c_k(t)) >= sqrt(c_train - drift) = {fixed(np.floor(np.sqrt(c_train - drift) * 100) / 100, 2)})")
print(f"largest relative balance drift max_t,k |c_k(t) - c_k(0)| / |c_k|: {fixed(100 * drift / c_train, 1)} %")

# %% tags=["hide-input"]
_ = glue("th_prop3_kept", fraction(n_kept, n_runs))
_ = glue("th_prop3_flip", fraction(n_flip, n_runs))
_ = verified.record("Prop. 3: pathological output signs never change", n_kept == n_runs, kind="same code",
                    check=f"{n_runs} GD runs (d in {train_dims}), sign of a_k at every step (GD of shallow_relu, its "
                          "gradient checked against autograd above)",
                    measured=f"{fraction(n_kept, n_runs)} seeds, Wilson 95 % [{fixed(lo, 2)}, {fixed(hi, 2)}]",
                    tolerance="every run")
bound_gap = min_abs**2 - (c_train - drift)  # >= 0; near 0 when a pathological w_k passes close to 0
bound_margin = f"> {10 ** np.floor(np.log10(bound_gap)):.0e}" if bound_gap > 1e-9 else "= 0 to rounding (" + bound(abs(bound_gap), 1e-9) + ")"
_ = verified.record("Prop. 3 bound a_k^2 >= -c_k(t) along training", bound_gap >= -1e-12, kind="identity",
                    check="min over steps and runs of |a_k|, pathological neurons (a_k^2 = |w_k|^2 - c_k(t))",
                    measured=f"smallest |a_k| {min_abs:.4f}; a_k^2 - (c_train - max drift) {bound_margin}",
                    tolerance=">= 0 (c_train - max drift = " + f"{c_train - drift:.4f})")
_ = verified.record("balances conserved along the GD runs", drift < drift_tol * c_train, kind="same code",
                    check="max over every step, neuron and run of |c_k(t) - c_k(0)| / |c_k| (gradient_descent's "
                          "balance_drift)", measured=f"{fixed(100 * drift / c_train, 1)} %",
                    tolerance=f"{100 * drift_tol:g} %")
_ = verified.record_count("non-pathological output weights can turn negative (contrast)", n_flip, n_runs,
                          rate=flip_rate, kind="independent",
                          check="runs with some non-pathological a_k < 0 at some step")

# %% [markdown]
# One run's output weights (left; a run where a non-pathological weight turns negative, if any) and every run's
# loss (right):

# %%
show = next((k for k in runs if k[0] == train_dims[0] and R["flipped"][k]), (train_dims[0], 0))
homology_drawings.draw_prop3(runs, show, n_patho=n_patho, c_train=c_train)
plt.show()

# %% [markdown]
# (sec-topo-homology-effective)=
# ## Symmetries: effective components
#
# Rescaling a neuron, $(w_k, a_k)\mapsto(s w_k, a_k/s)$ with $s > 0$, and permuting neurons leave the network
# function unchanged. Rescaling moves between invariant sets:
#
# ```{prf:proposition} Rescaling onto any quadric (paper's Prop. 4)
# :label: topo-prop-4
#
# If $w_k \ne 0$ and $a_k \ne 0$, for every $c_k'\in\mathbb R$ there is a unique $s > 0$ with
# $\|s w_k\|^2 - \|a_k/s\|^2 = c_k'$. If $w_k = 0 \ne a_k$ this holds for every $c_k' < 0$, if $a_k = 0 \ne w_k$ for every
# $c_k' > 0$.
# ```
#
# ```{prf:proof}
# With $u = s^2$ the condition is $\|w_k\|^2 u^2 - c_k' u - \|a_k\|^2 = 0$, a quadratic whose roots have product
# $-\|a_k\|^2/\|w_k\|^2 < 0$: exactly one is positive,
# $u = (c_k' + \sqrt{c_k'^2 + 4\|w_k\|^2\|a_k\|^2})/(2\|w_k\|^2)$. The degenerate cases reduce to
# $-\|a_k\|^2/u = c_k'$ and $\|w_k\|^2 u = c_k'$.
# ```
#
# ```{prf:definition} Effective component (paper's Def. 2)
# :label: topo-def-2
#
# For $\theta \in H(c)$ with connected component $C(\theta)$, its effective component is
# $\mathrm{Eff}(\theta) = \bigcup_{\theta' \sim \theta} C(\theta')$, the union over all $\theta' \in H(c)$ obtained from
# $\theta$ by a permutation of the neurons followed by a rescaling ({prf:ref}`topo-lem-3`: any finite sequence of
# them is of this form).
# ```
#
# ```{prf:theorem} Effective components are sums of signs (paper's Thm 2)
# :label: topo-thm-2
#
# Let $e = 1 < d$ and $l_- \ge 1$, and let $C, C'$ be components of $H(c)$ with pathological sign vectors $s, s'$.
# Every $\theta \in C$ has some $\theta' \in C'$ with $\theta \sim \theta'$ if and only if $\sum_i s_i = \sum_i s'_i$.
# ```
#
# ```{prf:remark} Two readings of Def. 2 (this book's)
# :label: topo-rem-def2
#
# The definition is per point, the theorem per component ("every $\theta \in C$"), and the two differ. Take
# $l = 2$, $c = (-1, +1)$ and a generic $\theta$ with $a_1 > 0$, $a_2 < 0$. Swapping the two neurons and rescaling
# each onto its slot's balance ({prf:ref}`topo-prop-4`, possible since every weight is nonzero) gives a $\theta'$
# whose pathological weight is negative: $\mathrm{Eff}(\theta)$ contains components with the sign sums $+1$ and
# $-1$. The points of $C_{+}$ with $a_2 = 0$ reach only $C_{+}$ (a zero output weight cannot be rescaled onto
# $c_k < 0$), and the points with $a_2 > 0$ only $C_+$ as well. So the per-point $\mathrm{Eff}(\theta)$ depends on
# $\theta$, not only on its component, and does not partition $H(c)$ by sign sums; Thm 2 and Cor. 3 count the
# classes of the per-component relation. Both statements are checked below.
# ```
#
# ```{prf:corollary} Linearly many effective components (paper's Cor. 3)
# :label: topo-cor-3
#
# $H(c)$ has $l_- + 1$ effective components, the classes of the relation of {prf:ref}`topo-thm-2` (the sums
# $l_-, l_- - 2, \dots, -l_-$).
# ```
#
# ```{prf:proof}
# Rescalings keep every sign. A permutation that maps pathological neurons onto pathological slots only reorders
# the sign vector, which keeps its sum; Prop. 4 then brings each moved neuron back onto its slot's balance. The
# quantifier "every $\theta\in C$" matters: a non-pathological neuron moved into a pathological slot could bring any
# sign, but at the points of $C$ where its output weight is $0$ it cannot be rescaled onto $c_k < 0$ at all
# (Prop. 4), so only reorderings of $s$ work for every $\theta$. Conversely, two sign vectors with the same sum
# differ by a permutation of the pathological neurons.
# ```
#
# The enumeration below does not use the theorem. For each sign vector $s$ it draws `n_probes` points of $C_s$
# (half of them with the non-pathological output weights set to $0$, the hardest case of the quantifier), applies
# all $l!$ permutations, rescales back onto $c$ with `rescale_to` where possible, checks that the network
# function is unchanged on random inputs, and records the components reached from every probe. The per-component
# relation keeps the components reached from *every* probe; its classes are counted and compared with Cor. 3 and
# with Thm 2's sum rule. The per-point reading looks at the generic probes (every weight nonzero) alone: the sign
# sums of the components that one such point reaches.

# %%
table = components.enumerate_effective(enum_widths, n_probes, np.random.default_rng(seed + 2))  # e = 1, d = 2

# %% [markdown]
# The classes against Cor. 2 and Cor. 3, the function check, and the per-point reading:

# %%
print(homology_checks.effective_table(table))
n_rel, fun_err_max = len(table), max(r["fun_err"] for r in table)
n_enum_ok = sum(r["classes"] == invariant_set.n_effective_components(2, 1, r["c"]) == r["lm"] + 1 for r in table)
n_sum_ok = sum(r["symmetric"] and r["sums_ok"] for r in table)
n_generic, n_generic_multi = sum(r["generic"] for r in table), sum(r["generic_multi"] for r in table)
print("network function unchanged by every permutation + rescaling:", bound(fun_err_max, 1e-12))
print(f"per-point reading: generic probes (l+ >= 1) whose effective component holds several sign sums: "
      f"{fraction(n_generic_multi, n_generic)}")

# %% tags=["hide-input"]
_ = glue("th_def2_points", fraction(n_generic_multi, n_generic))
_ = verified.record("Cor. 3: l- + 1 effective components (per-component relation)", n_enum_ok == n_rel,
                    kind="independent", check=f"enumeration of all permutations + Prop. 4 rescalings, l in {enum_widths}, "
                                              f"every l-, {n_probes} probes per component",
                    measured=f"{n_enum_ok}/{n_rel} (l, l-) cases with l- + 1 classes", tolerance="exact, every case")
_ = verified.record("Thm 2: same effective component iff same sign sum", n_sum_ok == n_rel, kind="independent",
                    check="the enumerated per-component relation is symmetric and each class has one sign sum",
                    measured=f"{n_sum_ok}/{n_rel} (l, l-) cases", tolerance="exact, every case")
_ = verified.record("Def. 2 per point: one generic theta reaches components with different sign sums",
                    n_generic_multi >= 1, kind="independent",
                    check="sign sums reached from each generic probe (every weight nonzero, l+ >= 1) by the enumeration",
                    measured=f"{fraction(n_generic_multi, n_generic)} generic probes", tolerance="at least one probe")
_ = verified.record("symmetries keep the network function", fun_err_max < 1e-12, kind="same code",
                    check="forward pass on 20 random inputs before/after (rescale_to)", measured=bound(fun_err_max, 1e-13),
                    tolerance="1e-12")

# %% [markdown]
# Connected components grow like $2^{l_-}$, effective components like $l_- + 1$:

# %%
homology_drawings.draw_component_counts([(r["lm"], r["classes"]) for r in table])
plt.show()

# %% [markdown]
# (sec-topo-homology-lemma3)=
# ### Rescalings and permutations commute up to relabelling (paper's Lemma 3)
#
# Write $T_s$, $s \in (0, \infty)^l$, for the rescaling $(w_k, a_k) \mapsto (s_k w_k, a_k / s_k)$ and $P_\sigma$ for
# the permutation that puts neuron $\sigma^{-1}(k)$ in slot $k$. Definition {prf:ref}`topo-def-2` speaks of one
# permutation followed by one rescaling; any finite sequence of them reduces to that form:
#
# ```{prf:lemma} Interchange of rescalings and permutations (paper's Lemma 3)
# :label: topo-lem-3
#
# $T_s P_\sigma = P_\sigma T_{s \circ \sigma}$, where $(s\circ\sigma)_j = s_{\sigma(j)}$. Hence every finite
# composition of rescalings and permutations equals $T_r P_\tau$ for one rescaling $r$ and one permutation $\tau$.
# ```
#
# ```{prf:proof}
# Slot $k$ of $T_s P_\sigma\theta$ is $(s_k w_{\sigma^{-1}(k)}, a_{\sigma^{-1}(k)}/s_k)$. Slot $k$ of
# $P_\sigma T_{s\circ\sigma}\theta$ is neuron $j = \sigma^{-1}(k)$ of $T_{s\circ\sigma}\theta$, that is
# $(s_{\sigma(j)} w_j, a_j / s_{\sigma(j)}) = (s_k w_{\sigma^{-1}(k)}, a_{\sigma^{-1}(k)}/s_k)$. Read from right
# to left, the rule is $P_\sigma T_{s'} = T_{s'\circ\sigma^{-1}} P_\sigma$: every rescaling can be moved to the left
# of every permutation. Composing the rescalings ($T_s T_{s'} = T_{s s'}$) and the permutations then gives the
# normal form.
# ```
#
# The check (an identity: it replays the bookkeeping of the proof, so it documents rather than tests) composes
# random sequences of 12 actions on random networks, action by action, and compares the result
# with the normal form $T_r P_\tau$ computed by the rule of the lemma, and the network function with the original
# one on random inputs.
#

# %%
lem3_err, lem3_fun = homology_checks.lemma3_normal_form(np.random.default_rng([seed, 4]), trials=30, actions=12)
lem3_ok = lem3_err < 1e-11 and lem3_fun < 1e-10
print(f"Lemma 3: 30 random sequences of 12 actions; composition vs normal form T_r P_tau {bound(lem3_err, 1e-13)} "
      f"(relative), network function unchanged {bound(lem3_fun, 1e-12)} (relative)")

# %% tags=["hide-input"]
_ = verified.record("Lemma 3: a sequence of rescalings and permutations is one rescaling after one permutation", lem3_ok,
                    kind="identity", check="action-by-action composition vs the normal form (bookkeeping of the proof); "
                                           "the network function on random inputs",
                    measured=f"{bound(lem3_err, 1e-13)}; function {bound(lem3_fun, 1e-12)}",
                    tolerance="1e-11 (weights), 1e-10 (function), relative")

# %% [markdown]
# ### Explorer: d, e and the signs of the balances
#
# Drag the input dimension $d$, the output dimension $e$, the number $l_+$ of neurons with $c_k = +1$ and the number
# $l_-$ of pathological neurons with $c_k = -1$: the bars are the Betti numbers of $H(c)$ ({prf:ref}`topo-thm-1`),
# the title gives the Poincaré polynomial, the components ({prf:ref}`topo-cor-1`) and the effective components (Thm 2).
# At $d = 2$, $e = 1$ the right panel shows the quadrics ({prf:ref}`topo-prop-2`, the paper's Fig. 2a: one sheet for
# $c = +1$, two for $c = -1$) and each neuron's gradient-descent path (step 0.01, 1500 steps, a teacher
# $\mathrm{relu}(x_1) - \mathrm{relu}(x_2)$ that needs a negative output weight) in its own coordinates $(w_k, a_k)$:
# every path stays on its neuron's quadric, and a pathological neuron stays on its sheet.

# %%
ui = widgets.explorer(lambda d, e, l_plus, l_minus: topo_drawings.draw_invariant_set(
    int(round(d)), int(round(l_plus)), int(round(l_minus)), e=int(round(e)), seed=seed),
    d=(1, 4, 1, 2), e=(1, 3, 1, 1), l_plus=(1, 3, 1, 1), l_minus=(0, 3, 1, 2))
if ui is not None:
    display(ui)
# The rendered book's explorer: the same drawing function on a grid of 3 x 2 x 2 x 4 = 48 frames. d in 1, 2, 3 and
# e in 1, 2 cover every case of Cor. 1 (d = 1 or e = 1 give the disconnected S^0 factors, d, e > 1 none); l_+ in
# 1, 2 and l_- in 0..3 give up to 2^3 = 8 components; the 8 frames at d = 2, e = 1 carry the 3-D view. About a third
# of a second per frame, and a 560 x 360 palette sprite of a few hundred kB.
static = explorers.static_explorer(
    lambda d, e, l_plus, l_minus, fig: topo_drawings.draw_invariant_set(d, l_plus, l_minus, e=e, fig=fig, seed=seed),
    {"d": [1, 2, 3], "e": [1, 2], "l_plus": [1, 2], "l_minus": [0, 1, 2, 3]}, name="topo_invariant_set",
    title="the topology of H(c)", initial={"d": 2, "e": 1, "l_plus": 1, "l_minus": 2}, size=(560, 360),
    progress=False,
    value=lambda out: (f"P(x) = {out['poincare']}; components {out['components']}; "
                       f"effective components {out['effective']}"))
static.show()

# %% [markdown]
# The frames' counts, against Cor. 1 derived by counting the disconnected factors, and the 3-D frames' paths:

# %%
points = [dict(zip(["d", "e", "l_plus", "l_minus"], combo))
          for combo in itertools.product([1, 2, 3], [1, 2], [1, 2], [0, 1, 2, 3])]
E = homology_checks.explorer_counts(points, static.results)  # Cor. 1 by counting the disconnected factors
n_cor1, n_e1, n_sheet, explorer_drift = E["n_cor1"], E["e1"], E["n_sheet"], E["drift"]
print(f"{static.n_frames} frames; components = the count of S^0 factors in {n_cor1}; at e = 1 < d components "
      f"2^(l_-) in {sum(a for a, _ in n_e1)}/{len(n_e1)} and effective components l_- + 1 in {sum(b for _, b in n_e1)}"
      f"/{len(n_e1)}; 3-D frames: pathological output signs kept in {n_sheet}/{E['n_flows']}, "
      f"largest balance drift {fixed(explorer_drift, 3)}")

# %% tags=["hide-input"]
_ = verified.record("explorer: every frame shows Cor. 1's components; at e = 1 < d, 2^(l_-) components and l_- + 1 "
                    "effective ones (Cor. 2, Thm 2)",
                    n_cor1 == static.n_frames and all(a and b for a, b in n_e1), kind="same code",
                    check="the frames' counts (n_components, n_effective_components) vs the count of disconnected "
                          "S^0 factors, on the slider grid (d in 1..3, e in 1, 2, l_+ in 1, 2, l_- in 0..3)",
                    measured=f"{n_cor1}/{static.n_frames} frames; {sum(a and b for a, b in n_e1)}/{len(n_e1)} at e = 1 < d",
                    tolerance="every frame")
_ = verified.record("explorer: the 3-D paths stay on their quadrics and keep the pathological output signs (Prop. 3)",
                    n_sheet == E["n_flows"] and explorer_drift < explorer_drift_tol, kind="same code",
                    check="gradient_descent (step 0.01, 1500 steps) on the 8 frames at d = 2, e = 1: sign of a_k along "
                          "the saved path, largest |c_k(t) - c_k(0)|",
                    measured=f"{n_sheet}/{E['n_flows']} frames; drift {fixed(explorer_drift, 3)}",
                    tolerance=f"every frame; drift {explorer_drift_tol:g}")

# %% [markdown]
# Run this notebook in Jupyter to interact with the explorer: its sliders redraw the figure live. In the
# rendered book the sliders under the figure move over frames precomputed by the same drawing function, and the line
# under them gives the Poincaré polynomial and the numbers of components and effective components.

# %% tags=["hide-input"]
_ = record_results({"betti_cases": len(cases), "betti_counts_match": n_ph_ok, "betti_counts": n_ph,
                    "graph_b0_match": n_graph_ok, "prop3_runs_kept": n_kept, "prop3_runs": n_runs,
                    "prop3_nonpatho_flips": n_flip, "balance_drift_max": drift, "effective_components_match": n_enum_ok,
                    "def2_generic_multi": n_generic_multi, **verified.summary()})

# %% [markdown]
# Heavier runs: more landmarks, longer training, wider enumerations, e.g.
# `papermill book/topo_homology.ipynb out.ipynb -p n_landmarks 800 -p steps 5000 -p n_seeds 32 -p enum_widths '[3, 4, 5]'`.
#
# ## What was verified
#
# The table is generated from one record per claim, made where the claim was checked (a failed check stops the
# chapter there). The kind column says what evidence each row is: *independent* (persistent homology by gudhi,
# graph components, torch autograd, the enumerated symmetries, signs read off trajectories), *same code* (a
# consistency check through markovlib, such as two of its functions against each other or its balance drift),
# *identity* (true by algebra or by construction: the cone's homogeneity, the bookkeeping of Lemma 3, the bound
# $a_k^2 \ge -c_k(t)$; these document the proofs and are not counted as verifications).

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("topo_homology")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()
