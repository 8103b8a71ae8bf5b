"""Initializations of the single-layer transformer (reference Sec. 2, 3, 5, 7), and the random direction alpha.

Eight schemes, one function each, registered by name in :data:`SCHEMES` (:data:`INITS` lists the names in order);
:func:`initialize` looks the scheme up and calls it (``MarkovTransformer.init_weights(scheme, ...)`` calls
:func:`initialize`). Two of them are the authors' guideline inits of their 2-token model (``n_states=2``, reference
Sec. 7; :mod:`markovlib.transformer.two_token` derives their canonical reading). A scheme function takes an
:class:`InitDraws` (the model's parameters, the generator and std) and the keyword scalars of :func:`initialize`.
An unseeded initialization draws from a fresh generator seeded from OS entropy: torch's global generator is never
reseeded as a side effect.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..markov.energy import SADDLE_ENERGY, energy
from ..numerics import checks
from .readout import optimal_canonical_bias

SCHEMES = {}  # name -> scheme function (model filled in place); filled by :func:`register`
TWO_TOKEN_INITS = ("authors_submission", "authors_public")  # the authors' 2-token model only (n_states=2)
ALIASES = {"guideline_authors": "public_constants_scalar"}  # the old, misleading name of that scheme
ATTENTION_MATRICES = ("W_Q", "W_K", "W_V", "W_O")


def register(name):
    """Decorator: register a scheme function under ``name`` in :data:`SCHEMES`."""
    def add(fn):
        SCHEMES[name] = fn
        return fn
    return add


class InitDraws:
    """What a scheme function works with: the model's parameters by name, the generator and the std of its draws."""

    def __init__(self, model, generator, std):
        self.model, self.generator, self.std = model, generator, std
        self.params = dict(model.named_parameters())

    def normal(self, shape):
        """N(0, std^2) draws of ``shape``, in float64, from the generator."""
        return torch.randn(shape, generator=self.generator, dtype=torch.float64) * self.std

    def assign(self, name, value):
        """Copy ``value`` into the parameter ``name`` (cast to its dtype and device)."""
        self.params[name].copy_(torch.as_tensor(value, dtype=torch.float64).to(self.params[name]))

    def attention_normal(self):
        """Every attention matrix the model has N(0, std^2)."""
        for name in ATTENTION_MATRICES:
            if name in self.params:
                self.assign(name, self.normal((self.model.d, self.model.d)))

    def direction(self, alpha, u, scheme):
        """The canonical directions of the binary model: alpha in {+-1}^d / sqrt(d) (drawn unless given; a given
        alpha is normalized) and u >= 0 with ||u||^2 = 4 (drawn unless given, then rescaled). Draws alpha, then u.
        ValueError naming ``scheme`` on a model that is not binary."""
        model, gen = self.model, self.generator
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
        return alpha, u

    def canonical_ffn(self, e, w, alpha, u):
        """e_vec = e alpha, p_n = -(e/2) alpha, W_1 = |w| u alpha^T, W_2 = w alpha u^T (reference Sec. 3)."""
        model = self.model
        self.assign("embedding", e * alpha)
        self.assign("positional", (-e / 2) * alpha.expand(model.max_len, model.d))
        self.assign("W_1", abs(w) * torch.outer(u, alpha))
        self.assign("W_2", w * torch.outer(alpha, u))


def canonical_scheme(scheme, name="scheme") -> str:
    """The scheme's name in :data:`SCHEMES` (an old alias is accepted); ValueError naming ``name`` and the
    registered names otherwise."""
    scheme = ALIASES.get(scheme, scheme) if isinstance(scheme, str) else scheme
    return checks.choice(name, scheme, set(SCHEMES))


def random_alpha(d, seed) -> np.ndarray:
    """A unit direction in {+-1}^d / sqrt(d) (the "hypercube" embedding seen in trained models, reference Sec. 5.1),
    drawn from ``np.random.default_rng(seed)``."""
    d = checks.positive_int("d", d)
    seed = checks.nonnegative_int("seed", seed)
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=d) / math.sqrt(d)


@register("standard")
def standard(draws, **_):
    """Every weight matrix and embedding N(0, std^2) (reference Sec. 2 / Sec. 7: "all parameters N(0, 0.02^2)"),
    bias zero."""
    for name, prm in draws.params.items():
        draws.assign(name, torch.zeros(prm.shape) if name == "bias" else draws.normal(prm.shape))


@register("rank_one")
def rank_one(draws, *, alpha=None, u=None, **_):
    """The canonical low-rank form (reference Sec. 3) with random alpha in {+-1}^d / sqrt(d), random u >= 0
    (||u||^2 = 4) and random canonical scalars e, w ~ N(0, std^2); every attention matrix is
    (random scalar, N(0, std^2)) * alpha alpha^T. Binary model only."""
    alpha, u = draws.direction(alpha, u, "rank_one")
    e = float(draws.normal(()))
    w = float(draws.normal(()))
    draws.canonical_ffn(e, w, alpha, u)
    draws.assign("bias", 0.0)
    for name in ATTENTION_MATRICES:
        if name in draws.params:
            draws.assign(name, float(draws.normal(())) * torch.outer(alpha, alpha))


