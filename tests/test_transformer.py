"""The single-layer transformer (reference Sec. 2) and its canonical weights (Sec. 3, Sec. 6)."""
import math

import numpy as np
import pytest
import torch

from markovlib.markov.canonical import coefficient
from markovlib.markov.chain import MarkovChain
from markovlib.markov.energy import SADDLE_ENERGY, energy
from markovlib.transformer.model import (
    MarkovTransformer,
    build_model,
    linear_attention,
    naive_linear_attention,
    naive_softmax_attention,
)
from markovlib.transformer.readout import (
    canonical_logit,
    canonical_scalars,
    context_coefficient,
    optimal_canonical_bias,
    singular_fractions,
    top_singular_fraction,
)

torch.set_num_threads(1)


def random_symbols(batch, length, seed, k=2):
    return torch.randint(0, k, (batch, length), generator=torch.Generator().manual_seed(seed))


def random_alpha(d, seed):
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], size=d) / math.sqrt(d)


# -- canonical weights reproduce the closed form ---------------------------------------------------------------
@pytest.mark.parametrize("d", [2, 8, 13])
@pytest.mark.parametrize("e", [1.3, -0.7])
@pytest.mark.parametrize("w", [-0.9, 0.4])
@pytest.mark.parametrize("a", [0.0, 0.35, -3.0])
def test_canonical_logit_closed_form(d, e, w, a):
    b = 0.25
    model = MarkovTransformer.canonical(e, w, a, b, d=d, max_len=64, alpha=random_alpha(d, d))
    assert model.attention == (None if a == 0 else "linear")
    kappa = e**2 * (1 + a * e**2)
    c = float(coefficient(e, w, a))
    assert c == pytest.approx(kappa * (1 + 2 * w * abs(w)))
    for length, seed in ((1, 0), (7, 1), (64, 2)):
        x = random_symbols(3, length, seed)
        logits, hidden = model(x, return_hidden=True)
        xs = x.double()
        # y_n = e (1 + a e^2)(x_n - 1/2) alpha exactly (reference Sec. 6)
        alpha = torch.as_tensor(canonical_scalars(model).alpha)
        y_ref = (e * (1 + a * e**2) * (xs - 0.5))[..., None] * alpha
        torch.testing.assert_close(hidden["y"], y_ref, atol=1e-9, rtol=0)
        got = logits.detach().numpy()
        np.testing.assert_allclose(got, canonical_logit(x.numpy(), e, w, a, b), atol=1e-6, rtol=0)
        # the reference's formula holds when m = e(1 + a e^2) > 0; otherwise it is off by a constant only
        reference = c * xs.numpy() - kappa / 2 + b
        shift = got - reference
        if e * (1 + a * e**2) > 0:
            np.testing.assert_allclose(shift, 0.0, atol=1e-6)
        else:
            np.testing.assert_allclose(shift, -2 * w * abs(w) * kappa, atol=1e-6)


def test_canonical_sign_cases_cover_both_signs_of_one_plus_ae2():
    assert 1 + 0.35 * 1.3**2 > 0 and 1 - 3.0 * 1.3**2 < 0 and 1 - 3.0 * 0.7**2 < 0


def test_canonical_optimal_bias_reaches_entropy_rate():
    p, q = 0.2, 0.3
    chain = MarkovChain(p, q)
    c_star = math.log((1 - p) * (1 - q) / (p * q))  # reference Sec. 3
    for e, a in ((1.0, 0.0), (-1.2, 0.0), (0.9, 0.5), (1.1, -2.0)):
        w = None
        kappa = e**2 * (1 + a * e**2)
        t = c_star / kappa - 1  # 1 + 2 w|w| = c*/kappa
        w = math.copysign(math.sqrt(abs(t) / 2), t)
        model = MarkovTransformer.canonical(e, w, a, "optimal", d=4, max_len=2, p=p, q=q,
                                            alpha=random_alpha(4, 0))
        logit0, logit1 = (float(v) for v in model(torch.tensor([[0], [1]])).detach()[:, 0])
        # exact expected loss over (x_n, x_{n+1}) ~ (pi, P)
        P, pi = chain.kernel, chain.stationary
        loss = 0.0
        for xn, lg in ((0, logit0), (1, logit1)):
            f1 = 1 / (1 + math.exp(-lg))
            loss -= pi[xn] * (P[xn, 1] * math.log(f1) + P[xn, 0] * math.log(1 - f1))
        assert loss == pytest.approx(chain.entropy_rate, abs=1e-10)
        assert 1 / (1 + math.exp(-logit0)) == pytest.approx(p)  # the prediction is the kernel
        assert 1 / (1 + math.exp(-logit1)) == pytest.approx(1 - q)


