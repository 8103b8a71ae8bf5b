"""Point samples of the invariant set H(c) and their persistent homology: the independent checks of Thm 1 (Betti
numbers, Kunneth), Cor. 1 (components) and Prop. 6 / Cor. 4 (biases) of Nurisso et al. (NeurIPS 2024).

H(c) = Q_1(c_1) x ... x Q_l(c_l), Q(c) = {(w, a) in R^d x R^e : ||w||^2 - ||a||^2 = c} (Lemma 1), truncated by a
ball around the origin (a truncation that keeps the homotopy type, see the chapter ``topo_homology``).

Samplers:

* :func:`sample_by_parametrization` -- from Prop. 2's parametrization (w = sqrt(c + ||a||^2) u, u on S^{d-1}, a
  in a ball; exchanged for c < 0; (r u, r v) on the cone c = 0);
* :func:`closest_point` and :func:`sample_by_projection` -- Gaussian points moved to their closest point of Q(c)
  (Lagrange multiplier by Newton's method safeguarded by bisection), kept inside the ball: the equation only;
* :func:`sample_quadric` and :func:`sample_invariant_set` -- random points of a ball moved onto Q(c) by Newton steps
  along the gradient of the equation (the sampler of the biases' check, App. E);

persistence and components:

* :func:`rips_betti` -- bars of the Vietoris-Rips complex (gudhi) longer than a threshold, per dimension;
* :func:`alpha_betti` -- the same for gudhi's alpha complex, lengths in sqrt(alpha);
* :func:`graph_components` -- connected components of the radius-neighbour graph (no persistent homology);

and :func:`cases_rule`, the declared parameter (``markovlib.book.params``) of a list of cases [d, e, signs].
"""
from __future__ import annotations

import numbers

import numpy as np

from ..numerics import checks

__all__ = ["cases_rule", "ball_radius", "sample_by_parametrization", "closest_point", "sample_by_projection",
           "sample_quadric", "sample_invariant_set", "rips_betti", "alpha_betti", "graph_components"]


def _int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _real(name, value, lo=0.0, strict=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) \
            or (value <= lo if strict else value < lo):
        raise ValueError(f"{name} must be a finite real {'>' if strict else '>='} {lo}, got {value!r}")
    return float(value)


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return rng


def _balances(c):
    c = checks.finite_array("c", c, ndim=(1,))
    if c.size < 1:
        raise ValueError("c must hold at least one balance")
    return c


def cases_rule(signs, within, range_text, *, why=""):
    """A ``markovlib.book.params`` rule for a non-empty list of cases [d, e, signs]: d, e integers >= 1, signs a
    string of 1 to 3 characters from ``signs`` (one per neuron), and ``within(d, e, signs)`` True (the stated range,
    described by ``range_text``). Papermill's text form (YAML) is accepted; the value is a list of [d, e, signs]."""
    from ..book import params

    allowed = "".join(sorted(set(signs)))
    if not allowed or set(allowed) - set("+-0"):
        raise ValueError(f"signs must be a non-empty string of +, - and 0, got {signs!r}")
    if not callable(within):
        raise ValueError("within must be a function of (d, e, signs)")

    def convert(name, value):
        if isinstance(value, str):
            import yaml

            value = yaml.safe_load(value)
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{name} must be a non-empty list of [d, e, signs], got {value!r}")
        out = []
        for i, case in enumerate(value):
            if not isinstance(case, (list, tuple)) or len(case) != 3:
                raise ValueError(f"{name}[{i}] must be [d, e, signs], got {case!r}")
            d = params.positive_int(f"{name}[{i}][0] (d)", case[0])
            e = params.positive_int(f"{name}[{i}][1] (e)", case[1])
            if not isinstance(case[2], str) or not 1 <= len(case[2]) <= 3 or set(case[2]) - set(allowed):
                raise ValueError(f"{name}[{i}][2] must be a string of 1 to 3 signs from {allowed!r}, got {case[2]!r}")
            if not within(d, e, case[2]):
                raise ValueError(f"{name}[{i}] = {list(case)!r} is outside the stated range ({range_text})")
            out.append([d, e, case[2]])
        return out

    return params.Rule(convert, f"list of [d, e, signs], signs from {allowed!r}; {range_text}", why)


def _unit_rows(rng, n, m):
    u = rng.normal(size=(n, m))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def ball_radius(ck, trunc, cone_radius, rho=1.0) -> float:
    """The radius of the ball that truncates Q(ck): sqrt(|ck| + 2 (trunc rho)^2) for ck != 0 (on Q(ck) the free
    factor is cut to a ball of radius trunc rho), sqrt(2) cone_radius rho for the cone ck = 0."""
    ck = float(ck)
    trunc, cone_radius, rho = _real("trunc", trunc), _real("cone_radius", cone_radius), _real("rho", rho)
    return float(np.sqrt(abs(ck) + 2 * (trunc * rho) ** 2)) if ck != 0 else float(np.sqrt(2) * cone_radius * rho)


