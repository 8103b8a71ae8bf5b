"""The stored phase set of ``book/beyond_two_states`` (Sec. 3b: ten seeds, 5000 steps, five arms), one call per step:
loading and classifying it on the ladder, its per-cell table, the claims (at least ``phase_count`` seeds of every
covered cell, never pooled) and the counts the text glues, the held-out batch noise (each run's batch regenerated and
scored by the chain's own law, :func:`kstate_reference.batch_chain_score`), the classification against that noise,
and the re-executed prefix of the stored phase runs. The chapter records the claims.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..book.formatting import bound, fixed, fraction
from ..book.inference import wilson_interval
from ..book.stored import verify_checksums
from ..numerics import checks
from . import kstate_reference, kstate_stored, kstate_training, multistate
from .kstate_grid import one_thread

ARMS = {("adam", 1, "standard"): "Adam, tied, standard", ("adam", 1, "guideline_like"): "Adam, tied, guideline-like",
        ("sgd", 1, "standard"): "SGD, tied, standard", ("sgd", 1, "guideline_like"): "SGD, tied, guideline-like",
        ("adam", 0, "standard"): "Adam, untied, standard"}  # (optimizer, tied, init) -> the arm's name
_GL = ("Adam, tied, guideline-like", "SGD, tied, guideline-like")
CLAIMS = {  # key: (claim, arm, side, column, want, only cells with K - 1 <= d)
    "sgd_trap": ("plain SGD from the standard init ends at H(pi) on the switching side", "SGD, tied, standard",
                 "p > p*", "at_unigram", True, False),
    "adam_leaves": ("Adam from the standard init (tied) leaves H(pi) on the switching side", "Adam, tied, standard",
                    "p > p*", "at_unigram", False, False),
    **{f"untied {side}": (f"Adam with an untied head reaches the entropy rate ({side}, K - 1 <= d)",
                          "Adam, untied, standard", side, "at_bigram", True, True) for side in ("p < p*", "p > p*")},
    **{f"{arm} {side}": (f"{arm}: reaches the entropy rate ({side}, K - 1 <= d)", arm, side, "at_bigram", True, True)
       for arm in _GL for side in ("p < p*", "p > p*")},
    **{f"persist {arm}": (f"{arm}: reaches the entropy rate on the persistent side (K - 1 <= d)", arm, "p < p*",
                          "at_bigram", True, True) for arm in ("Adam, tied, standard", "SGD, tied, standard")},
}
_KEYS = ["K", "p", "optimizer", "tied", "init", "seed"]


def load_phase(folder, resolution, falling_back) -> dict:
    """The phase set of ``folder`` (every file against its sha256, complete, the five ``ARMS``): ``manifest``,
    ``settings``, ``curves`` and ``phase``, its runs with the columns arm, side, fell (the drop over the last
    ``falling_back`` steps), the ladder class at ``resolution`` (at_unigram, at_bigram, level, resolvable) and
    capacity (K - 1 <= d, Prop. beyond-prop-capacity); ``col_err`` (stored yardsticks and lambda against the closed
    forms) and the printed ``text``."""
    folder = Path(folder)
    manifest = verify_checksums(folder, "manifest_phase.json")
    phase = pd.read_csv(folder / "phase_runs.csv")
    curves = pd.read_csv(folder / "phase_curves.csv")
    s = manifest["settings"]
    falling_back = checks.positive_int("falling_back", falling_back)
    kstate_stored.check_phase_set(manifest, phase, ARMS)
    phase["arm"] = [ARMS[(o, int(t), i)] for o, t, i in zip(phase.optimizer, phase.tied, phase.init)]
    phase["side"] = np.where(phase.lam > 0, "p < p*", "p > p*")
    last = curves.pivot_table(index=_KEYS, columns="step", values="loss")
    phase = phase.join((last[s["steps"] - falling_back] - last[s["steps"]]).rename("fell"), on=_KEYS)
    cls = pd.DataFrame([dict(zip(("at_unigram", "at_bigram", "level", "resolvable"),
                                 kstate_stored.ladder_class(K, p, x, resolution)))
                        for K, p, x in zip(phase.K, phase.p, phase.final_loss)], index=phase.index)
    phase = pd.concat([phase, cls], axis=1)
    phase["finite"] = phase.finite.astype(bool)
    phase["capacity"] = phase.K - 1 <= int(s["d"])
    col_err = float(max(
        np.abs(phase.entropy_rate - [multistate.symmetric_entropy_rate(k, p) for k, p in zip(phase.K, phase.p)]).max(),
        np.abs(phase.lam - [multistate.symmetric_eigenvalue(k, p) for k, p in zip(phase.K, phase.p)]).max()))
    prov = manifest["provenance"]
    text = (f"stored: {len(phase)} runs ({prov['command']}), {len(manifest['seeds'])} seeds per cell and arm, "
            f"{s['steps']} steps, eval every {s['eval_every']}, N = {s['length']}, batch {s['batch']}; commit "
            f"{prov['git']['commit'][:7]} (dirty: {prov['git']['dirty']}); wall time "
            f"{prov['wall_seconds'] / 60:.0f} min")
    return dict(manifest=manifest, settings=s, curves=curves, phase=phase, col_err=col_err, text=text)


def phase_table(phase, falling_tol, falling_back) -> pd.DataFrame:
    """Per cell and arm: the counts that reach the entropy rate and end at H(pi) (95 % Wilson), the level of each
    seed, and how many runs dropped by more than ``falling_tol`` over the last ``falling_back`` steps."""
    falling_tol = checks.positive_real("falling_tol", falling_tol)
    rows = []
    for (K, p), cell in phase.groupby(["K", "p"], sort=True):
        for arm in ARMS.values():
            g = cell[cell.arm == arm]
            res = bool(g.resolvable.iloc[0])
            rows.append((K, p, fixed(g.lam.iloc[0], 3), arm,
                         kstate_stored.count_text(g.at_bigram) if res else "(unresolved)",
                         kstate_stored.count_text(g.at_unigram) if res else "(unresolved)",
                         "".join(str(v) for v in sorted(g.level)) if res else "",
                         fraction((g.fell > falling_tol).sum(), len(g))))
    return pd.DataFrame(rows, columns=["K", "p", "lambda", "arm", "reaches entropy rate [95% Wilson]",
                                       "ends at H(pi) [95% Wilson]", "level m per seed",
                                       f"still falling over the last {falling_back} steps"])


def by_cell_text(frame, text) -> str:
    """``"at K = .., p = ..: " + text(cell frame)`` per cell of ``frame``, joined by "; " ("none" if empty)."""
    return "; ".join(f"at K = {K}, p = {p:g}: {text(cg)}" for (K, p), cg in frame.groupby(["K", "p"])) or "none"


def arm_counts(column):
    """A :func:`by_cell_text` text: per arm, how many seeds of the cell have ``column`` true."""
    return lambda cg: ", ".join(f"{arm.replace(', ', ' ')} {fraction(g[column].sum(), len(g))}"
                                for arm, g in cg.groupby("arm", sort=False))


def phase_glues(phase, cells, manifest, falling_tol, phase_count) -> dict:
    """The phase set's counts as the text glues them (name -> text): the claims' per-cell counts ``cells``
    (key of ``CLAIMS`` -> :func:`kstate_stored.cells_counts`), Adam's levels on the switching side, the cells over
    capacity, the unresolved gaps, and the numbers of seeds."""
    ct, n = kstate_stored.counts_text, len(manifest["seeds"])
    adam_sw = phase[(phase.arm == "Adam, tied, standard") & (phase.side == "p > p*") & phase.resolvable]
    unres = phase[~phase.resolvable & (phase.side == "p > p*")]
    gap = lambda cg: ", ".join(f"{arm.replace(', ', ' ')} {fixed(g.gap.min(), 2)} to {fixed(g.gap.max(), 2)}"
                               for arm, g in cg.groupby("arm", sort=False))
    names = {"phase_sgd_trap": "sgd_trap", "phase_adam_leaves": "adam_leaves", "phase_untied_sw": "untied p > p*",
             "phase_untied_pe": "untied p < p*", "phase_gl_adam_sw": f"{_GL[0]} p > p*",
             "phase_gl_sgd_sw": f"{_GL[1]} p > p*", "phase_persist_adam": "persist Adam, tied, standard",
             "phase_persist_sgd": "persist SGD, tied, standard"}
    return {**{name: ct(cells[key]) for name, key in names.items()},
            "phase_adam_reach": ct(kstate_stored.cells_counts(phase, "Adam, tied, standard", "p > p*", "at_bigram")),
            "phase_adam_levels": "; ".join(
                f"levels {''.join(str(v) for v in sorted(g.level))} of {K - 1} at K = {K}, p = {p:g} "
                f"({fraction((g.fell > falling_tol).sum(), len(g))} still falling)"
                for (K, p), g in adam_sw.groupby(["K", "p"])),
            "phase_over_capacity": by_cell_text(phase[~phase.capacity & phase.resolvable], arm_counts("at_bigram")),
            "phase_unresolved": by_cell_text(unres, gap), "phase_n": str(n),
            "phase_d": str(int(manifest["settings"]["d"])), "phase_count": f"{phase_count} of {n}",
            "phase_wilson_low": fixed(wilson_interval(phase_count, n)[0], 2)}


def add_batch_noise(phase, settings):
    """``phase`` with batch_rate (the chain's law scored on each run's regenerated held-out batch,
    :func:`kstate_reference.batch_chain_score`) and excess (final loss - batch_rate), and the standard deviation over
    the seeds of each cell of the batch's noise (batch_rate - entropy rate)."""
    own = {(K, p, s_): kstate_reference.batch_chain_score(int(K), float(p), int(s_), int(settings["eval_batch"]),
                                                          int(settings["length"]))
           for K, p, s_ in sorted(set(zip(phase.K, phase.p, phase.seed)))}
    phase = phase.assign(batch_rate=[own[k] for k in zip(phase.K, phase.p, phase.seed)])
    phase["excess"] = phase.final_loss - phase.batch_rate
    noise = phase.drop_duplicates(["K", "p", "seed"]).assign(noise=lambda f: f.batch_rate - f.entropy_rate)
    return phase, noise.groupby(["K", "p"]).noise.std()


