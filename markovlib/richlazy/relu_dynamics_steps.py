"""Part II, Sec. 5 and App. C.2 of "Get rich quick" (Kunin et al., NeurIPS 2024): the steps of the chapter
``grq_relu_dynamics``, one call each.

- :func:`ode_check`: d beta_k/dt = -M_k xi_k and the (bhat_k, mu_k) equations (Prop. grq-prop-c-2-beta) against
  :func:`relu_reference.torch_velocities`;
- :func:`regime_check`: the upstream / downstream approximations of Sec. 5 within their derived bounds, the
  balanced formulas exact (Prop. grq-prop-sec5-regimes);
- :func:`xor_runs`, :func:`readout_changes`, :func:`partitions`: the XOR-like task of Fig. 5(a) at delta = 1, 0, -1
  (upstream, balanced, downstream), the readouts' changes (Cor. grq-cor-upstream-readout) and the partitions;
- :func:`fig1a_left`: the left panel of Fig. 1(a) at delta = 0, tau = 0.1 and 2 (turn, kernel distance, alignment);
- :func:`explorer_check`: the explorer's frames against a second computation.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import relu_checks, relu_drawings, relu_dynamics, relu_networks, relu_reference
from .minimal_model import conserved_delta, kernel_distance

NAMES = ("upstream", "balanced", "downstream")  # delta = 1, 0, -1 of the XOR runs


def ode_check(rng, gammas, n, d, h, eta_a, eta_w, trials=3) -> tuple[float, list[float]]:
    """``trials`` random networks per leaky slope (:func:`relu_checks.random_network` from ``rng``): the largest
    error of ``relu_dynamics.flow_velocities`` against the autograd reference (:func:`relu_checks.velocity_error`),
    and every neuron's delta_k = eta_w a_k^2 - eta_a ||w_k||^2."""
    err, seen = 0.0, []
    for gamma in gammas:
        for _ in range(checks.positive_int("trials", trials)):
            X, y, a, W = relu_checks.random_network(rng, n, d, h)
            reference = relu_reference.torch_velocities(X, y, a, W, gamma, eta_a, eta_w)
            derived = relu_dynamics.flow_velocities(X, y, a, W, gamma, eta_a, eta_w)
            err = max(err, relu_checks.velocity_error(derived, reference, relu_dynamics.spherical_coordinates(a, W)[1]))
            seen.extend(conserved_delta(a, W, eta_a, eta_w).tolist())
    return float(err), seen


def regime_check(rng, ratios, n, d, h, allowance) -> dict:
    """For each |delta_k| / |mu_k| in ``ratios`` and each regime, a network of :func:`relu_checks.regime_network`
    (from ``rng``); :func:`relu_checks.regime_errors` against the autograd velocities (ReLU, rates 1). Returns
    ``worst`` (largest error over the derived bound, upstream and downstream), ``balanced`` (largest error of the
    balanced formulas), ``within`` / ``checked`` neurons and ``idle`` (inactive on every point)."""
    out = dict(worst=0.0, balanced=0.0, within=0, checked=0, idle=0)
    for ratio in ratios:
        for sign, regime in ((1.0, "upstream"), (0.0, "balanced"), (-1.0, "downstream")):
            X, y, a, W = relu_checks.regime_network(rng, n, d, h, ratio, sign)
            exact = relu_reference.torch_velocities(X, y, a, W, 0.0, 1.0, 1.0)[:2]
            bhat, mu = relu_dynamics.spherical_coordinates(a, W)
            delta = conserved_delta(a, W)
            xi = relu_dynamics.driving_vector(X, y, a, W)
            approx = relu_dynamics.regime_velocity(bhat, mu, delta, xi, regime)
            res = relu_checks.regime_errors(bhat, mu, delta, xi, exact, approx, regime, allowance)
            if regime == "balanced":
                out["balanced"] = max(out["balanced"], res["balanced_err"])
                continue
            out["worst"] = max(out["worst"], res["worst"])
            out["within"] += res["within"]
            out["checked"] += h
            out["idle"] += res["idle"]
    return out


