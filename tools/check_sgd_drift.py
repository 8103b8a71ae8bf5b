"""The SGD drift law of E(e, w) (markovlib.transformer.sgd_drift, plateau_drift; book/_drafts/sgd_drift_law.md)
against the stored SGD and momentum runs of book/data/escape, and its predictions.

    python tools/check_sgd_drift.py --workers 2                  # sections 1-3, about 2 CPU min per 10 runs
    python tools/check_sgd_drift.py --scan 1,2,4,6,7,7.5,8,8.25  # 4: the drift at other step sizes, every seed
    python tools/check_sgd_drift.py --integrate sgd:4:0,1,2       # 5: the averaged slow flow to the escape

1. Per stored run: regenerate the run to step ``--late-start`` (the Trainer is deterministic; the regenerated w is
   compared with the stored one), compute there the fit-free two-time-scale law (plateau_drift.slow_velocity: the
   floor C of the fast variables from the Lyapunov equation, the slow drift -lr_eff grad tr(J C)/2, its projection
   dw) and compare with the stored curve from ``--late-start`` to the horizon: dw per step, the floor <e^2>, and
   Delta E = E(0, w_L + dw (T - L)) - E(0, w_L) against the stored E(T) - E(L).
2. The canonical law, three ways, against the stored Delta E: (a) its per-step drift (sgd_drift.canonical_drift,
   optimal bias) summed along the stored projection (e_t, w_t) from ``--late-start`` to the horizon, every evaluation
   standing for its 50 steps; (b) only its w-part, the canonical flow of w, -lr_eff g'(c) 4|w| e^2 per step, with the
   stored e_t (the long-run drift when e^2 is stationary): dE = 4 lr_eff g'(c) (1 + 2w|w|) e^2; (c) the canonical
   model's own prediction from the stored initialization (e_0, w_0): its mean step with the optimal bias, summed
   over the horizon, against E(T) - E(0).
3. Predictions: the step at which E reaches E_sad with the drift frozen at its value (sgd_drift.steps_to_saddle from
   the stored w at the horizon), and for contrast the chapter's extrapolation of E linearly in time.
4. ``--scan``: the drift and the frozen E_sad step at the initialization of every seed for other step sizes (plain
   SGD, the stored chain (0.5, 0.8), batch 16, N = 64).
5. ``--integrate opt:lr:seeds``: plateau_drift.integrate_plateau from each seed's initialization on (0.5, 0.8): the
   step at which w crosses -1/sqrt 2 and the step at which the fast point loses its stability (the escape).

Writes the numbers to ``--out`` (default book/_drafts/sgd_drift_results.json), merging with what is there; finished
per-run results are cached in ``--work`` so an interrupted check resumes.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data" / "escape"
KEY = ["p", "q", "optimizer", "lr", "seed"]
RATIOS = ("ratio_dw", "ratio_dE", "ratio_e2", "ratio_canonical", "ratio_canonical_w", "ratio_canonical_init",
          "ratio_dw_init")


def _canonical_from_init(e, w, p, q, lr, beta, steps):
    """(2c) The canonical model's mean SGD/heavy-ball dynamics with the optimal bias from (e, w), and the drift law
    summed over ``steps`` steps (the e-part decays geometrically; stops when e^2 < 1e-30)."""
    from markovlib.markov.canonical import grad
    from markovlib.transformer.sgd_drift import canonical_drift

    total, v = 0.0, np.zeros(2)
    for _ in range(steps):
        if e * e < 1e-30:
            break
        total += canonical_drift(e, w, p, q, lr, momentum=beta).total
        v = beta * v + np.array(grad(e, w, p, q), dtype=float)
        e, w = e - lr * v[0], w - lr * v[1]
    return total


def _state(p, q, opt, lr, seed, steps):
    """The float64 model of a stored run after ``steps`` steps (regenerated) and its Trainer's (momentum, clip)."""
    import torch

    from markovlib.transformer.escape import OPTIMIZER_ARMS, escape_config
    from markovlib.transformer.plateau_drift import float64_copy
    from markovlib.transformer.training import Trainer

    torch.set_num_threads(1)
    tr = Trainer(**escape_config(p, q, opt, lr, seed, max(steps, 1), eval_every=0), progress=False)
    if steps:
        tr.train()
    return float64_copy(tr.model), OPTIMIZER_ARMS[opt]["momentum"], tr.config.grad_clip, tr.history


