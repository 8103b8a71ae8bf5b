"""The chapter ``transformer_yardsticks``'s checks of the full model (Makkuva et al., Sec. 2, App. A; Thms 4 and 5 from
the predecessor paper), each a function that computes one step and returns its numbers with ``report()``, the table
the chapter prints.

* :func:`stream_check`: ``MarkovTransformer``'s streams against ``yardsticks_reference.streams_by_hand`` (eq-model).
* :func:`exact_vs_sampled`: the exact population loss (eq-exact-loss) against the mean of sampled losses (Student t).
* :func:`thm4_check`: Thm 4 at ``yardsticks.global_min_weights``: prediction = kernel on sampled sequences, exact loss
  = entropy rate, zero gradient in every parameter.
* :func:`w_search`: a bounded search over w of the exact loss with the bias minimized out (blind to c*).
* :func:`lower_bound_gaps`: exact losses of perturbed and random models minus the entropy rate (eq-lower-bound).
* :func:`theta_pi_check`: Thm 5's point theta_pi: prediction pi_1, loss H(pi) (exact and sampled), zero gradient, and
  its excess over theta_star.

The minimality of theta_pi (random perturbations, explicit directions) is checked by :mod:`.yardsticks_thm5`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from scipy.optimize import minimize_scalar
from scipy.special import logit

from ..book import inference
from ..book.formatting import bound, fixed, fraction
from ..markov.chain import MarkovChain
from ..numerics import checks
from . import yardsticks
from .exact import exact_loss
from .model import MarkovTransformer, canonical_full_model
from .yardsticks_reference import streams_by_hand

__all__ = ["StreamCheck", "stream_check", "exact_vs_sampled", "Thm4", "thm4_check", "WSearch", "w_search",
           "lower_bound_gaps", "ThetaPi", "theta_pi_check"]


def _chains(chains):
    out = [(checks.probability("p", p), checks.probability("q", q)) for p, q in chains]
    if not out:
        raise ValueError("chains must hold at least one chain [p, q]")
    return out


@dataclass
class StreamCheck:
    """rows: (stream, max |module - by hand| / max(1, |module|)); the mean largest attention weight (beyond the first
    position) against the uniform 1/n; the ReLU units on (relu_on of relu_n)."""
    rows: list
    att_max: float
    att_uniform: float
    relu_on: int
    relu_n: int

    @property
    def worst(self) -> float:
        return max(err for _, err in self.rows)

    def report(self) -> str:
        out = [f"attention: mean max weight {self.att_max:.2f} (uniform over n would be {self.att_uniform:.2f}); "
               f"ReLU units on: {fraction(self.relu_on, self.relu_n)}",
               f"{'quantity':<18}{'max |module - by hand| / max(1, |module|)':>43}"]
        out += [f"{name:<18}{bound(err, 1e-12):>43}" for name, err in self.rows]
        return "\n".join(out)


def stream_check(model, x) -> StreamCheck:
    """Every stream of ``model`` on ``x`` (``return_hidden=True``) and its loss against
    ``yardsticks_reference.streams_by_hand``, relative to the stream's size (rounding is relative)."""
    ref = streams_by_hand(model, x)
    with torch.no_grad():
        logits, hidden = model(x, return_hidden=True)
        theirs = [("embedding x_n", hidden["x"], "x"), ("attention y_n", hidden["y"], "y"),
                  ("feed-forward z_n", hidden["z"], "z"), ("logit_n", logits, "logit"), ("loss", model.loss(x), "loss")]
        rows = [(name, float((ref[k] - t).abs().max()) / max(1.0, float(t.abs().max()))) for name, t, k in theirs]
    n = x.shape[1]
    att, on = ref["attention"], ref["relu_on"]
    return StreamCheck(rows, float(att.max(-1).values[:, 1:].mean()),
                       float((1 / torch.arange(2, n + 1, dtype=torch.float64)).mean()), int(on.sum()), on.numel())


