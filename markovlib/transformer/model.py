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
logits_n = E z_n + b (K biases); with ``tied=False`` a separate unembedding matrix U (K x d), logits_n = U z_n + b.

Initializations (``MarkovTransformer.init_weights`` / the classmethods): ``"standard"``, ``"rank_one"``,
``"guideline"``, ``"public_constants_scalar"``, ``"canonical"``, and the authors' 2-token inits
``"authors_submission"`` and ``"authors_public"``, in :mod:`markovlib.transformer.inits`. Read-outs and
closed forms of the canonical model: :mod:`markovlib.transformer.readout`; the exact population loss:
:mod:`markovlib.transformer.exact`.

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

import torch
import torch.nn.functional as F
from torch import nn

from ..numerics import checks
from .inits import canonical_scheme, initialize, random_alpha

ATTENTIONS = ("softmax", "linear", None)


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
# the model
# ------------------------------------------------------------------------------------------------------------
class MarkovTransformer(nn.Module):
    """Single-layer, single-head, weight-tied transformer of the reference Sec. 2 (see the module docstring).

    Parameters
    ----------
    d : embedding dimension (paper: 8).
    max_len : number of positional embeddings p_1..p_max_len; inputs may not be longer.
    attention : ``"softmax"`` (Sec. 2), ``"linear"`` (Sec. 6) or ``None`` (off).
    n_states : ``None`` for the binary model with one logit (embedding x e); an int K >= 2 for the K-state
        variant (embedding matrix E, K x d, tied softmax head E z + b).
    tied : K-state model only: ``False`` adds a separate unembedding matrix U (parameter ``unembedding``, K x d,
        registered last) and the head U z + b; ``True`` (default) has no such parameter.
    hidden : width r of the feed-forward layer, default 4d.
    reference_impl : compute the attention with the O(N^2) reference (:func:`naive_softmax_attention`,
        :func:`naive_linear_attention`) instead of the fast path; for tests and the benchmark baseline.
    dtype, device : of the parameters (float64 by default, for theory checks; the Trainer uses float32).

    Weights are zero after construction; call :meth:`init_weights` or use a classmethod
    (:meth:`standard`, :meth:`canonical`, ...).
    """

    def __init__(self, d=8, max_len=1024, *, attention="softmax", n_states=None, hidden=None,
                 reference_impl=False, dtype=torch.float64, device=None, tied=True):
        super().__init__()
        self.d = checks.positive_int("d", d)
        self.max_len = checks.positive_int("max_len", max_len)
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be 'softmax', 'linear' or None, got {attention!r}")
        self.attention = attention
        if n_states is not None:
            n_states = checks.positive_int("n_states", n_states)
            if n_states < 2:
                raise ValueError(f"n_states must be None (binary, one logit) or an integer >= 2, got {n_states!r}")
        self.n_states = n_states
        if not isinstance(tied, bool):
            raise ValueError(f"tied must be True or False, got {tied!r}")
        if not tied and n_states is None:
            raise ValueError("tied=False needs the K-state model (n_states=K); the binary model is always tied")
        self.tied = tied
        self.hidden = checks.positive_int("hidden", hidden) if hidden is not None else 4 * self.d
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
        if not self.tied:  # registered last: the other parameters keep their order (and their seeded draws)
            self.unembedding = nn.Parameter(torch.zeros(n_states, d, **kw))  # U

    @property
    def binary(self) -> bool:
        return self.n_states is None

    def extra_repr(self):
        return (f"d={self.d}, max_len={self.max_len}, attention={self.attention!r}, "
                f"n_states={self.n_states}, hidden={self.hidden}" + ("" if self.tied else ", tied=False"))

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
            logits = z @ (self.embedding if self.tied else self.unembedding).T + self.bias
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
        """Initialize in place and return ``self``: ``scheme`` one of :data:`INITS`, documented in
        :func:`markovlib.transformer.inits.initialize`. Without
        ``seed`` or ``generator`` the draw is from OS entropy (torch's global generator is not touched)."""
        return initialize(self, scheme, std=std, seed=seed, generator=generator, e=e, w=w, a=a, b=b, alpha=alpha,
                          u=u, p=p, q=q)

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
    def public_constants_scalar(cls, d=8, max_len=1024, *, std=0.02, seed=None, **kw):
        """The later public code's constants in the scalar-input model ((e, w) = (-sqrt d, -2d); not the
        authors' 2-token model: see :mod:`markovlib.transformer.two_token`)."""
        return cls(d, max_len, **kw).init_weights("public_constants_scalar", std=std, seed=seed)

    guideline_authors = public_constants_scalar  # old, misleading name

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
    init = canonical_scheme(init, "init")
    model = MarkovTransformer(d, max_len, attention=attention, n_states=n_states, dtype=dtype, device=device)
    return model.init_weights(init, std=std, seed=seed, **init_kw)


def canonical_full_model(e, w, b, *, d=8, max_len=1024, seed=0, attention="softmax") -> "MarkovTransformer":
    """The full model of reference Sec. 2 (softmax attention by default) loaded with the canonical weights of
    scalars (e, w), attention scalar a = 0 (its W_Q, W_K, W_V, W_O are zero) and bias ``b``, on the direction
    :func:`random_alpha` (d, seed). float64."""
    return MarkovTransformer(d, max_len, attention=attention).init_weights(
        "canonical", e=e, w=w, b=b, alpha=random_alpha(d, seed), seed=seed)