def test_optimal_canonical_bias_both_sign_cases():
    p, q = 0.8, 0.3
    for e, w, a in ((1.0, -0.5, 0.0), (-1.0, -0.5, 0.0), (1.2, 0.7, -2.0), (-2 * math.sqrt(2), -16.0, 0.0)):
        b = optimal_canonical_bias(e, w, a, p, q)
        assert np.isfinite(b)
        # at the optimal bias the mean prediction matches the data: E[sigma(logit_n)] = P(x_{n+1} = 1) = pi1
        lg = canonical_logit(np.array([0.0, 1.0]), e, w, a, b)
        pi = MarkovChain(p, q).stationary
        sig = 1 / (1 + np.exp(-lg))
        assert pi @ sig == pytest.approx(pi[1], rel=1e-9)


# -- fast paths against the O(N^2) references -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 37, 5), (3, 64, 8)])
def test_linear_attention_matches_naive(shape):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(3))
    torch.testing.assert_close(linear_attention(q, k, v), naive_linear_attention(q, k, v), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("attention", ["softmax", "linear"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_model_fast_path_matches_reference_impl(attention, dtype):
    tol = dict(atol=1e-10, rtol=1e-10) if dtype == torch.float64 else dict(atol=1e-5, rtol=1e-5)
    fast = MarkovTransformer(8, 128, attention=attention, dtype=dtype).init_weights("standard", std=0.5, seed=3)
    slow = MarkovTransformer(8, 128, attention=attention, dtype=dtype, reference_impl=True)
    slow.load_state_dict(fast.state_dict())
    x = random_symbols(4, 128, 5)
    torch.testing.assert_close(fast(x), slow(x), **tol)
    # gradients too
    fast.loss(x).backward()
    slow.loss(x).backward()
    for (name, pf), (_, ps) in zip(fast.named_parameters(), slow.named_parameters()):
        torch.testing.assert_close(pf.grad, ps.grad, **tol, msg=name)


def test_softmax_attention_functional_matches_sdpa_scale():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 1, 50, 6, generator=g, dtype=torch.float64) for _ in range(3))
    ref = naive_softmax_attention(q, k, v)
    fast = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1 / math.sqrt(6))
    torch.testing.assert_close(fast, ref, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("attention", ["softmax", "linear", None])
@pytest.mark.parametrize("n_states", [None, 3])
def test_causality(attention, n_states):
    model = MarkovTransformer(6, 40, attention=attention, n_states=n_states).init_weights("standard", std=0.7,
                                                                                        seed=2)
    k = 2 if n_states is None else n_states
    x = random_symbols(2, 40, 7, k)
    base = model(x).detach()
    for m in (0, 13, 39):
        x2 = x.clone()
        x2[:, m] = (x2[:, m] + 1) % k
        out = model(x2).detach()
        torch.testing.assert_close(out[:, :m], base[:, :m], atol=1e-12, rtol=0)
        assert not torch.allclose(out[:, m], base[:, m])


# -- K-state variant ------------------------------------------------------------------------------------------
def test_k_state_shapes_and_loss():
    model = build_model("standard", d=5, max_len=20, n_states=4, seed=0)
    assert model.embedding.shape == (4, 5) and model.bias.shape == (4,)
    x = random_symbols(3, 20, 0, k=4)
    assert model(x).shape == (3, 20, 4)
    loss = model.loss(x)
    assert loss.shape == () and abs(float(loss.detach()) - math.log(4)) < 0.2
    assert set(singular_fractions(model)) >= {"W_1", "W_2", "embedding"}
    with pytest.raises(ValueError, match="binary"):
        model.init_weights("rank_one")


def test_binary_shapes_and_loss_near_log2():
    model = build_model("standard", d=8, max_len=33, seed=0)
    x = random_symbols(5, 33, 1)
    assert model(x).shape == (5, 33)
    assert float(model.loss(x).detach()) == pytest.approx(math.log(2), abs=0.05)


# -- initializations and diagnostics ---------------------------------------------------------------------------
def test_top_singular_fraction():
    assert top_singular_fraction(torch.outer(torch.arange(1.0, 4), torch.ones(5))) == pytest.approx(1.0)
    assert top_singular_fraction(torch.eye(4)) == pytest.approx(0.25)
    assert top_singular_fraction(torch.eye(4), k=3) == pytest.approx(0.75)
    assert math.isnan(top_singular_fraction(torch.zeros(3, 3)))
    with pytest.raises(ValueError, match="k"):
        top_singular_fraction(torch.eye(3), k=0)


@pytest.mark.parametrize("attention", ["softmax", "linear"])
def test_rank_one_init_is_rank_one(attention):
    model = MarkovTransformer(8, 16, attention=attention).init_weights("rank_one", std=0.1, seed=4)
    fr = singular_fractions(model)
    assert set(fr) == {"W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional"}
    for name, f in fr.items():
        assert f == pytest.approx(1.0, abs=1e-12), name
    alpha = canonical_scalars(model).alpha
    assert np.allclose(np.abs(alpha), 1 / math.sqrt(8))


@pytest.mark.parametrize("seed", range(4))
def test_canonical_scalars_round_trip(seed):
    rng = np.random.default_rng(seed)
    e, w, a, b = rng.normal(size=4)
    d = int(rng.integers(2, 10))
    u = rng.random(4 * d)
    model = MarkovTransformer.canonical(e, w, a, b, d=d, max_len=8, alpha=rng.normal(size=d), u=u)
    got = canonical_scalars(model, check=True)
    assert (got.e, got.w, got.a, got.b) == pytest.approx((e, w, a, b), rel=1e-9, abs=1e-12)
    assert np.all(got.u >= 0) and np.linalg.norm(got.u) == pytest.approx(2.0)
    # a perturbed model is caught by check=True
    with torch.no_grad():
        model.W_1.add_(1e-3 * torch.randn_like(model.W_1))
    with pytest.raises(ValueError, match="not canonical"):
        canonical_scalars(model, check=True)


def test_guideline_inits():
    model = MarkovTransformer.guideline(8, 16, seed=0)
    s = canonical_scalars(model)
    assert (s.e, s.w) == pytest.approx((1.0, -1.0))
    assert s.w < 0 and float(energy(s.e, s.w)) > SADDLE_ENERGY
    authors = MarkovTransformer.public_constants_scalar(8, 16, seed=0)
    assert torch.all(authors.embedding == -1) and torch.all(authors.positional == 0.5)
    assert torch.all(authors.W_1 == 2) and torch.all(authors.W_2 == -2)
    s = canonical_scalars(authors)
    assert (s.e, s.w) == pytest.approx((-2 * math.sqrt(2), -16.0))
    assert float(coefficient(s.e, s.w)) == pytest.approx(-4088.0)
    # not in the data-agnostic region {w < 0, E > E_sad}: global only for p + q > 1 (Thm 2 vs Thm 8)
    assert float(energy(s.e, s.w)) == pytest.approx(8 - 256 + math.log(16)) and float(energy(s.e, s.w)) < SADDLE_ENERGY
    x = random_symbols(1, 16, 0)
    np.testing.assert_allclose(MarkovTransformer(8, 16, attention=None).init_weights(
        "public_constants_scalar", seed=0)(x).detach().numpy(), canonical_logit(x.numpy(), s.e, s.w), atol=1e-8)
    with pytest.raises(ValueError, match="E_sad"):
        MarkovTransformer.guideline(8, 16, e=0.0, w=-0.2)


def test_standard_init_statistics_and_seed():
    m1 = MarkovTransformer.standard(8, 512, std=0.3, seed=11)
    m2 = MarkovTransformer.standard(8, 512, std=0.3, seed=11)
    for (n, a), (_, b) in zip(m1.named_parameters(), m2.named_parameters()):
        assert torch.equal(a, b), n
    assert float(m1.positional.detach().std()) == pytest.approx(0.3, rel=0.05)
    assert float(m1.bias.detach()) == 0.0


# -- bad arguments ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, name", [
    (dict(d=0), "d"), (dict(max_len=-1), "max_len"), (dict(attention="cosine"), "attention"),
    (dict(n_states=1), "n_states"), (dict(hidden=0), "hidden"), (dict(dtype=torch.int64), "dtype"),
    (dict(n_states=3, tied=0), "tied"), (dict(tied=False), "tied"),
])
def test_bad_constructor_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MarkovTransformer(**kwargs)


