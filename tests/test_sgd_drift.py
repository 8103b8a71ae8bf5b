"""The SGD drift law of the conserved energy (markovlib.transformer.sgd_drift, plateau_drift), checked against
independent computations: simulation of the transition counts, Monte Carlo of SGD and heavy-ball steps on the
canonical model and on linear models, and the exact population loss of a small full model by enumeration."""
import numpy as np
import pytest
import torch

from markovlib.markov.canonical import coefficient_unchecked, optimal_bias, reduced_loss_grad
from markovlib.markov.canonical import hessian as canonical_hessian
from markovlib.markov.chain import MarkovChain
from markovlib.markov.energy import energy
from markovlib.transformer import sgd_drift as sd


def _counts(x):
    a, b = x[:, :-1].astype(int), x[:, 1:].astype(int)
    return np.stack([((a == i) & (b == j)).sum(1) for i, j in [(0, 0), (0, 1), (1, 0), (1, 1)]], axis=1)


def test_transition_count_moments_match_simulation():
    p, q, n = 0.5, 0.8, 12
    mu, cov = sd.transition_count_moments(p, q, n)
    x = MarkovChain(p, q).sample(200_000, n + 1, seed=1)
    c = _counts(x).astype(float)
    assert np.allclose(c.mean(0), mu, atol=4 * np.sqrt(np.diag(cov) / len(c)).max())
    assert np.allclose(np.cov(c.T), cov, atol=0.03 * np.abs(cov).max())


def _batch_loss(counts, e, w, b):
    """Canonical minibatch loss from transition counts, written out (Lemma 2), vectorized over batches."""
    c, beta = e * e * (1 + 2 * w * abs(w)), b - e * e / 2
    sp = lambda z: np.logaddexp(0.0, z)  # noqa: E731
    per = np.array([sp(beta), sp(-beta), sp(c + beta), sp(-(c + beta))])  # l for (a, b) = 00, 01, 10, 11
    return counts @ per / counts.sum(1)


def _batch_grads(counts, e, w, b, h=1e-6):
    out = []
    for k in range(3):
        d = np.zeros(3)
        d[k] = h
        out.append((_batch_loss(counts, *(np.array([e, w, b]) + d)) - _batch_loss(counts, *(np.array([e, w, b]) - d)))
                   / (2 * h))
    return np.stack(out, axis=1)


def _batches(p, q, n_batches, batch, length, seed):
    x = MarkovChain(p, q).sample(n_batches * batch, length + 1, seed=seed)
    return _counts(x).reshape(n_batches, batch, 4).sum(1).astype(float)


def test_canonical_batch_moments_match_monte_carlo():
    p, q, e, w, b = 0.5, 0.8, 0.7, -0.5, 0.2
    g, S = sd.canonical_batch_moments(e, w, p, q, b=b, batch=4, length=16)
    G = _batch_grads(_batches(p, q, 40_000, 4, 16, 2), e, w, b)
    se = np.sqrt(np.diag(S) / len(G))
    assert np.all(np.abs(G.mean(0) - g) < 5 * se + 1e-9)
    assert np.allclose(np.cov(G.T), S, atol=0.04 * np.abs(S).max())


def test_canonical_drift_matches_monte_carlo_of_one_step():
    """The independent check: E(theta - lr g_hat) - E(theta) over many sampled minibatches, against the law. The
    first-order part is checked through the mean gradient; the second-order parts through the remainder
    E(theta - lr g_hat) - E(theta) + lr grad E . g_hat of every sample (its mean is the deterministic plus the noise
    part, up to O(lr^3)), which removes the sampling noise of the first-order term."""
    p, q, e, w, b = 0.5, 0.8, 0.8, -0.8, -0.2
    counts = _batches(p, q, 60_000, 2, 8, 3)
    G = _batch_grads(counts, e, w, b)
    g, S = sd.canonical_batch_moments(e, w, p, q, b=b, batch=2, length=8)
    gE = sd.energy_gradient(e, w)
    for lr in (0.02, 0.04):
        theta = np.array([e, w, b]) - lr * G
        dE = energy(theta[:, 0], theta[:, 1]) - energy(e, w)
        law = sd.canonical_drift(e, w, p, q, lr, b=b, batch=2, length=8)
        assert law.first == pytest.approx(-lr * gE @ g, rel=1e-12)
        rem = dE + lr * G @ gE
        se = rem.std() / np.sqrt(len(rem))
        assert abs(rem.mean() - (law.deterministic + law.noise)) < 4 * se + 0.05 * abs(law.deterministic + law.noise)
        assert abs(rem.mean() - law.deterministic) > 4 * se  # without the batch-noise part the law would fail


