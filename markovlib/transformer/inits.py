"""Initializations of the single-layer transformer (reference Sec. 2, 3, 5, 7), and the random direction alpha.

Seven schemes (:data:`INITS`), documented in :func:`initialize`; ``MarkovTransformer.init_weights(scheme, ...)``
calls it. Two of them are the authors' guideline inits of their 2-token model (``n_states=2``, reference
Sec. 7; :mod:`markovlib.transformer.two_token` derives their canonical reading). An unseeded initialization draws from a
fresh generator seeded from OS entropy: torch's global generator is never reseeded as a side effect.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..markov.energy import SADDLE_ENERGY, energy
from ..numerics import checks
from .readout import optimal_canonical_bias

INITS = ("standard", "rank_one", "authors_rank_one", "guideline", "public_constants_scalar", "canonical",
         "authors_submission", "authors_public")
TWO_TOKEN_INITS = ("authors_submission", "authors_public")  # the authors' 2-token model only (n_states=2)
ALIASES = {"guideline_authors": "public_constants_scalar"}  # the old, misleading name of that scheme


def canonical_scheme(scheme, name="scheme") -> str:
    """The scheme's name in :data:`INITS` (an old alias is accepted); ValueError naming ``name`` otherwise."""
    scheme = ALIASES.get(scheme, scheme) if isinstance(scheme, str) else scheme
    return checks.choice(name, scheme, set(INITS))


def random_alpha(d, seed) -> np.ndarray:
    """A unit direction in {+-1}^d / sqrt(d) (the "hypercube" embedding seen in trained models, reference Sec. 5.1),
    drawn from ``np.random.default_rng(seed)``."""
    d = checks.positive_int("d", d)
    seed = checks.nonnegative_int("seed", seed)
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=d) / math.sqrt(d)