def exact_vs_sampled(model, chain, n, n_seq, seed):
    """The exact loss of ``model`` over all 2^n sequences (eq-exact-loss) and ``inference.mean_test`` of the mean
    loss of ``n_seq`` sequences of length n sampled from ``chain`` (seed ``seed``) against it: (L_exact, MeanTest)."""
    n, n_seq = checks.positive_int("n", n), checks.positive_int("n_seq", n_seq)
    L = float(exact_loss(model, chain, n).detach())
    x = chain.sample(n_seq, n, seed=seed, backend="torch")
    with torch.no_grad():
        per_seq = F.binary_cross_entropy_with_logits(model(x[:, :-1]), x[:, 1:].double(), reduction="none").mean(1)
    return L, inference.mean_test(per_seq.numpy(), L)


def _sampled(model, chain, batch, N, seed):
    x = chain.sample(batch, N, seed=seed, backend="torch")
    with torch.no_grad():
        lg = model(x[:, :-1])
        per_seq = F.binary_cross_entropy_with_logits(lg, x[:, 1:].double(), reduction="none").mean(1)
    return x, lg, per_seq.numpy()


@dataclass
class Thm4:
    """rows (dicts: p, q, cs, w, b, err_f, gap, gmax, H, mean, se, z, pvalue) of :func:`thm4_check`."""
    rows: list

    def worst(self, key) -> float:
        return max(abs(r[key]) for r in self.rows)

    @property
    def pvalue(self) -> float:
        return min(r["pvalue"] for r in self.rows)

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}{'c*':>9}{'w':>9}{'b':>9}{'max|f - kernel|':>17}{'L_exact - H_rate':>18}"
               f"{'max|grad L|':>13}{'H_rate':>9}{'sampled':>9}{'std err':>9}{'|z|':>6}"]
        for r in self.rows:
            out.append(f"{r['p']:>5}{r['q']:>5}{r['cs']:>9.4f}{r['w']:>9.4f}{r['b']:>9.4f}"
                       f"{bound(r['err_f'], 1e-13):>17}{bound(r['gap'], 1e-13):>18}{bound(r['gmax'], 1e-12):>13}"
                       f"{r['H']:>9.5f}{fixed(r['mean'], 3):>9}{r['se']:>9.0e}{fixed(r['z'], 1):>6}")
        return "\n".join(out)


def thm4_check(chains, d, N, batch, n_exact, seed) -> Thm4:
    """Thm 4 for each chain k of ``chains``: the full softmax model at ``yardsticks.global_min_weights`` (e = 1, seed
    seed + k) predicts the kernel P(x_{n+1} = 1 | x_n) at every position of ``batch`` sampled sequences of length N
    (seed seed + 10 + k), whose mean loss is tested against the entropy rate (Student t); its exact loss over all
    2^n_exact sequences is the entropy rate and its gradient in every parameter vanishes."""
    rows = []
    for k, (pp, qq) in enumerate(_chains(chains)):
        ch = MarkovChain(pp, qq)
        cs, w_star, b_star = yardsticks.global_min_weights(pp, qq)
        model = canonical_full_model(1.0, w_star, b_star, d=d, max_len=N, seed=seed + k)
        xs, lg, per_seq = _sampled(model, ch, batch, N, seed + 10 + k)
        kernel = torch.tensor([pp, 1 - qq], dtype=torch.float64)[xs[:, :-1]]  # P(x_{n+1} = 1 | x_n)
        err_f = float((torch.sigmoid(lg) - kernel).abs().max())
        mt = inference.mean_test(per_seq, ch.entropy_rate)
        model.zero_grad()
        L = exact_loss(model, ch, n_exact)
        L.backward()
        gmax = max(float(prm.grad.abs().max()) for prm in model.parameters())
        rows.append(dict(p=pp, q=qq, cs=cs, w=w_star, b=b_star, err_f=err_f, gap=float(L.detach()) - ch.entropy_rate,
                         gmax=gmax, H=ch.entropy_rate, mean=mt.mean, se=mt.std_err, z=mt.z, pvalue=mt.pvalue))
    return Thm4(rows)