def test_canonical_drift_at_optimal_bias_has_no_first_order_and_scales_with_e_squared():
    p, q, w, lr = 0.5, 0.8, -0.3, 1.0
    small = [sd.canonical_drift(e, w, p, q, lr) for e in (1e-2, 2e-2)]
    for t in small:
        assert abs(t.first) < 1e-15
    ratio = small[1].total / small[0].total
    assert 3.9 < ratio < 4.1  # every term carries e^2: the canonical model cannot move E from e = 0


def _heavy_ball_energy_drift(e, w, p, q, lr, beta, steps, skip):
    """Deterministic heavy ball on the reduced loss L(e, w) = g(c) (E exactly conserved by the flow): the mean
    change of E per step over steps skip..steps, and the state in the middle of that stretch."""
    th, v, Es, mid = np.array([e, w]), np.zeros(2), [], None
    for t in range(steps):
        c = coefficient_unchecked(th[0], th[1])
        m = 1 + 2 * th[1] * abs(th[1])
        g = reduced_loss_grad(c, p, q) * np.array([2 * th[0] * m, 4 * abs(th[1]) * th[0] ** 2])
        v = beta * v + g
        th = th - lr * v
        if t >= skip:
            Es.append(energy(th[0], th[1]))
        if t == (skip + steps) // 2:
            mid = th.copy()
    return (Es[-1] - Es[0]) / (len(Es) - 1), mid


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_momentum_deterministic_part_matches_iteration(beta):
    p, q, e, w, lr = 0.5, 0.8, 1.5, -1.2, 2.5e-4  # the lag's own corrections are O(lr_eff |H_L| / (1 - beta))
    rate, (em, wm) = _heavy_ball_energy_drift(e, w, p, q, lr, beta, 61, 40)  # the velocity has settled by step 40
    c = coefficient_unchecked(em, wm)
    g = reduced_loss_grad(c, p, q) * np.array([2 * em * (1 + 2 * wm * abs(wm)), 4 * abs(wm) * em**2])
    H = canonical_hessian(em, wm, p, q)
    gE, HE = sd.energy_gradient(em, wm)[:2], sd.energy_hessian(em, wm)[:2, :2]
    law = sd.taylor_drift(gE, HE, g, np.zeros((2, 2)), lr, beta, H)
    assert abs(law.first) < 1e-6 * abs(law.deterministic)  # grad E . grad L = 0 on the reduced loss
    assert rate == pytest.approx(law.total, rel=0.02)
    if beta:  # the lag term: (1 + beta)/(1 - beta) times SGD's deterministic part at the same lr_eff
        sgd = sd.taylor_drift(gE, HE, g, np.zeros((2, 2)), lr / (1 - beta))
        assert law.total == pytest.approx(sgd.deterministic * (1 + beta) / (1 - beta), rel=1e-3)


@pytest.mark.parametrize("beta", [0.0, 0.9])
def test_noise_part_with_momentum_matches_simulation(beta):
    """Pure noise on a quadratic Phi = theta^T H theta / 2: E[Delta Phi] = (lr_eff^2 / 2) tr(H Sigma) per step."""
    rng = np.random.default_rng(4)
    H = np.array([[2.0, 0.3], [0.3, -1.0]])
    Sig = np.array([[1.0, 0.2], [0.2, 0.5]])
    L = np.linalg.cholesky(Sig)
    lr, n_rep, steps = 0.01, 4000, 300
    th, v = np.zeros((n_rep, 2)), np.zeros((n_rep, 2))
    phi = lambda x: 0.5 * np.einsum("ri,ij,rj->r", x, H, x)  # noqa: E731
    start = None
    for t in range(steps):
        v = beta * v + rng.standard_normal((n_rep, 2)) @ L.T
        th = th - lr * v
        if t == 100:
            start = phi(th)
    rate = (phi(th) - start).mean() / (steps - 101)
    law = sd.taylor_drift(np.zeros(2), H, np.zeros(2), Sig, lr, beta, np.zeros((2, 2)))
    se = (phi(th) - start).std() / np.sqrt(n_rep) / (steps - 101)
    assert abs(rate - law.total) < 4 * se


