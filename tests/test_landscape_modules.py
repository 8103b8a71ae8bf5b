"""landscape_checks, landscape_hessian, landscape_perturb and landscape_drawings (the chapter loss_landscape's
steps), on few points and chains."""
import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from markovlib.markov import canonical, landscape_checks, landscape_drawings, landscape_hessian, landscape_perturb  # noqa: E402  # noqa: E402

PQ = [(0.9, 0.9), (0.1, 0.1)]


def test_reduced_loss_facts_and_gradients():
    facts = landscape_checks.reduced_loss_facts(PQ)
    assert facts.ok and facts.worst < 1e-12 and facts.n_sign == facts.n == 2 and facts.g2_min > 0
    grads = landscape_checks.autograd_gradients(PQ, 10, 1.5, np.random.default_rng(0))
    assert max(grads.max_rel.values()) < 1e-10 and grads.loss_err < 1e-12
    th, b = grads.points[PQ[0]]
    assert th.shape == (10, 2) and b.shape == (10,) and np.abs(th).max() <= 1.5
    with pytest.raises(ValueError, match="n_random"):
        landscape_checks.autograd_gradients(PQ, 0, 1.5, np.random.default_rng(0))


def test_critical_roots_with_and_without_bias_and_the_side_of_gamma():
    rng = np.random.default_rng(1)
    roots = landscape_checks.critical_roots(PQ, 40, rng, 0.25, 1)
    assert roots.ok and roots.other == 0 and roots.fewest_gamma >= 1
    assert not landscape_checks.critical_roots(PQ[:1], 5, np.random.default_rng(1), 0.25, 100).ok  # too few on Gamma*
    r = roots.gamma_roots[(0.9, 0.9)]
    assert np.allclose(canonical.coefficient(r[:, 0], r[:, 1]), canonical.c_star(0.9, 0.9), atol=1e-8)
    side = landscape_checks.gamma_side(PQ, roots.gamma_roots, 1, 16)
    assert side.ok and side.n_side == 2 and side.worst["wrong"] > -16 * np.finfo(float).eps
    # a root moved off the curve is caught
    bad = {k: v + np.array([0.0, 0.5]) for k, v in roots.gamma_roots.items()}
    assert not landscape_checks.gamma_side(PQ, bad, 1, 16).ok
    roots_b = landscape_checks.critical_roots(PQ[:1], 20, rng, 0.25, bias=True)
    assert roots_b.ok and roots_b.b_err < 1e-6
    with pytest.raises(ValueError, match="max_no_root"):
        landscape_checks.critical_roots(PQ, 5, rng, 1.5)


def test_full_model_axis_and_loss_ordering():
    from markovlib.transformer.exact import exact_loss
    from markovlib.transformer.model import canonical_full_model
    from markovlib.transformer.readout import optimal_canonical_bias

    kw = dict(model=canonical_full_model, exact_loss=exact_loss, optimal_bias=optimal_canonical_bias)
    before = torch.get_default_dtype()  # another test in this worker may have left float64 as the default
    try:
        torch.set_default_dtype(torch.float32)
        with pytest.raises(ValueError, match="float64"):
            landscape_checks.full_model_axis(PQ[:1], 4, 4, 0, **kw)
        torch.set_default_dtype(torch.float64)
        full = landscape_checks.full_model_axis(PQ[:1], 4, 4, 0, w=np.array([-1.0, 0.5]), **kw)
    finally:
        torch.set_default_dtype(before)
    assert full.ok and full.axis_grad < 1e-12 and full.off > 1e-6 and full.n_w == 2
    with pytest.raises(ValueError, match="callables"):
        landscape_checks.full_model_axis(PQ[:1], 4, 4, 0, model=None, exact_loss=exact_loss, optimal_bias=None)
    order = landscape_checks.loss_ordering(n=5)
    assert order.ok and len(order.gaps) == 20 and min(order.gaps) > 0  # the 5 chains with p + q = 1 are skipped
    with pytest.raises(ValueError, match="lo < hi"):
        landscape_checks.loss_ordering(0.5, 0.4)


def test_hessians():
    grads = landscape_checks.autograd_gradients(PQ, 8, 1.5, np.random.default_rng(2))
    hess = landscape_hessian.hessians_autograd(grads.points)
    assert max(hess.err.values()) < 1e-10
    gamma = landscape_hessian.gamma_hessian(PQ, 6, np.random.default_rng(3), 1e-10)
    assert gamma.ok and gamma.worst < 1e-8
    axis = landscape_hessian.axis_hessian(PQ, w_axis=np.linspace(-2, 2, 41))
    assert axis.err < 1e-11 and axis.saddle < 1e-12
    sets = landscape_hessian.lemma4_sets(PQ, 6, w_axis=np.linspace(-2, 2, 41))
    assert sets.ok and sets.n_sets == 6 and sets.err < 1e-11
    with pytest.raises(ValueError, match="rows"):
        landscape_hessian.torch_hessian(np.zeros((3, 4)), 0.9, 0.9)


def test_perturbation_tests_follow_the_sign_law():
    w_test = landscape_perturb.axis_points(11, 0.05)
    assert np.all(np.abs(w_test - canonical.W_SADDLE) > 0.1) and w_test.size == 10  # -0.8 dropped
    tau = 16 * np.finfo(float).eps
    pert = landscape_perturb.axis_perturbation(PQ, w_test, 100, 0.05, tau, np.random.default_rng(4), 0.99)
    assert pert.ok and pert.n_law == pert.n_pts == 22 and pert.resolved >= 0.99
    assert set(pert.by_chain[(0.9, 0.9)]) == {"local_min", "local_max", "saddle"}
    strict = landscape_perturb.axis_perturbation(PQ, w_test, 100, 0.05, tau, np.random.default_rng(4), 1.0)
    assert strict.ok == (strict.resolved >= 1.0)
    lifted = landscape_perturb.lifted_perturbation(PQ, w_test, 100, 0.05, tau, np.random.default_rng(5))
    assert lifted.ok and lifted.min_lo > -tau and lifted.n_both == lifted.n_sad
    rate = landscape_perturb.smallest_rate(0.02, n=97)
    assert 0 < rate < 1e-3
    with pytest.raises(ValueError, match="min_resolved"):
        landscape_perturb.axis_perturbation(PQ, w_test, 10, 0.05, tau, np.random.default_rng(4), 2.0)


def test_landscape_figures():
    assert len(landscape_drawings.reduced_loss_figure(PQ).axes) == 2
    assert len(landscape_drawings.critical_loci_figure(PQ).axes) >= 2
    assert len(landscape_drawings.axis_slices_figure(PQ).axes) == 2
    fig, outs, text = landscape_drawings.landscape_panels(0.9, 0.9, [(0.8, -0.4), (0.4, -0.4)])
    assert len(outs) == 2 and len(text.splitlines()) == 2 and all(o["predicted"] == o["reached"] for o in outs)
    with pytest.raises(ValueError, match="pq"):
        landscape_drawings.reduced_loss_figure([(1.2, 0.5)])
