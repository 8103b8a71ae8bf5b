"""The checks of the chapter authors_fig4 (reference Sec. 5.2, Fig. 4; the authors' 2-token model), each one step:
the computation and its printed lines (``table``), with the measured quantities the chapter records.

- :func:`random_weights`: fill a model's parameters with N(0, scale^2) draws of a generator (float64).
- :func:`map_check`: the 2-token model against its binary model (eq-two-token-map): logits and losses, for each
  attention, d and N; and ``two_token.binary_equivalent`` against the map written out.
- :func:`velocity_check`: 2-token gradient flow moves (e, p) by (eq-two-token-velocity), not as the binary flow.
- :func:`authors_inits`: the authors' two initializations read canonically (w = -d, w = -2d, e, dead ReLUs).
- :func:`live_outcomes`: each live run's final held-out loss against H(pi), c-hat pinned at zero or above, and
  c-hat / c*.
"""
from __future__ import annotations

import math

import torch

from ..book.formatting import bound, fixed
from ..markov.chain import MarkovChain
from ..numerics import checks
from . import two_token
from .fig4_reference import binary_by_hand, heldout_c_hat
from .model import MarkovTransformer
from .readout import canonical_scalars


def random_weights(model, generator: torch.Generator, scale: float = 0.5):
    """Set every parameter of ``model`` to ``scale`` times standard normal draws of ``generator`` (float64), in
    the order of ``model.parameters()``; returns the model."""
    scale = checks.positive_real("scale", scale)
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {generator!r}")
    with torch.no_grad():
        for prm in model.parameters():
            prm.copy_(scale * torch.randn(prm.shape, generator=generator, dtype=torch.float64))
    return model


def map_check(dims, lengths, chain, seed, generator) -> dict:
    """For attention softmax, linear and none, each d of ``dims`` and N of ``lengths``: a 2-token model with random
    weights (:func:`random_weights`) against :func:`binary_by_hand` of it on 4 sequences of ``chain`` ((p, q)):
    the largest |binary logit - (logit_1 - logit_0)| relative to max(1, |logit|) (``logit``), |loss difference|
    (``loss``), and binary_equivalent against the map written out (``pkg``); ``n`` cases."""
    dims = [checks.positive_int("dims", d) for d in dims]
    lengths = [checks.positive_int("lengths", n) for n in lengths]
    r = dict(logit=0.0, loss=0.0, pkg=0.0, n=0)
    for attention in ("softmax", "linear", None):
        for d_ in dims:
            for n_ in lengths:
                m2 = random_weights(MarkovTransformer(d_, n_, attention=attention, n_states=2), generator)
                m1 = binary_by_hand(m2)
                x = MarkovChain(*chain).sample(4, n_ + 1, seed=seed + r["n"], backend="torch")
                with torch.no_grad():
                    l2, l1 = m2(x[:, :-1]), m1(x[:, :-1])
                    scale = max(1.0, float(l1.abs().max()))  # float64 rounding grows with the logits' size
                    r["logit"] = max(r["logit"], float((l1 - (l2[..., 1] - l2[..., 0])).abs().max()) / scale)
                    r["loss"] = max(r["loss"], abs(float(m1.loss(x)) - float(m2.loss(x))))
                    r["pkg"] = max(r["pkg"], float((two_token.binary_equivalent(m2)(x[:, :-1]) - l1).abs().max()))
                r["n"] += 1
    r["table"] = "\n".join([
        f"{r['n']} cases (attention softmax / linear / none, d in {dims}, N in {lengths}):",
        f"  max |binary logit - (2-token logit_1 - logit_0)| / max(1, max |logit|) {bound(r['logit'], 1e-14)}",
        f"  max |binary loss - 2-token loss|                 {bound(r['loss'], 1e-14)}",
        f"  markovlib.transformer.two_token.binary_equivalent = the map written out: {bound(r['pkg'], 1e-14)}"])
    return r