def settled_runs(phase):
    """The cell-arms (K - 1 <= d, resolved) whose every seed reaches the entropy rate; and per cell-arm the seed spread
    of the excess over the seed spread of the raw final loss - entropy rate (a run's own batch removes its noise)."""
    settled = phase[phase.capacity & phase.resolvable].groupby(["K", "p", "arm"]).filter(lambda g: g.at_bigram.all())
    ratios = settled.groupby(["K", "p", "arm"]).apply(
        lambda g: g.excess.std() / (g.final_loss - g.entropy_rate).std(), include_groups=False)
    return settled, ratios


def noise_corrected(phase, resolution):
    """``phase`` with at_bigram_corrected (the ladder class of entropy rate + excess) and how many runs of the resolved
    cells with K - 1 <= d change class (at_unigram, at_bigram or level) when the final loss is so corrected."""
    cls = pd.DataFrame([dict(zip(("at_unigram", "at_bigram", "level"),
                                 kstate_stored.ladder_class(K, p, r + x, resolution)[:3]))
                        for K, p, r, x in zip(phase.K, phase.p, phase.entropy_rate, phase.excess)], index=phase.index)
    inside = phase.capacity & phase.resolvable
    cols = ["at_unigram", "at_bigram", "level"]
    flips = int((cls[cols] != phase[cols]).any(axis=1)[inside].sum())
    return phase.assign(at_bigram_corrected=cls.at_bigram), flips, int(inside.sum())