def test_bad_init_and_input_arguments():
    model = MarkovTransformer(4, 8)
    with pytest.raises(ValueError, match="scheme"):
        model.init_weights("xavier")
    with pytest.raises(ValueError, match="std"):
        model.init_weights("standard", std=0.0)
    with pytest.raises(ValueError, match="attention='linear'"):
        model.init_weights("canonical", e=1.0, w=-1.0, a=0.5)
    with pytest.raises(ValueError, match="e and w"):
        model.init_weights("canonical", e=1.0)
    with pytest.raises(ValueError, match="alpha"):
        model.init_weights("canonical", e=1.0, w=1.0, alpha=[1.0, 0.0])
    with pytest.raises(ValueError, match="u must"):
        model.init_weights("canonical", e=1.0, w=1.0, u=-np.ones(16))
    with pytest.raises(ValueError, match="p and q"):
        MarkovTransformer(4, 8, attention=None).init_weights("canonical", e=1.0, w=1.0, b="optimal")
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="x must"):
        model(torch.zeros(9))
    with pytest.raises(ValueError, match="init"):
        build_model("nope")
    with pytest.raises(ValueError, match="p must"):
        optimal_canonical_bias(1.0, 1.0, 0.0, 1.5, 0.3)


def test_context_coefficient_reads_c_of_the_canonical_model():
    for e, w, a in ((1.3, -0.9, 0.0), (-0.7, 0.4, 0.35), (1.3, 0.4, -3.0)):
        model = MarkovTransformer.canonical(e, w, a, 0.3, d=6, max_len=40, alpha=random_alpha(6, 1))
        x = random_symbols(4, 40, 3)
        c = context_coefficient(model(x), x)
        assert c == pytest.approx(float(coefficient(e, w, a)), rel=1e-9, abs=1e-9)
    assert math.isnan(context_coefficient(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long)))
    with pytest.raises(ValueError, match="shape"):
        context_coefficient(torch.zeros(2, 3), torch.zeros(2, 4, dtype=torch.long))
