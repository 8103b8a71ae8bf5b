"""The single-layer transformer of the reference, Sec. 2 (full model), Sec. 3 and Sec. 6 (canonical weights).

Binary model (reference Sec. 2), at every position n of x_1..x_N in {0, 1}:

    embedding     x_n = x_n e + p_n                                   (e in R^d, p_n in R^d positional)
    attention     y_n = x_n + W_O sum_{i<=n} att_{n,i} W_V x_i
    feed-forward  z_n = y_n + W_2 ReLU(W_1 y_n)                       (W_1: r x d, W_2: d x r, r = 4d)
    head          logit_n = <e, z_n> + b                               (weight tying a = e)

with one causal head, no layer norm and no biases inside the layer. Three attentions:

* ``"softmax"``: att_{n,i} = softmax_{i<=n}(<W_Q x_n, W_K x_i> / sqrt(d)) (reference Sec. 2), computed by
  ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``; the length x length matrix is never
  materialized by this module.
* ``"linear"``: att_{n,i} = (1/n) <W_Q x_n, W_K x_i> (reference Sec. 6), computed in O(N d^2) with a cumulative
  sum: sum_{i<=n} <q_n, k_i> v_i = (sum_{i<=n} v_i k_i^T) q_n, so with S_n = sum_{i<=n} v_i k_i^T (a d x d
  running sum), y_n = x_n + W_O S_n q_n / n.
* ``None``: no attention, y_n = x_n.

K-state variant (``n_states=K``): token embedding matrix E (K x d), x_n = E[x_n] + p_n, tied softmax head
logits_n = E z_n + b (K biases).

Initializations (``MarkovTransformer.init_weights`` / the classmethods): ``"standard"``, ``"rank_one"``,
``"guideline"``, ``"guideline_authors"``, ``"canonical"``; see :meth:`MarkovTransformer.init_weights`.

Canonical weights (reference Sec. 3 and Sec. 6), alpha a unit vector, u >= 0 with ||u||^2 = 4:

    e_vec = e alpha,  p_n = -(e/2) alpha                 =>  x_n = e (x_n - 1/2) alpha
    W_Q = k alpha alpha^T, W_K = alpha alpha^T           =>  <W_Q x_n, W_K x_i> = k e^2 (x_n - 1/2)(x_i - 1/2)
    W_V = alpha alpha^T,   W_O = v alpha alpha^T         =>  W_O W_V = v alpha alpha^T,  a = k v / 4
                                                          =>  y_n = e (1 + a e^2)(x_n - 1/2) alpha  (exact:
                                                              (x_i - 1/2)^2 = 1/4 and (1/n) sum_{i<=n} 1 = 1)
    W_1 = |w| u alpha^T,   W_2 = w alpha u^T

Write m = e (1 + a e^2), kappa = e^2 (1 + a e^2) = e m and c = kappa (1 + 2 w|w|) (reference Sec. 6). Then

    m > 0:  logit_n = c x_n - kappa/2 + b                       (the reference formula)
    m < 0:  logit_n = c x_n - kappa/2 - 2 w|w| kappa + b        (ReLU fires at x_n = 0 instead of x_n = 1)
    m = 0:  logit_n = b

so the sign of m only shifts the logit by the constant -2 w|w| kappa, which the bias absorbs: the coefficient
c of x_n, and therefore the loss after optimizing b, do not depend on it (verified in
``tests/test_transformer.py`` for both signs of e and of 1 + a e^2). :func:`canonical_logit` is this closed form.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import _checks
from .canonical import coefficient, optimal_beta
from .energy import SADDLE_ENERGY, energy

ATTENTIONS = ("softmax", "linear", None)
INITS = ("standard", "rank_one", "guideline", "guideline_authors", "canonical")



# ------------------------------------------------------------------------------------------------------------
# reference attentions (O(N^2), materialize the length x length matrix): for tests and the benchmark baseline
# ------------------------------------------------------------------------------------------------------------
def naive_softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal softmax attention, reference Sec. 2, written out: softmax_{i<=n}(<q_n, k_i>/sqrt(d)) weighted sum
    of v_i. Materializes the (..., N, N) score matrix; the reference the fast path is tested against and the
    model of the training benchmark's baseline."""
    n, d = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def naive_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal linear attention, reference Sec. 6, written out: sum_{i<=n} (1/n) <q_n, k_i> v_i, with the
    (..., N, N) matrix materialized."""
    n = q.shape[-2]
    scores = q @ k.transpose(-1, -2)
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    counts = torch.arange(1, n + 1, dtype=q.dtype, device=q.device)[:, None]
    return (scores.masked_fill(~mask, 0.0) / counts) @ v


def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal linear attention in O(N d^2): (1/n) S_n q_n with S_n = sum_{i<=n} v_i k_i^T (module docstring)."""
    n = q.shape[-2]
    s = torch.einsum("...ni,...nj->...nij", v, k).cumsum(dim=-3)  # (..., N, d, d) running sums S_n
    counts = torch.arange(1, n + 1, dtype=q.dtype, device=q.device)[:, None]
    return torch.einsum("...nij,...nj->...ni", s, q) / counts