@torch.no_grad()
def initialize(model, scheme="standard", *, std=0.02, seed=None, generator=None, e=None, w=None, a=0.0, b=0.0,
               alpha=None, u=None, p=None, q=None):
    """Initialize ``model`` (a :class:`~markovlib.transformer.model.MarkovTransformer`) in place and return it.

    scheme
        ``"standard"``: every weight matrix and embedding N(0, std^2) (reference Sec. 2 / Sec. 7: "all
        parameters N(0, 0.02^2)"), bias zero.
        ``"rank_one"``: the canonical low-rank form (reference Sec. 3) with random alpha in
        {+-1}^d / sqrt(d), random u >= 0 (||u||^2 = 4) and random canonical scalars e, w ~ N(0, std^2);
        every attention matrix is (random scalar, N(0, std^2)) * alpha alpha^T. Binary model only.
        ``"authors_rank_one"``: the random rank-one start of Sec. 5.1 as described for the authors' experiments
        (their posted code names a ``lowrank`` init but does not implement it, so this is our reading): alpha
        random in {+-1}^d / sqrt(d), embedding e alpha with e = |0.1 z|, z ~ N(0, 1); W_V = g_V alpha alpha^T,
        W_O = g_O alpha alpha^T, W_1 = u_1 alpha^T, W_2 = alpha u_2^T with g ~ N(0, std^2), u_i ~ N(0, std^2 I),
        not tied to each other (so not on the canonical manifold); W_Q, W_K, positional N(0, std^2); bias 0.
        Binary model only.
        ``"guideline"``: a point of the data-agnostic good region {w < 0, E(e, w) > E_sad} of reference
        Sec. 5: canonical embeddings and feed-forward weights with (e, w) (default e = 1, w = -1, energy 0 >
        E_sad ~ -0.847), alpha random in {+-1}^d / sqrt(d) unless given, bias b (default 0); the attention
        weights are N(0, std^2) (small, so the start is near the canonical model). Binary model only.
        ``"public_constants_scalar"`` (old name ``"guideline_authors"``): the constants of the authors' later
        public code (token rows all -1, positional all 0.5, W_1 all 2, W_2 all -2, attention N(0, std^2), bias 0)
        transplanted into the paper's scalar-input model, where the embedding vector is e = -1 (all entries).
        This is NOT what the authors' code does: their model has a 2-token vocabulary, where the same constants
        give e = E_1 - E_0 = 0 (``"authors_public"`` below, :mod:`markovlib.transformer.two_token`). In the scalar
        model it is canonical with alpha = 1/sqrt(d), u = (2/sqrt(r)) 1, e = -sqrt(d), w = -2d: for d = 8,
        (e, w) = (-2 sqrt(2), -16), coefficient c = e^2 (1 + 2 w|w|) = -4088, energy
        E = e^2 - w^2 + log|w| ~ -245.2 < E_sad (outside the data-agnostic region {w < 0, E > E_sad}); the
        canonical flow from it is global for p + q > 1 (Thm 2) and ends on the w-axis for p + q < 1 (Thm 8).
        ``"authors_submission"`` (2-token model only): the guideline init of the code submitted with the paper,
        W_1 all 1, W_2 all -1, every other weight N(0, std^2), biases 0; canonically w = -d, e small and random.
        ``"authors_public"`` (2-token model only): the later public code, token rows all -1, positional all 0.5,
        W_1 all 2, W_2 all -2, attention N(0, std^2), biases 0; then e = E_1 - E_0 = 0 exactly, p_n = -1/2, every
        ReLU is dead at the start and the starting loss is log 2 (canonically w = -2d).
        ``"canonical"``: exact canonical weights for given scalars (e, w, a) (:mod:`markovlib.transformer.model`
        docstring, reference Sec. 3 and Sec. 6); ``a != 0`` needs linear attention; with softmax attention and a = 0 the
        attention weights are zero (y = x). ``b`` a number or ``"optimal"`` (needs ``p``, ``q``; then
        b = b* of :func:`optimal_canonical_bias`).
    """
    scheme = canonical_scheme(scheme)
    gen = generator
    if gen is None:
        gen = torch.Generator(device="cpu")
        if seed is None:
            gen.seed()  # fresh OS entropy; torch's global generator is left untouched
        else:
            gen.manual_seed(int(seed))
    std = checks.positive_real("std", std)
    params = dict(model.named_parameters())

    def normal(shape):
        return torch.randn(shape, generator=gen, dtype=torch.float64) * std

    def assign(name, value):
        params[name].copy_(torch.as_tensor(value, dtype=torch.float64).to(params[name]))

    if scheme == "standard":
        for name, prm in params.items():
            assign(name, torch.zeros(prm.shape) if name == "bias" else normal(prm.shape))
        return model
    if scheme in TWO_TOKEN_INITS:
        if model.n_states != 2:
            raise ValueError(f"scheme {scheme!r} is the authors' 2-token init: it needs n_states=2")
        return _authors_init(model, scheme, normal, assign, params)
    if not model.binary:
        raise ValueError(f"scheme {scheme!r} is defined for the binary model only (n_states=None)")

    d, r = model.d, model.hidden
    if alpha is None:
        alpha = (torch.randint(0, 2, (d,), generator=gen, dtype=torch.int64) * 2 - 1).double() / math.sqrt(d)
    else:
        alpha = torch.as_tensor(np.asarray(checks.finite_array("alpha", alpha), dtype=float))
        if alpha.shape != (d,) or float(alpha.norm()) == 0:
            raise ValueError(f"alpha must be a nonzero vector of length d = {d}")
        alpha = alpha / alpha.norm()
    if u is None:
        u = torch.rand(r, generator=gen, dtype=torch.float64) + 0.5
        u = 2 * u / u.norm()
    else:
        u = torch.as_tensor(np.asarray(checks.finite_array("u", u), dtype=float))
        if u.shape != (r,) or bool((u < 0).any()) or float(u.norm()) == 0:
            raise ValueError(f"u must be a nonzero vector of length r = {r} with entries >= 0")
        u = 2 * u / u.norm()
    A = torch.outer(alpha, alpha)

    if scheme == "public_constants_scalar":
        assign("embedding", -torch.ones(d))
        assign("positional", 0.5 * torch.ones(model.max_len, d))
        assign("W_1", 2 * torch.ones(r, d))
        assign("W_2", -2 * torch.ones(d, r))
        assign("bias", 0.0)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if name in params:
                assign(name, normal((d, d)))
        return model

    if scheme == "authors_rank_one":
        e = abs(0.1 * float(torch.randn((), generator=gen, dtype=torch.float64)))
        for name in ("W_Q", "W_K", "positional"):
            if name in params:
                assign(name, normal(params[name].shape))
        assign("embedding", e * alpha)
        assign("W_1", torch.outer(normal((r,)), alpha))
        assign("W_2", torch.outer(alpha, normal((r,))))
        for name in ("W_V", "W_O"):
            if name in params:
                assign(name, float(normal(())) * A)
        assign("bias", 0.0)
        return model

    if scheme == "rank_one":
        e = float(normal(()))
        w = float(normal(()))
        _set_canonical_ffn(model, e, w, alpha, u, assign)
        assign("bias", 0.0)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if name in params:
                assign(name, float(normal(())) * A)
        return model

    if scheme == "guideline":
        e = 1.0 if e is None else float(checks.finite_array("e", e))
        w = -1.0 if w is None else float(checks.finite_array("w", w))
        if not (w < 0 and float(energy(e, w)) > SADDLE_ENERGY):
            raise ValueError(f"guideline (e, w) must satisfy w < 0 and E(e, w) > E_sad = {SADDLE_ENERGY:.4f}, "
                             f"got e={e!r}, w={w!r} with E = {float(energy(e, w)):.4f}")
        _set_canonical_ffn(model, e, w, alpha, u, assign)
        assign("bias", float(checks.finite_array("b", b)))
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if name in params:
                assign(name, normal((d, d)))
        return model

    # canonical
    if e is None or w is None:
        raise ValueError("scheme 'canonical' needs the canonical scalars e and w (and optionally a, b)")
    e = float(checks.finite_array("e", e))
    w = float(checks.finite_array("w", w))
    a = float(checks.finite_array("a", a))
    if a != 0 and model.attention != "linear":
        raise ValueError(f"canonical a = {a!r} != 0 needs attention='linear' (reference Sec. 6), "
                         f"got attention={model.attention!r}")
    _set_canonical_ffn(model, e, w, alpha, u, assign)
    if model.attention is not None:
        kq = 2 * math.sqrt(abs(a))  # k = 2 sqrt|a|, v = 2 sign(a) sqrt|a|: k v / 4 = a
        vv = 2 * math.copysign(math.sqrt(abs(a)), a)
        assign("W_Q", kq * A)
        assign("W_K", A)
        assign("W_V", A)
        assign("W_O", vv * A)
    if isinstance(b, str):
        checks.choice("b", b, {"optimal"})
        if p is None or q is None:
            raise ValueError("b='optimal' needs the chain parameters p and q")
        b = optimal_canonical_bias(e, w, a, p, q)
    assign("bias", float(checks.finite_array("b", b)))
    return model