def sample_by_parametrization(d, e, c, n, rng, *, trunc, cone_radius, rho=1.0) -> np.ndarray:
    """n points (n, l (d + e)) of the truncated H(c), neurons side by side, from Prop. 2's parametrization: for
    c_k > 0, a_k uniform in the ball of radius trunc rho and w_k = sqrt(c_k + ||a_k||^2) u, u uniform on S^{d-1}
    (exchanged for c_k < 0); on the cone, (r u, r v) with r <= cone_radius rho, uniform in its (d + e - 1)-volume."""
    d, e, n, rng, c = _int("d", d, 1), _int("e", e, 1), _int("n", n, 1), _rng(rng), _balances(c)
    trunc, cone_radius, rho = _real("trunc", trunc), _real("cone_radius", cone_radius), _real("rho", rho)
    parts = []
    for ck in c:
        if ck == 0:
            r = cone_radius * rho * rng.random(n) ** (1 / (d + e - 1))
            parts.append(np.hstack([r[:, None] * _unit_rows(rng, n, d), r[:, None] * _unit_rows(rng, n, e)]))
            continue
        m_free, m_sph = (e, d) if ck > 0 else (d, e)
        free = _unit_rows(rng, n, m_free) * (trunc * rho * rng.random(n) ** (1 / m_free))[:, None]
        sphere = np.sqrt(abs(ck) + (free**2).sum(1))[:, None] * _unit_rows(rng, n, m_sph)
        parts.append(np.hstack([sphere, free] if ck > 0 else [free, sphere]))
    return np.hstack(parts)


def closest_point(W, A, ck, iters=80):
    """The closest points of Q(ck) to the rows of (W, A): (W / (1 + lam), A / (1 - lam)) with lam in (-1, 1) the
    root of the strictly decreasing phi(lam) = ||w||^2 / (1 + lam)^2 - ||a||^2 / (1 - lam)^2 - ck, by Newton's
    method safeguarded by bisection (``iters`` at most; stops when |phi| is at rounding level)."""
    W = checks.finite_array("W", W, ndim=(2,))
    A = checks.finite_array("A", A, ndim=(2,))
    if W.shape[0] != A.shape[0]:
        raise ValueError(f"W and A must have the same number of rows, got {W.shape[0]} and {A.shape[0]}")
    ck, iters = float(ck), _int("iters", iters, 1)
    p, q = (W**2).sum(1), (A**2).sum(1)
    lo, hi, lam = -np.ones(len(p)), np.ones(len(p)), np.zeros(len(p))
    for _ in range(iters):
        phi = p / (1 + lam) ** 2 - q / (1 - lam) ** 2 - ck
        if np.all(np.abs(phi) < 1e-13 * (p + q + abs(ck))):   # converged to rounding
            break
        lo, hi = np.where(phi > 0, lam, lo), np.where(phi < 0, lam, hi)
        new = lam + phi / (2 * p / (1 + lam) ** 3 + 2 * q / (1 - lam) ** 3)
        lam = np.where((new > lo) & (new < hi), new, (lo + hi) / 2)
    return W / (1 + lam)[:, None], A / (1 - lam)[:, None]


def sample_by_projection(d, e, c, n, rng, *, trunc, cone_radius, rho=1.0, batch=20000):
    """(points, residual): n points (n, l (d + e)) of the truncated H(c), each neuron's block from Gaussian points
    N(0, R^2 I) (R = :func:`ball_radius`) moved by :func:`closest_point` onto Q(c_k) and kept inside the ball; the
    largest residual of the quadrics' equations over the kept points. The closest point of H(c) splits by neuron."""
    d, e, n, rng, c = _int("d", d, 1), _int("e", e, 1), _int("n", n, 1), _rng(rng), _balances(c)
    batch = _int("batch", batch, 1)
    parts, res = [], 0.0
    for ck in c:
        R, got, out = ball_radius(ck, trunc, cone_radius, rho), 0, []
        while got < n:
            Z = rng.normal(scale=R, size=(batch, d + e))
            W, A = closest_point(Z[:, :d], Z[:, d:], ck)
            keep = (W**2).sum(1) + (A**2).sum(1) <= R**2
            res = max(res, float(np.abs((W[keep] ** 2).sum(1) - (A[keep] ** 2).sum(1) - ck).max(initial=0.0)))
            out.append(np.hstack([W, A])[keep])
            got += int(keep.sum())
        parts.append(np.vstack(out)[:n])
    return np.hstack(parts), res