@dataclass
class WSearch:
    """rows: (p, q, argmin w of the search, w of the construction, min L - entropy rate, L(w = -1/sqrt2) - H(pi))."""
    rows: list

    @property
    def n_side(self) -> int:
        """Chains whose searched w lies below -1/sqrt2 exactly when p + q > 1."""
        return sum((r[2] < -1 / math.sqrt(2)) == (r[0] + r[1] > 1) for r in self.rows)

    def worst(self, i) -> float:
        """The largest |argmin - construction| (i = 'w'), |min L - entropy rate| ('loss'), |L(w_sad) - H(pi)|
        ('saddle')."""
        col = {"w": lambda r: r[2] - r[3], "loss": lambda r: r[4], "saddle": lambda r: r[5]}[i]
        return max(abs(col(r)) for r in self.rows)

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}{'p+q':>6}{'argmin w (search)':>19}{'w (construction)':>18}{'|difference|':>14}"
               f"{'min L - H_rate':>16}{'w < -1/sqrt2':>14}{'L(w = -1/sqrt2) - H(pi)':>25}"]
        for pp, qq, w_min, w_star, l_gap, s_gap in self.rows:
            out.append(f"{pp:>5}{qq:>5}{pp + qq:>6.2f}{fixed(w_min, 3):>19}{w_star:>18.4f}"
                       f"{bound(w_min - w_star, 1e-4):>14}{bound(l_gap, 1e-11):>16}"
                       f"{'yes' if w_min < -1 / math.sqrt(2) else 'no':>14}{bound(s_gap, 1e-11):>25}")
        return "\n".join(out)


def w_search(chains, d, n_exact, seed, w_tol=1e-6) -> WSearch:
    """For each chain k: at e = 1, the bounded Brent search over w in [-3, 3] (xatol ``w_tol``) of the full model's
    exact loss with the bias minimized out (``yardsticks.best_bias_loss``; seed seed + k), blind to c*; and the best
    loss at w = -1/sqrt2, where the feed-forward layer cancels the embedding (c = 0)."""
    w_tol = checks.positive_real("w_tol", w_tol)
    rows = []
    for k, (pp, qq) in enumerate(_chains(chains)):
        ch = MarkovChain(pp, qq)

        def at_w(w, k=k):
            return lambda b: canonical_full_model(1.0, w, b, d=d, max_len=n_exact - 1, seed=seed + k)
        res = minimize_scalar(lambda w: yardsticks.best_bias_loss(at_w(w), ch, n_exact), bounds=(-3.0, 3.0),
                              method="bounded", options={"xatol": w_tol})
        _, w_star, _ = yardsticks.global_min_weights(pp, qq)
        L_sad = yardsticks.best_bias_loss(at_w(-1 / math.sqrt(2)), ch, n_exact)
        rows.append((pp, qq, float(res.x), w_star, res.fun - ch.entropy_rate, L_sad - ch.marginal_entropy))
    return WSearch(rows)


def lower_bound_gaps(p, q, d, n_exact, seed, n=20) -> list:
    """L_exact - entropy rate of ``n`` Gaussian perturbations of all parameters of theta_star (Thm 4's weights) at each
    std 1e-3, 0.1, 1 (a generator seeded ``seed``), and of ``n`` random models (std 0.5, seeds seed + 100 + s); by
    (eq-lower-bound) none is below 0 beyond rounding."""
    n, ch = checks.positive_int("n", n), MarkovChain(p, q)
    _, w_star, b_star = yardsticks.global_min_weights(p, q)
    star = canonical_full_model(1.0, w_star, b_star, d=d, max_len=n_exact - 1, seed=seed)
    base = [prm.detach().clone() for prm in star.parameters()]
    gen = torch.Generator().manual_seed(seed)
    gaps = []
    with torch.no_grad():
        for radius in (1e-3, 1e-1, 1.0):
            for _ in range(n):
                for prm, b0 in zip(star.parameters(), base):
                    prm.copy_(b0 + radius * torch.randn(b0.shape, generator=gen, dtype=b0.dtype))
                gaps.append(float(exact_loss(star, ch, n_exact)) - ch.entropy_rate)
        for s in range(n):
            rnd = MarkovTransformer.standard(d, n_exact - 1, std=0.5, seed=seed + 100 + s, attention="softmax")
            gaps.append(float(exact_loss(rnd, ch, n_exact)) - ch.entropy_rate)
    return gaps