@pytest.mark.parametrize("beta", [0.0, 0.9])
def test_floor_covariance_matches_linear_simulation(beta):
    rng = np.random.default_rng(5)
    J = np.array([[0.5, 0.1], [0.1, 0.2]])
    Sig = np.array([[1.0, -0.3], [-0.3, 0.6]])
    L = np.linalg.cholesky(Sig)
    lr = 0.5
    C = sd.floor_covariance(J, Sig, lr, beta)
    x, v = np.zeros((20_000, 2)), np.zeros((20_000, 2))
    for _ in range(400):
        v = beta * v + x @ J.T + rng.standard_normal(x.shape) @ L.T
        x = x - lr * v
    assert np.allclose(np.cov(x.T), C, rtol=0.05, atol=0.02 * np.abs(C).max())
    if beta == 0:  # small steps: C ~ lr Sigma J^-1 / 2 for commuting J, Sigma
        Cs = sd.floor_covariance(np.diag([0.5, 0.2]), np.diag([1.0, 0.6]), 1e-3)
        assert np.allclose(Cs, 1e-3 * np.diag([1.0 / 1.0, 0.6 / 0.4]) / 1.0, rtol=1e-3)


def test_steps_to_saddle_and_energy_rate():
    w_sad = -1 / np.sqrt(2)
    assert sd.steps_to_saddle(-0.2, -1e-3) == pytest.approx((0.2 + w_sad) / -1e-3)
    assert sd.steps_to_saddle(0.01, -1e-3) == pytest.approx((0.01 - w_sad) / 1e-3)  # through w = 0
    assert sd.steps_to_saddle(-0.2, 1e-3) == np.inf and sd.steps_to_saddle(-1.0, -1e-3) == 0.0
    w, dw, h = -0.3, -1e-7, 1e-4
    assert sd.energy_rate(w, dw) == pytest.approx((energy(0.0, w + h) - energy(0.0, w - h)) / (2 * h) * dw, rel=1e-6)


def test_clip_share_bound():
    assert sd.clip_share_bound([0.01, 0.0], np.eye(2) * 1e-4, 1.0) == pytest.approx(1e-4 + 2e-4)
    assert sd.clip_share_bound([3.0], [[0.0]], 1.0) == 1.0