def run_law(args):
    """Section 1 for one stored run (a process task): the law at the regenerated state at late_start and at 0."""
    (p, q, opt, lr, seed), late, work = args
    path = Path(work) / f"law_{p}_{q}_{opt}_{lr}_{seed}_{late}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from markovlib.transformer.plateau_drift import slow_velocity
    from markovlib.transformer.sgd_drift import clip_share_bound

    out = {"key": [p, q, opt, lr, seed]}
    for tag, steps in (("init", 0), ("late", late)):
        m, beta, clip, hist = _state(p, q, opt, lr, seed, steps)
        r = slow_velocity(m, p, q, lr, momentum=beta)
        out[tag] = {"w": r["w"], "dw": r["dw"], "e2": r["e2"], "lam_min": r["lam_min"],
                    "clip_bound": clip_share_bound(np.zeros(len(r["Sigma"])), r["Sigma"], clip) if clip else 0.0}
        if hist:
            out[tag]["max_grad_norm"] = max(h["grad_norm"] for h in hist if "grad_norm" in h)
    path.write_text(json.dumps(out))
    return out


def section_1_to_3(args, res):
    import pandas as pd

    from markovlib.markov.canonical import coefficient_unchecked, reduced_loss_grad
    from markovlib.markov.energy import SADDLE_ENERGY, energy
    from markovlib.transformer.sgd_drift import canonical_drift, steps_to_saddle

    curves = pd.read_csv(DATA / "curves.csv.gz")
    sgd = curves[curves.optimizer.isin(["sgd", "momentum"])]
    keys = sorted({tuple(k) for k in sgd[KEY].itertuples(index=False)})
    if args.limit:
        keys = keys[:args.limit]
    L = args.late_start
    with ProcessPoolExecutor(max_workers=args.workers) as ex:
        laws = list(ex.map(run_law, [(k, L, args.work) for k in keys]))
    rows = []
    g = sgd.set_index(KEY + ["step"]).sort_index()
    for k, law in zip(keys, laws):
        c = g.loc[k]
        T = int(c.index.max())
        wL, wT, w0 = (float(c.loc[s, "w"]) for s in (L, T, 0))
        late = c.loc[L:T]
        dw_meas = (wT - wL) / (T - L)
        dE_meas = float(c.loc[T, "energy"] - c.loc[L, "energy"])
        beta = 0.9 if k[2] == "momentum" else 0.0
        dE_law = float(energy(0.0, wL + law["late"]["dw"] * (T - L)) - energy(0.0, wL))
        ev = late.iloc[:-1]
        gap = float(np.diff(late.index.to_numpy()).mean())
        dE_can = sum(canonical_drift(e, w, k[0], k[1], k[3], momentum=beta).total for e, w in zip(ev.e, ev.w)) * gap
        ce = coefficient_unchecked(ev.e.to_numpy(), ev.w.to_numpy())
        dE_can_w = float(np.sum(4 * k[3] / (1 - beta) * reduced_loss_grad(ce, k[0], k[1])
                                * (1 + 2 * ev.w * ev.w.abs()) * ev.e ** 2)) * gap
        dE_can_init = _canonical_from_init(float(c.loc[0, "e"]), w0, k[0], k[1], k[3], beta, T)
        rate_E = dE_meas / (T - L)
        rows.append({**dict(zip(KEY, k)), "w0": w0, "w_late": wL, "w_T": wT,
                     "regen_w_diff": abs(law["late"]["w"] - wL),
                     "dw_meas": dw_meas, "dw_law": law["late"]["dw"], "dw_law_init": law["init"]["dw"],
                     "e2_meas": float((late.e ** 2).mean()), "e2_law": law["late"]["e2"],
                     "dE_meas": dE_meas, "dE_law": dE_law, "dE_canonical": dE_can, "dE_canonical_w": dE_can_w,
                     "dE_canonical_init": dE_can_init, "dE_meas_0T": float(c.loc[T, "energy"] - c.loc[0, "energy"]),
                     "lam_min": law["late"]["lam_min"], "clip_bound": law["late"]["clip_bound"],
                     "max_grad_norm_to_late": law["late"].get("max_grad_norm"),
                     "t_sad_law": T + float(steps_to_saddle(wT, law["late"]["dw"])),
                     "t_sad_linear_E": (T + (SADDLE_ENERGY - float(c.loc[T, "energy"])) / rate_E
                                        if wT < 0 and rate_E > 0 else None)})
    df = pd.DataFrame(rows)
    for col, num, den in (("ratio_dw", "dw_law", "dw_meas"), ("ratio_dE", "dE_law", "dE_meas"),
                          ("ratio_e2", "e2_law", "e2_meas"), ("ratio_canonical", "dE_canonical", "dE_meas"),
                          ("ratio_canonical_w", "dE_canonical_w", "dE_meas"),
                          ("ratio_canonical_init", "dE_canonical_init", "dE_meas_0T"),
                          ("ratio_dw_init", "dw_law_init", "dw_meas")):
        df[col] = df[num] / df[den]
    q = lambda s: {"median": float(s.median()), "q10": float(s.quantile(0.1)), "q90": float(s.quantile(0.9)),  # noqa: E731
                   "min": float(s.min()), "max": float(s.max())}
    arms = {}
    for arm, d in df.groupby(["p", "q", "optimizer", "lr"]):
        arms["/".join(map(str, arm))] = {
            "n": len(d), **{c: q(d[c]) for c in RATIOS},
            "dw_meas": q(d.dw_meas), "dw_law": q(d.dw_law), "t_sad_law": q(d.t_sad_law),
            "t_sad_linear_E": q(d.t_sad_linear_E.dropna()) if d.t_sad_linear_E.notna().any() else None,
            "max_clip_bound": float(d.clip_bound.max()), "max_grad_norm_to_late": float(d.max_grad_norm_to_late.max()),
            "max_regen_w_diff": float(d.regen_w_diff.max())}
    # does dw depend on w? (the canonical law: dw ~ |w|; the two-time-scale law: not) -- rank correlations
    sp = lambda x, y: float(x.corr(y, method="spearman"))  # noqa: E731
    corr = {"/".join(map(str, a)): {"dw_meas_vs_abs_w": sp(d.dw_meas, d.w_late.abs()),
                                    "dlogw_meas_vs_abs_w": sp(d.dw_meas / d.w_late.abs(), d.w_late.abs()),
                                    "ratio_dE_vs_abs_w": sp(d.ratio_dE, d.w_late.abs()),
                                    "ratio_canonical_w_vs_abs_w": sp(d.ratio_canonical_w, d.w_late.abs())}
            for a, d in df.groupby(["p", "q", "optimizer", "lr"])}
    res["stored"] = {"late_start": L, "runs": len(df), "overall": {c: q(df[c]) for c in
                     RATIOS},
                     "arms": arms, "w_dependence": corr}
    df.to_csv(Path(args.out).with_suffix(".runs.csv"), index=False)
    for a, v in arms.items():
        print(f"{a:>22}: dw law/meas median {v['ratio_dw']['median']:.3f} [{v['ratio_dw']['min']:.3f}, "
              f"{v['ratio_dw']['max']:.3f}]; dE {v['ratio_dE']['median']:.3f} [{v['ratio_dE']['min']:.3f}, "
              f"{v['ratio_dE']['max']:.3f}]; e2 {v['ratio_e2']['median']:.3f}; canonical/meas "
              f"{v['ratio_canonical']['median']:.2e}, w-part {v['ratio_canonical_w']['median']:.2e}, from init "
              f"{v['ratio_canonical_init']['median']:.2e}; E_sad (law) median {v['t_sad_law']['median']:.3g} "
              f"[{v['t_sad_law']['min']:.3g}, {v['t_sad_law']['max']:.3g}]; clip bound <= {v['max_clip_bound']:.1e}")


