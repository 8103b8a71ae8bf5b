"""Part II, Sec. 5 of "Get rich quick" (Kunin et al., NeurIPS 2024): the reduced Fig. 1(a), 1(b) and 5(b) of the
chapter ``grq_relu_rich``, one call per step.

The grid is over the overall scale tau and the conserved delta (eq. grq-eq-init: |a_k|^2 = (delta +
sqrt(delta^2 + 4 tau^4)) / 2, ||w_k||^2 = (sqrt(delta^2 + 4 tau^4) - delta) / 2), trained by float64 full-batch
gradient descent at lr = base_lr / tau^2 on the teacher-student task of
:func:`markovlib.richlazy.relu_networks.teacher_student`. Corners: the smallest tau is index 0 and the largest the
last; downstream is the first delta, balanced (0) the middle one, upstream the last.

- :func:`train_live`: every seed, tau and delta trained at once, with the initialization's identities;
- :func:`live_metrics`: test and train loss, kernel distance S(0, t), Hamming and parameter distances, and the
  drift of delta_k relative to the neuron's size sqrt(delta^2 + 4 tau^4);
- :func:`corner_flags`: the per-seed claims of Fig. 1(b) and 5(b) at the grid's corners;
- :func:`first_kernel_distances`: the kernel distance after 10 steps at the smallest tau, for more seeds;
- :func:`fig1a_runs`: the two-dimensional runs of Fig. 1(a) and the median turn of their first-layer directions.
"""
from __future__ import annotations

import numpy as np

from ..book.progress import progress_bar
from ..numerics import checks
from . import relu_networks
from .minimal_model import conserved_delta, kernel_distance
from .relu_checks import direction_turn


def train_live(d, n, h, n_teacher, taus, deltas, seeds, n_test, base_lr, save_steps) -> dict:
    """Train the (seeds, tau, delta) grid at once: problems of :func:`relu_networks.teacher_student` per seed,
    lr = base_lr / tau^2, snapshots at ``save_steps``. Returns a dict with ``probs``, ``a0`` (seeds, tau, delta, h),
    ``W0``, ``A`` and ``W`` (T, seeds, tau, delta, h[, d]) and ``init_err`` = the largest |delta_k - delta|,
    |f(x)| on the test points and ||a_k| ||w_k|| - tau^2| at initialization (each 0 by construction)."""
    taus, deltas = checks.finite_array("taus", taus, ndim=1), checks.finite_array("deltas", deltas, ndim=1)
    if not seeds or not base_lr > 0 or np.any(taus <= 0):
        raise ValueError(f"seeds must be non-empty, base_lr and taus positive, got {seeds!r}, {base_lr!r}, {taus}")
    probs = [relu_networks.teacher_student(d, n, h, n_teacher, taus, deltas, s, n_test=n_test) for s in seeds]
    a0 = np.stack([p["a0"] for p in probs])
    W0 = np.stack([p["W0"] for p in probs])
    init_err = (float(np.max(np.abs(conserved_delta(a0, W0) - deltas[None, None, :, None]))),
                float(max(np.max(np.abs(relu_networks.forward(p["X_test"], p["a0"], p["W0"]))) for p in probs)),
                float(np.max(np.abs(np.abs(a0) * np.linalg.norm(W0, axis=-1) - taus[None, :, None, None] ** 2))))
    X_all = np.stack([p["X"] for p in probs])[:, None, None]  # (seeds, 1, 1, n, d): shared across the grid
    y_all = np.stack([p["y"] for p in probs])[:, None, None]
    runs = relu_networks.gradient_descent(X_all, y_all, a0, W0, (base_lr / taus**2)[None, :, None], save_steps)
    return dict(probs=probs, a0=a0, W0=W0, A=runs["a"], W=runs["W"], taus=taus, deltas=deltas, init_err=init_err)


