"""guideline_claims.reversed_chains and record_flags(claimed=False): the chains with p > q (issue 35, item 3)."""
import pandas as pd
import pytest

from markovlib.book.report import Verification
from markovlib.transformer import guideline_claims


def _runs(rows):
    cols = ["experiment", "p", "q", "init", "optimizer", "seed", "steps", "steps_to_bigram"]
    return pd.DataFrame(rows, columns=cols)


def test_reversed_chains_counts_and_decides(tmp_path):
    grid = [["grid", 0.8, 0.5, init, "adamw", s, 400, (300 if init == "guideline" else None)]
            for init in ("standard", "guideline") for s in range(20)]
    grid += [["grid", 0.5, 0.8, "guideline", "adamw", s, 400, 0] for s in range(20)]  # p < q: not read
    pgq = [["grid", 0.9, 0.3, "guideline", "adamw", s, 400, None] for s in range(20)]
    pgq += [["grid", 0.9, 0.7, "guideline", "adamw", s, 400, (350 if s < 10 else None)] for s in range(20)]
    _runs(grid).to_csv(tmp_path / "runs.csv.gz", index=False)
    _runs(pgq).to_csv(tmp_path / "runs_pgq.csv.gz", index=False)
    for name, rows in (("curves.csv.gz", grid), ("curves_pgq.csv.gz", pgq)):
        pd.DataFrame([[*r[:6], 400, 0.7, (0.9 if r[7] is not None else 0.1)] for r in rows],
                     columns=["experiment", "p", "q", "init", "optimizer", "seed", "step", "eval_loss",
                              "coefficient_ratio"]).to_csv(tmp_path / name, index=False)
    rev = guideline_claims.reversed_chains(tmp_path).set_index(["p", "q", "init"])
    assert (0.5, 0.8, "guideline") not in rev.index
    assert rev.loc[(0.8, 0.5, "guideline"), "reached"] == 20 and rev.loc[(0.8, 0.5, "guideline"), "decided"]
    assert rev.loc[(0.9, 0.3, "guideline"), "reached"] == 0 and rev.loc[(0.9, 0.3, "guideline"), "hi"] < 0.5
    assert rev.loc[(0.9, 0.7, "guideline"), "reached"] == 10 and not rev.loc[(0.9, 0.7, "guideline"), "decided"]
    assert rev.loc[(0.8, 0.5, "guideline"), "median_step"] == 300
    assert rev.loc[(0.9, 0.3, "guideline"), "final_max"] == 0.1 and rev.loc[(0.8, 0.5, "guideline"), "final_min"] == 0.9


def test_record_flags_measures_without_recording_outside_the_claim():
    verified, counts = Verification(), {}
    text = guideline_claims.record_flags(verified, counts, "guideline reaches", [False] * 10, glue_name="g_test",
                                         rate=0.5, check="c", kind="same code", claimed=False)
    assert "0/10" in text and "measured only" in text and counts["guideline reaches"][:2] == (0, 10)
    with pytest.raises(AssertionError):
        guideline_claims.record_flags(verified, counts, "guideline reaches, claimed", [False] * 10,
                                      glue_name="g_test2", rate=0.5, check="c", kind="same code")
