"""The SGD drift law of E(e, w) (markovlib.transformer.sgd_drift, plateau_drift, drift_check; book/trap_or_plateau)
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

Writes ``results.json`` (merging with what is there), ``runs[_TAG].csv`` (one row per compared run) and
``manifest.json`` (one provenance block per invocation: command, versions, git state, CPU, wall time, and the sha256
of every file as that invocation left them) into ``--out`` (default book/data/sgd_drift). Every task runs on dask
(``--workers``, ``--scheduler``); finished per-run results are cached in ``--work`` so an interrupted check resumes.
"""
from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from markovlib.book.provenance import ROOT, Provenance
from markovlib.book.runner import add_cluster_arguments, run_grid

DATA = ROOT / "book" / "data" / "escape"
OUT = ROOT / "book" / "data" / "sgd_drift"


def _map(fn, tasks, args):
    """``fn(*task_args)`` for every (key, task_args) on dask (the tool's cluster options); the values in order."""
    outcomes = run_grid(fn, tasks, args)
    failed = [o for o in outcomes if o.status != "ok"]
    if failed:
        raise SystemExit(f"check_sgd_drift: {len(failed)} task(s) failed, first: {failed[0].key}: {failed[0].error}")
    return [o.value for o in outcomes]


def run_law(key, late, work, batch, clip):
    """Section 1 for one stored run (a dask task), cached in ``work``: drift_check.law_at."""
    from markovlib.transformer.drift_check import law_at

    p, q, opt, lr, seed = key
    tail = "" if (batch, clip) == (16, 1.0) else f"_b{batch}_c{clip}"
    path = Path(work) / f"law_{p}_{q}_{opt}_{lr}_{seed}_{late}{tail}.json"
    if path.is_file():
        return json.loads(path.read_text())
    out = law_at(key, late, batch=batch, clip=clip)
    path.write_text(json.dumps(out))
    return out


def section_1_to_3(args, res, out):
    import pandas as pd

    from markovlib.transformer.drift_check import KEY, compare_run, summarize

    data, sfx = Path(args.data), f"_{args.tag}" if args.tag else ""
    man = json.loads((data / f"manifest{sfx}.json").read_text())
    batch, clip = man.get("batch", 16), man.get("grad_clip", 1.0)
    curves = pd.read_csv(data / f"curves{sfx}.csv.gz")
    sgd = curves[curves.optimizer.isin(["sgd", "momentum"])]
    keys = sorted({tuple(k) for k in sgd[list(KEY)].itertuples(index=False)})
    if args.limit:
        keys = keys[:args.limit]
    L = args.late_start
    laws = _map(run_law, [("law_" + "_".join(map(str, k)), (k, L, args.work, batch, clip)) for k in keys], args)
    g = sgd.set_index(list(KEY) + ["step"]).sort_index()
    rows = [r for k, law in zip(keys, laws) if (r := compare_run(g.loc[k], k, law, L, batch=batch)) is not None]
    df = pd.DataFrame(rows)
    name = "stored" if (data.resolve() == DATA.resolve() and not sfx) else f"stored_{data.name}{sfx}"
    res[name] = {"data": str(data.relative_to(ROOT)) if data.is_relative_to(ROOT) else str(data), "late_start": L,
                 **summarize(df, args.predict_at)}
    df.to_csv(out / f"runs{sfx}.csv", index=False)
    for a, v in res[name]["arms"].items():
        print(f"{a:>22}: dw law/meas median {v['ratio_dw']['median']:.3f} [{v['ratio_dw']['min']:.3f}, "
              f"{v['ratio_dw']['max']:.3f}]; dE {v['ratio_dE']['median']:.3f}; e2 {v['ratio_e2']['median']:.3f}; "
              f"E_sad (law) median {v['t_sad_law']['median']:.3g}; clip bound <= {v['max_clip_bound']:.1e}")
    return [f"runs{sfx}.csv"]


