"""The surface of a deep ReLU network (markovlib.richlazy.relu_surface, App. C.1): torch autograd, homogeneity,
bisection."""
import numpy as np
import pytest
import torch

from markovlib.richlazy import relu_surface


# independent reference: the same network in torch
def _torch_f(X, layers):
    z = torch.tensor(X, requires_grad=True)
    h = z
    for W, c in layers[:-1]:
        h = torch.relu(h @ torch.tensor(W).T + torch.tensor(c))
    W, c = layers[-1]
    f = (h @ torch.tensor(W).T + torch.tensor(c))[:, 0]
    (g,) = torch.autograd.grad(f.sum(), z)
    return f.detach().numpy(), g.numpy()


@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_local_affine_match_torch(bias):
    layers = relu_surface.init_mlp(2, [20, 20, 20], seed=3, bias=bias)
    X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    f, pat = relu_surface.forward(X, layers)
    f_t, g_t = _torch_f(X, layers)
    g, e = relu_surface.local_affine(X, layers)
    assert pat.shape == (500, 60)
    assert np.max(np.abs(f - f_t)) < 1e-14
    assert np.max(np.abs(g - g_t)) < 1e-13
    assert np.max(np.abs(np.sum(g * X, axis=1) + e - f)) < 1e-14
    if not bias:
        assert np.max(np.abs(e)) == 0.0


def test_affine_inside_a_region_and_homogeneity():
    layers = relu_surface.init_mlp(3, [10, 10], seed=1, bias=False)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 3))
    f, pat = relu_surface.forward(X, layers)
    for s in (1e-3, 0.5, 7.0, 1e4):
        fs, ps = relu_surface.forward(s * X, layers)
        assert np.max(np.abs(fs - s * f)) < 1e-12 * s * (1 + np.abs(f).max())
        assert np.array_equal(ps, pat)  # regions are cones
    g, _ = relu_surface.local_affine(X, layers)
    Y = X + 1e-3 * rng.standard_normal(X.shape)
    fy, py = relu_surface.forward(Y, layers)
    same = np.all(py == pat, axis=1)
    assert same.sum() > 150
    assert np.max(np.abs(fy[same] - f[same] - np.sum(g[same] * (Y - X)[same], axis=1))) < 1e-14
    biased = relu_surface.init_mlp(3, [10, 10], seed=1, bias=True)
    fb = relu_surface.forward(X, biased)[0]
    assert np.max(np.abs(relu_surface.forward(3 * X, biased)[0] - 3 * fb)) > 0.05


def test_one_hidden_layer_boundary_is_one_hyperplane():
    # a single hidden unit: the boundary of segment [x1, x2] is where w . x + c = 0, one flip each
    layers = [(np.array([[1.0, -2.0]]), np.array([0.3])), (np.array([[1.5]]), np.array([0.0]))]
    x1 = np.array([[-1.0, 0.0], [0.0, -1.0]])
    x2 = np.array([[1.0, 0.0], [0.0, 1.0]])
    flips, where = relu_surface.boundary_flips(x1, x2, layers)
    assert list(flips) == [1, 1]
    assert where.shape == (2, 2)  # a piece that flips one neuron is not halved further
    # two units whose hyperplanes meet at the origin: the segment through the origin flips both at once
    layers2 = [(np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros(2)), (np.ones((1, 2)), np.zeros(1))]
    flips2, where2 = relu_surface.boundary_flips(np.array([[-1.0, -1.0]]), np.array([[1.0, 1.0]]), layers2, tol=1e-9)
    assert list(flips2) == [2] and np.max(np.abs(where2)) < 1e-9