def live_metrics(live) -> dict:
    """The metrics of :func:`train_live`'s runs at every checkpoint, each (T, seeds, tau, delta): ``test_loss``,
    ``train_loss``, ``kdist`` (kernel distance S(0, t) = 1 - <K_0, K_t>_F / (|K_0|_F |K_t|_F) of the NTK on the
    training inputs), ``hamming`` (fraction of the activation pattern changed), ``pdist`` (parameter distance); and
    ``drift_rel`` (tau, delta): the largest |delta_k(t) - delta_k(0)| / sqrt(delta^2 + 4 tau^4)."""
    probs, A, Wt, a0, W0 = live["probs"], live["A"], live["W"], live["a0"], live["W0"]
    taus, deltas = live["taus"], live["deltas"]
    T, S = A.shape[0], len(probs)
    test_loss = np.zeros((T, S, taus.size, deltas.size))
    kdist, hamming, pdist = np.zeros_like(test_loss), np.zeros_like(test_loss), np.zeros_like(test_loss)
    for s, p in enumerate(progress_bar(probs, desc="metrics")):
        test_loss[:, s] = relu_networks.mse(p["X_test"], p["y_test"], A[:, s], Wt[:, s])
        C0 = relu_networks.activation_pattern(p["X"], W0[s])
        for t in range(T):
            hamming[t, s] = relu_networks.hamming_distance(C0, relu_networks.activation_pattern(p["X"], Wt[t, s]))
            pdist[t, s] = relu_networks.parameter_distance(A[t, s], Wt[t, s], a0[s], W0[s])
        for i in range(taus.size):  # one tau at a time keeps the n x n kernels small in memory
            K0 = relu_networks.ntk(p["X"], a0[s, i], W0[s, i])
            for t in range(1, T):
                Kt = relu_networks.ntk(p["X"], A[t, s, i], Wt[t, s, i])
                kdist[t, s, i] = [kernel_distance(K0[j], Kt[j]) for j in range(deltas.size)]
    train_loss = np.stack([relu_networks.mse(p["X"], p["y"], A[:, s], Wt[:, s]) for s, p in enumerate(probs)], axis=1)
    size0 = np.sqrt(deltas[None, :] ** 2 + 4 * taus[:, None] ** 4)[None, :, :, None]
    drift_rel = np.max(np.abs(conserved_delta(A, Wt) - conserved_delta(a0, W0)[None]) / size0, axis=(0, 1, 4))
    return dict(test_loss=test_loss, train_loss=train_loss, kdist=kdist, hamming=hamming, pdist=pdist,
                drift_rel=drift_rel)


def corner_flags(m, i_fast, loss_margin, kd_rich_ratio, move_margin) -> dict:
    """The per-seed claims at the corners of :func:`live_metrics`' grid ``m`` (or a stored grid with the same keys):
    at the smallest tau upstream has the lowest test loss of down/balanced/up at checkpoint ``i_fast``
    (``fastest``), below ``loss_margin`` times min(downstream, best largest-tau run) (``below``); the largest kernel
    distance at the largest tau (``kd_lazy``); the final small-tau upstream kernel distance (``kd_up``) above
    ``kd_rich_ratio`` times each seed's largest lazy one (``rich``); Fig. 5(b): upstream Hamming above
    ``move_margin`` x downstream and downstream parameter distance above ``move_margin`` x upstream at the end
    (``fig5b``). Also the corner curves ``L_up``, ``L_bal``, ``L_down``, ``lazy_floor`` (T, seeds) and the end
    distances ``ham_up``, ``ham_down``, ``pd_up``, ``pd_down``."""
    TL = checks.finite_array("test_loss", m["test_loss"], ndim=4)
    if not (0 < loss_margin and kd_rich_ratio > 0 and move_margin > 0) or not 0 <= i_fast < TL.shape[0]:
        raise ValueError(f"loss_margin, kd_rich_ratio and move_margin must be positive and i_fast a checkpoint index, "
                         f"got {loss_margin!r}, {kd_rich_ratio!r}, {move_margin!r}, {i_fast!r}")
    up, bal, down = TL.shape[3] - 1, TL.shape[3] // 2, 0
    L_up, L_bal, L_down = (TL[:, :, 0, j] for j in (up, bal, down))
    lazy_floor = TL[:, :, -1, :].min(axis=-1)
    kd = m["kdist"]
    out = dict(L_up=L_up, L_bal=L_bal, L_down=L_down, lazy_floor=lazy_floor,
               fastest=(L_up[i_fast] < L_bal[i_fast]) & (L_up[i_fast] < L_down[i_fast]),
               below=L_up[i_fast] / np.minimum(L_down[i_fast], lazy_floor[i_fast]) < loss_margin,
               kd_lazy=float(np.max(kd[:, :, -1, :])), kd_up=kd[-1, :, 0, up],
               ham_up=m["hamming"][-1, :, 0, up], ham_down=m["hamming"][-1, :, 0, down],
               pd_up=m["pdist"][-1, :, 0, up], pd_down=m["pdist"][-1, :, 0, down])
    out["rich"] = out["kd_up"] > kd_rich_ratio * np.max(kd[:, :, -1, :], axis=(0, 2))
    out["fig5b"] = (out["ham_up"] > move_margin * out["ham_down"]) & (out["pd_down"] > move_margin * out["pd_up"])
    return out


