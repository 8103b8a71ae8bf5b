import math

import numpy as np
import pytest
import torch

from markovlib.beyond import kstate_training, multistate
from markovlib.markov.chain import MarkovChain, entropy
from markovlib.transformer.exact import exact_loss
from markovlib.transformer.model import MarkovTransformer


def loss_along(model, chain, length, E0, t):
    """The exact population loss with the embedding replaced by t E0 (autograd flows into t)."""
    saved = model.embedding
    del model.embedding
    model.embedding = t * E0
    try:
        return exact_loss(model, chain, length)
    finally:
        del model.embedding
        model.embedding = saved


def random_chain(k, seed):
    rng = np.random.default_rng(seed)
    P = rng.random((k, k)) + 0.2
    return MarkovChain.from_kernel(P / P.sum(1, keepdims=True))


@pytest.mark.parametrize("k", [3, 5, 10])
@pytest.mark.parametrize("p", [0.05, 0.3, 0.7, 0.95])
def test_symmetric_closed_forms(k, p):
    chain = multistate.symmetric_chain(k, p)
    assert np.allclose(chain.stationary, 1 / k, atol=1e-12)
    assert math.isclose(multistate.symmetric_entropy_rate(k, p), chain.entropy_rate, abs_tol=1e-12)
    assert math.isclose(multistate.symmetric_marginal_entropy(k), chain.marginal_entropy, abs_tol=1e-12)
    # eigenvalues of P: 1 once and lambda (K - 1) times
    ev = np.sort(np.linalg.eigvalsh(multistate.symmetric_kernel(k, p)))
    lam = multistate.symmetric_eigenvalue(k, p)
    assert np.allclose(ev[:-1], lam, atol=1e-12) and math.isclose(ev[-1], 1.0, abs_tol=1e-12)
    # C_m = lambda^m (I - 11^T/K) / K
    proj = np.eye(k) - np.ones((k, k)) / k
    for m in range(4):
        assert np.allclose(multistate.lagged_covariance(chain, m), lam**m * proj / k, atol=1e-12)


@pytest.mark.parametrize("k", [3, 5, 10])
def test_iid_point(k):
    p = multistate.iid_point(k)
    assert abs(multistate.symmetric_eigenvalue(k, p)) < 1e-12
    assert np.allclose(multistate.symmetric_kernel(k, p), 1 / k)
    assert math.isclose(multistate.symmetric_entropy_rate(k, p), math.log(k), abs_tol=1e-12)


def test_lagged_covariance_monte_carlo():
    chain = random_chain(3, 0)
    x = chain.sample(4000, 40, seed=2)
    for m in (1, 2):
        a, b = x[:, 10].astype(int), x[:, 10 + m].astype(int)
        joint = np.zeros((3, 3))
        np.add.at(joint, (a, b), 1)
        joint /= joint.sum()
        emp = joint - np.outer(joint.sum(1), joint.sum(0))
        assert np.abs(emp - multistate.lagged_covariance(chain, m)).max() < 0.02  # ~5 standard errors at 4000 samples


