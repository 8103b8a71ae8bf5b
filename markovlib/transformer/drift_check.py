"""The SGD drift law of E(e, w) against the trap-or-plateau runs (book/trap_or_plateau, Sec. "The SGD drift law";
issue 36, item 1): regenerate a stored run, evaluate the fit-free law there, and compare it with the stored curve.

The law (:mod:`markovlib.transformer.plateau_drift`, :mod:`markovlib.transformer.sgd_drift`; proposition
``sgd-drift`` of the chapter): on the plateau the bias and the embedding vector fluctuate around the plateau point
with the Lyapunov floor C, and the other weights drift by -lr_eff grad tr(J C)/2 per step, which moves the
projection's w by ``dw`` per step independently of w; with e at its floor, E(0, w) follows w.

* :func:`regenerate` -- a stored run's model after ``steps`` steps (the Trainer is deterministic);
* :func:`law_at` -- the law at the initialization and at step ``late`` of one run;
* :func:`canonical_from_init` -- the canonical model's own prediction (its mean dynamics with the optimal bias);
* :func:`compare_run` -- one stored curve against the law: drift of w, floor of e^2, Delta E, the E_sad step;
* :func:`summarize` -- ratios law / stored per arm and overall, counts, the dependence of the drift on |w|.

Used by ``tools/check_sgd_drift.py`` (all runs, on dask) and by the chapter's deterministic slice.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks

KEY = ("p", "q", "optimizer", "lr", "seed")
PLATEAU_RATIO = 0.1  # a run is on the plateau while c-hat / c* stays below this
DIVERGENCE_NATS = 0.5  # ... and its held-out loss stays within this of H(pi) (also escape_long.plateau_end's)
RATIOS = {"ratio_dw": ("dw_law", "dw_meas"), "ratio_dE": ("dE_law", "dE_meas"), "ratio_e2": ("e2_law", "e2_meas"),
          "ratio_canonical": ("dE_canonical", "dE_meas"), "ratio_canonical_w": ("dE_canonical_w", "dE_meas"),
          "ratio_canonical_init": ("dE_canonical_init", "dE_meas_0T"), "ratio_dw_init": ("dw_law_init", "dw_meas")}


def _check_key(key):
    if len(key) != 5:
        raise ValueError(f"key must be (p, q, optimizer, lr, seed), got {key!r}")
    p, q, opt, lr, seed = key
    from .escape import OPTIMIZER_ARMS

    if opt not in OPTIMIZER_ARMS:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_ARMS)}, got {opt!r}")
    return (float(p), float(q), opt, checks.positive_real("lr", lr), checks.nonnegative_int("seed", seed))


def regenerate(key, steps, *, batch=16, clip=1.0):
    """The float64 copy of the model of run ``key`` = (p, q, optimizer, lr, seed) after ``steps`` steps, its momentum,
    its clipping norm and its training history (``transformer.escape.escape_config`` with ``batch`` and ``clip``;
    one torch thread)."""
    import torch

    from .escape import OPTIMIZER_ARMS, escape_config
    from .plateau_drift import float64_copy
    from .training import Trainer

    p, q, opt, lr, seed = _check_key(key)
    steps = checks.nonnegative_int("steps", steps)
    torch.set_num_threads(1)
    cfg = escape_config(p, q, opt, lr, seed, max(steps, 1), eval_every=0, batch=checks.positive_int("batch", batch))
    tr = Trainer(**{**cfg, "grad_clip": clip}, progress=False)
    if steps:
        tr.train()
    return float64_copy(tr.model), OPTIMIZER_ARMS[opt]["momentum"], tr.config.grad_clip, tr.history


def law_at(key, late, *, batch=16, clip=1.0) -> dict:
    """The law for run ``key`` at its initialization (``"init"``) and at step ``late`` (``"late"``; ``late=None``:
    the initialization only): the projection's w, its drift dw per step, the floor of e^2, the smallest curvature of
    the fast variables and Markov's bound on the share of clipped steps, (|g|^2 + tr Sigma_B)/c^2 with g = 0 on the
    plateau (``sgd_drift.clip_share_bound``)."""
    from .plateau_drift import slow_velocity
    from .sgd_drift import clip_share_bound

    key = _check_key(key)
    late = None if late is None else checks.positive_int("late", late)
    out = {"key": list(key)}
    for tag, steps in (("init", 0), ("late", late)):
        if steps is None:
            continue
        m, beta, c, hist = regenerate(key, steps, batch=batch, clip=clip)
        r = slow_velocity(m, key[0], key[1], key[3], momentum=beta, batch=batch)
        out[tag] = {"w": r["w"], "dw": r["dw"], "e2": r["e2"], "lam_min": r["lam_min"],
                    "clip_bound": clip_share_bound(np.zeros(len(r["Sigma"])), r["Sigma"], c) if c else 0.0}
        if hist:
            out[tag]["max_grad_norm"] = max(h["grad_norm"] for h in hist if "grad_norm" in h)
    return out


def canonical_from_init(e, w, p, q, lr, momentum, steps, batch=16) -> float:
    """The canonical model's own change of E over ``steps`` steps of its mean SGD / heavy-ball dynamics with the
    optimal bias from (e, w): the per-step law of ``sgd_drift.canonical_drift`` summed (the e-part decays
    geometrically, so the sum stops when e^2 < 1e-30; proposition sgd-drift (ii))."""
    from ..markov.canonical import grad
    from .sgd_drift import canonical_drift

    total, v = 0.0, np.zeros(2)
    for _ in range(checks.nonnegative_int("steps", steps)):
        if e * e < 1e-30:
            break
        total += canonical_drift(e, w, p, q, lr, momentum=momentum, batch=batch).total
        v = momentum * v + np.array(grad(e, w, p, q), dtype=float)
        e, w = e - lr * v[0], w - lr * v[1]
    return total


def compare_run(curve, key, law, late, *, batch=16) -> dict | None:
    """One stored run against the law. ``curve``: its rows (a DataFrame indexed by step with columns e, w, energy,
    coefficient_ratio, eval_loss); ``law``: :func:`law_at`'s result at ``late``. The window runs from ``late`` to the
    last evaluation on the plateau (c-hat / c* below PLATEAU_RATIO and the loss within DIVERGENCE_NATS of H(pi): a
    diverging run leaves the plateau too); None if that is not after ``late``."""
    from ..markov.canonical import coefficient_unchecked, reduced_loss_grad
    from ..markov.chain import MarkovChain
    from ..markov.energy import SADDLE_ENERGY, energy
    from .sgd_drift import canonical_drift, steps_to_saddle

    p, q, opt, lr, _ = _check_key(key)
    loss = curve.eval_loss.to_numpy(dtype=float) if "eval_loss" in curve else np.zeros(len(curve))
    diverged = ~np.isfinite(loss) | (loss > MarkovChain(p, q).marginal_entropy + DIVERGENCE_NATS)
    off = curve.index[(curve.coefficient_ratio.to_numpy() >= PLATEAU_RATIO) | diverged]
    T = int(curve.index.max()) if off.empty else int(curve.index[curve.index < off[0]].max())
    if T <= late:
        return None
    wL, wT, w0 = (float(curve.loc[s, "w"]) for s in (late, T, 0))
    window = curve.loc[late:T]
    beta = 0.9 if opt == "momentum" else 0.0
    dE_meas = float(curve.loc[T, "energy"] - curve.loc[late, "energy"])
    ev, gap = window.iloc[:-1], float(np.diff(window.index.to_numpy()).mean())
    ce = coefficient_unchecked(ev.e.to_numpy(), ev.w.to_numpy())
    rate_E = dE_meas / (T - late)
    return {**dict(zip(KEY, (p, q, opt, lr, key[4]))), "T": T, "w0": w0, "w_late": wL, "w_T": wT,
            "regen_w_diff": abs(law["late"]["w"] - wL), "dw_meas": (wT - wL) / (T - late),
            "dw_law": law["late"]["dw"], "dw_law_init": law["init"]["dw"],
            "e2_meas": float((window.e ** 2).mean()), "e2_law": law["late"]["e2"], "dE_meas": dE_meas,
            "dE_law": float(energy(0.0, wL + law["late"]["dw"] * (T - late)) - energy(0.0, wL)),
            "dE_canonical": sum(canonical_drift(e, w, p, q, lr, momentum=beta, batch=batch).total
                                for e, w in zip(ev.e, ev.w)) * gap,
            "dE_canonical_w": float(np.sum(4 * lr / (1 - beta) * reduced_loss_grad(ce, p, q)
                                           * (1 + 2 * ev.w * ev.w.abs()) * ev.e ** 2)) * gap,
            "dE_canonical_init": canonical_from_init(float(curve.loc[0, "e"]), w0, p, q, lr, beta, T, batch),
            "dE_meas_0T": float(curve.loc[T, "energy"] - curve.loc[0, "energy"]),
            "lam_min": law["late"]["lam_min"], "clip_bound": law["late"]["clip_bound"],
            "max_grad_norm_to_late": law["late"].get("max_grad_norm"),
            "t_sad_law": T + float(steps_to_saddle(wT, law["late"]["dw"])),
            "t_sad_linear_E": (T + (SADDLE_ENERGY - float(curve.loc[T, "energy"])) / rate_E
                               if wT < 0 and rate_E > 0 else None)}


def _quantiles(s) -> dict:
    return {"median": float(s.median()), "q10": float(s.quantile(0.1)), "q90": float(s.quantile(0.9)),
            "min": float(s.min()), "max": float(s.max())}


def summarize(df, predict_at=0) -> dict:
    """The ratios law / stored (columns added to ``df`` in place) per arm and overall, the counts (E rose, w fell,
    the law's dw < 0), the rank correlations of the drift with |w| (the canonical law says dw ~ |w|, the two-time-scale
    law says dw does not depend on w), and with ``predict_at`` > 0 E at that step with the drift frozen."""
    from ..markov.energy import energy

    for col, (num, den) in RATIOS.items():
        df[col] = df[num] / df[den]
    if predict_at:
        S = checks.positive_int("predict_at", predict_at)
        df["E_at_law"] = [float(energy(0.0, wT + dw * (S - T))) if wT + dw * (S - T) != 0 else np.nan
                          for wT, dw, T in zip(df.w_T, df.dw_law, df["T"])]
    arms, corr = {}, {}
    sp = lambda x, y: float(x.corr(y, method="spearman"))  # noqa: E731
    for arm, d in df.groupby(["p", "q", "optimizer", "lr"]):
        name = "/".join(map(str, arm))
        arms[name] = {"n": len(d), **{c: _quantiles(d[c]) for c in RATIOS}, "dw_meas": _quantiles(d.dw_meas),
                      "dw_law": _quantiles(d.dw_law), "t_sad_law": _quantiles(d.t_sad_law),
                      "t_sad_linear_E": (_quantiles(d.t_sad_linear_E.dropna()) if d.t_sad_linear_E.notna().any()
                                         else None),
                      "max_clip_bound": float(d.clip_bound.max()),
                      "max_grad_norm_to_late": float(d.max_grad_norm_to_late.max()),
                      "max_regen_w_diff": float(d.regen_w_diff.max())}
        if predict_at:
            arms[name] |= {f"E_at_{predict_at}_law_w_neg": _quantiles(d.E_at_law[d.w_T < 0]),
                           f"linear_E_reaches_E_sad_by_{predict_at}": int((d.t_sad_linear_E <= predict_at).sum())}
        corr[name] = {"dw_meas_vs_abs_w": sp(d.dw_meas, d.w_late.abs()),
                      "dlogw_meas_vs_abs_w": sp(d.dw_meas / d.w_late.abs(), d.w_late.abs()),
                      "ratio_dE_vs_abs_w": sp(d.ratio_dE, d.w_late.abs()),
                      "ratio_canonical_w_vs_abs_w": sp(d.ratio_canonical_w, d.w_late.abs())}
    counts = {"dE_positive": int((df.dE_meas > 0).sum()), "dw_negative": int((df.dw_meas < 0).sum()),
              "dw_law_negative": int((df.dw_law < 0).sum()), "max_e2_floor": float(df.e2_meas.max()),
              "min_abs_dE": float(df.dE_meas.abs().min()), "max_regen_w_diff": float(df.regen_w_diff.max()),
              "max_grad_norm_to_late": float(df.max_grad_norm_to_late.max())}
    return {"counts": counts, "runs": len(df), "overall": {c: _quantiles(df[c]) for c in RATIOS}, "arms": arms,
            "w_dependence": corr}


def stored(name="sgd_drift"):
    """The stored comparison (``tools/check_sgd_drift.py``): its results (dict) and its per-run rows (DataFrame)."""
    import json

    import pandas as pd

    from ..book.stored import data_dir

    folder = data_dir(name)
    return json.loads((folder / "results.json").read_text()), pd.read_csv(folder / "runs.csv")


def arm_table(results, set_name="stored"):
    """Per arm of ``results[set_name]``: runs, the ratios law / stored (median [min, max]) of the drift of w, of
    Delta E and of the floor of e^2, the canonical model's own prediction over the stored change of E (median), the
    bound on the share of clipped steps, and the step at which E reaches E_sad with the drift frozen (median [min,
    max]) beside the extrapolation of E linearly in time (runs with w < 0). Printed with three significant digits."""
    import pandas as pd

    if set_name not in results:
        raise ValueError(f"set_name must be one of {sorted(k for k in results if k.startswith('stored'))}, "
                         f"got {set_name!r}")
    span = lambda d, f="{:.3f}": f"{f.format(d['median'])} [{f.format(d['min'])}, {f.format(d['max'])}]"  # noqa: E731
    rows = []
    for arm, v in results[set_name]["arms"].items():
        lin = v["t_sad_linear_E"]
        rows.append({"arm (p/q/optimizer/lr)": arm, "runs": v["n"], "dw law/stored": span(v["ratio_dw"]),
                     "dE law/stored": span(v["ratio_dE"]), "floor e^2 law/stored": f"{v['ratio_e2']['median']:.3f}",
                     "canonical/stored": f"{v['ratio_canonical_init']['median']:.2g}",
                     "clipped share <=": f"{v['max_clip_bound']:.1e}",
                     "E_sad step, law": span(v["t_sad_law"], "{:.2g}"),
                     "E_sad step, E linear": span(lin, "{:.2g}") if lin else "-"})
    return pd.DataFrame(rows)
