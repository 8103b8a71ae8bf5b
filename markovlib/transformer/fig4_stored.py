"""The stored paper-scale Fig. 4 runs of the chapter authors_fig4 (``book/data/fig4``; reference Sec. 5.2): the
outcome table per chain and the counted claims, from :mod:`markovlib.transformer.stored_runs`.

- :func:`outcome_tables`: :func:`~markovlib.transformer.stored_runs.outcome_rows` of every stored chain, the chain
  with the larger p + q first.
- :func:`outcome_table`: their printed table (seeds at the entropy rate with the Wilson interval, the last step at
  which a seed leaves H(pi)).
- :func:`stored_claims`: the chapter's claims over the stored runs, one list of per-seed flags each.
"""
from __future__ import annotations

import math

import numpy as np

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from .stored_runs import final_value, outcome_rows, runs_per_seed


def outcome_tables(stored, inits, at_tol) -> dict:
    """{(p, q): (chain, rows)} of :func:`outcome_rows` for every chain of ``stored``, by decreasing p + q."""
    chains = sorted({(r.p, r.q) for r in stored.itertuples()}, key=lambda t: -sum(t))
    return {pq: outcome_rows(stored, *pq, inits, at_tol) for pq in chains}


def outcome_table(tables, labels, at_tol) -> str:
    """Per chain of ``tables`` (:func:`outcome_tables`), per initialization (``labels``: name -> text): the seeds
    whose final held-out loss is within ``at_tol`` of the entropy rate, its 95 % Wilson interval, and the last step
    at which a seed leaves H(pi) (with how many do)."""
    at_tol = checks.positive_real("at_tol", at_tol)
    lines = []
    for (p_, q_), (ch, rows) in tables.items():
        lines.append(f"p = {p_}, q = {q_} (p + q {'>' if p_ + q_ > 1 else '<'} 1): entropy rate "
                     f"{ch.entropy_rate:.4f}, H(pi) {ch.marginal_entropy:.4f}")
        lines.append(f"  {'initialization':<34}{'end at the entropy rate':>24}{'95% Wilson interval':>21}"
                     f"{'last leaves H(pi) at':>21}")
        for init, r in rows.items():
            n = len(r["finals"])
            if n == 0:
                lines.append(f"  {labels[init]:<34}{'(no stored run)':>24}")
                continue
            k = int(np.sum(np.abs(r["finals"] - ch.entropy_rate) < at_tol))
            lo, hi = wilson_interval(k, n)
            lv = r["leaves"][np.isfinite(r["leaves"])]
            when = "never" if len(lv) == 0 else f"step {int(np.max(lv))} ({fraction(len(lv), n)})"
            lines.append(f"  {labels[init]:<34}{fraction(k, n) + ' seeds':>24}"
                         f"{'[' + fixed(lo, 2) + ', ' + fixed(hi, 2) + ']':>21}{when:>21}")
    return "\n".join(lines)


def _window(run, lo, hi):
    ev = run.dropna(subset=["eval_loss"])
    return ev[(ev.step >= lo) & (ev.step <= hi)].eval_loss


def stored_claims(stored, tables, *, at_tol, c_pin, reach_by, plateau_from, plateau_steps) -> dict:
    """The claims over the stored runs, {claim: (glue name, per-seed flags)}, at the chain with p + q > 1 (``hi``)
    unless said: the public code's init keeps c-hat >= -c_pin |c*| and ends within at_tol of H(pi); the submitted
    code's init is within at_tol of the entropy rate by step ``reach_by``; the guideline point ends within at_tol of
    the entropy rate (every chain); the standard init is within at_tol of H(pi) from ``plateau_from`` to
    ``plateau_steps`` and leaves H(pi) within the stored steps."""
    at_tol, c_pin = checks.positive_real("at_tol", at_tol), checks.positive_real("c_pin", c_pin)
    hi = max(tables, key=sum)
    ch_hi = tables[hi][0]
    c_star_hi = math.log((1 - hi[0]) * (1 - hi[1]) / (hi[0] * hi[1]))
    seeds_hi = {init: runs_per_seed(stored, *hi, init) for init in tables[hi][1]}
    return {
        "public-code init at p + q > 1 keeps final c-hat >= -c_pin |c*|":
            ("af4_pub_pin", [final_value(g, "context_coefficient") >= -c_pin * abs(c_star_hi)
                             for g in seeds_hi["authors_public"]]),
        "public-code init at p + q > 1 ends within at_tol of H(pi)":
            ("af4_pub_stay", [abs(final_value(g, "eval_loss") - ch_hi.marginal_entropy) < at_tol
                              for g in seeds_hi["authors_public"]]),
        f"submitted-code init at p + q > 1 within at_tol of the entropy rate by step {reach_by}":
            ("af4_sub_reach", [bool((np.abs(_window(g, -math.inf, reach_by) - ch_hi.entropy_rate) < at_tol).any())
                               for g in seeds_hi["authors_submission"]]),
        "guideline (1, -1) ends within at_tol of the entropy rate (both chains)":
            ("af4_guide_reach", [abs(final_value(g, "eval_loss") - tables[pq][0].entropy_rate) < at_tol
                                 for pq in tables for g in runs_per_seed(stored, *pq, "guideline")]),
        f"standard init at p + q > 1 within at_tol of H(pi) from step {plateau_from} to {plateau_steps}":
            ("af4_std_plateau", [bool((np.abs(_window(g, plateau_from, plateau_steps) - ch_hi.marginal_entropy)
                                       < at_tol).all()) for g in seeds_hi["standard"]]),
        f"standard init at p + q > 1 leaves H(pi) (below it by at_tol) within the {int(stored.step.max())} steps":
            ("af4_std_left", [bool(np.isfinite(t)) for t in tables[hi][1]["standard"]["leaves"]]),
    }
