"""markovlib.beyond.kstate_reference, kstate_exact: the independent references and the derived checks of
beyond_two_states, one call per step, on small sizes; each test fails if the quantity is wrong."""
import math

import numpy as np
import pytest
import torch

from markovlib.beyond import kstate_exact, kstate_reference, multistate
from markovlib.markov.chain import MarkovChain
from markovlib.transformer.exact import exact_loss


def test_eig_yardsticks_match_the_closed_forms_and_a_two_state_chain():
    rate, marg, vals = kstate_reference.eig_yardsticks(multistate.symmetric_kernel(4, 0.3))
    assert math.isclose(rate, multistate.symmetric_entropy_rate(4, 0.3), abs_tol=1e-12)
    assert math.isclose(marg, math.log(4), abs_tol=1e-12)
    assert np.allclose(vals, [multistate.symmetric_eigenvalue(4, 0.3)] * 3 + [1.0])
    P = np.array([[0.9, 0.1], [0.3, 0.7]])  # pi = (3/4, 1/4) by hand
    rate2, marg2, _ = kstate_reference.eig_yardsticks(P)
    h = lambda x: -x * math.log(x) - (1 - x) * math.log(1 - x)
    assert math.isclose(marg2, h(0.25)) and math.isclose(rate2, 0.75 * h(0.1) + 0.25 * h(0.3))
    with pytest.raises(ValueError, match="kernel"):
        kstate_reference.eig_yardsticks(np.array([[0.5, 0.6], [0.5, 0.5]]))


def test_loss_along_is_the_exact_loss_on_the_line_and_restores_the_embedding():
    chain = multistate.symmetric_chain(3, 0.3)
    model = multistate.zero_embedding_model(chain, d=4, max_len=3, std=0.3, seed=1)
    E0 = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    saved = model.embedding.detach().clone()
    at_zero = kstate_reference.loss_along(model, chain, 3, E0, torch.tensor(0.0, dtype=torch.float64))
    assert math.isclose(float(at_zero.detach()), chain.marginal_entropy, abs_tol=1e-12)
    with torch.no_grad():
        model.embedding.copy_(E0)
    direct = float(exact_loss(model, chain, 3))
    with torch.no_grad():
        model.embedding.copy_(saved)
    assert math.isclose(float(kstate_reference.loss_along(model, chain, 3, E0, torch.tensor(1.0))), direct,
                        rel_tol=1e-10)
    assert torch.equal(model.embedding.detach(), saved)


def test_conserved_quantities_written_out():
    one = torch.ones
    q = kstate_reference.conserved_quantities({"W_1": 2 * one(3, 2), "W_2": one(2, 3), "W_Q": one(2, 2),
                                               "W_K": 0 * one(2, 2), "W_V": one(2, 2), "W_O": one(2, 2),
                                               "embedding": 3 * one(2, 2)})
    assert torch.equal(q["neuron_balance"], torch.full((3,), 6.0))  # 2 * 4 - 2 per unit
    assert torch.equal(q["query_key"], torch.full((2, 2), 2.0)) and torch.equal(q["value_output"], torch.zeros(2, 2))
    assert float(q["embedding_norm"]) == 36.0
    with pytest.raises(ValueError, match="missing"):
        kstate_reference.conserved_quantities({"W_1": one(1)})


def test_energy_cosines_and_energy_check():
    ew = np.array([[0.5, -1.0, 1.5], [0.7, -0.4, 1.2]])
    cos, cos1, energy = kstate_reference.energy_cosines(ew)
    assert cos.max() < 1e-12 and cos1[ew[1] > 0].min() > 1e-3 and cos1[ew[1] < 0].max() < 1e-12
    assert np.allclose(energy, ew[0] ** 2 - ew[1] ** 2 - np.sign(ew[1]) * np.log(np.abs(ew[1])))
    with pytest.raises(ValueError, match="w != 0"):
        kstate_reference.energy_cosines(np.array([[1.0], [0.0]]))
    out = kstate_exact.energy_check(np.random.default_rng(0), n=50)
    assert out["orth"] < 1e-12 and out["orth1_pos"] > 1e-3 and out["pkg_err"] < 1e-12 and out["n"] == 50