# ------------------------------------------------------------------------------------------------------------
# closed forms of the canonical model
# ------------------------------------------------------------------------------------------------------------
def canonical_logit_offset(e, w, a=0.0):
    """The constant of the canonical logit, logit_n = c x_n + offset + b (module docstring):
    -kappa/2 if m = e(1 + a e^2) >= 0, else -kappa/2 - 2 w|w| kappa, with kappa = e^2 (1 + a e^2)."""
    e, w, a = (np.asarray(v, dtype=float) for v in (e, w, a))
    kappa = e**2 * (1 + a * e**2)
    m = e * (1 + a * e**2)
    out = np.where(m >= 0, -kappa / 2, -kappa / 2 - 2 * w * np.abs(w) * kappa)
    return out[()] if out.ndim == 0 else out


def canonical_logit(x, e, w, a=0.0, b=0.0):
    """Closed-form logit of the canonical model (module docstring; reference Sec. 3 and Sec. 6):
    c(e, w, a) x_n + offset(e, w, a) + b. Broadcasts over the array of symbols ``x``."""
    x = np.asarray(x, dtype=float)
    return coefficient(e, w, a) * x + canonical_logit_offset(e, w, a) + float(b)


def optimal_canonical_bias(e, w, a, p, q):
    """The loss-minimizing bias of the canonical model: b* = -offset(e, w, a) + beta*(c) (reference Sec. 3,
    Lemma 5, with beta* from :func:`markovlib.canonical.optimal_beta`; offset from
    :func:`canonical_logit_offset`). When m = e(1 + a e^2) >= 0 this is :func:`markovlib.canonical.optimal_bias`,
    e^2(1 + a e^2)/2 + beta*(c); when m < 0 the full model's bias must also absorb the shift 2 w|w| kappa."""
    c = coefficient(e, w, a)
    return float(-canonical_logit_offset(e, w, a) + optimal_beta(c, p, q))


# ------------------------------------------------------------------------------------------------------------
# the model
# ------------------------------------------------------------------------------------------------------------
class CanonicalScalars(NamedTuple):
    e: float
    w: float
    a: float
    b: float
    alpha: np.ndarray
    u: np.ndarray