def xor_runs(seeds, n, jitter, h, tau, lr_fast, steps_fast, lr, steps) -> dict:
    """Fig. 5(a): per seed the XOR-like task (``relu_dynamics.xor_task``) and a small unpaired start
    (``relu_dynamics.small_init``, seed + 1000) at delta = 1, 0, -1; gradient descent at ``lr_fast`` for
    ``steps_fast`` steps (snapshots every 5, then 50 steps), then at ``lr`` for ``steps`` (every 10, then 50).
    Returns ``tasks``, ``a0``, ``W0`` (S, 3, h[, 2]), ``run`` (a, W, loss over the snapshots) and ``times`` (the sum
    of the step sizes at each snapshot)."""
    if not seeds or steps_fast < 250 or steps < 1000:
        raise ValueError(f"seeds must be non-empty, steps_fast >= 250 and steps >= 1000, got {seeds!r}, "
                         f"{steps_fast!r}, {steps!r}")
    deltas = np.array([1.0, 0.0, -1.0])
    tasks = [relu_dynamics.xor_task(n, jitter, s_) for s_ in seeds]
    X = np.stack([t_[0] for t_ in tasks])[:, None]  # (S, 1, n, 2)
    y = np.stack([t_[1] for t_ in tasks])[:, None]
    inits = [relu_dynamics.small_init(2, h, tau, deltas, s_ + 1000) for s_ in seeds]
    a0, W0 = np.stack([i_[0] for i_ in inits]), np.stack([i_[1] for i_ in inits])
    snaps_fast = list(range(0, 250, 5)) + list(range(250, steps_fast + 1, 50))
    snaps_slow = list(range(10, 1000, 10)) + list(range(1000, steps + 1, 50))
    ra = relu_networks.gradient_descent(X, y, a0, W0, lr_fast, snaps_fast)
    rb = relu_networks.gradient_descent(X, y, ra["a"][-1], ra["W"][-1], lr, snaps_slow)
    run = {k_: np.concatenate([ra[k_], rb[k_]]) for k_ in ("a", "W", "loss")}
    times = np.concatenate([np.array(snaps_fast) * lr_fast, steps_fast * lr_fast + np.array(snaps_slow) * lr])
    return dict(tasks=tasks, a0=a0, W0=W0, run=run, times=times, h=h, tau=tau)


def readout_changes(xor) -> tuple[np.ndarray, np.ndarray, float]:
    """(rel_a, bound, drift): the largest relative change max_t ||a_k(t)| / |a_k(0)| - 1| over the snapshots and
    neurons, (S, 3); the derived bound max mu_k^2 / delta^2 (rates 1, |delta| = 1) of Cor. grq-cor-upstream-readout,
    (S, 3); the largest GD drift of delta_k over the runs."""
    run = xor["run"]
    A = np.abs(run["a"])
    rel_a = np.max(np.abs(A / A[0] - 1), axis=(0, 3))
    MU = run["a"] * np.linalg.norm(run["W"], axis=-1)
    drift = float(np.max(np.abs(conserved_delta(run["a"], run["W"]) - conserved_delta(xor["a0"], xor["W0"]))))
    return rel_a, np.max(MU**2, axis=(0, 3)) / 1.0**2, drift


def partitions(xor, n_circle, ham_frac) -> dict:
    """On ``n_circle`` points of the unit circle (the whole partition map of a network without biases): ``ham``
    (T, S, 3), the Hamming distance of the activation pattern to t = 0; ``fmax`` (T, S, 3), max |f| on the circle;
    ``early`` (S, 3), the first snapshot where ham reaches ``ham_frac`` of its final value, and ``f_early``,
    ``t_early`` there."""
    if not 0 < ham_frac < 1:
        raise ValueError(f"ham_frac must lie in (0, 1), got {ham_frac!r}")
    run = xor["run"]
    G = relu_dynamics.circle_points(n_circle)
    P0 = relu_networks.activation_pattern(G, run["W"][0])
    ham = np.stack([relu_networks.hamming_distance(relu_networks.activation_pattern(G, W_), P0) for W_ in run["W"]])
    fmax = np.stack([np.max(np.abs(relu_networks.forward(G, a_, W_)), axis=-1) for a_, W_ in zip(run["a"], run["W"])])
    early = np.argmax(ham >= ham_frac * ham[-1], axis=0)
    return dict(ham=ham, fmax=fmax, early=early, f_early=np.take_along_axis(fmax, early[None], axis=0)[0],
                t_early=xor["times"][early])