@register("authors_rank_one")
def authors_rank_one(draws, *, alpha=None, u=None, **_):
    """The random rank-one start of Sec. 5.1 as described for the authors' experiments (their posted code names a
    ``lowrank`` init but does not implement it, so this is our reading): alpha random in {+-1}^d / sqrt(d),
    embedding e alpha with e = |0.1 z|, z ~ N(0, 1); W_V = g_V alpha alpha^T, W_O = g_O alpha alpha^T,
    W_1 = u_1 alpha^T, W_2 = alpha u_2^T with g ~ N(0, std^2), u_i ~ N(0, std^2 I), not tied to each other (so not
    on the canonical manifold); W_Q, W_K, positional N(0, std^2); bias 0. Binary model only."""
    alpha, u = draws.direction(alpha, u, "authors_rank_one")
    r = draws.model.hidden
    e = abs(0.1 * float(torch.randn((), generator=draws.generator, dtype=torch.float64)))
    for name in ("W_Q", "W_K", "positional"):
        if name in draws.params:
            draws.assign(name, draws.normal(draws.params[name].shape))
    draws.assign("embedding", e * alpha)
    draws.assign("W_1", torch.outer(draws.normal((r,)), alpha))
    draws.assign("W_2", torch.outer(alpha, draws.normal((r,))))
    for name in ("W_V", "W_O"):
        if name in draws.params:
            draws.assign(name, float(draws.normal(())) * torch.outer(alpha, alpha))
    draws.assign("bias", 0.0)


@register("guideline")
def guideline(draws, *, e=None, w=None, b=0.0, alpha=None, u=None, **_):
    """A point of the data-agnostic good region {w < 0, E(e, w) > E_sad} of reference Sec. 5: canonical embeddings
    and feed-forward weights with (e, w) (default e = 1, w = -1, energy 0 > E_sad ~ -0.847), alpha random in
    {+-1}^d / sqrt(d) unless given, bias b (default 0); the attention weights are N(0, std^2) (small, so the start
    is near the canonical model). Binary model only."""
    alpha, u = draws.direction(alpha, u, "guideline")
    e = 1.0 if e is None else float(checks.finite_array("e", e))
    w = -1.0 if w is None else float(checks.finite_array("w", w))
    if not (w < 0 and float(energy(e, w)) > SADDLE_ENERGY):
        raise ValueError(f"guideline (e, w) must satisfy w < 0 and E(e, w) > E_sad = {SADDLE_ENERGY:.4f}, "
                         f"got e={e!r}, w={w!r} with E = {float(energy(e, w)):.4f}")
    draws.canonical_ffn(e, w, alpha, u)
    draws.assign("bias", float(checks.finite_array("b", b)))
    draws.attention_normal()


@register("public_constants_scalar")
def public_constants_scalar(draws, *, alpha=None, u=None, **_):
    """(Old name ``"guideline_authors"``.) The constants of the authors' later public code (token rows all -1,
    positional all 0.5, W_1 all 2, W_2 all -2, attention N(0, std^2), bias 0) transplanted into the paper's
    scalar-input model, where the embedding vector is e = -1 (all entries). This is NOT what the authors' code does:
    their model has a 2-token vocabulary, where the same constants give e = E_1 - E_0 = 0 (``"authors_public"``).
    In the scalar model it is canonical with alpha = 1/sqrt(d), u = (2/sqrt(r)) 1, e = -sqrt(d), w = -2d: for
    d = 8, (e, w) = (-2 sqrt(2), -16), coefficient c = e^2 (1 + 2 w|w|) = -4088, energy
    E = e^2 - w^2 + log|w| ~ -245.2 < E_sad (outside the data-agnostic region {w < 0, E > E_sad}); the canonical
    flow from it is global for p + q > 1 (Thm 2) and ends on the w-axis for p + q < 1 (Thm 8). Binary model only
    (alpha and u are drawn, unused, as before: the generator's stream stays that of the earlier code)."""
    draws.direction(alpha, u, "public_constants_scalar")
    d, r, model = draws.model.d, draws.model.hidden, draws.model
    draws.assign("embedding", -torch.ones(d))
    draws.assign("positional", 0.5 * torch.ones(model.max_len, d))
    draws.assign("W_1", 2 * torch.ones(r, d))
    draws.assign("W_2", -2 * torch.ones(d, r))
    draws.assign("bias", 0.0)
    draws.attention_normal()


