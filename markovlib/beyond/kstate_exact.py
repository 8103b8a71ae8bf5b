"""The derived checks of ``book/beyond_two_states`` (Secs. 1, 2 and 4), one call per step: the yardsticks of the
symmetric K-state chain against an eigen-decomposition and Monte Carlo, the i.i.d. point p*, the unigram critical
set E = 0 with its rounding-scaled gradient and a negative control, the Hessian along the embedding
(eq. beyond-hessian) against autograd, the small-weight corollary and the guideline-like layer's sign count, the
conservation laws of the full model, the canonical energy (eq. beyond-energy) and the lag-k yardsticks.

Each function validates its arguments, draws only from the generator or seed it is given (in the chapter's order of
draws) and returns the measured quantities; the chapter records the claims.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..book.formatting import bound, fixed, fraction
from ..markov.chain import MarkovChain
from ..markov.energy import energy as energy_pkg
from ..numerics import checks
from . import kstate_checks, kstate_reference, kstate_training, multistate

CONTROL_STEP = 1e-3  # negative control: E or b moved off the critical set by this (random unit direction)
GRAD_PRINT = 0.1  # printed bound of gradient / tau: the largest measured over the Range is about 0.02 (N_exact 3)


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    return rng


def _chains(chains):
    if not isinstance(chains, dict) or not chains or not all(isinstance(c, MarkovChain) for c in chains.values()):
        raise ValueError("chains must be a non-empty dict of name -> MarkovChain")
    return chains


def yardstick_table(K_list, p_list, *, mc_batch, mc_length, mc_z, seed) -> dict:
    """Sec. 1 (Prop. beyond-prop-yardsticks) over the grid K_list x p_list: the largest differences of the closed
    forms log K and h(p) + p log(K - 1) to the eigen-decomposition (``err_eig``) and to the generic MarkovChain
    formulas (``err_pkg``), of the eigenvalues to {1, lambda} (``err_eigval``), the largest Monte Carlo error over its
    tolerance (``mc_worst``, :func:`kstate_checks.mc_ratios` on ``mc_batch`` x ``mc_length`` symbols, seed
    seed + 1000 K) and the printed ``table``."""
    K_list = [multistate.n_states_of(K) for K in K_list]
    p_list = [checks.probability("p", p) for p in p_list]
    out = dict(err_eig=0.0, err_pkg=0.0, err_eigval=0.0, mc_worst=0.0)
    rows = []
    for K in K_list:
        for p in p_list:
            P = multistate.symmetric_kernel(K, p)
            rate, marg = multistate.symmetric_entropy_rate(K, p), multistate.symmetric_marginal_entropy(K)
            r_eig, m_eig, vals = kstate_reference.eig_yardsticks(P)
            chain = multistate.symmetric_chain(K, p)
            lam = multistate.symmetric_eigenvalue(K, p)
            out["err_eig"] = max(out["err_eig"], abs(rate - r_eig), abs(marg - m_eig))
            out["err_pkg"] = max(out["err_pkg"], abs(rate - chain.entropy_rate), abs(marg - chain.marginal_entropy))
            out["err_eigval"] = max(out["err_eigval"], np.abs(vals[:-1] - lam).max(), abs(vals[-1] - 1))
            x = chain.sample(checks.positive_int("mc_batch", mc_batch), checks.positive_int("mc_length", mc_length),
                             seed=checks.nonnegative_int("seed", seed) + 1000 * K, backend="numpy").astype(np.int64)
            ratios, (mc_rate, _) = kstate_checks.mc_ratios(x[:, :-1], x[:, 1:], K, rate, z=mc_z, want_marg=marg,
                                                           lam=lam, cond_sd=kstate_checks.transition_log_sd(P))
            out["mc_worst"] = max(out["mc_worst"], *ratios)
            rows.append((K, p, fixed(lam, 4), fixed(marg, 6), fixed(rate, 6), fixed(mc_rate, 2)))
    out["table"] = pd.DataFrame(rows, columns=["K", "p", "lambda", "H(pi) = log K", "entropy rate",
                                               "Monte Carlo (2 dp)"])
    return out


def iid_point_check(K_list):
    """At p* = (K - 1)/K: the largest of |lambda|, |P - 1/K| and |entropy rate - log K| over ``K_list`` (zero by
    algebra), and one line per K with the largest switching-side gap log K - entropy rate (at p -> 1)."""
    err, lines = 0.0, []
    for K in [multistate.n_states_of(K) for K in K_list]:
        ps = multistate.iid_point(K)
        err = max(err, abs(multistate.symmetric_eigenvalue(K, ps)),
                  np.abs(multistate.symmetric_kernel(K, ps) - 1 / K).max(),
                  abs(multistate.symmetric_entropy_rate(K, ps) - math.log(K)))
        gap = math.log(K) - multistate.symmetric_entropy_rate(K, 1 - 1e-12)
        lines.append(f"K = {K:2d}: p* = {fixed(ps, 4)}; largest gap log K - entropy rate on the switching side "
                     f"{fixed(gap, 4)} nats (at p -> 1), log K - log(K-1) = {fixed(math.log(K / (K - 1)), 4)}")
    return err, lines


def exact_chains(n_states, p_sides, rng) -> dict:
    """The chains of the exact checks: the symmetric chains of ``p_sides`` and a random kernel
    (:func:`kstate_checks.random_kernel`, drawn from ``rng``)."""
    K = multistate.n_states_of(n_states)
    out = {f"symmetric p = {p}": multistate.symmetric_chain(K, p) for p in p_sides}
    out["random kernel"] = MarkovChain.from_kernel(kstate_checks.random_kernel(K, _rng(rng)))
    return out


def critical_set_check(chains, *, d, length, std, seed) -> dict:
    """Prop. beyond-prop-critical by autograd on the exact loss at E = 0, softmax(b) = pi, random weights of scale
    ``std`` (seed seed + j for the j-th chain), softmax and no attention: the largest gradient entry over its rounding
    scale tau (:func:`kstate_checks.rounding_scale`, ``grad_ratio``), |loss - H(pi)| (``loss_err``), and the negative
    control: the smallest ratio with E or b moved by CONTROL_STEP along a random unit direction (``control_ratio``,
    generator default_rng([seed, 3]))."""
    ctrl_rng = np.random.default_rng([checks.nonnegative_int("seed", seed), 3])
    out = dict(grad_ratio=0.0, loss_err=0.0, control_ratio=math.inf)
    for j, (name, chain) in enumerate(_chains(chains).items()):
        for attention in ("softmax", None):
            model = multistate.zero_embedding_model(chain, d=d, max_len=length, std=std, seed=seed + j,
                                                    attention=attention)
            with torch.no_grad():
                z0_max = float(multistate.block(model, model.positional[: length - 1]).abs().max())
            tau = kstate_checks.rounding_scale(length, chain.n_states, z0_max)
            loss, g = kstate_checks.largest_gradient(model, chain, length)
            out["grad_ratio"] = max(out["grad_ratio"], g / tau)
            out["loss_err"] = max(out["loss_err"], abs(float(loss.detach()) - chain.marginal_entropy))
            for prm in (model.embedding, model.bias):
                step = torch.as_tensor(ctrl_rng.standard_normal(tuple(prm.shape)))
                with torch.no_grad():
                    saved = prm.detach().clone()
                    prm.add_(CONTROL_STEP * step / step.norm())
                out["control_ratio"] = min(out["control_ratio"],
                                           kstate_checks.largest_gradient(model, chain, length)[1] / tau)
                with torch.no_grad():
                    prm.copy_(saved)
    return out


def hessian_check(chains, *, d, length, std, seed, n_dirs, rng):
    """Eq. beyond-hessian: :func:`multistate.zero_embedding_hessian` against autograd's second derivative of the exact
    loss along t E0 (:func:`kstate_reference.loss_along`), ``n_dirs`` directions from ``rng`` per chain and attention.
    Returns (largest relative difference |g2 - Q| / max(1, |Q|), the list of Q)."""
    rel_err, q_values = 0.0, []
    for j, (name, chain) in enumerate(_chains(chains).items()):
        for attention in ("softmax", None):
            model = multistate.zero_embedding_model(chain, d=d, max_len=length, std=std, seed=seed + j,
                                                    attention=attention)
            for _ in range(checks.positive_int("n_dirs", n_dirs)):
                E0 = torch.as_tensor(_rng(rng).standard_normal((chain.n_states, d)))
                t = torch.zeros((), dtype=torch.float64, requires_grad=True)
                (g1,) = torch.autograd.grad(kstate_reference.loss_along(model, chain, length, E0, t), t,
                                            create_graph=True)
                (g2,) = torch.autograd.grad(g1, t)
                q = multistate.zero_embedding_hessian(model, chain, length, E0.numpy())
                rel_err = max(rel_err, abs(float(g2) - q) / max(1.0, abs(q)))
                q_values.append(q)
    return rel_err, q_values


def small_weight_check(n_states, p_sides, *, d, length, std, n_dirs, n_flip, d_flip, seed, rng) -> dict:
    """Cor. beyond-cor-small-init on each side of p*: Q(E0) over -(2 lambda/K)|Pi E0|^2 at the standard init of scale
    ``std`` (``ratios``, ``n_dirs`` centred directions per side), and for ``n_flip`` guideline-like layers of dimension
    ``d_flip`` per side (one random centred direction each) whether the sign of Q is reversed (``flipped``).
    ``sides`` holds (p, lambda, reversals) per side and ``lines`` one printed line per side."""
    from ..transformer.model import MarkovTransformer

    K = multistate.n_states_of(n_states)
    proj = np.eye(K) - 1 / K
    out = dict(ratios=[], flipped=[], sides=[], lines=[])
    for j, p in enumerate(p_sides):
        chain = multistate.symmetric_chain(K, p)
        lam = multistate.symmetric_eigenvalue(K, p)
        small = multistate.zero_embedding_model(chain, d=d, max_len=length, std=std, seed=seed + 10 + j)
        for _ in range(checks.positive_int("n_dirs", n_dirs)):
            E0 = proj @ _rng(rng).standard_normal((K, d))
            out["ratios"].append(multistate.zero_embedding_hessian(small, chain, length, E0)
                                 / (-2 * lam / K * float((E0**2).sum())))
        for i in range(checks.positive_int("n_flip", n_flip)):
            guide = MarkovTransformer(d_flip, length, n_states=K, reference_impl=True)
            kstate_training.init_kstate(guide, "guideline_like", seed + 1000 * (j + 1) + i)
            with torch.no_grad():
                guide.embedding.zero_()
            E0 = proj @ rng.standard_normal((K, d_flip))
            pred = -2 * lam / K * float((E0**2).sum())
            out["flipped"].append(bool(np.sign(multistate.zero_embedding_hessian(guide, chain, length, E0))
                                       == -np.sign(pred)))
        k_side, side_ratios = sum(out["flipped"][-n_flip:]), out["ratios"][-n_dirs:]
        out["sides"].append((p, lam, k_side))
        out["lines"].append(f"p = {p} (lambda {fixed(lam, 3)}): small weights Q / prediction in "
                            f"[{fixed(min(side_ratios), 2)}, {fixed(max(side_ratios), 2)}]; guideline-like layers "
                            f"(d {d_flip}) reversing the sign: {fraction(k_side, n_flip)}")
    out["ratio_dev"] = max(abs(r - 1) for r in out["ratios"])
    return out


def frame_signs(values, lam_margin) -> dict:
    """The explorer's frames read back from their value lines ("lambda +x.xxx: Q > 0, E = 0 traps"): ``frames``
    [(lambda, traps)], ``n_decided`` frames with |lambda| >= lam_margin, ``n_sign`` of those where Q > 0 exactly when
    lambda < 0, ``near`` the frames closer to p*."""
    lam_margin = checks.positive_real("lam_margin", lam_margin)
    frames = [(float(v.split()[1].rstrip(":")), "traps" in v) for v in values]
    decided = [(lam, trap) for lam, trap in frames if abs(lam) >= lam_margin]
    return dict(frames=frames, n_decided=len(decided), n_sign=sum(trap == (lam < 0) for lam, trap in decided),
                near=[(lam, trap) for lam, trap in frames if abs(lam) < lam_margin])


def conservation_check(chains, *, d, length, std, seed, eps=1e-3):
    """Prop. beyond-prop-conserved: the rates of the conserved quantities along theta' = -grad by central differences
    of :func:`kstate_reference.conserved_quantities` along autograd's gradient of the exact loss (standard weights of
    scale ``std``, seed seed + 30 + j), over (gradient scale x ``std``). Returns (largest conserved rate, largest
    difference to :func:`multistate.conservation_rates`, the |E|^2 rate per chain)."""
    from ..transformer.exact import exact_loss
    from ..transformer.model import MarkovTransformer

    eps = checks.positive_real("eps", eps)
    rate_max, pkg_err, emb_rates = 0.0, 0.0, []
    for j, chain in enumerate(_chains(chains).values()):
        model = MarkovTransformer(d, length, n_states=chain.n_states, reference_impl=True)
        model.init_weights("standard", std=std, seed=seed + 30 + j)
        loss = exact_loss(model, chain, length)
        names = [n for n, _ in model.named_parameters()]
        grads = dict(zip(names, torch.autograd.grad(loss, list(model.parameters()))))
        P = {n: prm.detach().double() for n, prm in model.named_parameters()}
        lo = kstate_reference.conserved_quantities({n: P[n] + eps * grads[n] for n in P})
        hi = kstate_reference.conserved_quantities({n: P[n] - eps * grads[n] for n in P})
        r = {k: ((hi[k] - lo[k]) / (2 * eps)).numpy() for k in lo}
        r_pkg = multistate.conservation_rates(model, grads)
        scale = max(float(g.abs().max()) for g in grads.values()) * std
        rate_max = max(rate_max, *(float(np.abs(r[k]).max()) / scale
                                   for k in ("neuron_balance", "query_key", "value_output")))
        pkg_err = max(pkg_err, *(float(np.abs(r[k] - r_pkg[k]).max()) / scale for k in r))
        emb_rates.append(abs(float(r["embedding_norm"])) / scale)
    return rate_max, pkg_err, emb_rates


def energy_check(rng, n=200) -> dict:
    """Eq. beyond-energy at ``n`` random points of [-2, 2]^2 (w kept 0.05 off the invariant line): the largest
    |cos(grad E, grad c)| (``orth``), the one-branch form's for w > 0 and w < 0, and the difference of
    ``markovlib.markov.energy.energy`` to the energy written out (``pkg_err``); ``text`` is the printed line."""
    ew = _rng(rng).uniform(-2, 2, size=(2, checks.positive_int("n", n)))
    ew[1] = np.where(np.abs(ew[1]) < 0.05, 0.05 * np.sign(ew[1]) + ew[1], ew[1])
    orth, orth1, energy = kstate_reference.energy_cosines(ew)
    w_pos = ew[1] > 0
    out = dict(orth=float(orth.max()), orth1_pos=float(orth1[w_pos].max()), orth1_neg=float(orth1[~w_pos].max()),
               pkg_err=float(np.abs(energy_pkg(*ew) - energy).max()), n=len(orth))
    out["text"] = (f"E = e^2 - w^2 - sign(w) log|w|: |cos(grad E, grad c)| {bound(out['orth'], 1e-13)} at "
                   f"{int(w_pos.sum())} points with w > 0 and {int((~w_pos).sum())} with w < 0; the form e^2 - w^2 + "
                   f"log|w|: largest |cos| {fixed(out['orth1_pos'], 2)} for w > 0, {bound(out['orth1_neg'], 1e-13)} "
                   f"for w < 0; markovlib.markov.energy.energy agrees to {bound(out['pkg_err'], 1e-13)}")
    return out


def lag_mc(n_states, p, lags, *, batch, length, z, seed) -> float:
    """Prop. beyond-prop-lag by Monte Carlo: for each lag k (``batch`` x ``length`` symbols, seed seed + k) the plug-in
    entropy of x_{n+1} given x_{n+1-k} against the entropy rate and given x_n against the bigram loss; the largest
    error over its tolerance (:func:`kstate_checks.mc_ratios`)."""
    K = multistate.n_states_of(n_states)
    worst = 0.0
    for lag in lags:
        x = multistate.lag_switching_sample(K, p, lag, batch, length, seed=seed + lag).numpy()
        y = multistate.lag_switching_yardsticks(K, p, lag)
        for back, want in ((lag, y["entropy_rate"]), (1, y["bigram"])):
            ratios, _ = kstate_checks.mc_ratios(x[:, lag - back:x.shape[1] - back], x[:, lag:], K, want, z=z)
            worst = max(worst, *ratios)
    return worst