@torch.no_grad()
def perturb(model, std, generator):
    """Add N(0, std^2) noise to every parameter of ``model`` but the bias, in place (``TrainConfig.init_noise``: a
    start pushed off the canonical manifold, reference Sec. 5.1's question whether training returns to it); returns
    the model."""
    std = checks.positive_real("std", std)
    for name, prm in model.named_parameters():
        if name != "bias":
            prm.add_((torch.randn(prm.shape, generator=generator, dtype=torch.float64) * std).to(prm))
    return model


def _authors_init(model, scheme, normal, assign, params):
    """The authors' two guideline inits of their 2-token model (reference Sec. 7; :func:`initialize`)."""
    d, r = model.d, model.hidden
    if scheme == "authors_submission":
        for name, prm in params.items():
            assign(name, torch.zeros(prm.shape) if name == "bias" else normal(prm.shape))
        assign("W_1", torch.ones(r, d))
        assign("W_2", -torch.ones(d, r))
        return model
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        if name in params:
            assign(name, normal((d, d)))
    assign("embedding", -torch.ones(2, d))
    assign("positional", 0.5 * torch.ones(model.max_len, d))
    assign("W_1", 2 * torch.ones(r, d))
    assign("W_2", -2 * torch.ones(d, r))
    assign("bias", torch.zeros(2))
    return model


def _set_canonical_ffn(model, e, w, alpha, u, assign):
    """e_vec = e alpha, p_n = -(e/2) alpha, W_1 = |w| u alpha^T, W_2 = w alpha u^T (reference Sec. 3)."""
    assign("embedding", e * alpha)
    assign("positional", (-e / 2) * alpha.expand(model.max_len, model.d))
    assign("W_1", abs(w) * torch.outer(u, alpha))
    assign("W_2", w * torch.outer(alpha, u))

# -- constructors -------------------------------------------------------------------------------------