def first_kernel_distances(m, live, n_first, d, n, h, n_teacher, base_lr, seed) -> np.ndarray:
    """(n_first, delta): the kernel distance after the first checkpoint (10 steps) at the smallest tau, from the live
    seeds of ``m`` first, then from seeds seed + len(live seeds), ... trained here for 10 steps."""
    n_first = checks.positive_int("n_first", n_first)
    taus, deltas = live["taus"], live["deltas"]
    first = list(m["kdist"][1, :, 0])
    for s_ in range(seed + len(first), seed + max(len(first), n_first)):
        p_ = relu_networks.teacher_student(d, n, h, n_teacher, taus[:1], deltas, s_)
        r_ = relu_networks.gradient_descent(p_["X"], p_["y"], p_["a0"][0], p_["W0"][0], base_lr / taus[0] ** 2, [10])
        K0_ = relu_networks.ntk(p_["X"], p_["a0"][0], p_["W0"][0])
        K10_ = relu_networks.ntk(p_["X"], r_["a"][-1], r_["W"][-1])
        first.append([kernel_distance(K0_[j], K10_[j]) for j in range(deltas.size)])
    return np.array(first)[:n_first]


def fig1a_runs(n_teacher, seeds, steps, snapshots=100, n=20, h=50, tau=0.1, lr=0.05) -> dict:
    """Fig. 1(a)'s runs in d = 2: ``n`` points, width ``h``, tau with delta = -1 and 1, ``steps`` GD steps at ``lr``.
    Returns ``problem`` and ``run`` of the first seed (``snapshots`` + 1 snapshots) and ``turn`` (seeds, 2): the
    median turn of the first-layer directions (:func:`relu_checks.direction_turn`) from init to ``steps``."""
    steps = checks.positive_int("steps", steps)
    if not seeds:
        raise ValueError("seeds must be non-empty")
    ps = [relu_networks.teacher_student(2, n, h, n_teacher, [tau], [-1.0, 1.0], s_) for s_ in seeds]
    snap = list(range(0, steps + 1, max(1, steps // snapshots)))
    run = relu_networks.gradient_descent(ps[0]["X"], ps[0]["y"], ps[0]["a0"][0], ps[0]["W0"][0], lr, snap)
    stack = lambda key, i=None: np.stack([q[key] if i is None else q[key][i] for q in ps])
    rs = relu_networks.gradient_descent(stack("X")[:, None], stack("y")[:, None], stack("a0", 0), stack("W0", 0), lr,
                                        [0, steps])
    return dict(problem=ps[0], run=run, turn=direction_turn(rs["W"][0], rs["W"][-1]))
