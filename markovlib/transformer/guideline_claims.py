"""The counted claims of the chapter init_guideline (reference Sec. 5.2, Fig. 4): per-run flags turned into a
count, its glued text and its Wilson row, and the runs' curves behind them.

- :func:`record_flags`: one claim over runs: count, glue, print and ``Verification.record_count``.
- :func:`fig4_curves`: the held-out loss and c-hat / c* curves of the live Fig. 4 runs, per initialization.
- :func:`grid_times`: the steps to the bigram predictor of every stored phase-diagram run.
- :func:`grid_claims`, :func:`record_grid`: the phase diagram's claims, one count per chain with Bonferroni's
  correction over the chains of a claim.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..book import formatting
from ..book.glue import glue
from ..numerics import checks
from .guideline import first_above, ratio_curve


def record_flags(verified, counts: dict, claim: str, flags, *, glue_name: str, rate: float, check: str, kind: str,
                 unit: str = "seeds", family: int = 1, strict: bool = True, claimed: bool = True) -> str:
    """Count the runs in which ``claim`` held (``flags``, one boolean per run), keep ``counts[claim] = (k, n,
    family)``, glue ``k/n`` as ``glue_name``, print it and record the Wilson count (``verified.record_count``, which
    raises AssertionError when the lower end does not exceed ``rate``; with ``strict=False`` the row is recorded
    as measured, failed or not, and nothing raises; with ``claimed=False`` the count is glued and printed as
    "measured only" and not recorded: a claim outside its range). Returns the glued text."""
    flags = np.asarray(flags, dtype=bool).ravel()
    family = checks.positive_int("family", family)
    if flags.size == 0:
        raise ValueError(f"flags must hold one boolean per run, got none for {claim!r}")
    counts[claim] = (int(flags.sum()), flags.size, family)
    if not claimed:  # outside the claim's range (a chain with p > q): the count is reported, not tested
        text = glue(glue_name, formatting.fraction(counts[claim][0], flags.size) + " (measured only, p > q)")
        print(f"{claim}: {text} {unit}")
        return text
    text = glue(glue_name, formatting.fraction(counts[claim][0], flags.size))
    print(f"{claim}: {text} {unit}")
    verified.record_count(claim, counts[claim][0], flags.size, rate=rate, check=check, kind=kind, unit=unit,
                          family=family, strict=strict)
    return text


def fig4_curves(runs, inits=("standard", "guideline")) -> dict:
    """Per initialization of ``inits`` (the runs are in that order, equally many each; ``train_many``'s results):
    ``(steps, held-out loss per run)``, c-hat / c* per run at the same evaluations, and each run's final c-hat / c*,
    as ``{"loss": {init: (x, L)}, "ratio": {init: R}, "final": {init: r}}``."""
    if not runs or len(runs) % len(inits):
        raise ValueError(f"runs must hold equally many runs per initialization of {inits}, got {len(runs)}")
    n = len(runs) // len(inits)
    out = {"loss": {}, "ratio": {}, "final": {}}
    for k, init in enumerate(inits):
        group = runs[k * n:(k + 1) * n]
        ev = [[r for r in run["history"] if "eval_loss" in r] for run in group]
        out["loss"][init] = (np.array([r["step"] for r in ev[0]]), np.array([[r["eval_loss"] for r in e] for e in ev]))
        out["ratio"][init] = np.array([ratio_curve(run)[1] for run in group])
        out["final"][init] = np.array([run["summary"]["coefficient_ratio"] for run in group])
    return out


def grid_times(curves: dict, cells, seeds, level) -> dict:
    """``{init: T}`` with ``T[c, s]`` the first step from which c-hat / c* stays above ``level``
    (:func:`first_above`, inf if never) of the stored AdamW phase-diagram run of chain ``cells[c]`` and seed
    ``seeds[s]`` (``curves`` from ``guideline.load_stored``)."""
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return {init: np.array([[first_above(*curves[("grid", pp, qq, init, "adamw", s)][:2], level) for s in seeds]
                            for pp, qq in cells]) for init in ("standard", "guideline")}


def grid_claims(cells, fast_steps, grid_steps) -> list:
    """The phase diagram's claims: (glue name, claim, initialization, chains, per-run flag from the standard and
    guideline runs' steps to the bigram predictor). The guideline claims above the line are for p <= q (the range
    of the chapter's guideline claims)."""
    below = [c for c in cells if sum(c) < 1]
    above = [c for c in cells if sum(c) > 1]
    above_in = [c for c in above if c[0] <= c[1]]
    return [
        ("ig_grid_std_below", f"standard init at the bigram by step {fast_steps} (p + q < 1)", "standard", below,
         lambda ts, tg: ts <= fast_steps),
        ("ig_grid_std_above", f"standard init not at the bigram by step {fast_steps} (p + q > 1, a plateau)",
         "standard", above, lambda ts, tg: ts > fast_steps),
        ("ig_grid_guide_below", f"guideline init at the bigram within {grid_steps} steps (p + q < 1)", "guideline",
         below, lambda ts, tg: np.isfinite(tg)),
        ("ig_grid_guide_above", f"guideline init at the bigram within {grid_steps} steps (p + q > 1, p <= q)",
         "guideline", above_in, lambda ts, tg: np.isfinite(tg)),
        ("ig_grid_before", "guideline init at the bigram before the standard one (p + q > 1, p <= q)", "both",
         above_in, lambda ts, tg: tg < ts),
    ]


def record_grid(verified, counts: dict, times: dict, cells, *, fast_steps, grid_steps, rate) -> dict:
    """Record every claim of :func:`grid_claims` chain by chain (:func:`record_flags`, stored data, Bonferroni over
    the chains of the claim; glued as ``<name>_<cell index>``), glue each claim's smallest count as ``<name>``, and
    return ``{(name, chain): (k, n, family)}``."""
    cells = [tuple(c) for c in cells]
    cell_counts = {}
    for name, text, init, cell_set, flag in grid_claims(cells, fast_steps, grid_steps):
        ks = []
        for pp, qq in cell_set:
            c = cells.index((pp, qq))
            flags = np.asarray(flag(times["standard"][c], times["guideline"][c]), dtype=bool).ravel()
            check = (f"stored runs of this chain; one count per chain, Bonferroni over the {len(cell_set)} chains"
                     + ("; same seed, never counts as infinitely late" if init == "both" else ""))
            record_flags(verified, counts, f"phase diagram ({pp:g}, {qq:g}): {text}", flags, glue_name=f"{name}_{c}",
                         rate=rate, check=check, kind="stored data", unit="runs", family=len(cell_set))
            cell_counts[name, (pp, qq)] = (int(np.sum(flags)), flags.size, len(cell_set))
            ks.append(int(np.sum(flags)))
        glue(name, f"at least {formatting.fraction(min(ks), flags.size)} runs in each of the {len(cell_set)} chains")
    return cell_counts


def reversed_chains(folder, *, family=None, alpha=0.05):
    """The stored chains with p > q and p + q > 1 (issue 35, item 3: does the Sec. 5.2 guideline hold there?): the
    grid's such cells (``runs.csv.gz``) and the set ``runs_pgq.csv.gz``. Per chain and initialization: runs, how many
    reach the bigram predictor within the stored horizon, the median step among those, and the two-sided Wilson
    interval of that rate at level 1 - 2 alpha / family (``family``: the number of chains, Bonferroni), and the
    runs' final c-hat / c* (min, median, max; ``curves.csv.gz`` and ``curves_pgq.csv.gz``). A chain's rate is
    *decided* when its interval excludes 1/2. Returns a DataFrame."""
    import pandas as pd

    from ..book.inference import wilson_interval, wilson_lower_z

    folder = Path(folder)
    grid = pd.read_csv(folder / "runs.csv.gz")
    grid = grid[(grid.experiment == "grid") & (grid.p > grid.q) & (grid.p + grid.q > 1)]
    runs = pd.concat([grid, pd.read_csv(folder / "runs_pgq.csv.gz")], ignore_index=True)
    chains = sorted({(p, q) for p, q in zip(runs.p, runs.q)})
    family = len(chains) if family is None else checks.positive_int("family", family)
    z = wilson_lower_z(alpha, family)
    curves = pd.concat([pd.read_csv(folder / "curves.csv.gz"), pd.read_csv(folder / "curves_pgq.csv.gz")],
                       ignore_index=True)
    curves = curves[(curves.experiment == "grid") & (curves.p > curves.q) & (curves.p + curves.q > 1)]
    final = curves.sort_values("step").groupby(["p", "q", "init", "seed"]).coefficient_ratio.last()
    rows = []
    for (p, q, init), d in runs.groupby(["p", "q", "init"]):
        k, n = int(d.steps_to_bigram.notna().sum()), len(d)
        lo, hi = wilson_interval(k, n, z)
        f = final.loc[(p, q, init)]
        rows.append({"p": p, "q": q, "init": init, "runs": n, "reached": k, "steps": int(d.steps.max()),
                     "median_step": float(d.steps_to_bigram.median()) if k else float("nan"), "lo": lo, "hi": hi,
                     "decided": bool(lo > 0.5 or hi < 0.5), "final_min": float(f.min()),
                     "final_median": float(f.median()), "final_max": float(f.max())})
    return pd.DataFrame(rows)
