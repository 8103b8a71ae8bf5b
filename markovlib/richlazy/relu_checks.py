"""Part II, Sec. 5 and App. C of "Get rich quick" (Kunin et al., NeurIPS 2024): the measurements with which the ReLU
chapters (``grq_relu_dynamics``, ``grq_relu_rich``) check their claims.

- :func:`seed_count`: a claim over seeds as a count k/n with its 95 % Wilson interval;
- :func:`random_network`, :func:`regime_network`: the random problems on which the beta_k equations of Sec. 5 /
  App. C.2 are checked against autograd (neurons spanning delta_k of both signs; neurons at a set |delta_k| / |mu_k|);
- :func:`velocity_error`: the error of derived (d bhat_k/dt, d mu_k/dt, d beta_k/dt) against a reference, each on
  its joint scale;
- :func:`regime_errors`: the regime approximations of Sec. 5 against the exact velocities, as ratios to the derived
  bounds (relative errors eta_a eta_w mu_k^2 / delta_k^2 upstream, 2 eta_a eta_w mu_k^2 / delta_k^2 for mu_k; the
  downstream turning rate eta_a eta_w |mu_k| / |delta_k| ||(I - bhat_k bhat_k^T) xi_k||);
- :func:`direction_turn`, :func:`teacher_alignment`: the two measures of the left panel of Fig. 1(a).
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from .relu_networks import check_params, layer_scales


def seed_count(flags, unit: str = "") -> tuple[int, int, str]:
    """(k, n, text) for a per-seed boolean array: k seeds of n hold, and the text 'k/n[ unit] (95 % Wilson [lo,
    hi])' with the two-sided 95 % Wilson interval of k/n (two decimals)."""
    flags = np.asarray(flags)
    if flags.dtype != bool or flags.size == 0:
        raise ValueError(f"flags must be a non-empty boolean array, got dtype {flags.dtype} and size {flags.size}")
    if not isinstance(unit, str):
        raise ValueError(f"unit must be text, got {unit!r}")
    k, n = int(np.sum(flags)), int(flags.size)
    lo, hi = wilson_interval(k, n)
    return k, n, f"{fraction(k, n)}{' ' + unit if unit else ''} (95 % Wilson [{fixed(lo, 2)}, {fixed(hi, 2)}])"