def test_two_colouring_on_a_deep_net():
    layers = relu_surface.init_mlp(2, [20, 20, 20], seed=0, bias=True)
    rng = np.random.default_rng(4)
    x1, x2 = rng.uniform(-1, 1, (40, 2)), rng.uniform(-1, 1, (40, 2))
    flips, _ = relu_surface.boundary_flips(x1, x2, layers)
    assert flips.size > 40 and np.all(flips == 1)
    # without biases every pre-activation vanishes at the origin: a segment through it flips many at once there
    layers0 = relu_surface.init_mlp(2, [20, 20, 20], seed=0, bias=False)
    flips0, where0 = relu_surface.boundary_flips(np.array([[-0.5, -0.25]]), np.array([[0.5, 0.25]]), layers0)
    assert np.all(flips0[np.linalg.norm(where0, axis=1) > 1e-8] == 1) and flips0.max() >= 2


def test_relative_tolerance_resolves_rays_a_small_angle_apart_near_the_origin():
    # two bias-free units whose boundary lines through the origin (y = 0, y = x tan 1e-7) are 1e-7 rad apart; the
    # segment x = 1e-4 crosses them 1e-11 apart: an absolute tol of 1e-10 cannot separate them, a relative one can
    th = 1e-7
    layers = [(np.array([[0.0, 1.0], [-np.sin(th), np.cos(th)]]), np.zeros(2)), (np.ones((1, 2)), np.zeros(1))]
    x1, x2 = np.array([[1e-4, -1.0]]), np.array([[1e-4, 1.0]])  # the vertical line x = 1e-4 crosses both near y = 0
    flips_abs, _ = relu_surface.boundary_flips(x1, x2, layers, tol=1e-10)
    assert list(flips_abs) == [2]
    flips_rel, where_rel = relu_surface.boundary_flips(x1, x2, layers, tol=1e-10, relative=True)
    assert list(flips_rel) == [1, 1] and np.all(np.linalg.norm(where_rel, axis=1) > 5e-5)
    with pytest.raises(ValueError, match="relative"):
        relu_surface.boundary_flips(x1, x2, layers, relative=1)


def test_validation():
    with pytest.raises(ValueError, match="widths"):
        relu_surface.init_mlp(2, [], 0)
    with pytest.raises(ValueError, match="seed"):
        relu_surface.init_mlp(2, [3], -1)
    layers = relu_surface.init_mlp(2, [3], 0)
    with pytest.raises(ValueError, match="X"):
        relu_surface.forward(np.ones((4, 3)), layers)
    with pytest.raises(ValueError, match="X"):
        relu_surface.forward(np.array([[np.nan, 0.0]]), layers)
    with pytest.raises(ValueError, match="layers"):
        relu_surface.forward(np.ones((4, 2)), layers[:1])
    with pytest.raises(ValueError, match="x1 and x2"):
        relu_surface.boundary_flips(np.ones((2, 2)), np.ones((3, 2)), layers)
    with pytest.raises(ValueError, match="tol"):
        relu_surface.boundary_flips(np.ones((2, 2)), np.ones((2, 2)), layers, tol=0.0)


def test_neighbour_pairs_count_single_flips_and_collect_the_others():
    pts = np.stack(np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 4)), axis=-1)
    P = np.zeros((4, 4, 2), dtype=bool)
    P[:, 2:, 0] = True  # neuron 0 on for x > 0: one flip between columns 1 and 2
    P[2:, 2:, 1] = True  # neuron 1 on in one quadrant: rows 1-2 in columns 2-3 flip one, and the corner pair two
    P[2:, :2, :] = [True, True]  # two neurons flip together between columns 1 and 2 in rows 2-3
    one, ok, a, b = relu_surface.neighbour_pairs(pts, P)
    assert ok and one > 0 and a.shape == b.shape and a.shape[1] == 2
    ham = np.sum(P[:, 1] != P[:, 2], axis=-1)
    assert a.shape[0] == int(np.sum(ham >= 2)) + int(np.sum(np.sum(P[1] != P[2], axis=-1) >= 2))
    with pytest.raises(ValueError):
        relu_surface.neighbour_pairs(pts, P[:3])
