"""The canonical model's predictions for the initialization guideline (chapter init_guideline, reference
Sec. 5.2): where the guideline points and Gaussian draws end, by the integrated gradient flow
(:mod:`markovlib.transformer.guideline_reference`, independent of the basin rules) beside the energy rule
(``markovlib.markov.energy.predict_limit``, Thm 2 and Thm 8).

- :func:`point_limits`, :func:`point_line`: one initial point on a list of chains, and its printed line.
- :data:`SCALINGS`, :func:`canonical_trap`: Gaussian draws (e0, w0) at each scale sigma, plain and norm-matched to
  the full model of width d, integrated to their end states; the trap fractions and the checks on them.
"""
from __future__ import annotations

import numpy as np

from ..book import formatting
from ..markov.canonical import coefficient
from ..markov.energy import SADDLE_ENERGY, energy, predict_limit
from ..numerics import checks
from .guideline_reference import flow_end

# (e0, w0) scales of a draw at sigma: the canonical scalars drawn as N(0, sigma^2), or norm-matched to the full model
# of width d (||e|| ~ sqrt(d) sigma; ||W1||_F = ||W2||_F = 2|w| against sigma sqrt(r d), r = 4d)
SCALINGS = {"same": lambda s, d: (s, s), "norm-matched": lambda s, d: (s * np.sqrt(d), s * np.sqrt(4 * d * d) / 2)}


def _chains(chains):
    chains = [tuple(float(x) for x in pq) for pq in chains]
    if not chains or any(len(pq) != 2 for pq in chains):
        raise ValueError(f"chains must be a non-empty list of (p, q) pairs, got {chains!r}")
    return chains


def point_limits(e0, w0, chains, t_end=5000.0) -> dict:
    """The canonical limits from (e0, w0) on each chain: ``energy`` E(e0, w0), ``coefficient`` c, the integrated end
    states on the chains with p + q > 1 (``above``) and p + q < 1 (``below``), and ``agree`` of ``n`` limits on which
    the energy rule (predict_limit) gives the same end state as the integration."""
    chains = _chains(chains)
    e0, w0 = float(checks.finite_array("e0", e0, ndim=0)), float(checks.finite_array("w0", w0, ndim=0))
    ends = {pq: str(flow_end(e0, w0, *pq, t_end=t_end)) for pq in chains}
    rule = {pq: predict_limit(e0, w0, *pq).outcome for pq in chains}
    agree = sum((ends[pq] == "global") == (rule[pq] == "global_min")
                and (ends[pq] == "trapped") == (rule[pq] == "local_min") for pq in chains)
    return dict(energy=float(energy(e0, w0)), coefficient=float(coefficient(e0, w0)),
                above=[ends[pq] for pq in chains if sum(pq) > 1], below=[ends[pq] for pq in chains if sum(pq) < 1],
                agree=agree, n=len(chains))


def point_line(name: str, limits: dict) -> str:
    """The printed line of :func:`point_limits`: energy against E_sad, c, and the end states on both sides."""
    E0, above, below = limits["energy"], limits["above"], limits["below"]
    return (f"{name:<30} E = {formatting.fixed(E0, 3):>9} ({'above' if E0 > SADDLE_ENERGY else 'below'} E_sad), "
            f"c = {formatting.fixed(limits['coefficient'], 1):>8}; integrated flow: p+q>1 "
            f"{formatting.fraction(above.count('global'), len(above))} global, p+q<1 "
            f"{formatting.fraction(below.count('global'), len(below))} global, "
            f"{formatting.fraction(below.count('trapped'), len(below))} trapped")


def canonical_trap(p, q, sigmas, n, d_model, *, seed, t_end=5000.0, fine=None) -> dict:
    """``n`` draws (z_e, z_w) ~ N(0, 1) from ``seed``, the same at every scale, scaled by :data:`SCALINGS` for each
    sigma of ``sigmas`` and integrated to their end states (:func:`flow_end`, array ``ends`` of shape
    (scalings, sigmas, n)). Returns ``ends``, ``trap`` (trapped fraction per scaling and sigma; unresolved draws count
    as not trapped: a lower bound), ``unresolved`` (fraction), ``disagree`` (resolved draws whose end state the
    energy rule gets wrong), the draws with w0 > 0 (``n_pos``, of them ``k_pos`` trapped and ``n_pos_global``
    global), and with ``fine`` (scales) the energy rule's trapped fraction ``fine_trap[scaling]`` there."""
    sigmas = [checks.positive_real(f"sigmas[{i}]", s) for i, s in enumerate(sigmas)]
    n, d_model = checks.positive_int("n", n), checks.positive_int("d_model", d_model)
    rng = np.random.default_rng(seed)
    z_e, z_w = rng.standard_normal(n), rng.standard_normal(n)
    e_draw = np.concatenate([SCALINGS[k](s, d_model)[0] * z_e for k in SCALINGS for s in sigmas])
    w_draw = np.concatenate([SCALINGS[k](s, d_model)[1] * z_w for k in SCALINGS for s in sigmas])
    ends = flow_end(e_draw, w_draw, p, q, t_end=t_end).reshape(len(SCALINGS), len(sigmas), n)
    rule = np.asarray(predict_limit(e_draw, w_draw, p, q).outcome).reshape(ends.shape)
    resolved = ends != "unresolved"
    w_pos = np.broadcast_to((z_w > 0)[None, None, :], ends.shape)
    out = dict(ends=ends, trap=(ends == "trapped").mean(axis=2), unresolved=float(np.mean(~resolved)),
               disagree=int(np.sum(((ends == "trapped") != (rule == "local_min")) & resolved)),
               n_pos=int(w_pos.sum()), k_pos=int(np.sum((ends == "trapped") & w_pos)),
               n_pos_global=int(np.sum((ends == "global") & w_pos)))
    if fine is not None:
        out["fine_trap"] = {k: np.array([float(np.mean(np.asarray(predict_limit(
            f(s, d_model)[0] * z_e, f(s, d_model)[1] * z_w, p, q).outcome) == "local_min")) for s in fine])
            for k, f in SCALINGS.items()}
    return out