class MarkovTransformer(nn.Module):
    """Single-layer, single-head, weight-tied transformer of the reference Sec. 2 (see the module docstring).

    Parameters
    ----------
    d : embedding dimension (paper: 8).
    max_len : number of positional embeddings p_1..p_max_len; inputs may not be longer.
    attention : ``"softmax"`` (Sec. 2), ``"linear"`` (Sec. 6) or ``None`` (off).
    n_states : ``None`` for the binary model with one logit (embedding x e); an int K >= 2 for the K-state
        variant (embedding matrix E, K x d, tied softmax head E z + b).
    hidden : width r of the feed-forward layer, default 4d.
    reference_impl : compute the attention with the O(N^2) reference (:func:`naive_softmax_attention`,
        :func:`naive_linear_attention`) instead of the fast path; for tests and the benchmark baseline.
    dtype, device : of the parameters (float64 by default, for theory checks; the Trainer uses float32).

    Weights are zero after construction; call :meth:`init_weights` or use a classmethod
    (:meth:`standard`, :meth:`canonical`, ...).
    """

    def __init__(self, d=8, max_len=1024, *, attention="softmax", n_states=None, hidden=None,
                 reference_impl=False, dtype=torch.float64, device=None):
        super().__init__()
        self.d = _checks.positive_int("d", d)
        self.max_len = _checks.positive_int("max_len", max_len)
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be 'softmax', 'linear' or None, got {attention!r}")
        self.attention = attention
        if n_states is not None:
            n_states = _checks.positive_int("n_states", n_states)
            if n_states < 2:
                raise ValueError(f"n_states must be None (binary, one logit) or an integer >= 2, got {n_states!r}")
        self.n_states = n_states
        self.hidden = _checks.positive_int("hidden", hidden) if hidden is not None else 4 * self.d
        self.reference_impl = bool(reference_impl)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating torch.dtype, got {dtype!r}")
        kw = dict(dtype=dtype, device=device)
        d, r = self.d, self.hidden
        if self.binary:
            self.embedding = nn.Parameter(torch.zeros(d, **kw))  # e
            self.bias = nn.Parameter(torch.zeros((), **kw))  # b
        else:
            self.embedding = nn.Parameter(torch.zeros(n_states, d, **kw))  # E
            self.bias = nn.Parameter(torch.zeros(n_states, **kw))
        self.positional = nn.Parameter(torch.zeros(self.max_len, d, **kw))  # rows p_n
        if self.attention is not None:
            self.W_Q = nn.Parameter(torch.zeros(d, d, **kw))
            self.W_K = nn.Parameter(torch.zeros(d, d, **kw))
            self.W_V = nn.Parameter(torch.zeros(d, d, **kw))
            self.W_O = nn.Parameter(torch.zeros(d, d, **kw))
        self.W_1 = nn.Parameter(torch.zeros(r, d, **kw))
        self.W_2 = nn.Parameter(torch.zeros(d, r, **kw))

    @property
    def binary(self) -> bool:
        return self.n_states is None

    def extra_repr(self):
        return (f"d={self.d}, max_len={self.max_len}, attention={self.attention!r}, "
                f"n_states={self.n_states}, hidden={self.hidden}")

    # -- forward ------------------------------------------------------------------------------------------
    def _check_input(self, x):
        if not isinstance(x, torch.Tensor) or x.dtype not in (torch.int64, torch.int32, torch.uint8, torch.bool):
            raise ValueError("x must be an integer torch tensor of symbols with shape (batch, length)")
        if x.dim() != 2:
            raise ValueError(f"x must have shape (batch, length), got {tuple(x.shape)}")
        if x.shape[1] > self.max_len:
            raise ValueError(f"x has length {x.shape[1]} > max_len = {self.max_len}")

    def attend(self, h: torch.Tensor) -> torch.Tensor:
        """sum_{i<=n} att_{n,i} W_V h_i for the configured attention (before W_O)."""
        q, k, v = h @ self.W_Q.T, h @ self.W_K.T, h @ self.W_V.T
        if self.attention == "softmax":
            if self.reference_impl:
                return naive_softmax_attention(q, k, v)
            # (batch, 1 head, N, d): with 4-D inputs torch picks its fused flash kernel on CPU as well (3-D inputs
            # fall back to the math path, which materializes the N x N matrix and is ~8x slower)
            out = F.scaled_dot_product_attention(q.unsqueeze(-3), k.unsqueeze(-3), v.unsqueeze(-3),
                                                 is_causal=True, scale=1.0 / math.sqrt(self.d))
            return out.squeeze(-3)
        if self.reference_impl:
            return naive_linear_attention(q, k, v)
        return linear_attention(q, k, v)

    def forward(self, x: torch.Tensor, *, return_hidden=False):
        """Logits for every position: (batch, length) for the binary model (logit_n predicts x_{n+1} = 1),
        (batch, length, K) for the K-state model. ``return_hidden=True`` also returns the dict of the
        residual streams x (embedding), y (after attention), z (after the feed-forward layer)."""
        self._check_input(x)
        n = x.shape[1]
        if self.binary:
            h0 = x.to(self.embedding.dtype)[..., None] * self.embedding + self.positional[:n]
        else:
            h0 = self.embedding[x.long()] + self.positional[:n]
        y = h0 if self.attention is None else h0 + self.attend(h0) @ self.W_O.T
        z = y + F.relu(y @ self.W_1.T) @ self.W_2.T
        if self.binary:
            logits = z @ self.embedding + self.bias
        else:
            logits = z @ self.embedding.T + self.bias
        if return_hidden:
            return logits, {"x": h0, "y": y, "z": z}
        return logits

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """Next-symbol cross-entropy in nats, reference Sec. 2: the logit at n predicts x_{n+1}, averaged over
        n = 1..N-1 and the batch. Binary: BCE with logits (numerically stable for any logit size)."""
        logits = self(x[:, :-1])
        if logits.dtype in (torch.float16, torch.bfloat16):  # under autocast: the loss in float32
            logits = logits.float()
        target = x[:, 1:]
        if self.binary:
            return F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype))
        return F.cross_entropy(logits.reshape(-1, self.n_states), target.reshape(-1).long())

    # -- weights ------------------------------------------------------------------------------------------
    def weight_matrices(self) -> dict:
        """The 2-D weights by name: W_Q, W_K, W_V, W_O (if attention), W_1, W_2, positional, and the embedding
        matrix E of the K-state model."""
        out = {}
        for name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"):
            if hasattr(self, name):
                out[name] = getattr(self, name)
        out["positional"] = self.positional
        if not self.binary:
            out["embedding"] = self.embedding
        return out

    @torch.no_grad()
    def init_weights(self, scheme="standard", *, std=0.02, seed=None, generator=None, e=None, w=None, a=0.0,
                     b=0.0, alpha=None, u=None, p=None, q=None):
        """Initialize in place and return ``self``.

        scheme
            ``"standard"``: every weight matrix and embedding N(0, std^2) (reference Sec. 2 / Sec. 7: "all
            parameters N(0, 0.02^2)"), bias zero.
            ``"rank_one"``: the canonical low-rank form (reference Sec. 3) with random alpha in
            {+-1}^d / sqrt(d), random u >= 0 (||u||^2 = 4) and random canonical scalars e, w ~ N(0, std^2);
            every attention matrix is (random scalar, N(0, std^2)) * alpha alpha^T. Binary model only.
            ``"guideline"``: a point of the data-agnostic good region {w < 0, E(e, w) > E_sad} of reference
            Sec. 5: canonical embeddings and feed-forward weights with (e, w) (default e = 1, w = -1, energy 0 >
            E_sad ~ -0.847), alpha random in {+-1}^d / sqrt(d) unless given, bias b (default 0); the attention
            weights are N(0, std^2) (small, so the start is near the canonical model). Binary model only.
            ``"guideline_authors"``: the constants of the authors' public code: token embedding all -1,
            positional all 0.5, W_1 all 2, W_2 all -2, attention N(0, std^2), bias 0. That is canonical with
            alpha = 1/sqrt(d), u = (2/sqrt(r)) 1, e = -sqrt(d), w = -2d (the entries of W_1 are
            |w| (2/sqrt(r)) (1/sqrt(d)) = |w|/d = 2 at r = 4d): for d = 8, (e, w) = (-2 sqrt(2), -16), r = 32,
            with coefficient c = e^2 (1 + 2 w|w|) = -4088, so the starting loss is huge (of order |c|/2 nats on
            the symbols that switch) and training needs thousands of steps (reference Sec. 7).
            NOTE (checked here, contradicting the reference's "inside the data-agnostic region"): its energy is
            E = e^2 - w^2 + log|w| = 8 - 256 + log 16 ~ -245.2 < E_sad, so it is NOT in {w < 0, E > E_sad}. It
            converges to a global minimum only because w0 < -1/sqrt(2) and p + q > 1 (Thm 2); for p + q < 1
            the canonical flow from it ends at a local minimum on the w-axis (Thm 8;
            ``markovlib.energy.predict_limit(-2*sqrt(2), -16, 0.2, 0.3)`` gives ``local_min``).
            ``"canonical"``: exact canonical weights for given scalars (e, w, a) (module docstring, reference
            Sec. 3 and Sec. 6); ``a != 0`` needs linear attention; with softmax attention and a = 0 the
            attention weights are zero (y = x). ``b`` a number or ``"optimal"`` (needs ``p``, ``q``; then
            b = b* of :func:`optimal_canonical_bias`).
        """
        _checks.choice("scheme", scheme, set(INITS))
        gen = generator
        if gen is None:
            gen = torch.Generator(device="cpu")
            gen.manual_seed(int(seed) if seed is not None else int(torch.seed() % 2**63))
        std = _checks.positive_real("std", std)
        params = dict(self.named_parameters())

        def normal(shape):
            return torch.randn(shape, generator=gen, dtype=torch.float64) * std

        def assign(name, value):
            params[name].copy_(torch.as_tensor(value, dtype=torch.float64).to(params[name]))

        if scheme == "standard":
            for name, prm in params.items():
                assign(name, torch.zeros(prm.shape) if name == "bias" else normal(prm.shape))
            return self
        if not self.binary:
            raise ValueError(f"scheme {scheme!r} is defined for the binary model only (n_states=None)")

        d, r = self.d, self.hidden
        if alpha is None:
            alpha = (torch.randint(0, 2, (d,), generator=gen, dtype=torch.int64) * 2 - 1).double() / math.sqrt(d)
        else:
            alpha = torch.as_tensor(np.asarray(_checks.finite_array("alpha", alpha), dtype=float))
            if alpha.shape != (d,) or float(alpha.norm()) == 0:
                raise ValueError(f"alpha must be a nonzero vector of length d = {d}")
            alpha = alpha / alpha.norm()
        if u is None:
            u = torch.rand(r, generator=gen, dtype=torch.float64) + 0.5
            u = 2 * u / u.norm()
        else:
            u = torch.as_tensor(np.asarray(_checks.finite_array("u", u), dtype=float))
            if u.shape != (r,) or bool((u < 0).any()) or float(u.norm()) == 0:
                raise ValueError(f"u must be a nonzero vector of length r = {r} with entries >= 0")
            u = 2 * u / u.norm()
        A = torch.outer(alpha, alpha)

        if scheme == "guideline_authors":
            assign("embedding", -torch.ones(d))
            assign("positional", 0.5 * torch.ones(self.max_len, d))
            assign("W_1", 2 * torch.ones(r, d))
            assign("W_2", -2 * torch.ones(d, r))
            assign("bias", 0.0)
            for name in ("W_Q", "W_K", "W_V", "W_O"):
                if name in params:
                    assign(name, normal((d, d)))
            return self

        if scheme == "rank_one":
            e = float(normal(()))
            w = float(normal(()))
            self._set_canonical_ffn(e, w, alpha, u, assign)
            assign("bias", 0.0)
            for name in ("W_Q", "W_K", "W_V", "W_O"):
                if name in params:
                    assign(name, float(normal(())) * A)
            return self

        if scheme == "guideline":
            e = 1.0 if e is None else float(_checks.finite_array("e", e))
            w = -1.0 if w is None else float(_checks.finite_array("w", w))
            if not (w < 0 and float(energy(e, w)) > SADDLE_ENERGY):
                raise ValueError(f"guideline (e, w) must satisfy w < 0 and E(e, w) > E_sad = {SADDLE_ENERGY:.4f}, "
                                 f"got e={e!r}, w={w!r} with E = {float(energy(e, w)):.4f}")
            self._set_canonical_ffn(e, w, alpha, u, assign)
            assign("bias", float(_checks.finite_array("b", b)))
            for name in ("W_Q", "W_K", "W_V", "W_O"):
                if name in params:
                    assign(name, normal((d, d)))
            return self

        # canonical
        if e is None or w is None:
            raise ValueError("scheme 'canonical' needs the canonical scalars e and w (and optionally a, b)")
        e = float(_checks.finite_array("e", e))
        w = float(_checks.finite_array("w", w))
        a = float(_checks.finite_array("a", a))
        if a != 0 and self.attention != "linear":
            raise ValueError(f"canonical a = {a!r} != 0 needs attention='linear' (reference Sec. 6), "
                             f"got attention={self.attention!r}")
        self._set_canonical_ffn(e, w, alpha, u, assign)
        if self.attention is not None:
            kq = 2 * math.sqrt(abs(a))  # k = 2 sqrt|a|, v = 2 sign(a) sqrt|a|: k v / 4 = a
            vv = 2 * math.copysign(math.sqrt(abs(a)), a)
            assign("W_Q", kq * A)
            assign("W_K", A)
            assign("W_V", A)
            assign("W_O", vv * A)
        if isinstance(b, str):
            _checks.choice("b", b, {"optimal"})
            if p is None or q is None:
                raise ValueError("b='optimal' needs the chain parameters p and q")
            b = optimal_canonical_bias(e, w, a, p, q)
        assign("bias", float(_checks.finite_array("b", b)))
        return self

    def _set_canonical_ffn(self, e, w, alpha, u, assign):
        """e_vec = e alpha, p_n = -(e/2) alpha, W_1 = |w| u alpha^T, W_2 = w alpha u^T (reference Sec. 3)."""
        assign("embedding", e * alpha)
        assign("positional", (-e / 2) * alpha.expand(self.max_len, self.d))
        assign("W_1", abs(w) * torch.outer(u, alpha))
        assign("W_2", w * torch.outer(alpha, u))

    # -- constructors -------------------------------------------------------------------------------------
    @classmethod
    def standard(cls, d=8, max_len=1024, *, std=0.02, seed=None, **kw):
        """All weights N(0, std^2) (see :meth:`init_weights`)."""
        return cls(d, max_len, **kw).init_weights("standard", std=std, seed=seed)

    @classmethod
    def rank_one(cls, d=8, max_len=1024, *, std=0.02, seed=None, **kw):
        return cls(d, max_len, **kw).init_weights("rank_one", std=std, seed=seed)

    @classmethod
    def guideline(cls, d=8, max_len=1024, *, e=1.0, w=-1.0, b=0.0, std=0.02, seed=None, alpha=None, **kw):
        return cls(d, max_len, **kw).init_weights("guideline", e=e, w=w, b=b, std=std, seed=seed, alpha=alpha)

    @classmethod
    def guideline_authors(cls, d=8, max_len=1024, *, std=0.02, seed=None, **kw):
        return cls(d, max_len, **kw).init_weights("guideline_authors", std=std, seed=seed)

    @classmethod
    def canonical(cls, e, w, a=0.0, b=0.0, *, d=8, max_len=1024, alpha=None, u=None, p=None, q=None,
                  attention="auto", seed=None, **kw):
        """Exact canonical weights (reference Sec. 3, Sec. 6). ``attention="auto"``: off when a = 0, linear
        otherwise."""
        if attention == "auto":
            attention = None if float(a) == 0 else "linear"
        return cls(d, max_len, attention=attention, **kw).init_weights(
            "canonical", e=e, w=w, a=a, b=b, alpha=alpha, u=u, p=p, q=q, seed=seed)


