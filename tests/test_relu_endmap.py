"""relu_stored.end_map and common_cells_difference (issue 36, item 3: the end map at the paper's horizon) on small
synthetic sets whose answers are counted by hand here."""
import numpy as np
import pytest

from markovlib.richlazy import relu_stored
from markovlib.richlazy.relu_batch import METRICS

TAUS, DELTAS, STEPS = np.array([0.1, 0.3, 1.0]), np.array([-1.0, 0.0, 1.0]), np.array([0, 10, 100])


def _grid(test_end, seeds=None):
    """A stored grid (T, seeds, tau, delta) whose test loss at the horizon is ``test_end`` (seeds, tau, delta)."""
    test_end = np.asarray(test_end, dtype=float)
    S = test_end.shape[0]
    rng = np.random.default_rng(0)
    G = {m: rng.uniform(0.5, 2.0, (len(STEPS), S, len(TAUS), len(DELTAS))) for m in METRICS}
    G["test_loss"][-1] = test_end
    return dict(G, taus=TAUS, deltas=DELTAS, seeds=np.arange(100, 100 + S) if seeds is None else np.asarray(seeds),
                steps=STEPS)


def test_end_map_counts_and_verdicts():
    S = 10
    end = np.ones((S, 3, 3))
    end[:, 0, 2] = 0.5               # tau 0.1: upstream lowest in every seed
    end[:, 1, 2] = 2.0               # tau 0.3: balanced below upstream in every seed
    end[:5, 2, 2], end[5:, 2, 2] = 0.9, 1.1  # tau 1: 5/10, not decided
    r = relu_stored.end_map(_grid(end), level=0.05)
    assert [row["upstream below balanced"] for row in r["rows"]] == ["10/10", "0/10", "5/10"]
    assert r["verdicts"] == {0: "upstream ends lower", 1: "balanced ends lower", 2: "not decided"}
    assert r["caption"] == "10/10" and r["caption_verdict"] == "confirmed"
    assert r["best"] == r["best_mean"] == (0.1, 1.0) and r["H"] == 100 and r["n_seeds"] == S
    assert r["upstream_half"] == "10/10"
    # with 10 seeds, Wilson at 1 - 0.05/3 (three taus, z 2.39) decides from 9/10 (lower end 0.52) and 1/10; at 0.95
    # (z 1.96) too; with five taus (z 2.58, the stored map's family) only 10/10 and 0/10 decide (9/10: 0.49)
    assert r["deciding"] == (9, 1) and r["caption_deciding"] == (9, 1)
    five = dict(_grid(end), taus=np.array([0.1, 0.2, 0.3, 0.5, 1.0]))
    five["test_loss"] = np.concatenate([five["test_loss"], five["test_loss"][:, :, :2]], axis=2)
    assert relu_stored.end_map(five)["deciding"] == (10, 0)
    assert relu_stored.end_map(_grid(end[:4]))["deciding"] == (None, None)   # four seeds: no count decides
    assert r["rows"][1]["delta of the lowest median"] == "-1"   # ties at 1.0 go to the first delta
    np.testing.assert_allclose(r["median"], np.median(end, axis=0))


def test_end_map_caption_needs_the_lowest_of_every_delta():
    end = np.ones((10, 3, 3))
    end[:, 0, 2] = 0.5
    end[:, 0, 0] = 0.4     # downstream lower still: upstream beats balanced but is not the lowest
    r = relu_stored.end_map(_grid(end))
    assert r["verdicts"][0] == "upstream ends lower"
    assert r["caption"] == "0/10" and r["caption_verdict"] == "refuted"
    assert r["upstream_half"] == "0/10"


def test_end_map_median_and_mean_can_disagree():
    end = np.ones((10, 3, 3))
    end[:, 0, 2] = 0.5
    end[0, 0, 2] = 100.0     # one seed far off: the mean of upstream is no longer the lowest, the median is
    r = relu_stored.end_map(_grid(end))
    assert r["best"] == (0.1, 1.0) and r["best_mean"] != (0.1, 1.0)
    np.testing.assert_allclose(r["mean"], end.mean(axis=0))


def test_end_map_refuses_bad_input():
    with pytest.raises(ValueError, match="level"):
        relu_stored.end_map(_grid(np.ones((10, 3, 3))), level=1.5)
    G = _grid(np.ones((10, 3, 3)))
    with pytest.raises(ValueError, match="deltas"):
        relu_stored.end_map(dict(G, deltas=np.array([-1.0, 0.5, 1.0])))


def test_common_cells_difference_finds_the_overlap():
    A = _grid(np.ones((4, 3, 3)))
    # B: the middle tau only, two of A's seeds in another order, one more checkpoint
    B = {m: np.concatenate([A[m][:, [2, 0]][:, :, 1:2], np.zeros((1, 2, 1, 3))]) for m in METRICS}
    B = dict(B, taus=TAUS[1:2], deltas=DELTAS, seeds=np.array([102, 100]), steps=np.array([0, 10, 100, 1000]))
    r = relu_stored.common_cells_difference(A, B)
    assert r["cross"] == 0.0 and r["cells"] == 3 and r["seeds"] == 2 and r["checkpoints"] == [0, 10, 100]
    B["hamming"] = B["hamming"].copy()
    B["hamming"][2, 0, 0, 1] *= 1 + 1e-6
    scale = np.max(A["hamming"][:, [0, 2]][:, :, 1:2])
    r = relu_stored.common_cells_difference(A, B)
    assert r["cross"] == pytest.approx(A["hamming"][2, 2, 1, 1] * 1e-6 / scale, rel=1e-6)
    at_step, at_delta = r["per_metric"]["hamming"]
    assert at_step[2] == r["cross"] and at_step[0] == at_step[1] == 0 and at_delta.tolist().index(r["cross"]) == 1
    assert r["deltas"] == [-1.0, 0.0, 1.0]
    assert relu_stored.common_cells_difference(A, B, metrics=("test_loss", "train_loss"))["cross"] == 0.0
    with pytest.raises(ValueError, match="metrics"):
        relu_stored.common_cells_difference(A, B, metrics=("loss",))


def test_common_cells_difference_reads_a_size_study_as_one_tau():
    A = _grid(np.ones((3, 3, 3)))
    SZ = {m: A[m][:, :, 0][None] for m in METRICS}
    SZ = dict(SZ, sizes=np.array([[100, 1000]]), tau=np.array(0.1), deltas=DELTAS, seeds=A["seeds"], steps=STEPS)
    r = relu_stored.common_cells_difference(A, SZ)
    assert r["cross"] == 0.0 and r["cells"] == 3 and r["seeds"] == 3
    with pytest.raises(ValueError, match="one size"):
        relu_stored.common_cells_difference(A, dict(SZ, sizes=np.array([[1, 2], [3, 4]])))
    with pytest.raises(ValueError, match="share no"):
        relu_stored.common_cells_difference(A, dict(A, seeds=A["seeds"] + 50))


def test_the_kinks_tool_counts_and_refuses_bad_input():
    """tools/relu_kinks.py (the draft's explanation of the pattern metrics' disagreement): a short run prints its
    counts; a bad argument is one line on stderr and exit status 2."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    run = lambda *a: subprocess.run([sys.executable, str(root / "tools" / "relu_kinks.py"), *a], env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    ok = run("--steps", "5")
    assert ok.returncode == 0 and "of 50000 training pre-activations within 1e-12 of the kink" in ok.stdout
    for bad in (["--tau", "-1"], ["--steps", "0"]):
        r = run(*bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