def velocity_check(chain, seed, generator) -> dict:
    """A 2-token model (d = 8, N = 64) with random weights and its binary model: the velocity of (e, p) under the
    2-token gradient flow by autograd against ``two_token.induced_binary_gradient`` of the binary gradients
    (``err``), and |de/dt| of the 2-token flow over the binary one (``ratio``)."""
    m2 = random_weights(MarkovTransformer(8, 64, n_states=2), generator)
    m1 = binary_by_hand(m2)
    x = MarkovChain(*chain).sample(8, 65, seed=seed, backend="torch")
    m2.loss(x).backward()
    m1.loss(x).backward()
    v_e = -(m2.embedding.grad[1] - m2.embedding.grad[0])  # velocity of e = E_1 - E_0
    v_p = -(m2.positional.grad + m2.embedding.grad[0])  # velocity of p_n = P_n + E_0
    pred_e, pred_p = two_token.induced_binary_gradient(m1.embedding.grad, m1.positional.grad)
    err = max(float((v_e - pred_e).abs().max()), float((v_p - pred_p).abs().max()))
    ratio = float(v_e.norm() / m1.embedding.grad.norm())
    table = (f"velocity of (e, p) under 2-token gradient flow = (eq-two-token-velocity): {bound(err, 1e-14)}\n"
             f"|de/dt| (2-token) / |de/dt| (binary) = {fixed(ratio, 1)}: the parameterizations move differently")
    return dict(err=err, ratio=ratio, table=table)


def authors_inits(d, chain, seed) -> dict:
    """The authors' submitted and public initializations of the 2-token model (N = 1024), read canonically through
    the binary model: ``sub``, ``pub`` (``canonical_scalars``; derived w = -d and -2d), ``e_pub`` (max |E_1 - E_0|
    of the public constants), ``relu_margin`` (largest W_1 y_n on 16 sampled sequences; < 0: every ReLU dead) and
    ``start_pub`` (the public init's loss)."""
    d = checks.positive_int("d", d)
    sub = MarkovTransformer(d, 1024, n_states=2).init_weights("authors_submission", seed=seed)
    pub = MarkovTransformer(d, 1024, n_states=2).init_weights("authors_public", seed=seed)
    s_sub = canonical_scalars(two_token.binary_equivalent(sub))
    s_pub = canonical_scalars(two_token.binary_equivalent(pub))
    x = MarkovChain(*chain).sample(16, 1025, seed=seed, backend="torch")
    with torch.no_grad():
        _, hid = pub(x[:, :-1], return_hidden=True)
        start_pub = float(pub.loss(x))
    e_pub = float((pub.embedding[1] - pub.embedding[0]).detach().abs().max())
    relu_margin = float((hid["y"] @ pub.W_1.T).detach().max())
    lines = [f"{'init':<16}{'canonical w':>12}{'derived':>10}{'|canonical e|':>15}"]
    for name, s, w_pred in (("submitted code", s_sub, -d), ("public code", s_pub, -2 * d)):
        lines.append(f"{name:<16}{fixed(s.w, 6):>12}{w_pred:>10}{fixed(abs(s.e), 1):>15}")
    lines.append(f"public code: largest ReLU pre-activation at the start {fixed(relu_margin, 1)} (every ReLU dead "
                 f"when < 0); start loss - log 2 {bound(start_pub - math.log(2), 1e-14)}")
    return dict(sub=s_sub, pub=s_pub, e_pub=e_pub, relu_margin=relu_margin, start_pub=start_pub,
                table="\n".join(lines))


def live_outcomes(cfgs, results, init_of, *, at_tol, pin_z, noise_batches, length) -> dict:
    """Per (chain, init) the live runs' outcomes, in run order: (final held-out loss within ``at_tol`` of H(pi),
    c-hat >= -pin_z standard errors (:func:`heldout_c_hat`), c-hat / c*, standard error / |c*|); ``init_of`` maps
    a configuration's ``init`` to the chapter's initialization name."""
    at_tol, pin_z = checks.positive_real("at_tol", at_tol), checks.positive_real("pin_z", pin_z)
    if len(cfgs) != len(results):
        raise ValueError(f"cfgs and results must pair up, got {len(cfgs)} and {len(results)}")
    outcome = {}
    for cfg, res in zip(cfgs, results):
        ch = MarkovChain(cfg["p"], cfg["q"])
        last = [r for r in res["history"] if "eval_loss" in r][-1]
        c_star_run = math.log((1 - cfg["p"]) * (1 - cfg["q"]) / (cfg["p"] * cfg["q"]))
        c_hat, se = heldout_c_hat(cfg, res["weights"], noise_batches=noise_batches, length=length)
        outcome.setdefault(((cfg["p"], cfg["q"]), init_of[cfg["init"]]), []).append(
            (abs(last["eval_loss"] - ch.marginal_entropy) < at_tol, c_hat >= -pin_z * se, c_hat / c_star_run,
             se / abs(c_star_run)))
    return outcome