@pytest.mark.parametrize("call, name", [
    (lambda: sd.taylor_drift([1.0], [[1.0]], [1.0], [[1.0]], 0.0), "lr"),
    (lambda: sd.taylor_drift([1.0], [[1.0]], [1.0], [[1.0]], 0.1, momentum=1.0), "momentum"),
    (lambda: sd.taylor_drift([1.0], [[1.0]], [1.0], [[1.0]], 0.1, momentum=0.5), "hess_loss"),
    (lambda: sd.taylor_drift([1.0, 2.0], [[1.0]], [1.0], [[1.0]], 0.1), "agree in size"),
    (lambda: sd.canonical_drift(0.1, 0.0, 0.5, 0.8, 1.0), "w must be nonzero"),
    (lambda: sd.canonical_drift(0.1, -0.1, 1.5, 0.8, 1.0), "p must be"),
    (lambda: sd.canonical_drift(0.1, -0.1, 0.5, 0.8, 1.0, batch=0), "batch"),
    (lambda: sd.floor_covariance(np.eye(2), np.eye(2), 2.5), "unstable"),
    (lambda: sd.floor_covariance(np.eye(2), np.eye(3), 0.1), "square of one size"),
    (lambda: sd.clip_share_bound([1.0], [[1.0]], 0.0), "clip"),
    (lambda: sd.energy_rate(0.0, 1.0), "w must be nonzero"),
])
def test_arguments_are_validated(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------------------------------
# the full model: J, Sigma and the slow velocity against the exact population loss of a small model
# ---------------------------------------------------------------------------------------------------------------
def _small_model(seed=0, d=4, n=5):
    from markovlib.transformer.model import MarkovTransformer

    m = MarkovTransformer(d, n, attention="softmax", dtype=torch.float64, reference_impl=True)
    m.init_weights("standard", std=0.3, generator=torch.Generator().manual_seed(seed))
    return m


def _exact_pieces(m, p, q):
    from torch.func import functional_call

    from markovlib.transformer.exact import all_sequences, sequence_probabilities

    x = all_sequences(m.max_len + 1)
    wts = sequence_probabilities(MarkovChain(p, q), x)

    def per_seq(phi, slow):
        pr = dict(slow)
        pr["bias"], pr["embedding"] = phi[0], phi[1:]
        logits = functional_call(m, pr, (x[:, :-1],))
        return torch.nn.functional.binary_cross_entropy_with_logits(
            logits, x[:, 1:].to(logits.dtype), reduction="none").mean(1)

    return wts, per_seq


def test_fast_coefficients_match_exact_population_loss():
    from torch.func import hessian, jacrev

    from markovlib.transformer.plateau_drift import _slow, fast_coefficients, fast_point

    p, q, B = 0.5, 0.8, 3
    m = _small_model()
    slow = _slow(m)
    wts, per_seq = _exact_pieces(m, p, q)
    phi = fast_point(p, q, m.d)
    J_ref = hessian(lambda f: (wts * per_seq(f, slow)).sum())(phi)
    G = jacrev(lambda f: per_seq(f, slow))(phi)  # per-sequence gradients
    mean = (wts[:, None] * G).sum(0)
    S_ref = (wts[:, None, None] * (G - mean)[:, :, None] * (G - mean)[:, None, :]).sum(0) / B
    J, S = fast_coefficients(m, p, q, batch=B)
    assert torch.abs(mean).max() < 1e-12  # phi* is a fixed point of the mean dynamics
    assert torch.allclose(J, J_ref, atol=1e-10) and torch.allclose(S, S_ref, atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.9])
def test_slow_velocity_matches_third_derivatives_of_the_exact_loss(beta):
    """-lr_eff grad_slow tr(J C)/2 against -lr_eff (1/2) sum_ab C_ab d^2/dphi_a dphi_b (dL/dtheta) of the exact loss:
    the identity d^2 g_theta / dphi^2 = dJ / dtheta that the law rests on."""
    from torch.func import grad, hessian

    from markovlib.transformer.plateau_drift import _slow, fast_point, slow_velocity

    p, q, lr = 0.75, 0.75, 0.5
    m = _small_model(seed=1)
    slow = _slow(m)
    wts, per_seq = _exact_pieces(m, p, q)
    out = slow_velocity(m, p, q, lr, momentum=beta, batch=2)
    C = torch.as_tensor(out["C"])
    phi = fast_point(p, q, m.d)
    for name in ("W_2", "positional"):
        def g_k(f, name=name):
            return grad(lambda t: (wts * per_seq(f, {**slow, name: t})).sum())(slow[name])
        K = hessian(g_k)(phi)  # shape (*param, 9, 9)
        ref = -lr / (1 - beta) * 0.5 * (K * C).sum((-1, -2))
        assert torch.allclose(out["velocity"][name], ref, atol=1e-12 + 1e-8 * ref.abs().max())


def test_slow_drift_is_second_order_in_small_steps():
    """For lr J << 1 the floor is C ~ lr Sigma J^-1 / 2, so the slow drift -lr grad tr(J C)/2 is O(lr^2)."""
    from markovlib.transformer.plateau_drift import float64_copy, slow_velocity

    m = float64_copy(_small_model(seed=2))
    d1, d2 = (slow_velocity(m, 0.5, 0.8, lr)["dw"] for lr in (1e-3, 2e-3))
    assert d1 != 0 and d2 / d1 == pytest.approx(4.0, rel=0.01)


def test_optimal_bias_helper_is_consistent():
    e, w = 0.3, -0.2
    b = optimal_bias(e, w, 0.5, 0.8)
    assert abs(sd.canonical_drift(e, w, 0.5, 0.8, 1.0, b=float(b)).first) < 1e-14
