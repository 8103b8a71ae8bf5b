"""Part II, App. C.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the checks of Prop. C.2 on the surface of a
deep ReLU network, as the chapter ``grq_relu_rich`` runs them (its Fig. 9 section).

``nets`` is {bias: layers} of :func:`markovlib.richlazy.relu_surface.init_mlp` for the network with biases (True)
and the same weights without (False). The reference values come from :func:`relu_reference.torch_mlp` (torch).

- :func:`homogeneity`: f(s x) = s f(x) and constant patterns along rays without biases, neither with biases;
- :func:`affine`: f(y) = f(x) + grad f(x).(y - x) inside a region (eq. grq-eq-region), and ``local_affine``
  against the autograd gradient and offset;
- :func:`two_colouring`: parities of grid neighbours one neuron apart, and the bisection of every other boundary
  crossing (``relu_surface.boundary_flips``) away from the apex of the cones.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import relu_reference, relu_surface


def _nets(nets):
    if not isinstance(nets, dict) or set(nets) != {True, False}:
        raise ValueError("nets must be {True: layers with biases, False: layers without}")
    return nets


def homogeneity(nets, X, scales=(0.1, 0.5, 2.0, 10.0)) -> dict:
    """Per bias: ``homog`` = max_s max_x |f(s x) - s f(x)| / (s max|f(x)|) (torch), ``cones`` = the fraction of
    (x, s) whose activation pattern equals that of x, ``same`` = their number."""
    nets, X = _nets(nets), checks.finite_array("X", X, ndim=2)
    if not scales or min(scales) <= 0:
        raise ValueError(f"scales must be positive factors, got {scales!r}")
    out = {}
    for bias, layers in nets.items():
        f0 = relu_reference.torch_mlp(X, layers)[0]
        P0 = relu_surface.forward(X, layers)[1]
        ref = np.abs(f0).max()
        homog = max(float(np.abs(relu_reference.torch_mlp(s * X, layers)[0] - s * f0).max() / (s * ref))
                    for s in scales)
        same = sum(int(np.all(relu_surface.forward(s * X, layers)[1] == P0, axis=1).sum()) for s in scales)
        out[bias] = dict(homog=homog, cones=same / (len(X) * len(scales)), same=same)
    return out


def affine(nets, X, rng, step) -> tuple[float, float, int]:
    """(aff_err, ga_err, pairs): y = x + ``step`` N(0, I) (drawn from ``rng``, biases first); over the pairs with
    equal patterns the largest |f(y) - f(x) - grad f(x).(y - x)| / (1 + max|f|) with the autograd gradient; the
    largest error of ``relu_surface.local_affine`` (gradient relative to 1 + max|grad|, offset g.x + e against f);
    and the number of such pairs over both networks."""
    nets, X = _nets(nets), checks.finite_array("X", X, ndim=2)
    if not isinstance(rng, np.random.Generator) or not step > 0:
        raise ValueError(f"rng must be a numpy Generator and step positive, got {type(rng).__name__}, {step!r}")
    aff_err, ga_err, n_pairs = 0.0, 0.0, 0
    for bias, layers in nets.items():
        f_x, g_x = relu_reference.torch_mlp(X, layers)
        Y = X + step * rng.standard_normal(X.shape)
        f_y = relu_reference.torch_mlp(Y, layers)[0]
        same = np.all(relu_surface.forward(Y, layers)[1] == relu_surface.forward(X, layers)[1], axis=1)
        scale_f = 1.0 + np.abs(f_x).max()
        aff_err = max(aff_err, float(np.abs(f_y - f_x - np.sum(g_x * (Y - X), axis=1))[same].max() / scale_f))
        g_pkg, e_pkg = relu_surface.local_affine(X, layers)
        ga_err = max(ga_err, float(np.abs(g_pkg - g_x).max() / (1 + np.abs(g_x).max())),
                     float(np.abs(np.sum(g_pkg * X, axis=1) + e_pkg - f_x).max() / scale_f))
        n_pairs += int(same.sum())
    return aff_err, ga_err, n_pairs


def two_colouring(nets, box, grid, n_segments, rng, tol=1e-10) -> dict:
    """On the ``grid`` x ``grid`` points of [-box, box]^2: per bias the surface ``f``, the ``parity`` of the active
    neurons, the number of ``regions`` met, the neighbour pairs one neuron apart (``one``) and whether their parities
    differ (``one_ok``), the pairs differing in more (``n_multi``), and the neurons flipped at each crossing found by
    bisecting those pairs and ``n_segments`` random segments (from ``rng``) to ``tol`` relative to |x| (``flips``,
    without the apex pieces at the origin of the network without biases; ``apex``: their number). Also ``GX``,
    ``GY``."""
    nets = _nets(nets)
    grid, n_segments = checks.positive_int("grid", grid), checks.positive_int("n_segments", n_segments)
    if not box > 0:
        raise ValueError(f"box must be positive, got {box!r}")
    g1 = np.linspace(-box, box, grid)
    GX, GY = np.meshgrid(g1, g1)
    pts = np.stack([GX, GY], axis=-1)
    out = dict(GX=GX, GY=GY)
    for bias, layers in nets.items():
        f_g, P_g = relu_surface.forward(pts, layers)
        one, one_ok, pair_a, pair_b = relu_surface.neighbour_pairs(pts, P_g)
        seg_a = np.concatenate([pair_a, rng.uniform(-box, box, (n_segments, 2))])
        seg_b = np.concatenate([pair_b, rng.uniform(-box, box, (n_segments, 2))])
        flips, where = relu_surface.boundary_flips(seg_a, seg_b, layers, tol=tol, relative=True)
        apex = np.linalg.norm(where, axis=1) < 1e-8 * box if not bias else np.zeros(flips.size, dtype=bool)
        regions = len({row.tobytes() for row in np.packbits(P_g.reshape(-1, P_g.shape[-1]), axis=1)})
        out[bias] = dict(f=f_g, parity=np.sum(P_g, axis=-1) % 2, one=one, one_ok=one_ok, n_multi=len(pair_a),
                         flips=flips[~apex], apex=int(apex.sum()), regions=regions)
    return out