def fig1a_left(seeds, steps, lr_small, lr_large) -> dict:
    """Fig. 1(a), left: the teacher-student task in d = 2 (n = 20, h = 50, three teacher units) at delta = 0 and
    tau = 0.1 and 2 (learning rates ``lr_small``, ``lr_large``), ``steps`` GD steps (100 snapshots). Returns
    ``problems``, ``run``, and per seed and tau (S, 2): ``turn`` (median direction turn), ``kd`` (kernel distance
    of the NTK from start to end) and ``align`` (teacher alignment at the end)."""
    steps = checks.positive_int("steps", steps)
    ps = [relu_networks.teacher_student(2, 20, 50, 3, np.array([0.1, 2.0]), [0.0], s_) for s_ in seeds]
    X = np.stack([p_["X"] for p_ in ps])[:, None]
    y = np.stack([p_["y"] for p_ in ps])[:, None]
    a0, W0 = np.stack([p_["a0"][:, 0] for p_ in ps]), np.stack([p_["W0"][:, 0] for p_ in ps])
    snaps = list(range(0, steps + 1, max(1, steps // 100)))
    run = relu_networks.gradient_descent(X, y, a0, W0, np.array([lr_small, lr_large]), snaps)
    K0 = relu_networks.ntk(X, run["a"][0], run["W"][0])
    K1 = relu_networks.ntk(X, run["a"][-1], run["W"][-1])
    kd = np.array([[kernel_distance(K0[s_, j], K1[s_, j]) for j in range(2)] for s_ in range(len(ps))])
    align = relu_checks.teacher_alignment(run["a"][-1], run["W"][-1], np.stack([p_["W_star"] for p_ in ps]))
    return dict(problems=ps, run=run, turn=relu_checks.direction_turn(run["W"][0], run["W"][-1]), kd=kd, align=align)


def explorer_check(results, grid) -> dict:
    """The explorer's frames (``results`` of a static explorer over ``grid`` = {"tau": [...], "alpha": [...]}, in
    row-major order) against ``relu_drawings.recompute_frames``: ``gap`` (largest difference of test loss, kernel
    distance and Hamming at the last step), ``texts`` (readouts equal); at tau = 0.1 the smallest and at tau = 2 the
    largest kernel distance (``small_S``, ``large_S``) and Hamming distance (``small_H``, ``large_H``) over alpha."""
    n_a = len(grid["alpha"])
    if len(results) != len(grid["tau"]) * n_a or not {0.1, 2.0} <= set(grid["tau"]):
        raise ValueError("results must hold one frame per (tau, alpha) of grid, whose taus include 0.1 and 2")
    second = relu_drawings.recompute_frames(grid["tau"], grid["alpha"])
    at = lambda m, i: second[m][i // n_a, i % n_a]
    gap = max(abs(o[m] - at(m, i)) for i, o in enumerate(results) for m in second)
    texts = sum(o["text"] == relu_drawings.outcome_text(o["delta"], *(at(m, i) for m in second))
                for i, o in enumerate(results))
    res = {(o["tau"], o["alpha"]): o for o in results}
    ends = {(t, key): [res[(t, al)][key] for al in grid["alpha"]] for t in (0.1, 2.0)
            for key in ("kernel_distance_end", "hamming_end")}
    return dict(gap=float(gap), texts=int(texts), finite=all(o["finite"] for o in results),
                small_S=min(ends[(0.1, "kernel_distance_end")]), large_S=max(ends[(2.0, "kernel_distance_end")]),
                small_H=min(ends[(0.1, "hamming_end")]), large_H=max(ends[(2.0, "hamming_end")]))