def test_centred_log_kernel_rank():
    for K, p in ((3, 0.3), (5, 0.95), (10, 0.5)):
        assert kstate_reference.centred_log_kernel_rank(K, p) == K - 1  # c (I - 11^T/K), c != 0 off p*


def test_batch_chain_score_is_the_plugin_cross_entropy_of_the_regenerated_batch():
    a = kstate_reference.batch_chain_score(3, 0.3, 2, 64, 32)
    assert a == kstate_reference.batch_chain_score(3, 0.3, 2, 64, 32)  # deterministic
    assert a != kstate_reference.batch_chain_score(3, 0.3, 1, 64, 32)
    assert abs(a - multistate.symmetric_entropy_rate(3, 0.3)) < 0.05


def test_yardstick_table_and_iid_point():
    out = kstate_exact.yardstick_table([3, 4], [0.2, 0.9], mc_batch=100, mc_length=220, mc_z=5.0, seed=0)
    assert out["err_eig"] < 1e-12 and out["err_pkg"] < 1e-12 and out["err_eigval"] < 1e-12
    assert out["mc_worst"] < 1 and len(out["table"]) == 4
    err, lines = kstate_exact.iid_point_check([3, 7])
    assert err < 1e-12 and len(lines) == 2 and "p* = 0.8571" in lines[1]


def test_exact_chains_and_the_critical_set():
    chains = kstate_exact.exact_chains(3, [0.2, 0.9], np.random.default_rng(1))
    assert list(chains) == ["symmetric p = 0.2", "symmetric p = 0.9", "random kernel"]
    assert np.allclose(chains["random kernel"].kernel.sum(axis=1), 1)
    out = kstate_exact.critical_set_check(chains, d=4, length=3, std=0.5, seed=0)
    assert out["grad_ratio"] < 1 and out["loss_err"] < 1e-12 and out["control_ratio"] > 1
    with pytest.raises(ValueError, match="chains"):
        kstate_exact.critical_set_check({}, d=4, length=3, std=0.5, seed=0)


def test_hessian_check_agrees_with_autograd():
    chains = {"p = 0.9": multistate.symmetric_chain(3, 0.9)}
    rel, qs = kstate_exact.hessian_check(chains, d=4, length=3, std=0.5, seed=0, n_dirs=2,
                                         rng=np.random.default_rng(2))
    assert rel < 1e-9 and len(qs) == 4 and max(abs(q) for q in qs) > 1e-3


def test_small_weight_check_signs():
    out = kstate_exact.small_weight_check(3, [0.2, 0.9], d=4, length=3, std=0.01, n_dirs=2, n_flip=3, d_flip=8,
                                          seed=0, rng=np.random.default_rng(3))
    assert out["ratio_dev"] < 0.1 and len(out["ratios"]) == 4 and len(out["flipped"]) == 6
    assert [round(lam, 6) for _, lam, _ in out["sides"]] == [0.7, -0.35] and len(out["lines"]) == 2


def test_frame_signs():
    values = ["lambda +0.500: Q < 0, E = 0 is left", "lambda -0.400: Q > 0, E = 0 traps",
              "lambda +0.050: Q > 0, E = 0 traps", "lambda -0.300: Q < 0, E = 0 is left"]
    out = kstate_exact.frame_signs(values, 0.1)
    assert out["n_decided"] == 3 and out["n_sign"] == 2 and out["near"] == [(0.05, True)]


def test_conservation_check():
    chains = {"p = 0.2": multistate.symmetric_chain(3, 0.2),
              "random": MarkovChain.from_kernel(np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]]))}
    rate, pkg, emb = kstate_exact.conservation_check(chains, d=4, length=3, std=0.5, seed=0)
    assert rate < 1e-9 and pkg < 1e-9 and len(emb) == 2 and min(emb) > 1e-3


def test_lag_mc():
    assert kstate_exact.lag_mc(3, 0.1, [1, 2], batch=100, length=220, z=5.0, seed=0) < 1