@dataclass
class ThetaPi:
    """Thm 5's theta_pi: err_pred (max |f - pi_1|), the sampled loss's MeanTest against H(pi), the exact loss L_pi,
    max |dL/dtheta| per parameter (grads), the excess over theta_star and its closed form H(pi) - entropy rate, and the
    enumeration model (``model``, for :func:`perturbation_studies`) with its bias b_pi = logit(pi_1)."""
    chain: MarkovChain
    err_pred: float
    test: object
    L_pi: float
    grads: dict
    excess: float
    excess_closed: float
    model: MarkovTransformer
    b_pi: float
    batch: int
    N: int
    n_exact: int

    def report(self) -> str:
        H, se = self.chain.marginal_entropy, self.test.std_err
        return "\n".join([
            f"prediction: max |f - pi_1| over {self.batch} x {self.N - 1} positions: {bound(self.err_pred, 1e-13)}",
            f"loss: H(pi) = {H:.10f}; |exact L_{self.n_exact} - H(pi)| {bound(self.L_pi - H, 1e-13)}; sampled "
            f"(N = {self.N}) {fixed(self.test.mean, 3)} +- {se if se > 1e-13 else 0:.0e} "
            f"(|z| = {fixed(self.test.z, 1)})",
            f"excess loss over theta_star (exact, full models) {self.excess:.6f}; H(pi) - entropy rate "
            f"{self.excess_closed:.6f}",
            "max |dL/dtheta| per parameter: " + ", ".join(f"{k} {bound(v, 1e-13)}" for k, v in self.grads.items())])


def theta_pi_check(p, q, w, d, N, batch, n_exact, seed) -> ThetaPi:
    """Thm 5's theta_pi of the chain (p, q): embedding 0, feed-forward scale ``w``, bias logit(pi_1) (seed ``seed``):
    its prediction on ``batch`` sampled sequences of length N (seed seed + 20), their mean loss against H(pi), its exact
    loss and gradient over all 2^n_exact sequences, and its exact loss against theta_star's (Thm 4, same seed)."""
    chain = MarkovChain(p, q)
    pi1 = p / (p + q)
    b_pi = float(logit(pi1))
    theta_pi = canonical_full_model(0.0, w, b_pi, d=d, max_len=N, seed=seed)
    xs, lg, per_seq = _sampled(theta_pi, chain, batch, N, seed + 20)
    err_pred = float((torch.sigmoid(lg) - pi1).abs().max())
    test = inference.mean_test(per_seq, chain.marginal_entropy)  # floors the standard error at rounding for p = q
    model = canonical_full_model(0.0, w, b_pi, d=d, max_len=n_exact - 1, seed=seed)
    L_pi = exact_loss(model, chain, n_exact)
    L_pi.backward()
    grads = {name: float(prm.grad.abs().max()) for name, prm in model.named_parameters()}
    _, w_star, b_star = yardsticks.global_min_weights(p, q)
    L_star = float(exact_loss(canonical_full_model(1.0, w_star, b_star, d=d, max_len=n_exact - 1, seed=seed),
                              chain, n_exact).detach())
    L_pi = float(L_pi.detach())
    return ThetaPi(chain, err_pred, test, L_pi, grads, L_pi - L_star, chain.marginal_entropy - chain.entropy_rate,
                   model, b_pi, batch, N, n_exact)