@register("canonical")
def canonical(draws, *, e=None, w=None, a=0.0, b=0.0, alpha=None, u=None, p=None, q=None):
    """Exact canonical weights for given scalars (e, w, a) (:mod:`markovlib.transformer.model` docstring, reference
    Sec. 3 and Sec. 6); ``a != 0`` needs linear attention; with softmax attention and a = 0 the attention weights
    are zero (y = x). ``b`` a number or ``"optimal"`` (needs ``p``, ``q``; then b = b* of
    :func:`~markovlib.transformer.readout.optimal_canonical_bias`). Binary model only."""
    model = draws.model
    alpha, u = draws.direction(alpha, u, "canonical")
    if e is None or w is None:
        raise ValueError("scheme 'canonical' needs the canonical scalars e and w (and optionally a, b)")
    e = float(checks.finite_array("e", e))
    w = float(checks.finite_array("w", w))
    a = float(checks.finite_array("a", a))
    if a != 0 and model.attention != "linear":
        raise ValueError(f"canonical a = {a!r} != 0 needs attention='linear' (reference Sec. 6), "
                         f"got attention={model.attention!r}")
    draws.canonical_ffn(e, w, alpha, u)
    if model.attention is not None:
        A = torch.outer(alpha, alpha)
        kq = 2 * math.sqrt(abs(a))  # k = 2 sqrt|a|, v = 2 sign(a) sqrt|a|: k v / 4 = a
        vv = 2 * math.copysign(math.sqrt(abs(a)), a)
        draws.assign("W_Q", kq * A)
        draws.assign("W_K", A)
        draws.assign("W_V", A)
        draws.assign("W_O", vv * A)
    if isinstance(b, str):
        checks.choice("b", b, {"optimal"})
        if p is None or q is None:
            raise ValueError("b='optimal' needs the chain parameters p and q")
        b = optimal_canonical_bias(e, w, a, p, q)
    draws.assign("bias", float(checks.finite_array("b", b)))


def _two_token(draws, scheme):
    if draws.model.n_states != 2:
        raise ValueError(f"scheme {scheme!r} is the authors' 2-token init: it needs n_states=2")
    return draws.model.d, draws.model.hidden


@register("authors_submission")
def authors_submission(draws, **_):
    """(2-token model only.) The guideline init of the code submitted with the paper (reference Sec. 7): W_1 all 1,
    W_2 all -1, every other weight N(0, std^2), biases 0; canonically w = -d, e small and random."""
    d, r = _two_token(draws, "authors_submission")
    standard(draws)
    draws.assign("W_1", torch.ones(r, d))
    draws.assign("W_2", -torch.ones(d, r))


@register("authors_public")
def authors_public(draws, **_):
    """(2-token model only.) The later public code (reference Sec. 7): token rows all -1, positional all 0.5,
    W_1 all 2, W_2 all -2, attention N(0, std^2), biases 0; then e = E_1 - E_0 = 0 exactly, p_n = -1/2, every ReLU
    is dead at the start and the starting loss is log 2 (canonically w = -2d)."""
    d, r = _two_token(draws, "authors_public")
    draws.attention_normal()
    draws.assign("embedding", -torch.ones(2, d))
    draws.assign("positional", 0.5 * torch.ones(draws.model.max_len, d))
    draws.assign("W_1", 2 * torch.ones(r, d))
    draws.assign("W_2", -2 * torch.ones(d, r))
    draws.assign("bias", torch.zeros(2))


INITS = tuple(SCHEMES)  # the registered names, in the order above


@torch.no_grad()
def initialize(model, scheme="standard", *, std=0.02, seed=None, generator=None, e=None, w=None, a=0.0, b=0.0,
               alpha=None, u=None, p=None, q=None):
    """Initialize ``model`` (a :class:`~markovlib.transformer.model.MarkovTransformer`) in place and return it.

    ``scheme`` names a function of :data:`SCHEMES` (each documents its scheme; an old alias of :data:`ALIASES` is
    accepted): ``"standard"``, ``"rank_one"``, ``"authors_rank_one"``, ``"guideline"``, ``"public_constants_scalar"``,
    ``"canonical"``, ``"authors_submission"``, ``"authors_public"``. The draws come from ``generator``, else from a
    generator seeded with ``seed``, else from fresh OS entropy. ``e, w, a, b, alpha, u, p, q`` are the canonical
    scalars and directions the schemes that use them take.
    """
    fn = SCHEMES[canonical_scheme(scheme)]
    gen = generator
    if gen is None:
        gen = torch.Generator(device="cpu")
        if seed is None:
            gen.seed()  # fresh OS entropy; torch's global generator is left untouched
        else:
            gen.manual_seed(int(seed))
    draws = InitDraws(model, gen, checks.positive_real("std", std))
    fn(draws, e=e, w=w, a=a, b=b, alpha=alpha, u=u, p=p, q=q)
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
