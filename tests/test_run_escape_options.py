"""tools/run_escape.py's options for sets other than the stored one (the SGD drift law's tests): a tiny set with every
option, on a local dask cluster, into its own tagged files and manifest; and the resumable long runs of
markovlib.transformer.escape.train_with_energy (checkpoint, interruption, resume)."""
import csv
import hashlib
import importlib
import json
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


@pytest.fixture
def run_escape(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLS))
    return importlib.reload(importlib.import_module("run_escape"))


def test_options_make_their_own_set(run_escape, tmp_path):
    out, work = tmp_path / "escape_long", tmp_path / "work"
    argv = ["--out", str(out), "--work", str(work), "--workers", "2", "--optimizers", "sgd", "--lrs", "7.5,8",
            "--chains", "0.5:0.8", "--steps", "6", "--eval-every", "3", "--batch", "4", "--seeds", "0-1",
            "--tag", "t1", "--no-clip", "--checkpoint-every", "3"]
    assert run_escape.main(argv) == 0
    man = json.loads((out / "manifest_t1.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == ["curves_t1.csv.gz", "manifest_t1.json", "runs_t1.csv"]
    assert man["runs"] == [[0.5, 0.8, "sgd", lr, s] for lr in (7.5, 8.0) for s in (0, 1)]
    assert (man["steps"], man["eval_every"], man["batch"], man["grad_clip"], man["seeds"]) == (6, 3, 4, 0.0, [0, 1])
    cfg = man["configs"]["sgd"]
    assert (cfg["grad_clip"], cfg["batch"], cfg["steps"], cfg["checkpoint_every"], cfg["lr"]) == (0.0, 4, 6, 3, 7.5)
    assert man["failed_runs"] == [] and man["provenance"]["complete"]
    assert man["provenance"]["command"].startswith("python tools/run_escape.py --out")
    for name, entry in man["provenance"]["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == entry["sha256"]
    with open(out / "runs_t1.csv") as fh:
        assert [r["steps"] for r in csv.DictReader(fh)] == ["6"] * 4
    # the work files carry the settings that differ from the stored set's; the checkpoints sit beside them
    names = sorted(p.name for p in work.glob("*.json"))
    assert names[0] == "0.5_0.8_sgd_7.5_0_steps6_eval_every3_batch4_grad_clip0.0.json"
    assert all((work / n[:-5] / "checkpoint.pt").is_file() for n in names)
    # collecting again gives the same bytes
    before = {n: (out / n).read_bytes() for n in ("runs_t1.csv", "curves_t1.csv.gz")}
    assert run_escape.main(argv + ["--collect"]) == 0
    assert before == {n: (out / n).read_bytes() for n in before}


@pytest.mark.parametrize("bad", [["--lrs", "0,1"], ["--chains", "0.5"], ["--optimizers", "rmsprop"],
                                 ["--steps", "0"], ["--seeds", "3-1"], ["--tag", "a-b"]])
def test_options_are_validated(run_escape, tmp_path, bad):
    with pytest.raises(SystemExit):
        run_escape.main(["--out", str(tmp_path / "o"), "--work", str(tmp_path / "w"), *bad])


def test_steps_must_be_a_multiple_of_the_evaluation_spacing(run_escape, tmp_path):
    with pytest.raises(SystemExit, match="multiple"):
        run_escape.main(["--out", str(tmp_path / "o"), "--work", str(tmp_path / "w"), "--steps", "10",
                         "--eval-every", "3"])


def test_default_settings_are_the_stored_set(run_escape):
    st = run_escape.settings()
    assert (st["steps"], st["eval_every"], st["batch"], st["clip"]) == (10_000, 50, 16, True)
    key = (0.5, 0.8, "sgd", 4.0, 3)
    assert run_escape._name(key, run_escape.config(*key)) == "0.5_0.8_sgd_4.0_3.json"  # the stored set's work name


def test_a_checkpointed_run_resumes_to_the_same_curve(tmp_path):
    from markovlib.transformer.escape import escape_config, train_with_energy
    from markovlib.transformer.training import Trainer

    cfg = {**escape_config(0.5, 0.8, "sgd", 4.0, 2, 40, eval_every=10, length=16, batch=4), "checkpoint_every": 20}
    plain = train_with_energy({k: v for k, v in cfg.items() if k != "checkpoint_every"})
    # an interrupted run: 20 steps done and checkpointed, then the call resumes it
    first = Trainer(**cfg, out=tmp_path / "run", progress=False)
    import json as _json

    from markovlib.transformer.escape import projection
    (tmp_path / "run").mkdir(exist_ok=True)
    (tmp_path / "run" / "start.json").write_text(_json.dumps(projection(first, {"eval_loss": 0.0})))
    first.train(stop_at=20, callback=projection)
    assert (tmp_path / "run" / "checkpoint.pt").is_file()
    resumed = train_with_energy(cfg, out=tmp_path / "run")
    assert resumed == plain and [r["step"] for r in plain] == [0, 10, 20, 30, 40]


def test_seed_batch_makes_the_set_and_replays_it(run_escape, tmp_path):
    """--seed-batch: one task per arm, the seeds' files marked _seedbatch, the manifest names the runner; the set
    loads with its checksums and its first evaluations re-run bit for bit (same runner, same thread count)."""
    from markovlib.transformer import escape_long

    out, work = tmp_path / "escape_long", tmp_path / "work"
    argv = ["--out", str(out), "--work", str(work), "--workers", "1", "--optimizers", "sgd", "--lrs", "7",
            "--chains", "0.5:0.8", "--steps", "40", "--eval-every", "20", "--batch", "1", "--seeds", "0-2",
            "--tag", "sb", "--checkpoint-every", "20", "--seed-batch"]
    assert run_escape.main(argv) == 0
    man = json.loads((out / "manifest_sb.json").read_text())
    assert man["runner"].startswith("seed_batch") and man["runs"] == [[0.5, 0.8, "sgd", 7.0, s] for s in range(3)]
    first = sorted(p.name for p in work.glob("*.json"))[0]
    assert first == "0.5_0.8_sgd_7.0_0_steps40_eval_every20_batch1_seedbatch.json"
    assert not list(work.glob("*.pt"))  # the arm's checkpoint is removed once its files are written
    S = escape_long.load("sb", out)
    rows, worst = escape_long.replay(S, steps=20)
    assert len(rows) == 3 * 2 and worst == 0.0
    with pytest.raises(SystemExit, match="plain SGD"):
        run_escape.main(["adam" if a == "sgd" else a for a in argv])


def test_batch1_study_reads_every_set(run_escape, tmp_path, monkeypatch):
    """escape_long.batch1_study over two tiny seed-batched sets: one row per step size, ends and tests per set."""
    from markovlib.transformer import escape_long

    out, work = tmp_path / "escape_long", tmp_path / "work"
    for lr in (7, 6):
        assert run_escape.main(["--out", str(out), "--work", str(work), "--workers", "1", "--optimizers", "sgd",
                                "--lrs", str(lr), "--chains", "0.5:0.8", "--steps", "60", "--eval-every", "20",
                                "--batch", "1", "--seeds", "0-2", "--tag", f"t{lr}", "--seed-batch"]) == 0
    monkeypatch.setattr(escape_long, "ESCAPE_SETS", {"t7": 7.0, "t6": 6.0})
    scan = {str(float(lr)): {"t_sad_per_seed": {str(s): 1e5 for s in range(3)},
                             "dw_per_seed": {str(s): -1e-6 for s in range(3)}} for lr in (7, 6)}
    study = escape_long.batch1_study({"scan": {"batch1": scan}}, folder=out)
    assert list(study["table"].lr) == ["7", "6"] and set(study["tests"]) == {"t7", "t6"}
    t = study["tests"]["t7"]
    assert t["n"] == 3 and t["band"] == (0.6e5, 0.9e5) and t["law_doubling_median"] == pytest.approx(1e5)
