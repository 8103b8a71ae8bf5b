"""Part II, Sec. 5 and App. D.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the readings of the stored
paper-scale sets of ``tools/run_relu_grid.py`` (``book/data/relu_grid``: the (tau, delta) grid of Fig. 1(b), 5(b)
and 10; ``book/data/relu_sizes``: the size study of the end ranking) for the chapter ``grq_relu_rich``.

A stored set is a dict of arrays (:func:`markovlib.richlazy.relu_checks.load_stored`): ``steps``, ``seeds``,
``taus``/``tau``, ``deltas`` and the metrics of :data:`markovlib.richlazy.relu_batch.METRICS`, each (T, seeds, tau,
delta) for the grid and (sizes, T, seeds, delta) for the size study.

- :func:`grid_slice_error`: the first checkpoints of one seed at the grid's corners and centre, re-executed;
- :func:`grid_counts`: the per-seed claims of Fig. 1(b), 5(b) and 10 over the stored seeds;
- :func:`sizes_cross_check`: the size study at the grid's size against the grid's own runs at the same tau;
- :func:`size_study`: the end ranking per size and horizon (:func:`relu_checks.size_ranking`) with its summaries;
- :func:`common_cells_difference` and :func:`end_map`: the end map at the paper's horizon
  (``book/data/relu_endmap_1e5``, a 5 x 5 subgrid of the grid's (tau, delta) to 10^5 steps) against the other sets,
  and its end ranking per tau.
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from .relu_batch import METRICS
from .relu_checks import size_ranking, step_index
from .relu_grid import train_grid
from .relu_rich import corner_flags


def _relative(a, b) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-12)))


def _at_scale(a, b) -> float:
    """max |a - b| over the largest |a|: the difference at the metric's own scale over the compared entries, so that
    a value that is zero in exact arithmetic (the kernel distance at step 0, stored as -2.2e-16) is not compared
    with itself; the absolute difference where every |a| is 0."""
    scale = float(np.max(np.abs(a)))
    diff = float(np.max(np.abs(a - b)))
    return diff / scale if scale > 0 else diff


def _slice(G, settings, max_step):
    taus, deltas, steps = G["taus"], G["deltas"], G["steps"]
    cps = [int(s) for s in steps if s <= max_step]
    if len(cps) < 2:
        raise ValueError(f"max_step must reach at least two stored checkpoints, got {max_step!r}")
    sl_t = sorted({0, len(taus) // 2, len(taus) - 1})
    sl_d = sorted({0, len(deltas) // 2, len(deltas) - 1})
    sl = dict(settings, taus=[float(taus[i]) for i in sl_t], deltas=[float(deltas[j]) for j in sl_d],
              seeds=[int(G["seeds"][0])])
    return sl, sl_t, sl_d, cps


def grid_slice_perturbation(G, settings, max_step, ulps=1) -> float:
    """The slice of :func:`grid_slice_error` trained twice, once from the student's initial weights (a0, W0) moved
    by ``ulps`` rounding units (a factor 1 + ulps 2^-52): the largest difference between the two runs over every
    metric, each at its own scale. It measures how far one rounding unit in the inputs carries over these steps,
    the yardstick of the slice's tolerance on another machine's BLAS (issue 35, item 5)."""
    from threadpoolctl import threadpool_limits

    from .relu_batch import train_networks
    from .relu_grid import problems

    ulps = checks.positive_int("ulps", ulps)
    sl, _, _, cps = _slice(G, settings, max_step)
    p = problems(sl, sl["seeds"])
    runs = []
    with threadpool_limits(limits=1):
        for factor in (1.0, 1.0 + ulps * 2.0 ** -52):
            runs.append(train_networks(p["X"], p["y"], p["a0"] * factor, p["W0"] * factor, p["lr"][None], cps,
                                       X_test=p["X_test"], y_test=p["y_test"]))
    return max(_at_scale(runs[0][m], runs[1][m]) for m in METRICS)


def grid_slice_error(G, settings, max_step) -> tuple[float, list[int], int]:
    """Re-execute the stored grid ``G`` (settings ``settings`` of its manifest) for its first seed at the corners
    and centre of (tau, delta), at the stored checkpoints up to ``max_step``; returns (the largest difference over
    every metric, each at its own scale over the slice (:func:`_at_scale`), the checkpoints, the number of grid
    points)."""
    sl, sl_t, sl_d, cps = _slice(G, settings, max_step)
    live = train_grid(sl, sl["seeds"], cps)
    err = max(_at_scale(G[m][: len(cps), 0][np.ix_(range(len(cps)), sl_t, sl_d)], live[m][:, 0]) for m in METRICS)
    return err, cps, len(sl_t) * len(sl_d)


def grid_counts(G, t_fast, move_margin) -> dict:
    """The stored grid's claims per seed (boolean arrays) at the smallest tau: ``fastest`` (upstream below balanced
    and downstream after ``t_fast`` steps), ``fastest_all`` (the lowest of every delta), ``fig5b`` and ``fig5b_half``
    (Fig. 5(b) by ``move_margin`` at the horizon H and at H / 2), ``end_up_bal`` and ``end_up_all`` (upstream below
    balanced / the lowest of all at H); and ``kd_lazy`` (the largest kernel distance at the largest tau), ``best``
    (tau, delta) of the lowest seed-mean test loss at H, ``train_drop`` (median small-tau upstream train loss at H / 10
    over H) and ``test_move`` (tau, delta): median |test loss at H / test loss at H / 10 - 1|."""
    steps = G["steps"]
    H = int(steps[-1])
    i_fast, i_tenth, i_half = (step_index(steps, c) for c in (t_fast, H // 10, H // 2))
    TL = G["test_loss"][:, :, 0]
    up = TL.shape[-1] - 1
    m = dict(test_loss=G["test_loss"], kdist=G["kernel_distance"], hamming=G["hamming"], pdist=G["param_distance"])
    end = corner_flags(m, i_fast, 1.0, 1.0, move_margin)
    half = corner_flags({k: v[: i_half + 1] for k, v in m.items()}, i_fast, 1.0, 1.0, move_margin)
    mean_end = G["test_loss"][-1].mean(axis=0)
    return dict(H=H, fastest=end["fastest"], fastest_all=TL[i_fast].argmin(axis=1) == up, kd_lazy=end["kd_lazy"],
                fig5b=end["fig5b"], fig5b_half=half["fig5b"], end_up_bal=end["L_up"][-1] < end["L_bal"][-1],
                end_up_all=TL[-1].argmin(axis=1) == up,
                best=np.unravel_index(int(mean_end.argmin()), mean_end.shape),
                train_drop=float(np.median(G["train_loss"][i_tenth, :, 0, up] / G["train_loss"][-1, :, 0, up])),
                test_move=np.median(np.abs(G["test_loss"][-1] / G["test_loss"][i_tenth] - 1), axis=0))


def sizes_cross_check(G, SZ, size) -> dict:
    """The size study ``SZ`` at the grid's ``size`` (d, n) against the grid ``G``'s runs at the study's tau (the
    same seeds, deltas and draws, another batching): the largest relative difference ``cross`` over every metric and
    common checkpoint; ``seeds``, ``deltas``, ``checkpoints`` say what was compared."""
    sizes = SZ["sizes"]
    k = int(np.flatnonzero((sizes[:, 0] == size[0]) & (sizes[:, 1] == size[1]))[0])
    i_tau = int(np.flatnonzero(np.isclose(G["taus"], float(SZ["tau"])))[0])
    common = [int(c) for c in G["steps"] if c in SZ["steps"]]
    cols = [int(np.flatnonzero(np.isclose(G["deltas"], v))[0]) for v in SZ["deltas"]]
    rows = [int(np.flatnonzero(G["seeds"] == sd)[0]) for sd in SZ["seeds"]]
    cross = 0.0
    for m in METRICS:
        a_ = G[m][[step_index(G["steps"], c) for c in common]][:, rows][:, :, i_tau][:, :, cols]
        b_ = SZ[m][k][[step_index(SZ["steps"], c) for c in common]]
        cross = max(cross, _relative(a_, b_))
    return dict(cross=cross, size=tuple(int(v) for v in sizes[k]), seeds=len(rows), deltas=len(cols),
                checkpoints=common)


def size_study(SZ, horizons) -> dict:
    """The size study's end ranking at the stored ``horizons`` (those stored): upstream (the largest delta) against
    balanced (delta 0) per size and horizon by :func:`relu_checks.size_ranking` (``rows``, ``verdicts``, ``z``,
    ``n_tests``); ``ratio`` {(d, n, step): median test loss upstream / balanced}; ``bal_wins`` = the seeds in which
    balanced ends below upstream at the largest size and horizon (a fraction text); ``summary``: the verdicts in
    words; ``sizes`` [(d, n)] and ``horizons``."""
    steps, deltas, sizes, TL = SZ["steps"], SZ["deltas"], SZ["sizes"], SZ["test_loss"]
    up, bal = int(np.flatnonzero(deltas == deltas.max())[0]), int(np.flatnonzero(deltas == 0)[0])
    horizons = [int(c) for c in horizons if c in steps]
    if not horizons:
        raise ValueError("horizons must hold at least one stored checkpoint")
    rows, verdicts, z = size_ranking(TL, sizes, steps, horizons, up, bal)
    size_list = [tuple(int(v) for v in s) for s in sizes]
    ratio = {(*dn, c): float(np.median(TL[k, step_index(steps, c), :, up] / TL[k, step_index(steps, c), :, bal]))
             for k, dn in enumerate(size_list) for c in horizons}
    t_last = step_index(steps, horizons[-1])
    bal_wins = fraction(int(np.sum(TL[-1, t_last, :, bal] < TL[-1, t_last, :, up])), TL.shape[2])
    by_cell = {(r["d"], r["n"], r["steps"]): r for r in rows}
    summary = "; ".join(f"at (d, n) = ({d_}, {n_}): " + ", ".join(
        f"{verdicts[(d_, n_, c)]} at {c} steps ({by_cell[(d_, n_, c)]['upstream below balanced']} seeds upstream lower)"
        for c in horizons) for d_, n_ in size_list)
    return dict(rows=rows, verdicts=verdicts, z=z, n_tests=len(rows), ratio=ratio, bal_wins=bal_wins, summary=summary,
                sizes=size_list, horizons=horizons, cells=by_cell, up=up, bal=bal)


def horizon_cross_check(SZ_long, SZ) -> dict:
    """The longer size study ``SZ_long`` (one size, to the paper's 10^5 steps) against the size study ``SZ`` at that
    size: every metric at every common seed, delta and checkpoint, each at its own scale (:func:`_at_scale`; the two
    sets were made by separate invocations of the tool with other task batching). Returns the largest difference,
    the size, the common seeds and checkpoints."""
    size = tuple(int(v) for v in SZ_long["sizes"][0])
    k = [i for i, dn in enumerate(SZ["sizes"]) if tuple(int(v) for v in dn) == size]
    if len(SZ_long["sizes"]) != 1 or not k:
        raise ValueError(f"SZ_long must hold one size that SZ holds too, got {SZ_long['sizes'].tolist()}")
    seeds = sorted(set(SZ_long["seeds"].tolist()) & set(SZ["seeds"].tolist()))
    cps = sorted(set(SZ_long["steps"].tolist()) & set(SZ["steps"].tolist()))
    if not seeds or len(cps) < 2:
        raise ValueError("the two sets share no seed or fewer than two checkpoints")
    pick = lambda S, kk: S[kk][np.ix_([list(S["steps"]).index(c) for c in cps],  # noqa: E731
                                     [list(S["seeds"]).index(s) for s in seeds], range(len(S["deltas"])))]
    cross = max(_at_scale(pick({**SZ, m: SZ[m][k[0]]}, m), pick({**SZ_long, m: SZ_long[m][0]}, m)) for m in METRICS)
    return dict(cross=cross, size=size, seeds=len(seeds), checkpoints=cps)


def still_moving(SZ_long, start, end) -> dict:
    """Fig. 10's remark read over [start, end] (stored checkpoints) at the one size of ``SZ_long``: per delta, the
    median over the seeds of |metric(end) / metric(start) - 1| for the train loss, the test loss and the kernel,
    Hamming and parameter distances."""
    steps = list(SZ_long["steps"])
    if start not in steps or end not in steps or end <= start:
        raise ValueError(f"start < end must be stored checkpoints, got {start!r}, {end!r}")
    i, j = steps.index(start), steps.index(end)
    out = {}
    for m in ("train_loss", "test_loss", "kernel_distance", "hamming", "param_distance"):
        a, b = SZ_long[m][0, i], SZ_long[m][0, j]  # (seed, delta)
        out[m] = [float(np.median(np.abs(b[:, d] / a[:, d] - 1))) for d in range(a.shape[1])]
    return out


def mean_ratio(SZ_long, step) -> float:
    """The seed-mean test loss of upstream (the largest delta) over that of balanced (delta 0) at ``step``, at the one
    size of ``SZ_long``: the paper's figures plot means over seeds, where the size study counts seeds."""
    steps, deltas = list(SZ_long["steps"]), SZ_long["deltas"]
    if step not in steps:
        raise ValueError(f"step must be a stored checkpoint, got {step!r}")
    up, bal = int(np.flatnonzero(deltas == deltas.max())[0]), int(np.flatnonzero(deltas == 0)[0])
    TL = SZ_long["test_loss"][0, steps.index(step)]
    return float(TL[:, up].mean() / TL[:, bal].mean())


def _as_grid(S) -> dict:
    """A stored set as a grid: ``S`` itself when it has ``taus``; a size study of one size as a grid of one tau."""
    if "taus" in S:
        return S
    if len(S["sizes"]) != 1:
        raise ValueError(f"a size study must hold one size to be read as a grid, got {S['sizes'].tolist()}")
    return dict({m: S[m][0][:, :, None, :] for m in METRICS}, taus=np.array([float(S["tau"])]), deltas=S["deltas"],
                seeds=S["seeds"], steps=S["steps"])


def common_cells_difference(A, B, metrics=METRICS) -> dict:
    """Two stored sets (grids, or a size study of one size) where they overlap: the (tau, delta) cells both hold
    (the grids' values equal to 1e-12 relative), their common seeds and checkpoints. Returns ``cross``, the largest
    difference over ``metrics``, each at its own scale over the overlap (max |a - b| / max |a|, scale from ``A``);
    ``per_metric`` {metric: (per common checkpoint), (per common delta)} of those scaled differences; the overlap's
    ``cells``, ``seeds``, ``checkpoints`` and ``deltas``. The sets' draws are shared across cells
    (:func:`relu_networks.student_init`), so the same seed and cell is the same run, whatever grid it was part of."""
    A, B = _as_grid(A), _as_grid(B)
    if not metrics or any(m not in METRICS for m in metrics):
        raise ValueError(f"metrics must be a non-empty selection of {list(METRICS)}, got {metrics!r}")

    def match(a, b):
        pairs = [(i, j) for i, x in enumerate(a) for j, y in enumerate(b) if np.isclose(x, y, rtol=1e-12, atol=1e-12)]
        return [i for i, _ in pairs], [j for _, j in pairs]

    (ta, tb), (da, db) = match(A["taus"], B["taus"]), match(A["deltas"], B["deltas"])
    sa, sb = match(A["seeds"], B["seeds"])
    ca, cb = match(A["steps"], B["steps"])
    if not (ta and da and sa) or len(ca) < 2:
        raise ValueError("the two sets share no cell or seed, or fewer than two checkpoints")
    per_metric = {}
    for m in metrics:
        a, b = A[m][np.ix_(ca, sa, ta, da)], B[m][np.ix_(cb, sb, tb, db)]
        scale = float(np.max(np.abs(a)))
        diff = np.abs(a - b) / scale if scale > 0 else np.abs(a - b)
        per_metric[m] = (diff.max(axis=(1, 2, 3)), diff.max(axis=(0, 1, 2)))
    return dict(cross=float(max(v[0].max() for v in per_metric.values())), per_metric=per_metric,
                cells=len(ta) * len(da), seeds=len(sa), checkpoints=[int(A["steps"][i]) for i in ca],
                deltas=[float(A["deltas"][i]) for i in da])


def end_map(EM, level=0.05) -> dict:
    """The end map ``EM`` (a stored grid) read at its horizon, by the procedure fixed before it was read
    (book/_drafts/relu_endmap.md): ``median`` (tau, delta) test loss over the seeds; per tau (``rows``, ``verdicts``)
    the seeds in which upstream (the largest delta) ends below balanced (delta 0), decided where the two-sided Wilson
    interval at family-wise ``level`` (Bonferroni over the taus) lies on one side of 1/2, with the delta of the
    lowest median; ``caption``: at the smallest tau, the seeds in which upstream ends lowest of every delta, with its
    two-sided Wilson interval at ``level`` and ``caption_verdict`` (confirmed: above 1/2, refuted: below); read
    after the data, ``upstream_half``: the seeds whose lowest delta at the smallest tau is > 0; ``best`` and
    ``best_mean`` (tau, delta) of the lowest median and seed mean (the paper's figures plot means), ``mean``;
    ``deciding`` and ``caption_deciding``: (the smallest count that decides above 1/2, the largest below; None
    where no count can) at the two levels; ``H``, ``n_seeds``."""
    from statistics import NormalDist

    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    TL = checks.finite_array("test_loss", EM["test_loss"][-1], ndim=3)   # (seeds, tau, delta)
    taus, deltas = np.asarray(EM["taus"]), np.asarray(EM["deltas"])
    zero = np.flatnonzero(deltas == 0)
    if not zero.size:
        raise ValueError("the map's deltas must hold 0 (balanced)")
    up, bal, S = int(deltas.argmax()), int(zero[0]), TL.shape[0]
    median = np.median(TL, axis=0)
    z = NormalDist().inv_cdf(1 - level / (2 * len(taus)))
    rows, verdicts = [], {}
    for i, tau in enumerate(taus):
        k = int(np.sum(TL[:, i, up] < TL[:, i, bal]))
        lo, hi = wilson_interval(k, S, z=z)
        verdicts[i] = "upstream ends lower" if lo > 0.5 else ("balanced ends lower" if hi < 0.5 else "not decided")
        rows.append({"tau": fixed(float(tau), 3), "upstream below balanced": fraction(k, S),
                     f"Wilson ({1 - level / len(taus):.3f})": f"[{fixed(lo, 2)}, {fixed(hi, 2)}]",
                     "median ratio up / bal": fixed(float(np.median(TL[:, i, up] / TL[:, i, bal])), 2),
                     "delta of the lowest median": f"{float(deltas[median[i].argmin()]):g}", "verdict": verdicts[i]})
    i0 = int(taus.argmin())
    lowest = TL[:, i0].argmin(axis=1)
    k_cap = int(np.sum(lowest == up))
    z_cap = NormalDist().inv_cdf(1 - level / 2)
    lo, hi = wilson_interval(k_cap, S, z=z_cap)
    caption_verdict = "confirmed" if lo > 0.5 else ("refuted" if hi < 0.5 else "not decided")
    mean = TL.mean(axis=0)
    best, best_mean = (np.unravel_index(int(v.argmin()), v.shape) for v in (median, mean))
    # the counts that can decide with S seeds: the smallest k whose interval lies above 1/2, the largest below
    decide = lambda z: (min((k for k in range(S + 1) if wilson_interval(k, S, z=z)[0] > 0.5), default=None),  # noqa: E731
                        max((k for k in range(S + 1) if wilson_interval(k, S, z=z)[1] < 0.5), default=None))
    return dict(median=median, mean=mean, rows=rows, verdicts=verdicts, caption=fraction(k_cap, S),
                caption_interval=(lo, hi), caption_verdict=caption_verdict,
                upstream_half=fraction(int(np.sum(deltas[lowest] > 0)), S),
                best=(float(taus[best[0]]), float(deltas[best[1]])),
                best_mean=(float(taus[best_mean[0]]), float(deltas[best_mean[1]])),
                deciding=decide(z), caption_deciding=decide(z_cap), H=int(EM["steps"][-1]), n_seeds=S, up=up, bal=bal)
