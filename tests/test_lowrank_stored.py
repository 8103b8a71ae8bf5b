"""markovlib.transformer.lowrank_stored: counts over the stored seeds (synthetic frames and the committed set)."""
import numpy as np
import pandas as pd
import pytest

from markovlib.book import stored
from markovlib.transformer import lowrank
from markovlib.transformer import lowrank_stored as ls

M = ls.MATRICES


def frame(rows):
    base = {f"fraction_{m}": 0.999 for m in M} | {f"alignment_{m}": 0.999 for m in ("W_V", "W_O", "W_1", "W_2")}
    return pd.DataFrame([base | {"flatness": 0.95} | r for r in rows])


def test_count_table_and_claims_on_a_synthetic_frame():
    final = frame([dict(init="standard", optimizer="sgd_5", seed=0, flatness=0.3),
                   dict(init="standard", optimizer="sgd_5", seed=10, fraction_W_V=0.5, flatness=0.3),
                   dict(init="standard", optimizer="adamw", seed=0),
                   dict(init="standard", optimizer="adamw", seed=10, flatness=0.5)])
    table = ls.count_table(final, 0.99, 0.9, 0.99)
    assert table.loc["standard, sgd_5", "W_V"] == "1/2" and table.loc["standard, sgd_5", "W_Q"] == "2/2"
    assert table.loc["standard, adamw", "hypercube"] == "1/2" and table.loc["standard, sgd_5", "hypercube"] == "0/2"
    C = ls.stored_claims(final, 1.96, threshold=0.99, flat_threshold=0.9, sgd_flat_max=0.5)
    assert (C["lr_stored_sgd5"]["k"], C["lr_stored_sgd5"]["n"]) == (1, 2)
    assert C["lr_stored_sgd5"]["later"] == "0/1"  # seed 10 was stored after the claims were chosen
    assert (C["lr_stored_hyper_adam"]["k"], C["lr_stored_hyper_sgd"]["k"]) == (1, 2)
    assert C["lr_stored_hyper_sgd"]["count"] == lowrank.count_text(2, 2, 1.96)


def test_invariance_and_adamw_vo_on_a_synthetic_frame():
    exact = {f"fraction_{m}": 1.0 for m in M}
    final = frame([dict(exact, init="rank_one", optimizer="sgd_5", seed=0, fraction_W_1=1 - 1e-8),
                   dict(exact, init="rank_one", optimizer="adamw", seed=0, fraction_W_Q=1 - 1e-7),
                   dict(init="standard", optimizer="adamw", seed=0, fraction_W_V=0.8, fraction_W_O=0.4),
                   dict(init="standard", optimizer="adamw", seed=1, fraction_W_V=0.995, fraction_W_O=0.95)])
    inv = ls.invariance(final)
    assert inv["sgd_5"] == pytest.approx(1e-8) and inv["adamw"] == pytest.approx(1e-7) and inv["n_adamw"] == 1
    assert inv["all"] == max(inv["sgd_5"], inv["adamw"])
    vo = ls.adamw_vo(final, [0.9, 0.99])
    assert vo["srank"] == pytest.approx(1 / 0.4) and vo["n_below_half"] == 1 and vo["n"] == 2
    assert vo["bound"] == pytest.approx(np.sqrt(0.6 / 0.4))
    assert vo["sweep"].loc["> 0.99", "W_V"] == "1/2" and "below 1/2" in vo["glue"]["lr_stored_s2s1_bound"]
    assert vo["glue"]["lr_stored_wv_fracs"].startswith("from 0.800 to 0.995")


def test_the_committed_set():
    folder = stored.data_dir("lowrank")
    S = ls.load(folder)
    assert S["seeds"] == list(range(20)) and S["line"].startswith("stored: ")
    C = ls.stored_claims(S["final"], 2.0, threshold=0.99, flat_threshold=0.9, sgd_flat_max=0.5)
    adam = S["final"][(S["final"].init == "standard") & (S["final"].optimizer == "adamw")]
    assert C["lr_stored_hyper_adam"]["k"] == int((adam.flatness > 0.9).sum())
    P = ls.perturbed(folder, 10.0, 2.0)
    pert = P["pert"]
    first = pert[(pert.optimizer == "adamw") & (pert.step == 0)].set_index("seed")
    last = pert[(pert.optimizer == "adamw") & (pert.step == pert.step.max())].set_index("seed")
    back_w1 = int(((1 - last.top_fraction_W_1) < (1 - first.top_fraction_W_1) / 10).sum())
    assert P["back"]["adamw"]["W_1"] == back_w1 and P["n"] == 20
    assert P["claims"]["lr_pert_all_adamw"]["k"] <= min(P["back"]["adamw"].values())
    facts = ls.prefix_facts(folder, S["parts"][0]["seeds"], 20, 1e-6)
    assert facts["agree"] <= 1e-6 and facts["glue"]["lr_prefix_sgd5"] == "20"
    with pytest.raises(ValueError, match="noise_back"):
        ls.perturbed(folder, 0, 2.0)