def run_scan(args):
    (seed, lrs, batch), work = args
    path = Path(work) / f"scan_{seed}_{'_'.join(map(str, lrs))}_{batch}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from markovlib.transformer.drift_check import regenerate
    from markovlib.transformer.plateau_drift import slow_velocity
    from markovlib.transformer.sgd_drift import steps_to_saddle

    m, _, _, _ = regenerate((0.5, 0.8, "sgd", 1.0, seed), 0)
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
    per_seed = _map(run_scan, [(f"scan_{s}", (((s, lrs, args.batch), args.work),)) for s in range(20)], args)
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
                        "bias_floor_sd": float(np.sqrt(np.median([x["C_bb"] for x in v]))),
                        "t_sad_per_seed": {str(s): ps[str(lr)].get("t_sad") for s, ps in enumerate(per_seed)},
                        "dw_per_seed": {str(s): ps[str(lr)].get("dw") for s, ps in enumerate(per_seed)},
                        "w0_per_seed": {str(s): ps[str(lr)].get("w0") for s, ps in enumerate(per_seed)}}
        print(f"lr {lr:g} (batch {args.batch}): dw/step median {out[str(lr)]['dw_median']:.3g}; frozen E_sad step "
              f"median {out[str(lr)]['t_sad_median']:.3g} [{out[str(lr)]['t_sad_min']:.3g}, "
              f"{out[str(lr)]['t_sad_max']:.3g}]; sd of the bias floor {out[str(lr)]['bias_floor_sd']:.3g}")
    res.setdefault("scan", {})[f"batch{args.batch}"] = out