def sample_quadric(din, e, c, n, t, rng) -> np.ndarray:
    """n points of ||u||^2 - ||a||^2 = c in R^din x R^e inside the ball of radius sqrt(|c| + 2 t^2): random points
    of that ball moved onto the quadric by 60 Newton steps along the gradient of the equation, kept when their
    residual is below 1e-10 and they stay in the ball."""
    din, e, n, t, rng = _int("din", din, 1), _int("e", e, 1), _int("n", n, 1), _real("t", t), _rng(rng)
    c = float(c)
    radius = np.sqrt(abs(c) + 2 * t**2)
    sgn = np.concatenate([np.ones(din), -np.ones(e)])
    out, have = [], 0
    while have < n:
        z = rng.normal(size=(4 * n, din + e))
        z *= radius * rng.uniform(size=(4 * n, 1)) ** (1 / (din + e)) / np.linalg.norm(z, axis=1, keepdims=True)
        for _ in range(60):
            g = 2 * sgn * z
            z = z - (((sgn * z**2).sum(1) - c) / (g**2).sum(1))[:, None] * g
        keep = (np.abs((sgn * z**2).sum(1) - c) < 1e-10) & (np.linalg.norm(z, axis=1) <= radius)
        out.append(z[keep])
        have += int(keep.sum())
    return np.vstack(out)[:n]


def sample_invariant_set(d, e, c, n, t, rng, bias) -> np.ndarray:
    """n points of the truncated H(c), neurons side by side (:func:`sample_quadric`); with ``bias`` each neuron's
    input weights carry its bias (d + 1 coordinates, App. E) and a last block, the output bias b2, is uniform in
    [-t, t]^e."""
    if not isinstance(bias, bool):
        raise ValueError(f"bias must be True or False, got {bias!r}")
    d = _int("d", d, 1)
    parts = [sample_quadric(d + int(bias), e, ck, n, t, rng) for ck in _balances(c)]
    if bias:
        parts.append(rng.uniform(-t, t, size=(n, e)))  # the output bias b2
    return np.hstack(parts)


def _bars(counts_noise_signal, life, threshold):
    counts, noise, signal = counts_noise_signal
    counts.append(int(np.sum(life > threshold)))
    noise = max(noise, float(life[life <= threshold].max(initial=0.0)))
    signal = min(signal, float(life[life > threshold].min(initial=np.inf)))
    return counts, noise, signal


def rips_betti(X, top_dim, threshold, max_edge):
    """(counts, noise, signal) of the Vietoris-Rips complex of the points X (gudhi) built up to edge length
    ``max_edge`` (edge collapses, then the flag expansion to dimension top_dim + 1): per dimension 0..top_dim the
    number of bars living longer than ``threshold`` (lives cut at max_edge), the longest bar at or below it and the
    shortest bar above it (over all dimensions)."""
    import gudhi

    X = checks.finite_array("X", X, ndim=(2,))
    top_dim = _int("top_dim", top_dim, 0)
    threshold, max_edge = _real("threshold", threshold), _real("max_edge", max_edge)
    if max_edge <= threshold:
        raise ValueError(f"max_edge must exceed threshold = {threshold}, got {max_edge}")
    st = gudhi.RipsComplex(points=X, max_edge_length=max_edge).create_simplex_tree(max_dimension=1)
    st.collapse_edges(nb_iterations=10)
    st.expansion(top_dim + 1)
    st.compute_persistence()
    out = ([], 0.0, np.inf)
    for k in range(top_dim + 1):
        iv = st.persistence_intervals_in_dimension(k)
        life = np.minimum(iv[:, 1], max_edge) - iv[:, 0] if len(iv) else np.zeros(0)
        out = _bars(out, life, threshold)
    return out


def alpha_betti(X, top_dim, threshold, unit=1.0):
    """(counts, noise, signal) as :func:`rips_betti` for gudhi's alpha complex of X, bars measured in sqrt(alpha)
    (a length) divided by ``unit``, the infinite H0 bar capped at sqrt(1e6)."""
    import gudhi

    X = checks.finite_array("X", X, ndim=(2,))
    top_dim, threshold, unit = _int("top_dim", top_dim, 0), _real("threshold", threshold), _real("unit", unit)
    st = gudhi.AlphaComplex(points=X).create_simplex_tree()
    st.compute_persistence()
    out = ([], 0.0, np.inf)
    for k in range(top_dim + 1):
        iv = st.persistence_intervals_in_dimension(k)
        life = (np.sqrt(np.minimum(iv[:, 1], 1e6)) - np.sqrt(iv[:, 0])) / unit
        out = _bars(out, life, threshold)
    return out


def graph_components(points, radius) -> int:
    """The number of connected components of the graph joining points closer than ``radius`` (scikit-learn's
    radius-neighbour graph, scipy's connected components)."""
    from scipy.sparse.csgraph import connected_components
    from sklearn.neighbors import radius_neighbors_graph

    points, radius = checks.finite_array("points", points, ndim=(2,)), _real("radius", radius)
    graph = radius_neighbors_graph(points, radius, mode="connectivity", include_self=False)
    return int(connected_components(graph, directed=False)[0])