def run_scan(args):
    (seed, lrs, batch), work = args
    path = Path(work) / f"scan_{seed}_{'_'.join(map(str, lrs))}_{batch}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from markovlib.transformer.plateau_drift import slow_velocity
    from markovlib.transformer.sgd_drift import steps_to_saddle

    m, _, _, _ = _state(0.5, 0.8, "sgd", 1.0, seed, 0)
    out = {}
    for lr in lrs:
        try:
            r = slow_velocity(m, 0.5, 0.8, lr, batch=batch)
            out[str(lr)] = {"dw": r["dw"], "e2": r["e2"], "w0": r["w"],
                            "C_bb": float(r["C"][0, 0]), "t_sad": float(steps_to_saddle(r["w"], r["dw"]))}
        except ValueError as err:
            out[str(lr)] = {"unstable": str(err)}
    path.write_text(json.dumps(out))
    return out


def section_4(args, res):
    lrs = [float(x) for x in args.scan.split(",")]
    with ProcessPoolExecutor(max_workers=args.workers) as ex:
        per_seed = list(ex.map(run_scan, [((s, lrs, args.batch), args.work) for s in range(20)]))
    out = {}
    for lr in lrs:
        v = [ps[str(lr)] for ps in per_seed if "dw" in ps[str(lr)]]
        if not v:
            out[str(lr)] = {"unstable": True}
            continue
        t = np.array([x["t_sad"] for x in v])
        dw = np.array([x["dw"] for x in v])
        out[str(lr)] = {"seeds": len(v), "dw_median": float(np.median(dw)), "t_sad_median": float(np.median(t)),
                        "t_sad_min": float(t.min()), "t_sad_max": float(t.max()),
                        "bias_floor_sd": float(np.sqrt(np.median([x["C_bb"] for x in v])))}
        print(f"lr {lr:g} (batch {args.batch}): dw/step median {out[str(lr)]['dw_median']:.3g}; frozen E_sad step "
              f"median {out[str(lr)]['t_sad_median']:.3g} [{out[str(lr)]['t_sad_min']:.3g}, "
              f"{out[str(lr)]['t_sad_max']:.3g}]; sd of the bias floor {out[str(lr)]['bias_floor_sd']:.3g}")
    res.setdefault("scan", {})[f"batch{args.batch}"] = out