def build_model(init="standard", *, d=8, max_len=1024, attention="softmax", n_states=None, std=0.02, seed=None,
                dtype=torch.float64, device=None, **init_kw) -> MarkovTransformer:
    """Construct a :class:`MarkovTransformer` and initialize it with ``init`` (one of :data:`INITS`)."""
    _checks.choice("init", init, set(INITS))
    model = MarkovTransformer(d, max_len, attention=attention, n_states=n_states, dtype=dtype, device=device)
    return model.init_weights(init, std=std, seed=seed, **init_kw)


def random_alpha(d, seed) -> np.ndarray:
    """A unit direction in {+-1}^d / sqrt(d) (the "hypercube" embedding seen in trained models, reference Sec. 5.1),
    drawn from ``np.random.default_rng(seed)``."""
    d = _checks.positive_int("d", d)
    seed = _checks.nonnegative_int("seed", seed)
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=d) / math.sqrt(d)


def canonical_full_model(e, w, b, *, d=8, max_len=1024, seed=0, attention="softmax") -> "MarkovTransformer":
    """The full model of reference Sec. 2 (softmax attention by default) loaded with the canonical weights of
    scalars (e, w), attention scalar a = 0 (its W_Q, W_K, W_V, W_O are zero) and bias ``b``, on the direction
    :func:`random_alpha` (d, seed). float64."""
    return MarkovTransformer(d, max_len, attention=attention).init_weights(
        "canonical", e=e, w=w, b=b, alpha=random_alpha(d, seed), seed=seed)


