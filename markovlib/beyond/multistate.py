"""K-state and lag-k chains for the single-layer transformer: closed-form yardsticks, the zero-embedding critical
set and its Hessian, the conservation laws of the full model; the K-state inits and training loop live in
:mod:`markovlib.beyond.kstate_training` (``init_kstate``, ``train_kstate``).

The reference (Sec. 5.3) leaves multi-state and higher-order chains open; everything here is derived in the
chapter ``book/beyond_two_states.ipynb`` and checked there and in ``tests/test_multistate.py``.

Symmetric K-state family (the authors' code): P = (1 - p) on the diagonal, p / (K - 1) elsewhere, 0 < p < 1.
Then pi is uniform, H(pi) = log K (the unigram loss), the entropy rate is h(p) + p log(K - 1) (the bigram loss),
and P = lambda I + (1 - lambda) 11^T / K with lambda = 1 - K p / (K - 1), the eigenvalue of P on the centred
vectors (multiplicity K - 1). lambda = 0 (p = (K - 1)/K, identical rows) is the analogue of p + q = 1.

Zero-embedding critical set (any K, any chain started from pi): at E = 0 with softmax(b) = pi the logits do not
depend on the context, every gradient vanishes and the loss is H(pi). Along E = t E0 (b fixed) the second
derivative at t = 0 is (chapter, eq. beyond-hessian)

    Q(E0) = 1/(N-1) sum_{n<N} [ (E0 z0_n)^T S (E0 z0_n) - 2 sum_{i<=n} tr(E0 J_{n,i} E0^T C_{n+1-i}) ],

S = diag(pi) - pi pi^T, z0_n the residual stream of the positional embeddings alone, J_{n,i} = dz_n / dh_i
there, C_m[k, j] = P(x_i = k, x_{i+m} = j) - pi_k pi_j = pi_k (P^m - 1 pi^T)_{kj}.

Lag-k switching chain: x_1..x_k i.i.d. uniform, then x_n = x_{n-k} with probability 1 - p and otherwise one of
the other K - 1 states uniformly. Each residue class mod k is a symmetric chain, so the entropy rate is
h(p) + p log(K - 1), while any predictor that sees only x_{n-j+1..n} with j < k has the loss log K.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..markov.chain import MarkovChain, binary_entropy, entropy
from ..numerics import checks


# ------------------------------------------------------------------------------------------------------------
# the symmetric family and its closed forms
# ------------------------------------------------------------------------------------------------------------
def n_states_of(n_states):
    """The number of states as an int, checked to be an integer >= 2 (ValueError naming ``n_states`` otherwise)."""
    k = checks.positive_int("n_states", n_states)
    if k < 2:
        raise ValueError(f"n_states must be an integer >= 2, got {n_states!r}")
    return k


def symmetric_kernel(n_states, p) -> np.ndarray:
    """P with 1 - p on the diagonal and p / (K - 1) elsewhere (K = ``n_states`` >= 2, 0 < p < 1)."""
    k = n_states_of(n_states)
    p = checks.probability("p", p)
    P = np.full((k, k), p / (k - 1))
    np.fill_diagonal(P, 1.0 - p)
    return P


class SymmetricChain(MarkovChain):
    """The symmetric K-state chain as a :class:`MarkovChain` whose stationary law is the closed form: uniform
    (P is doubly stochastic and irreducible for 0 < p < 1), exact where ``MarkovChain.from_kernel`` solves a
    linear system for it."""

    def __init__(self, n_states, p):  # noqa: D107 (no call to MarkovChain.__init__: that is the binary chain)
        self.kernel = symmetric_kernel(n_states, p)
        self.n_states = self.kernel.shape[0]
        self.p = self.q = None
        self.switch = float(p)

    def _stationary_general(self) -> np.ndarray:
        return np.full(self.n_states, 1.0 / self.n_states)

    def __repr__(self):
        return f"SymmetricChain(n_states={self.n_states}, p={self.switch:g})"


def symmetric_chain(n_states, p) -> MarkovChain:
    """The symmetric K-state chain (:class:`SymmetricChain`, a :class:`MarkovChain` with the kernel
    :func:`symmetric_kernel` and the uniform stationary law)."""
    return SymmetricChain(n_states, p)


def symmetric_entropy_rate(n_states, p) -> float:
    """h(p) + p log(K - 1) nats: the bigram loss of the symmetric chain (each row has entropy h(p) + p log(K-1))."""
    k = n_states_of(n_states)
    p = checks.probability("p", p)
    return float(binary_entropy(p) + p * math.log(k - 1))


def symmetric_marginal_entropy(n_states) -> float:
    """log K nats: pi is uniform (P is doubly stochastic), so the unigram loss is H(pi) = log K."""
    return math.log(n_states_of(n_states))


def symmetric_eigenvalue(n_states, p) -> float:
    """lambda = 1 - K p / (K - 1): P = lambda I + (1 - lambda) 11^T / K; the sign decides the side of p*."""
    k = n_states_of(n_states)
    p = checks.probability("p", p)
    return 1.0 - k * p / (k - 1)


def iid_point(n_states) -> float:
    """p* = (K - 1) / K, where lambda = 0: every row of P is uniform, unigram and bigram predictors coincide."""
    k = n_states_of(n_states)
    return (k - 1) / k


def lumped_loss(n_states, p, resolved) -> float:
    """L_m: the loss of the best predictor that knows x_n when it is one of m = ``resolved`` given states and
    only "one of the other K - m" otherwise (symmetric chain). Resolved: the row entropy h(p) + p log(K - 1);
    lumped: the next state is a resolved one with probability p / (K - 1) each and a lumped one with
    beta = (1 - p + (K - m - 1) p / (K - 1)) / (K - m) each. L_m = (m/K) rate + ((K - m)/K) H_lumped, from
    L_0 = log K (unigram) down to L_{K-1} = the entropy rate (bigram)."""
    k = n_states_of(n_states)
    p = checks.probability("p", p)
    m = checks.nonnegative_int("resolved", resolved)
    if m > k - 1:
        raise ValueError(f"resolved must be an integer in [0, K - 1 = {k - 1}], got {resolved!r}")
    off = p / (k - 1)
    beta = (1 - p + (k - m - 1) * off) / (k - m)
    h_lumped = float(entropy(np.array([off] * m + [beta] * (k - m))))
    return (m / k) * symmetric_entropy_rate(k, p) + ((k - m) / k) * h_lumped


def lagged_covariance(chain, lag) -> np.ndarray:
    """C_m[k, j] = P(x_i = k, x_{i+m} = j) - pi_k pi_j for the stationary chain, m = ``lag`` >= 0."""
    m = checks.nonnegative_int("lag", lag)
    pi = chain.stationary
    Pm = np.linalg.matrix_power(chain.kernel, m)
    return pi[:, None] * (Pm - pi[None, :])


# ------------------------------------------------------------------------------------------------------------
# the zero-embedding critical set
# ------------------------------------------------------------------------------------------------------------
def block(model, h0: torch.Tensor, params=None) -> torch.Tensor:
    """z = y + W_2 ReLU(W_1 y), y = h0 + W_O attend(h0): the layer of the model on a residual stream h0, with
    the weights ``params`` (by parameter name; default the model's own)."""
    from ..transformer.model import naive_linear_attention, naive_softmax_attention

    P = params if params is not None else dict(model.named_parameters())
    y = h0
    if model.attention is not None:
        q, k, v = h0 @ P["W_Q"].T, h0 @ P["W_K"].T, h0 @ P["W_V"].T
        att = naive_softmax_attention if model.attention == "softmax" else naive_linear_attention
        y = h0 + att(q, k, v) @ P["W_O"].T
    return y + F.relu(y @ P["W_1"].T) @ P["W_2"].T


def zero_embedding_model(chain, *, d, max_len, std, seed, attention="softmax"):
    """A K-state model (float64, reference attention) with standard weights of scale ``std`` (``seed``) moved onto
    the zero-embedding critical set: E = 0 and softmax(b) = pi (chapter beyond-prop-critical)."""
    from ..transformer.model import MarkovTransformer
    model = MarkovTransformer(checks.positive_int("d", d), checks.positive_int("max_len", max_len),
                              n_states=chain.n_states, attention=attention, reference_impl=True)
    model.init_weights("standard", std=checks.positive_real("std", std), seed=checks.nonnegative_int("seed", seed))
    with torch.no_grad():
        model.embedding.zero_()
        model.bias.copy_(torch.log(torch.as_tensor(chain.stationary)))
    return model


def zero_embedding_hessian(model, chain, length, E0) -> float:
    """Q(E0), the second derivative of the population loss at sequence length N = ``length`` along E = t E0 at
    t = 0 with softmax(b) = pi (module docstring; chapter eq. beyond-hessian). Needs ``model.n_states`` equal
    to the chain's, 2 <= N <= max_len + 1. float64."""
    length = checks.positive_int("length", length)
    if length < 2 or length - 1 > model.max_len:
        raise ValueError(f"length must be in [2, max_len + 1 = {model.max_len + 1}], got {length}")
    k = model.n_states
    if model.binary or not model.tied or chain.n_states != k:
        raise ValueError("model must be the tied K-state model with as many states as the chain")
    E0 = np.asarray(checks.finite_array("E0", E0), dtype=float)
    if E0.shape != (k, model.d):
        raise ValueError(f"E0 must have shape ({k}, {model.d}), got {E0.shape}")
    n = length - 1
    params = {name: prm.detach().double() for name, prm in model.named_parameters()}
    pos = params["positional"][:n]

    def fn(h0):
        return block(model, h0, params)

    z0 = fn(pos).detach().numpy()
    J = torch.autograd.functional.jacobian(fn, pos).numpy()  # (n, d, n, d): J[n, :, i, :] = dz_n / dh_i
    pi = chain.stationary
    S = np.diag(pi) - np.outer(pi, pi)
    C = [lagged_covariance(chain, m) for m in range(n + 1)]
    E = E0
    total = 0.0
    for t in range(n):
        v = E @ z0[t]
        total += v @ S @ v
        for i in range(t + 1):
            M = E @ J[t, :, i, :] @ E.T
            total -= 2.0 * np.trace(M @ C[t + 1 - i])
    return float(total / n)


# ------------------------------------------------------------------------------------------------------------
# conservation laws of the full model (any K)
# ------------------------------------------------------------------------------------------------------------
def conserved_quantities(model) -> dict:
    """The quantities gradient flow conserves by the model's rescaling symmetries: the neuron balances
    c_k = |W_1[k, :]|^2 - |W_2[:, k]|^2 (ReLU homogeneity), and, with attention, W_Q W_Q^T - W_K W_K^T
    (W_Q -> G W_Q, W_K -> G^{-T} W_K) and W_V W_V^T - W_O^T W_O (W_V -> G W_V, W_O -> W_O G^{-1}). numpy."""
    W1, W2 = model.W_1.detach().double(), model.W_2.detach().double()
    out = {"neuron_balance": ((W1**2).sum(1) - (W2**2).sum(0)).numpy()}
    if model.attention is not None:
        Wq, Wk, Wv, Wo = (getattr(model, n).detach().double() for n in ("W_Q", "W_K", "W_V", "W_O"))
        out["query_key"] = (Wq @ Wq.T - Wk @ Wk.T).numpy()
        out["value_output"] = (Wv @ Wv.T - Wo.T @ Wo).numpy()
    return out


def conservation_rates(model, grads: dict) -> dict:
    """d/dt of :func:`conserved_quantities` along gradient flow theta' = -grad, given the gradients by
    parameter name (e.g. from autograd); zero in exact arithmetic. Also ``embedding_norm`` (d/dt |E|^2), which
    is not conserved: the tied embedding has no rescaling symmetry."""
    P = {n: p.detach().double() for n, p in model.named_parameters()}
    G = {n: torch.as_tensor(grads[n]).double() for n in P}
    out = {"neuron_balance": (-2 * (P["W_1"] * G["W_1"]).sum(1) + 2 * (P["W_2"] * G["W_2"]).sum(0)).numpy()}
    if model.attention is not None:
        def dgram(W, g, left=True):
            return -(g @ W.T + W @ g.T) if left else -(W.T @ g + g.T @ W)
        out["query_key"] = (dgram(P["W_Q"], G["W_Q"]) - dgram(P["W_K"], G["W_K"])).numpy()
        out["value_output"] = (dgram(P["W_V"], G["W_V"]) - dgram(P["W_O"], G["W_O"], left=False)).numpy()
    out["embedding_norm"] = float(-2 * (P["embedding"] * G["embedding"]).sum())
    return out


# ------------------------------------------------------------------------------------------------------------
# lag-k switching chains
# ------------------------------------------------------------------------------------------------------------
def lag_switching_sample(n_states, p, lag, batch, length, seed) -> torch.Tensor:
    """(batch, length) int64 samples of the lag-k switching chain (module docstring), k = ``lag`` >= 1, from a
    torch.Generator seeded with ``seed``."""
    k = n_states_of(n_states)
    p = checks.probability("p", p)
    lag = checks.positive_int("lag", lag)
    batch = checks.positive_int("batch", batch)
    length = checks.positive_int("length", length)
    gen = torch.Generator().manual_seed(checks.nonnegative_int("seed", seed))
    x = torch.empty(batch, length, dtype=torch.long)
    x[:, :min(lag, length)] = torch.randint(0, k, (batch, min(lag, length)), generator=gen)
    if length > lag:
        switch = torch.rand(batch, length - lag, generator=gen, dtype=torch.float64) < p
        shift = torch.randint(1, k, (batch, length - lag), generator=gen) * switch
        for n in range(lag, length):
            x[:, n] = (x[:, n - lag] + shift[:, n - lag]) % k
    return x


def lag_switching_yardsticks(n_states, p, lag) -> dict:
    """Closed forms for the lag-k chain: entropy rate h(p) + p log(K-1) (loss of the predictor seeing
    x_{n+1-k}), unigram log K, and the order-1 (bigram) loss: the entropy rate for k = 1, log K for k >= 2
    (x_n and x_{n+1} lie in different, independent residue classes)."""
    k = n_states_of(n_states)
    lag = checks.positive_int("lag", lag)
    rate = symmetric_entropy_rate(k, p)
    return {"entropy_rate": rate, "unigram": math.log(k), "bigram": rate if lag == 1 else math.log(k)}


# ------------------------------------------------------------------------------------------------------------
# samplers for the K-state training loop (markovlib.beyond.kstate_training.train_kstate)
# ------------------------------------------------------------------------------------------------------------
def symmetric_sampler(n_states, p):
    """A sampler for :func:`markovlib.beyond.kstate_training.train_kstate`: (batch, length, seed) -> samples of the
    symmetric chain (torch)."""
    chain = symmetric_chain(n_states, p)
    return lambda batch, length, seed: chain.sample(batch, length, seed=seed, backend="torch")