def replay_phase_slice(loaded, *, n_states, p, seeds, steps) -> float:
    """Every stored phase run of the cell (``n_states``, ``p``) with a seed in ``seeds``, in the five arms, re-executed
    on one thread for ``steps`` steps with the manifest's settings: the largest |held-out loss - stored curve|."""
    phase, curves, s = loaded["phase"], loaded["curves"], loaded["settings"]
    rate, marg = multistate.symmetric_entropy_rate(n_states, p), multistate.symmetric_marginal_entropy(n_states)
    sampler = multistate.symmetric_sampler(n_states, p)
    dev = 0.0
    with one_thread():
        for (opt, tied, init), arm in ARMS.items():
            for s_ in seeds:
                row = phase[(phase.K == n_states) & np.isclose(phase.p, p) & (phase.arm == arm) & (phase.seed == s_)]
                if row.empty:
                    raise ValueError(f"no stored phase run at K = {n_states}, p = {p}, arm {arm}, seed {s_}")
                r = kstate_training.train_kstate(sampler, n_states, rate, marg, init=init, seed=s_,
                                                 lr=float(row.lr.iloc[0]), optimizer=opt, tied=bool(tied),
                                                 **{**s, "steps": checks.positive_int("steps", steps)})
                st = curves[(curves.K == n_states) & np.isclose(curves.p, p) & (curves.optimizer == opt)
                            & (curves.tied == tied) & (curves.init == init) & (curves.seed == s_)]
                st = st.set_index("step").loss
                dev = max(dev, *(abs(v - st[step]) for step, v in r["history"]))
    return dev


def measured_prefix(folder, n_states, p, seeds, steps):
    """What ``tools/run_slice_prefix.py phase`` measured (``slice_prefix.csv``): the largest |re-executed - stored|
    over these runs' first ``steps`` steps in both numeric configurations of CI, and the text printing it."""
    pp = pd.read_csv(Path(folder) / "slice_prefix.csv")
    sel = pp[(pp.K == n_states) & np.isclose(pp.p, p) & pp.seed.isin(list(seeds)) & (pp.step <= steps)]
    if sel.empty:
        raise ValueError(f"no measured prefix at K = {n_states}, p = {p}, seeds {list(seeds)}")
    worst = float(sel.loss_diff.max())
    return worst, (f"measured by tools/run_slice_prefix.py phase in {sorted(set(pp.config))}: largest |re-executed - "
                   f"stored| over these runs' first {steps} steps {bound(worst, max(worst * 2, 1e-9))}")