def _generator(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    return rng


def random_network(rng, n, d, h, scales=(0.1, 1.0, 3.0)):
    """A random problem for the flow equations: X (n, d) and y (n,) standard normal, then W (h, d) and a (h,)
    standard normal with each row of W and each readout multiplied by a factor drawn from ``scales``, so that
    delta_k = a_k^2 - ||w_k||^2 spans strongly negative to strongly positive values. Draws from ``rng`` in that
    order; returns (X, y, a, W)."""
    rng = _generator(rng)
    n, d, h = (checks.positive_int(k, v) for k, v in (("n", n), ("d", d), ("h", h)))
    scales = checks.finite_array("scales", scales, ndim=1)
    if scales.size == 0 or np.any(scales <= 0):
        raise ValueError(f"scales must be a non-empty list of positive factors, got {scales.tolist()}")
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    W = rng.standard_normal((h, d)) * rng.choice(scales, h)[:, None]
    a = rng.standard_normal(h) * rng.choice(scales, h)
    return X, y, a, W


def regime_network(rng, n, d, h, ratio, sign):
    """A random problem whose neurons sit at |delta_k| / |mu_k| = ``ratio`` with the sign ``sign`` of delta_k
    (+1 upstream, 0 balanced, -1 downstream; eta_a = eta_w = 1): X (n, d), y (n,) standard normal, |mu_k| uniform in
    [0.05, 0.5], (|a_k|, ||w_k||) from :func:`markovlib.richlazy.relu_networks.layer_scales` (|a_k| ||w_k|| = |mu_k|,
    a_k^2 - ||w_k||^2 = delta_k), uniform directions and random signs of a_k. Returns (X, y, a, W)."""
    rng = _generator(rng)
    n, d, h = (checks.positive_int(k, v) for k, v in (("n", n), ("d", d), ("h", h)))
    ratio = checks.positive_real("ratio", ratio)
    if sign not in (-1, 0, 1):
        raise ValueError(f"sign must be -1, 0 or 1 (downstream, balanced, upstream), got {sign!r}")
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    mu_size = rng.uniform(0.05, 0.5, h)
    a_abs, w_abs = layer_scales(float(sign) * ratio * mu_size, np.sqrt(mu_size))
    U = rng.standard_normal((h, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    a = a_abs * rng.choice([-1.0, 1.0], h)
    return X, y, a, w_abs[:, None] * U


def _triple(name, value, h):
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise ValueError(f"{name} must be the triple (d bhat/dt, d mu/dt, d beta/dt)")
    out = [checks.finite_array(f"{name}[{i}]", v) for i, v in enumerate(value)]
    if out[0].shape != out[2].shape or out[1].shape != out[0].shape[:-1] or out[1].shape[-1:] != (h,):
        raise ValueError(f"{name} must hold arrays of shapes (h, d), (h,), (h, d) with h = {h}")
    return out


def velocity_error(derived, reference, mu) -> float:
    """The largest error of ``derived`` = (d bhat/dt, d mu/dt, d beta/dt) against ``reference`` (the same triple),
    each on its joint scale: d mu/dt and d beta/dt against max |d beta/dt| of the reference, d bhat/dt against
    max_k ||d beta_k/dt|| / |mu_k|, the size of the terms that the projection (I - bhat bhat^T) cancels (the largest
    entry of d bhat/dt itself is 0 where no neuron turns, d = 1 for instance, and a relative error would be 0/0)."""
    mu = checks.finite_array("mu", mu, ndim=1)
    if np.any(mu == 0):
        raise ValueError("mu must be non-zero (beta_k = 0 has no direction)")
    mine, ref = _triple("derived", derived, mu.size), _triple("reference", reference, mu.size)
    scale_beta = np.max(np.abs(ref[2])) + 1e-300
    scale_bhat = np.max(np.linalg.norm(ref[2], axis=-1) / np.abs(mu)) + 1e-300
    return max(float(np.max(np.abs(m - r)) / s) for m, r, s in zip(mine, ref, (scale_bhat, scale_beta, scale_beta)))


def regime_errors(bhat, mu, delta, xi, exact, approx, regime, allowance) -> dict:
    """The approximations of Sec. 5 (``approx`` = (d bhat/dt, d mu/dt) of
    :func:`markovlib.richlazy.relu_dynamics.regime_velocity`) against the ``exact`` velocities, eta_a = eta_w = 1.

    A neuron inactive on every point (xi_k = 0, possible for the ReLU) has zero velocity in the flow and in every
    approximation (all are linear in xi_k): it is within its bound when both are exactly 0, and its relative error
    (0/0) is not formed. For ``regime="balanced"`` returns {"balanced_err": the largest error of the exact balanced
    formulas (d bhat/dt on the scale of the largest live exact one, d mu/dt relative)}. Otherwise returns {"worst":
    the largest ratio of an error to its derived bound (upstream: relative errors over mu^2/delta^2 and
    2 mu^2/delta^2; downstream: the turning rate over |mu|/|delta| ||(I - bhat bhat^T) xi|| and the error of d mu/dt
    over 2 mu^2/delta^2; ``allowance`` added to each relative bound), "within": the neurons with ratio at most
    1 + allowance plus the inactive ones with both velocities 0, "idle": the inactive neurons}."""
    if regime not in ("upstream", "balanced", "downstream"):
        raise ValueError(f"regime must be upstream, balanced or downstream, got {regime!r}")
    allowance = float(checks.finite_array("allowance", allowance, ndim=0))
    if not 0 <= allowance < 1:
        raise ValueError(f"allowance must lie in [0, 1) (a rounding allowance), got {allowance!r}")
    bhat, xi = checks.finite_array("bhat", bhat), checks.finite_array("xi", xi)
    mu, delta = checks.finite_array("mu", mu), checks.finite_array("delta", delta)
    (db_t, dm_t), (db_a, dm_a) = ([checks.finite_array(f"{nm}[{i}]", v) for i, v in enumerate(pair)]
                                  for nm, pair in (("exact", exact), ("approx", approx)))
    if not (bhat.shape == xi.shape == db_t.shape == db_a.shape and mu.shape == delta.shape == dm_t.shape
            == dm_a.shape == bhat.shape[:-1]):
        raise ValueError("bhat, xi and the d bhat/dt must have shape (h, d), mu, delta and the d mu/dt shape (h,)")
    live = np.any(xi != 0, axis=-1)
    idle_zero = ~live & np.all(db_t == 0, axis=-1) & (dm_t == 0) & np.all(db_a == 0, axis=-1) & (dm_a == 0)
    rel_mu = np.abs(dm_a - dm_t)[live] / np.abs(dm_t)[live]
    if regime == "balanced":
        err = max(np.max(np.abs(db_a - db_t)) / np.max(np.abs(db_t[live])), np.max(rel_mu)) if live.any() else 0.0
        return {"balanced_err": float(err)}
    q = (mu**2 / delta**2)[live]
    if regime == "upstream":
        rel_b = np.linalg.norm((db_a - db_t)[live], axis=-1) / np.linalg.norm(db_t[live], axis=-1)
        used = np.maximum(rel_b / (q + allowance), rel_mu / (2 * q + allowance))
    else:
        perp = np.linalg.norm(xi - np.sum(bhat * xi, -1)[:, None] * bhat, axis=-1)
        rate = np.linalg.norm(db_t[live], axis=-1) / (np.abs(mu) / np.abs(delta) * perp)[live]
        used = np.maximum(rate, rel_mu / (2 * q + allowance))
    return {"worst": float(np.max(used)) if used.size else 0.0,
            "within": int(np.sum(used <= 1 + allowance)) + int(np.sum(idle_zero)), "idle": int(np.sum(~live))}


def direction_turn(W0, W1):
    """The median over neurons (last-but-one axis) of the angle between w_k(0) and w_k(T), in radians."""
    W0, W1 = checks.finite_array("W0", W0), checks.finite_array("W1", W1)
    if W0.shape != W1.shape or W0.ndim < 2:
        raise ValueError(f"W0 and W1 must have the same shape (..., h, d), got {W0.shape} and {W1.shape}")
    U0 = W0 / np.linalg.norm(W0, axis=-1, keepdims=True)
    U1 = W1 / np.linalg.norm(W1, axis=-1, keepdims=True)
    return np.median(np.arccos(np.clip(np.sum(U0 * U1, axis=-1), -1, 1)), axis=-1)


def teacher_alignment(a, W, W_star):
    """The neurons' alignment with a teacher: the |mu_k|-weighted mean over neurons of the cosine between w_k / ||w_k||
    (= bhat_k) and its closest teacher direction. ``a`` (S, G, h), ``W`` (S, G, h, d), ``W_star`` (S, m, d) unit
    rows; returns (S, G)."""
    a, W = check_params(a, W)
    W_star = checks.finite_array("W_star", W_star, ndim=3)
    if a.ndim != 3 or W_star.shape[0] != a.shape[0] or W_star.shape[-1] != W.shape[-1]:
        raise ValueError(f"a must have shape (S, G, h), W (S, G, h, d) and W_star (S, m, d), got {a.shape}, "
                         f"{W.shape} and {W_star.shape}")
    U = W / np.linalg.norm(W, axis=-1, keepdims=True)
    mu = np.abs(a) * np.linalg.norm(W, axis=-1)
    cos = np.max(np.einsum("sjhd,skd->sjhk", U, W_star), axis=-1)
    return np.sum(mu * cos, axis=-1) / np.sum(mu, axis=-1)


# ------------------------------------------------------------------------------------------------------------
# the stored paper-scale sets (book/data/relu_grid, book/data/relu_sizes)
# ------------------------------------------------------------------------------------------------------------
def load_stored(folder, file: str) -> tuple[dict, dict]:
    """A stored set of ``tools/run_relu_grid.py``: its manifest's checksums verified
    (:func:`markovlib.book.stored.verify_checksums`), the arrays of ``folder/file`` (an .npz) as a dict, and the
    manifest. Raises ValueError when a run is missing or diverged (then re-run the tool)."""
    from pathlib import Path

    from ..book.stored import verify_checksums

    folder = Path(folder)
    manifest = verify_checksums(folder)
    with np.load(folder / file) as z:
        data = {k: z[k] for k in z.files}
    if not (data["complete"].all() and data["finite"].all()):
        raise ValueError(f"the stored set {folder.name} has missing or diverged runs; re-run tools/run_relu_grid.py")
    return data, manifest


def step_index(steps, step) -> int:
    """The index of the checkpoint ``step`` in the stored ``steps`` (ValueError if it was not stored)."""
    hit = np.flatnonzero(np.asarray(steps) == step)
    if hit.size == 0:
        raise ValueError(f"step {step!r} is not a stored checkpoint")
    return int(hit[0])


def size_ranking(test_loss, sizes, steps, horizons, i_up, i_bal, level=0.05):
    """The end ranking of the size study, by the procedure fixed before its data were read: per size (d, n) and
    horizon, the seeds in which upstream (delta index ``i_up``) ends below balanced (``i_bal``); *decided* where the
    two-sided Wilson interval of that count at family-wise ``level`` over all (size, horizon) cells (Bonferroni) lies
    on one side of 1/2. ``test_loss`` is (sizes, steps, seeds, deltas). Returns (rows for a table, {(d, n, step):
    verdict}, the z of the intervals)."""
    from statistics import NormalDist

    TL = checks.finite_array("test_loss", test_loss, ndim=4)
    sizes = np.asarray(sizes)
    if not 0 < level < 1 or sizes.shape != (TL.shape[0], 2) or not horizons:
        raise ValueError(f"level must lie in (0, 1), sizes be (sizes, 2) with one row per size of test_loss and "
                         f"horizons non-empty, got {level!r}, {sizes.shape}, {horizons!r}")
    n_tests = len(sizes) * len(horizons)
    z = NormalDist().inv_cdf(1 - level / (2 * n_tests))
    rows, verdicts = [], {}
    for k, (d, n) in enumerate(sizes):
        for c in horizons:
            t = step_index(steps, c)
            up, bal = TL[k, t, :, i_up], TL[k, t, :, i_bal]
            up_wins = up < bal
            kk, nn = int(up_wins.sum()), up_wins.size
            lo, hi = wilson_interval(kk, nn, z=z)
            verdict = "upstream ends lower" if lo > 0.5 else ("balanced ends lower" if hi < 0.5 else "not decided")
            verdicts[(int(d), int(n), c)] = verdict
            rows.append({"d": int(d), "n": int(n), "steps": c, "upstream below balanced": fraction(kk, nn),
                         f"Wilson ({1 - level / n_tests:.4f})": f"[{fixed(lo, 2)}, {fixed(hi, 2)}]",
                         "median test loss up / bal": fixed(float(np.median(up / bal)), 2),
                         "verdict": verdict})
    return rows, verdicts, z