@pytest.mark.parametrize("attention", ["softmax", "linear", None])
def test_zero_embedding_critical_and_hessian(attention):
    chain = random_chain(3, 1)
    model = multistate.zero_embedding_model(chain, d=4, max_len=6, std=0.5, seed=3, attention=attention)
    assert float(model.embedding.detach().abs().max()) == 0.0 and model.attention == attention
    assert np.allclose(torch.softmax(model.bias.detach(), 0).numpy(), chain.stationary, atol=1e-15)
    loss = exact_loss(model, chain, 5)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    assert abs(float(loss.detach()) - chain.marginal_entropy) < 1e-12
    assert max(float(g.abs().max()) for g in grads) < 1e-12
    E0 = torch.as_tensor(np.random.default_rng(4).standard_normal((3, 4)))
    t = torch.zeros((), dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(loss_along(model, chain, 5, E0, t), t, create_graph=True)
    (h,) = torch.autograd.grad(g, t)
    q = multistate.zero_embedding_hessian(model, chain, 5, E0.numpy())
    assert abs(float(h) - q) < 1e-9 * max(1.0, abs(q))


def test_hessian_zero_positional_closed_form():
    # attention off, zero positional and feed-forward weights: J = I, z0 = 0, Q = -(2 lambda / K) |Pi E0|^2
    k, p = 4, 0.2
    chain = multistate.symmetric_chain(k, p)
    model = MarkovTransformer(5, 8, n_states=k, attention=None)
    E0 = np.random.default_rng(0).standard_normal((k, 5))
    proj = np.eye(k) - np.ones((k, k)) / k
    expected = -2 * multistate.symmetric_eigenvalue(k, p) / k * np.sum((proj @ E0) ** 2)
    assert math.isclose(multistate.zero_embedding_hessian(model, chain, 6, E0), expected, rel_tol=1e-12)


def test_conservation_rates_vanish():
    chain = random_chain(3, 5)
    model = MarkovTransformer(4, 5, n_states=3, attention="softmax", reference_impl=True)
    model.init_weights("standard", std=0.7, seed=1)
    loss = exact_loss(model, chain, 4)
    names = [n for n, _ in model.named_parameters()]
    grads = dict(zip(names, torch.autograd.grad(loss, list(model.parameters()))))
    rates = multistate.conservation_rates(model, grads)
    for key in ("neuron_balance", "query_key", "value_output"):
        assert np.abs(rates[key]).max() < 1e-12, key
    assert abs(rates["embedding_norm"]) > 1e-4  # not conserved
    q = multistate.conserved_quantities(model)
    assert q["neuron_balance"].shape == (16,) and q["query_key"].shape == (4, 4)


def test_conserved_under_small_gradient_steps():
    chain = random_chain(3, 6)
    model = MarkovTransformer(4, 5, n_states=3, attention=None)
    model.init_weights("standard", std=0.7, seed=2)
    c0 = multistate.conserved_quantities(model)["neuron_balance"]
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    for _ in range(20):
        opt.zero_grad()
        exact_loss(model, chain, 4).backward()
        opt.step()
    drift = np.abs(multistate.conserved_quantities(model)["neuron_balance"] - c0).max()
    assert drift < 1e-6  # O(lr^2) per step


def test_lag_switching_chain():
    k, p, lag = 3, 0.2, 3
    x = multistate.lag_switching_sample(k, p, lag, 3000, 30, seed=0).numpy()
    assert x.min() >= 0 and x.max() < k
    switched = (x[:, lag:] != x[:, :-lag]).mean()
    assert abs(switched - p) < 0.01
    # x_{n+1} is independent of x_n (lag >= 2): the empirical conditional entropy is log K
    a, b = x[:, 10], x[:, 11]
    joint = np.zeros((k, k))
    np.add.at(joint, (a, b), 1)
    joint /= joint.sum()
    cond = entropy(joint.ravel()) - entropy(joint.sum(1))
    assert abs(cond - math.log(k)) < 0.01
    y = multistate.lag_switching_yardsticks(k, p, lag)
    assert y["bigram"] == y["unigram"] == math.log(k)
    assert multistate.lag_switching_yardsticks(k, p, 1)["bigram"] == y["entropy_rate"]
    assert torch.equal(multistate.lag_switching_sample(k, p, lag, 4, 9, seed=1),
                       multistate.lag_switching_sample(k, p, lag, 4, 9, 1))


def test_init_kstate_and_training_deterministic():
    model = MarkovTransformer(8, 16, n_states=3)
    kstate_training.init_kstate(model, "guideline_like", seed=0)
    assert torch.equal(model.W_2, -model.W_1.T)
    assert float(model.bias.detach().abs().max()) == 0.0
    k, p = 3, 0.1
    kw = dict(init="standard", seed=1, length=16, batch=8, steps=6, eval_batch=16, eval_every=3)
    args = (multistate.symmetric_sampler(k, p), k, multistate.symmetric_entropy_rate(k, p), math.log(k))
    r1 = kstate_training.train_kstate(*args, **kw)
    r2 = kstate_training.train_kstate(*args, **kw)
    assert r1["history"] == r2["history"] and [s for s, _ in r1["history"]] == [0, 3, 6]
    assert abs(r1["history"][0][1] - math.log(k)) < 0.05  # near-zero init predicts uniformly


def _tiny(**kw):
    k, p = 3, 0.1
    kw = dict(dict(init="standard", seed=1, length=16, batch=8, steps=6, eval_batch=16, eval_every=3), **kw)
    return kstate_training.train_kstate(multistate.symmetric_sampler(k, p), k, multistate.symmetric_entropy_rate(k, p),
                                        math.log(k), **kw)


@pytest.mark.parametrize("kw, name", [(dict(optimizer="SGD"), "optimizer"), (dict(optimizer="adamw"), "optimizer"),
                                      (dict(optimizer=None), "optimizer"), (dict(tied=1), "tied"),
                                      (dict(tied="False"), "tied"), (dict(tied=None), "tied")])
def test_train_kstate_bad_optimizer_or_tied(kw, name):
    with pytest.raises(ValueError, match=name):
        _tiny(**kw)


def test_train_kstate_defaults_are_adam_tied():
    r0, r1 = _tiny(), _tiny(optimizer="adam", tied=True)
    assert r0["history"] == r1["history"]
    for (n0, p0), (n1, p1) in zip(r0["model"].named_parameters(), r1["model"].named_parameters(), strict=True):
        assert n0 == n1 and torch.equal(p0, p1)
    assert not hasattr(r0["model"], "unembedding")


@pytest.mark.parametrize("tied", [True, False])
def test_train_kstate_sgd_step_is_minus_lr_grad(tied):
    k, p, lr, seed, length = 3, 0.1, 0.3, 2, 16
    calls = []

    def sampler(b, n, s):
        x = multistate.symmetric_sampler(k, p)(b, n, s)
        calls.append(x)
        return x
    r = kstate_training.train_kstate(sampler, k, multistate.symmetric_entropy_rate(k, p), math.log(k),
                                     init="guideline_like", seed=seed, length=length, batch=8, steps=1, eval_batch=16,
                                     eval_every=1, lr=lr, optimizer="sgd", tied=tied)
    assert [x.shape[0] for x in calls] == [16, 8]  # the held-out batch, then the one training batch
    ref = MarkovTransformer(8, length, n_states=k, dtype=torch.float32, tied=tied)
    kstate_training.init_kstate(ref, "guideline_like", seed)
    names = [n for n, _ in ref.named_parameters()]
    grads = torch.autograd.grad(ref.loss(calls[1]), list(ref.parameters()))
    trained = dict(r["model"].named_parameters())
    assert sorted(trained) == sorted(names)
    for name, prm, g in zip(names, ref.parameters(), grads, strict=True):
        # float32 rounding only: SGD computes p.add_(g, alpha=-lr) in one fused pass
        torch.testing.assert_close(trained[name].detach(), prm.detach() - lr * g, rtol=0, atol=1e-7)
    assert any(float(g.abs().max()) > 1e-4 for g in grads)


@pytest.mark.parametrize("init", kstate_training.KSTATE_INITS)
def test_untied_head(init):
    k, length, seed = 5, 12, 4
    tied = kstate_training.init_kstate(MarkovTransformer(8, length, n_states=k), init, seed)
    untied = kstate_training.init_kstate(MarkovTransformer(8, length, n_states=k, tied=False), init, seed)
    shared = dict(tied.named_parameters())
    own = dict(untied.named_parameters())
    assert set(own) == set(shared) | {"unembedding"}
    for name, prm in shared.items():  # every other draw is the tied model's
        assert torch.equal(prm, own[name])
    U, E = own["unembedding"], own["embedding"]
    assert U.shape == E.shape and not torch.equal(U, E) and U.data_ptr() != E.data_ptr()
    scale = 1 / math.sqrt(8) if init == "guideline_like" else 0.02
    assert 0.3 * scale < float(U.detach().std()) < 3 * scale
    x = multistate.symmetric_sampler(k, 0.3)(4, length + 1, 0)
    assert not torch.allclose(tied(x[:, :-1]), untied(x[:, :-1]))
    untied.loss(x).backward()
    assert float(untied.unembedding.grad.abs().max()) > 0
    with torch.no_grad():  # the head is U z + b: with U := E the untied model is the tied one
        untied.unembedding.copy_(E)
    torch.testing.assert_close(untied(x[:, :-1]), tied(x[:, :-1]), rtol=0, atol=0)
    with pytest.raises(ValueError, match="tied"):
        multistate.zero_embedding_hessian(untied, multistate.symmetric_chain(k, 0.3), 3, np.ones((k, 8)))


@pytest.mark.parametrize("call", [
    lambda: multistate.symmetric_kernel(1, 0.5), lambda: multistate.symmetric_kernel(3, 1.5),
    lambda: multistate.symmetric_kernel(3, np.nan),
    lambda: multistate.lagged_covariance(multistate.symmetric_chain(3, 0.2), -1),
    lambda: multistate.lag_switching_sample(3, 0.2, 0, 2, 5, 0),
    lambda: kstate_training.init_kstate(MarkovTransformer(4, 4, n_states=3), "guideline", 0),
    lambda: kstate_training.init_kstate(MarkovTransformer(4, 4), "standard", 0),
    lambda: multistate.zero_embedding_hessian(MarkovTransformer(4, 4, n_states=3), multistate.symmetric_chain(3, 0.2),
                                              9, np.ones((3, 4))),
    lambda: multistate.zero_embedding_hessian(MarkovTransformer(4, 4, n_states=3), multistate.symmetric_chain(3, 0.2),
                                              3, np.ones((2, 4))),
    lambda: kstate_training.train_kstate(multistate.symmetric_sampler(3, 2 / 3), 3, math.log(3), math.log(3)),
])
def test_validation(call):
    with pytest.raises(ValueError):
        call()


def test_extreme_p_stable():
    assert math.isfinite(multistate.symmetric_entropy_rate(10, 1e-15))
    assert math.isfinite(multistate.symmetric_entropy_rate(10, 1 - 1e-15))


@pytest.mark.parametrize("k,p", [(3, 0.9), (5, 0.3), (10, 0.97)])
def test_lumped_loss(k, p):
    assert math.isclose(multistate.lumped_loss(k, p, 0), math.log(k), abs_tol=1e-12)
    assert math.isclose(multistate.lumped_loss(k, p, k - 1), multistate.symmetric_entropy_rate(k, p), abs_tol=1e-12)
    # independent: conditional entropy H(x_{n+1} | g(x_n)) from the joint law, g resolving states 0..m-1
    P = multistate.symmetric_kernel(k, p)
    joint = P / k
    for m in range(k):
        g = [i if i < m else m for i in range(k)]
        grouped = np.zeros((m + 1, k))
        for i in range(k):
            grouped[g[i]] += joint[i]
        cond = entropy(grouped.ravel()) - entropy(grouped.sum(1))
        assert math.isclose(multistate.lumped_loss(k, p, m), cond, abs_tol=1e-12)
