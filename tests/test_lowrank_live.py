"""markovlib.transformer.lowrank_live: snapshots, a tiny training run measured, the claims' counts."""
import numpy as np
import pytest

from markovlib.transformer import lowrank_live as live

V = dict(steps=800, threshold=0.99, excess_tol=0.005, align_threshold=0.99, random_threshold=0.6, e2_rtol=0.05,
         qk_ratio=0.1, flat_threshold=0.9, sgd_flat_max=0.5, vo_factor=5.0, dilution_band=2.0, pert_noise=1e-5,
         lr_sgd=5.0, lr_sgd_small=2.0)


def test_snapshot_plan():
    snap_at, steps = live.snapshot_plan(100, 30, [0, 50, 500])
    assert snap_at == [0, 50, 100] and steps == [0, 30, 50, 60, 90, 100]
    with pytest.raises(ValueError, match="track_every"):
        live.snapshot_plan(100, 0, [0])


def test_train_and_measure_a_tiny_run():
    shape = dict(p=0.2, q=0.3, d=4, length=8, batch=2, steps=4)
    _, snaps = live.snapshot_plan(4, 2, [0, 4])
    done = live.train([0, 1], **shape, init_std=1e-3, lr_sgd=1.0, lr_sgd_small=0.5, lr_adamw=1e-3, pert_noise=1e-5,
                      snapshot_steps=snaps, progress=False)
    assert set(done) == {(k, s) for k in ("sgd", "sgd_small", "adamw", "pert_adamw") for s in (0, 1)} | {
        ("rank_one", 0)}
    assert live.diverged(done) == 0
    runs = live.measure(done, **shape, track_every=2, heldout_batches=1)
    r = runs["rank_one", 0]
    assert list(r["track"]["step"]) == [0, 2, 4]
    dev, drift = live.rank_one_drift(r)
    assert dev < 1e-5 and drift < 1e-5  # the canonical start stays rank one along alpha (Fig. 7)
    G = live.groups(runs, [0, 1])
    assert G["sgd"]["excess"].shape == (2,) and set(G["adamw"]["fractions"]) == set(live.MATRICES)
    assert G["sgd"]["fractions"]["W_1"][0] == pytest.approx(runs["sgd", 0]["fractions"]["W_1"])
    off, s1 = live.dilution(runs, [0, 1], 4)
    assert off.shape == s1.shape == (2, 6) and np.all(off > 0)
    with pytest.raises(ValueError, match="pert_noise"):
        live.train([0], **shape, init_std=1e-3, lr_sgd=1.0, lr_sgd_small=0.5, lr_adamw=1e-3, pert_noise=0,
                   snapshot_steps=snaps)


def synthetic_groups():
    """Two seeds per group; seed 0 satisfies every claim, seed 1 none."""
    g = {}
    for name in live.GROUPS:
        g[name] = {"fractions": {m: np.array([0.999, 0.5]) for m in live.MATRICES},
                   "s2s1": {m: np.array([0.5, 0.01]) for m in live.MATRICES},
                   "excess": np.array([0.001, 0.1]), "e2": np.array([2.0, 5.0]), "flat": np.array([0.95, 0.7]),
                   "align": np.array([0.999, 0.5])}
    g["sgd"]["flat"] = np.array([0.3, 0.7])
    g["sgd_small"]["fractions"]["W_1"] = g["sgd_small"]["fractions"]["W_2"] = np.array([0.3, 0.9])
    g["adamw"]["s2s1"] = {m: np.array([0.5, 0.1]) for m in ("W_Q", "W_K", "W_V", "W_O", "positional")}
    g["adamw"]["s2s1"] |= {"W_1": np.array([0.01, 0.1]), "W_2": np.array([0.01, 0.1])}
    return g


def test_claims_count_the_seeds_that_pass():
    off = np.array([[1.2] * 6, [3.0] * 6])
    C = live.claims(synthetic_groups(), off, V, cstar=2.0)
    assert len(C) == 11
    for name, c in C.items():
        assert (c["k"], c["n"]) == (1, 2), name
        assert set(c) == {"claim", "k", "n", "check"}
    assert C["lr_sgd_rank1"]["claim"].startswith("Gaussian init + SGD")
    assert "0.99" in C["lr_sgd_rank1"]["check"]
    with pytest.raises(ValueError, match="values must hold"):
        live.claims(synthetic_groups(), off, {"steps": 800}, 2.0)


def test_threshold_sweep_counts_above_each_threshold():
    fr = {m: np.array([0.5, 0.95, 0.999]) for m in ("W_V", "W_O", "W_1", "W_2")}
    assert list(live.threshold_sweep(fr, [0.9, 0.99, 0.9999])["W_V"]) == [2, 1, 0]


def test_rank_one_drift_sees_a_turned_embedding():
    e0 = np.array([1.0, 0.0])
    run = {"track": {m: np.ones(3) for m in live.MATRICES}, "snaps": {0: {"embedding": e0}},
           "weights": {"embedding": np.array([1.0, 1.0])}}
    dev, drift = live.rank_one_drift(run)
    assert dev == 0 and drift == pytest.approx(1 - 1 / np.sqrt(2))