def run_integrate(args):
    (opt, lr, seed, batch, max_rel, max_macro), work = args
    tail = "" if max_macro == 400 else f"_m{max_macro}"
    path = Path(work) / f"integ_{opt}_{lr}_{seed}_{batch}_{max_rel}{tail}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from markovlib.transformer.drift_check import regenerate
    from markovlib.transformer.plateau_drift import integrate_plateau
    from markovlib.transformer.sgd_drift import W_SADDLE

    m, beta, _, _ = regenerate((0.5, 0.8, opt, lr, seed), 0)
    t0 = time.perf_counter()
    rows = integrate_plateau(m, 0.5, 0.8, lr, momentum=beta, batch=batch, max_rel=max_rel, max_macro=max_macro)
    ws = np.array([r["w"] for r in rows])
    ts = np.array([r["step"] for r in rows])
    cross = np.flatnonzero(ws <= W_SADDLE)
    t_sad = None
    if cross.size and cross[0] > 0:
        i = cross[0]
        t_sad = float(ts[i - 1] + (W_SADDLE - ws[i - 1]) / (ws[i] - ws[i - 1]) * (ts[i] - ts[i - 1]))
    out = {"seed": seed, "opt": opt, "lr": lr, "batch": batch, "max_rel": max_rel, "max_macro": max_macro,
           "w0": float(ws[0]), "lam_last": [r["lam_min"] for r in rows[-2:]], "t_last": [r["step"] for r in rows[-2:]],
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
        jobs += [((opt, float(lr), int(s), args.batch, args.max_rel, args.max_macro), args.work)
                 for s in seeds.split(",")]
    outs = _map(run_integrate, [(f"integrate_{i}", (job,)) for i, job in enumerate(jobs)], args)
    for o in outs:
        print(f"{o['opt']} lr {o['lr']:g} seed {o['seed']} batch {o['batch']} (max_rel {o['max_rel']:g}): frozen "
              f"E_sad step {(o['w0'] + 2 ** -0.5) / -o['dw0']:.3g}; w crosses -1/sqrt 2 at "
              f"{o['t_sad'] if o['t_sad'] is None else format(o['t_sad'], '.3g')}; escape "
              f"(lam_min {o['lam_end']:.3g} from {o['lam_start']:.3g}) at "
              f"{o['t_escape'] if o['t_escape'] is None else format(o['t_escape'], '.3g')} "
              f"({o['macro_steps']} macro-steps, {o['cpu_s']:.0f} s)")
        res.setdefault("integrate", {})[f"{o['opt']}_{o['lr']}_{o['seed']}_b{o['batch']}_r{o['max_rel']}"] = {
            k: v for k, v in o.items() if k != "rows"} | {"rows": o["rows"]}


def section_cost(args, res):
    """CPU seconds per SGD step of train_with_energy (1000 steps, one thread) for the batches and evaluation spacings
    of the proposed sets, and the stored set's wall seconds per step and worker from its manifest."""
    import torch

    from markovlib.transformer.escape import escape_config, train_with_energy

    torch.set_num_threads(1)
    out = {}
    for spec in args.cost.split(","):
        batch, every = (int(x) for x in spec.split(":"))
        cfg = escape_config(0.5, 0.8, "sgd", 4.0, 0, 1000, eval_every=every, batch=batch)
        c0 = time.process_time()
        train_with_energy(cfg)
        out[f"batch{batch}_eval{every}"] = (time.process_time() - c0) / 1000
        print(f"batch {batch}, evaluation every {every}: {out[f'batch{batch}_eval{every}'] * 1e3:.2f} CPU ms per step")
    man = json.loads((DATA / "manifest.json").read_text())
    n_steps = len(man["runs"]) * man["steps"]
    out["stored_set_wall_s_per_step_and_worker"] = man["provenance"]["wall_seconds"] * 2 / n_steps
    print(f"stored set: {out['stored_set_wall_s_per_step_and_worker'] * 1e3:.2f} wall ms per step and worker "
          f"({man['provenance']['wall_seconds']:.0f} s, 2 workers, {n_steps} steps)")
    res["cost"] = out


def tables(res, name="stored"):
    """Markdown tables of the results (as the chapter's tables read them); ``name``: which stored set."""
    st = res[name]
    f3 = lambda d: f"{d['median']:.3f} [{d['min']:.3f}, {d['max']:.3f}]"  # noqa: E731
    g = lambda x: f"{x:.2g}"  # noqa: E731
    lines = ["| arm (p, q, optimizer, lr) | runs | dw law/stored | Delta E law/stored | floor e^2 law/stored | "
             "canonical per step / w-part / from init | clipping share bound |", "|" + "---|" * 7]
    for a, v in st["arms"].items():
        lines.append(f"| {a} | {v['n']} | {f3(v['ratio_dw'])} | {f3(v['ratio_dE'])} | {f3(v['ratio_e2'])} | "
                     f"{g(v['ratio_canonical']['median'])} / {g(v['ratio_canonical_w']['median'])} / "
                     f"{g(v['ratio_canonical_init']['median'])} | {v['max_clip_bound']:.1e} |")
    lines += ["", "| arm | Spearman(dw, abs w) | Spearman(dw/abs w, abs w) | Spearman(canonical w-part ratio, abs w) |",
              "|---|---|---|---|"]
    for a, v in st["w_dependence"].items():
        lines.append(f"| {a} | {v['dw_meas_vs_abs_w']:.2f} | {v['dlogw_meas_vs_abs_w']:.2f} | "
                     f"{v['ratio_canonical_w_vs_abs_w']:.2f} |")
    lines += ["", "| arm | E_sad step, frozen drift: median [min, max] "
              "| E linear in time (w < 0 runs): median [min, max] |",
              "|---|---|---|"]
    for a, v in st["arms"].items():
        t, lin = v["t_sad_law"], v["t_sad_linear_E"]
        lines.append(f"| {a} | {t['median']:.3g} [{t['min']:.3g}, {t['max']:.3g}] | "
                     + (f"{lin['median']:.3g} [{lin['min']:.3g}, {lin['max']:.3g}] |" if lin else "- |"))
    for b, sc in res.get("scan", {}).items():
        lines += ["", f"| lr ({b}) | dw per step, median | frozen E_sad step: median [min, max] "
                  "| sd of the bias floor |",
                  "|---|---|---|---|"]
        for lr, v in sc.items():
            lines.append(f"| {lr} | " + ("unstable | | |" if "unstable" in v else
                         f"{v['dw_median']:.3g} | {v['t_sad_median']:.3g} [{v['t_sad_min']:.3g}, {v['t_sad_max']:.3g}]"
                         f" | {v['bias_floor_sd']:.2g} |"))
    if res.get("integrate"):
        lines += ["", "| setting | seed | frozen E_sad step | escape (lam_min -> 2 %) | w there | escape / frozen "
                  "| growth of e after it |", "|---|---|---|---|---|---|---|"]
        for k, o in sorted(res["integrate"].items()):
            fr = (o["w0"] + 2 ** -0.5) / -o["dw0"]
            esc = o["t_escape"]
            last = o["rows"][-1]["step"]
            (t1, t2), (l1, l2) = o.get("t_last") or [r["step"] for r in o["rows"][-3:-1]], \
                o.get("lam_last") or [r["lam_min"] for r in o["rows"][-3:-1]]
            rate = (l1 - l2) / (t2 - t1) if t2 > t1 else float("nan")  # -d lam_min / d step near the end
            lr_eff = o["lr"] / (0.1 if o["opt"] == "momentum" else 1.0)
            # after lam_min crosses 0 at rate r the soft mode grows as exp(lr_eff r s^2 / 2): from the floor
            # sqrt(e2) to 1 in s = sqrt(2 ln(1/sqrt(e2)) / (lr_eff r)) steps
            lag = math.sqrt(2 * math.log(1 / math.sqrt(o["rows"][-1]["e2"])) / (lr_eff * rate)) if rate > 0 else None
            lines.append(f"| {o['opt']} lr {o['lr']:g}, batch {o['batch']} | {o['seed']} | {fr:.3g} | "
                         + (f"{esc:.3g} | {o['w_end']:.3f} | {esc / fr:.2f} |" if esc else
                            f"not reached by {last:.3g} (lam_min at {o['lam_end'] / o['lam_start']:.0%} of its start) "
                            f"| {o['w_end']:.3f} | > {last / fr:.2f} |")
                         + (f" {lag:.2g} steps |" if lag else " - |"))
    return "\n".join(lines)


def main(argv=None):
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--late-start", type=int, default=1000, help="start of the compared window (a stored step)")
    ap.add_argument("--predict-at", type=int, default=0, help="also predict E at this step (frozen drift)")
    ap.add_argument("--data", default=str(DATA), help="the stored set of sections 1-3 (default book/data/escape)")
    ap.add_argument("--tag", default="", help="its part: manifest_TAG.json, curves_TAG.csv.gz")
    ap.add_argument("--limit", type=int, default=0, help="only the first LIMIT stored runs (a quick look)")
    ap.add_argument("--skip-stored", action="store_true", help="skip sections 1-3")
    ap.add_argument("--scan", default="", help="section 4: comma-separated learning rates")
    ap.add_argument("--batch", type=int, default=16, help="batch of sections 4-5")
    ap.add_argument("--integrate", nargs="*", default=[], help="section 5: opt:lr:seed,seed,...")
    ap.add_argument("--max-rel", type=float, default=0.05, help="section 5: integrate_plateau's max_rel")
    ap.add_argument("--max-macro", type=int, default=400, help="section 5: integrate_plateau's max_macro")
    ap.add_argument("--cost", default="", help="CPU time per step for batch:eval_every,... (e.g. 16:500,1:500)")
    ap.add_argument("--tables", action="store_true", help="print the results as markdown tables (alone: nothing is "
                    "computed or written)")
    ap.add_argument("--out", default=str(OUT), help="output folder (default book/data/sgd_drift)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "markovlib_sgd_drift"))
    args = ap.parse_args(argv)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prov = Provenance(out, None if argv is None else ["tools/check_sgd_drift.py", *argv])
    results = out / "results.json"
    res = json.loads(results.read_text()) if results.is_file() else {}
    files = ["results.json"]
    if not args.skip_stored and not args.tables:
        files += section_1_to_3(args, res, out)
    if args.scan:
        section_4(args, res)
    if args.integrate:
        section_5(args, res)
    if args.cost:
        section_cost(args, res)
    if args.tables:
        print(tables(res))
    ran = (not args.skip_stored and not args.tables) or args.scan or args.integrate or args.cost
    if ran:  # --tables alone only prints
        res["commands"] = [c for c in res.get("commands", []) if c != prov.command] + [prov.command]
        part = results.with_suffix(".part")
        part.write_text(json.dumps(res, indent=1) + "\n")
        part.replace(results)  # whole or not at all
        man_path = out / "manifest.json"
        man = json.loads(man_path.read_text()) if man_path.is_file() else {
            "description": "The SGD drift law of E against the stored SGD and momentum runs (tools/check_sgd_drift.py;"
                           " book/trap_or_plateau): one provenance block per invocation, the last one listing every"
                           " file as it left it."}
        present = sorted(f.name for f in out.iterdir() if f.suffix in (".json", ".csv") and f.name != "manifest.json")
        seeds = sorted({int(s) for spec in args.integrate for s in spec.split(":")[2].split(",")}
                       | (set(range(20)) if args.scan or not args.skip_stored else set())
                       | ({0} if args.cost else set())) or None
        block = prov.block(seeds, present)
        man.setdefault("invocations", []).append(block)
        man["provenance"] = block  # the latest invocation: every file as it left them
        man_part = man_path.with_suffix(".part")
        man_part.write_text(json.dumps(man, indent=1) + "\n")
        man_part.replace(man_path)
        print(f"wrote {results} and {man_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