# ------------------------------------------------------------------------------------------------------------
# low rank diagnostics
# ------------------------------------------------------------------------------------------------------------
def top_singular_fraction(W, k=1) -> float:
    """Fraction of the energy in the top-k singular components, sum_{i<=k} s_i^2 / sum_i s_i^2 (reference
    Sec. 7, Figs. 3, 6, 7). 1 for a rank-one matrix; nan for the zero matrix or non-finite entries."""
    k = _checks.positive_int("k", k)
    W = torch.as_tensor(W).detach().to("cpu", torch.float64)
    if W.dim() == 1:
        W = W[None, :]
    if W.dim() != 2:
        raise ValueError(f"W must be a matrix (or vector), got shape {tuple(W.shape)}")
    if not bool(torch.isfinite(W).all()):
        return float("nan")
    s2 = torch.linalg.svdvals(W) ** 2
    total = float(s2.sum())
    if total == 0:
        return float("nan")
    return float(s2[:k].sum()) / total


def singular_fractions(model: MarkovTransformer, k=1) -> dict:
    """top_singular_fraction of every weight matrix of ``model`` (:meth:`MarkovTransformer.weight_matrices`)."""
    return {name: top_singular_fraction(W, k) for name, W in model.weight_matrices().items()}


@torch.no_grad()
def context_coefficient(logits: torch.Tensor, x: torch.Tensor) -> float:
    """The empirical coefficient of x_n in the logit of a binary model: mean logit after a 1 minus mean logit
    after a 0, over the positions of ``x`` (batch, N) with their ``logits`` (batch, N).

    For the canonical model logit_n = c x_n + beta this is exactly c (reference Sec. 3, Lemma 2), so it reads
    where a trained full model ended: c* = log((1-p)(1-q)/(pq)) at the bigram predictor (global minimum,
    prediction = kernel), 0 at the unigram predictor (bad local minimum, prediction = pi1). Unlike the loss
    gap H(pi) - entropy rate, which is second order near p + q = 1, c* is first order there. nan if ``x`` lacks
    one of the two symbols."""
    if logits.shape != x.shape:
        raise ValueError(f"logits and x must have the same shape, got {tuple(logits.shape)} and {tuple(x.shape)}")
    logits = logits.detach().to(torch.float64)
    ones = x == 1
    n1, n0 = int(ones.sum()), int((~ones).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    return float(logits[ones].sum() / n1 - logits[~ones].sum() / n0)


@torch.no_grad()
def canonical_scalars(model: MarkovTransformer, *, check=False, rtol=1e-6) -> CanonicalScalars:
    """Read the canonical scalars (e, w, a, b) of a (near) rank-one binary model (inverse of the canonical
    weights, reference Sec. 3 and Sec. 6).

    alpha and u come from the top singular pair of W_1 = |w| u alpha^T, signed so that u >= 0 (sum u > 0) and
    scaled to ||u|| = 2; then w = alpha^T W_2 u / 4, e = <e_vec, alpha>,
    a = k v / 4 with k = alpha^T W_Q^T W_K alpha and v = alpha^T W_O W_V alpha (0 without attention, nan with
    softmax attention, where a is not defined). If W_1 = 0, alpha = e_vec / ||e_vec|| and w = 0.
    For a trained, only approximately rank-one model these are the projections on the top direction.
    ``check=True`` rebuilds the canonical weights from the scalars and raises ValueError unless they match the
    model to ``rtol`` (relative Frobenius error per matrix).
    """
    if not model.binary:
        raise ValueError("model must be the binary model (n_states=None) to have canonical scalars")
    f64 = {name: prm.detach().to("cpu", torch.float64) for name, prm in model.named_parameters()}
    W1, W2, ev = f64["W_1"], f64["W_2"], f64["embedding"]
    U, S, Vh = torch.linalg.svd(W1)
    if float(S[0]) > 0:
        u1, alpha = U[:, 0], Vh[0]
        if float(u1.sum()) < 0:
            u1, alpha = -u1, -alpha
        u = 2 * u1
        w = float(alpha @ W2 @ u) / 4  # alpha^T (w alpha u^T) u / 4 = w ||u||^2 / 4 = w
    else:
        nrm = float(ev.norm())
        alpha = ev / nrm if nrm > 0 else torch.zeros_like(ev)
        u = torch.full((model.hidden,), 2 / math.sqrt(model.hidden), dtype=torch.float64)
        w = 0.0
    e = float(ev @ alpha)
    if model.attention is None:
        a = 0.0
    elif model.attention == "linear":
        k = float(alpha @ f64["W_Q"].T @ f64["W_K"] @ alpha)
        v = float(alpha @ f64["W_O"] @ f64["W_V"] @ alpha)
        a = k * v / 4
    else:
        a = float("nan")
    b = float(f64["bias"])
    out = CanonicalScalars(e, w, a, b, alpha.numpy(), u.numpy())
    if check:
        ref = MarkovTransformer(model.d, model.max_len, attention=model.attention, hidden=model.hidden)
        if model.attention == "softmax":
            raise ValueError("check=True needs attention None or 'linear'")
        u_pos = u.clamp(min=0)  # a perturbed W_1 can give slightly negative entries: then W_1 will not match
        if float(u_pos.norm()) == 0:
            u_pos = torch.ones_like(u)
        ref.init_weights("canonical", e=e, w=w, a=a, b=b, alpha=alpha.numpy(), u=u_pos.numpy())
        for name, prm in ref.named_parameters():
            if name in ("W_Q", "W_K", "W_V", "W_O"):
                continue  # only their products are canonical
            err = float((prm - f64[name]).norm()) / max(float(f64[name].norm()), 1e-300)
            if err > rtol:
                raise ValueError(f"model is not canonical: {name} differs by relative error {err:.2e} > {rtol}")
    return out


# ------------------------------------------------------------------------------------------------------------
# exact population loss by enumerating every context (added for the chapters on Thms 4, 5 and Lemmas 2, 6)
# ------------------------------------------------------------------------------------------------------------
MAX_ENUMERATION = 2**20  # sequences; 2^20 x length symbols is the most exact_loss will enumerate


def all_sequences(length, n_states=2, device=None) -> torch.Tensor:
    """Every sequence of ``length`` symbols from {0, ..., n_states - 1}, as an int64 tensor of shape
    (n_states^length, length), in lexicographic order (row k is k written in base ``n_states``)."""
    length = _checks.positive_int("length", length)
    n_states = _checks.positive_int("n_states", n_states)
    if n_states < 2:
        raise ValueError(f"n_states must be >= 2, got {n_states}")
    if n_states**length > MAX_ENUMERATION:
        raise ValueError(f"n_states^length = {n_states}^{length} exceeds {MAX_ENUMERATION} sequences")
    k = torch.arange(n_states**length, device=device)
    powers = n_states ** torch.arange(length - 1, -1, -1, device=device)
    return (k[:, None] // powers) % n_states


def sequence_probabilities(chain, x: torch.Tensor) -> torch.Tensor:
    """P(x_1, ..., x_N) = pi(x_1) prod_{n>=2} P(x_n | x_{n-1}) (the chain started from its stationary law,
    reference Sec. 1) for every row of the integer tensor ``x`` (batch, N); float64."""
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError("x must be an integer torch tensor of shape (batch, length)")
    x = x.long()
    P = torch.as_tensor(chain.kernel, dtype=torch.float64, device=x.device)
    pi = torch.as_tensor(chain.stationary, dtype=torch.float64, device=x.device)
    return pi[x[:, 0]] * P[x[:, :-1], x[:, 1:]].prod(dim=1)


def exact_loss(model: MarkovTransformer, chain, length) -> torch.Tensor:
    """The population loss of the reference Sec. 2 at sequence length N = ``length``, computed exactly:

        L_N(theta) = sum_x P(x_1..x_N) (1/(N-1)) sum_{n<N} CE(logit_n(x_1..x_n), x_{n+1}),

    the sum running over all n_states^N sequences (:func:`all_sequences`) with their probabilities under the
    chain started from pi (:func:`sequence_probabilities`). Differentiable: autograd gives the exact gradient of
    the expected loss (no sampling noise), for every parameter of ``model``. ``model.loss`` on a sample is an
    unbiased estimate of it. Needs 2 <= N <= model.max_len + 1 and n_states^N <= MAX_ENUMERATION."""
    length = _checks.positive_int("length", length)
    if length < 2:
        raise ValueError(f"length must be >= 2 (one context and one target), got {length}")
    k = 2 if model.binary else model.n_states
    if chain.n_states != k:
        raise ValueError(f"the chain has {chain.n_states} states but the model predicts {k}")
    x = all_sequences(length, k, device=model.W_1.device)
    weights = sequence_probabilities(chain, x)
    logits = model(x[:, :-1])
    target = x[:, 1:]
    if model.binary:
        per_token = F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype), reduction="none")
    else:
        per_token = F.cross_entropy(logits.transpose(1, 2), target, reduction="none")
    return (weights.to(per_token.dtype) * per_token.mean(dim=1)).sum()