def run_integrate(args):
    (opt, lr, seed, batch, max_rel), work = args
    path = Path(work) / f"integ_{opt}_{lr}_{seed}_{batch}_{max_rel}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from markovlib.transformer.plateau_drift import integrate_plateau
    from markovlib.transformer.sgd_drift import W_SADDLE

    m, beta, _, _ = _state(0.5, 0.8, opt, lr, seed, 0)
    t0 = time.perf_counter()
    rows = integrate_plateau(m, 0.5, 0.8, lr, momentum=beta, batch=batch, max_rel=max_rel)
    ws = np.array([r["w"] for r in rows])
    ts = np.array([r["step"] for r in rows])
    cross = np.flatnonzero(ws <= W_SADDLE)
    t_sad = None
    if cross.size and cross[0] > 0:
        i = cross[0]
        t_sad = float(ts[i - 1] + (W_SADDLE - ws[i - 1]) / (ws[i] - ws[i - 1]) * (ts[i] - ts[i - 1]))
    out = {"seed": seed, "opt": opt, "lr": lr, "batch": batch, "max_rel": max_rel, "w0": float(ws[0]),
           "dw0": rows[0]["dw"], "escaped": bool(rows[-1]["escaped"]),
           "t_escape": float(ts[-1]) if rows[-1]["escaped"] else None, "t_sad": t_sad, "w_end": float(ws[-1]),
           "lam_start": rows[0]["lam_min"], "lam_end": rows[-1]["lam_min"], "macro_steps": len(rows),
           "cpu_s": time.perf_counter() - t0, "rows": rows[:: max(1, len(rows) // 25)] + rows[-1:]}
    path.write_text(json.dumps(out))
    return out


def section_5(args, res):
    jobs = []
    for spec in args.integrate:
        opt, lr, seeds = spec.split(":")
        jobs += [((opt, float(lr), int(s), args.batch, args.max_rel), args.work) for s in seeds.split(",")]
    with ProcessPoolExecutor(max_workers=args.workers) as ex:
        outs = list(ex.map(run_integrate, jobs))
    for o in outs:
        print(f"{o['opt']} lr {o['lr']:g} seed {o['seed']} batch {o['batch']} (max_rel {o['max_rel']:g}): frozen "
              f"E_sad step {(o['w0'] + 2 ** -0.5) / -o['dw0']:.3g}; w crosses -1/sqrt 2 at "
              f"{o['t_sad'] if o['t_sad'] is None else format(o['t_sad'], '.3g')}; escape "
              f"(lam_min {o['lam_end']:.3g} from {o['lam_start']:.3g}) at "
              f"{o['t_escape'] if o['t_escape'] is None else format(o['t_escape'], '.3g')} "
              f"({o['macro_steps']} macro-steps, {o['cpu_s']:.0f} s)")
        res.setdefault("integrate", {})[f"{o['opt']}_{o['lr']}_{o['seed']}_b{o['batch']}_r{o['max_rel']}"] = {
            k: v for k, v in o.items() if k != "rows"} | {"rows": o["rows"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--late-start", type=int, default=1000, help="start of the compared window (a stored step)")
    ap.add_argument("--limit", type=int, default=0, help="only the first LIMIT stored runs (a quick look)")
    ap.add_argument("--skip-stored", action="store_true", help="skip sections 1-3")
    ap.add_argument("--scan", default="", help="section 4: comma-separated learning rates")
    ap.add_argument("--batch", type=int, default=16, help="batch of sections 4-5")
    ap.add_argument("--integrate", nargs="*", default=[], help="section 5: opt:lr:seed,seed,...")
    ap.add_argument("--max-rel", type=float, default=0.05, help="section 5: integrate_plateau's max_rel")
    ap.add_argument("--out", default=str(ROOT / "book" / "_drafts" / "sgd_drift_results.json"))
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "markovlib_sgd_drift"))
    args = ap.parse_args(argv)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    res = json.loads(out.read_text()) if out.is_file() else {}
    if not args.skip_stored:
        section_1_to_3(args, res)
    if args.scan:
        section_4(args, res)
    if args.integrate:
        section_5(args, res)
    cmd = " ".join(["python", "tools/check_sgd_drift.py", *(sys.argv[1:] if argv is None else argv)])
    res["commands"] = [c for c in res.get("commands", []) if c != cmd] + [cmd]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
