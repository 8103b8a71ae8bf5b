"""The Trainer: determinism, exact resume, argument checks, files, CLI, learning, benchmark."""
import csv
import json
import math

import pytest
import torch

from markovlib import cli
from markovlib.markov.chain import MarkovChain
from markovlib.transformer.benchmarks import bench_train
from markovlib.transformer.config import METRIC_COLUMNS, TrainConfig
from markovlib.transformer.device import batch_seed, pick_device
from markovlib.transformer.runs import train_many
from markovlib.transformer.sampling import sample_batch
from markovlib.transformer.schedules import lr_factor
from markovlib.transformer.training import Trainer

torch.set_num_threads(1)

TINY = dict(p=0.2, q=0.3, d=4, length=16, batch=4, steps=12, eval_every=3, eval_batches=2)


def losses(history, key):
    return [r[key] for r in history if key in r]


def test_deterministic_for_fixed_seed():
    a, b = Trainer(**TINY, progress=False), Trainer(**TINY, progress=False)
    a.train()
    b.train()
    assert losses(a.history, "train_loss") == losses(b.history, "train_loss")
    assert losses(a.history, "eval_loss") == losses(b.history, "eval_loss")
    for (name, pa), (_, pb) in zip(a.model.named_parameters(), b.model.named_parameters()):
        assert torch.equal(pa, pb), name
    c = Trainer(**{**TINY, "seed": 1}, progress=False)
    c.train()
    assert losses(c.history, "train_loss") != losses(a.history, "train_loss")


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_resume_is_bit_for_bit(tmp_path, optimizer):
    cfg = dict(TINY, optimizer=optimizer, momentum=0.9 if optimizer == "sgd" else 0.0, lr=1e-2)
    full = Trainer(**cfg, progress=False)
    full.train()
    # a run that checkpoints every 4 steps and is "killed" after step 6: the checkpoint is at step 4
    killed = Trainer(**cfg, checkpoint_every=4, out=tmp_path, progress=False)
    killed.train(stop_at=6)
    assert killed.step == 6
    resumed = Trainer.from_checkpoint(tmp_path / "checkpoint.pt", progress=False)
    assert resumed.step == 4
    resumed.train()
    assert resumed.step == full.step == cfg["steps"]
    assert losses(resumed.history, "train_loss") == losses(full.history, "train_loss")
    assert losses(resumed.history, "eval_loss") == losses(full.history, "eval_loss")
    assert losses(resumed.history, "lr") == losses(full.history, "lr")
    for (name, pa), (_, pb) in zip(full.model.named_parameters(), resumed.model.named_parameters()):
        assert torch.equal(pa, pb), name
    with open(tmp_path / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["train_loss"]) for r in rows if r["train_loss"]] == losses(full.history, "train_loss")


@pytest.mark.parametrize("knobs, name", [
    (dict(steps=0), "steps"), (dict(steps=-5), "steps"), (dict(optimizer="adam"), "optimizer"),
    (dict(p=1.2), "p"), (dict(q=0.0), "q"), (dict(lr=0.0), "lr"), (dict(lr=-1e-3), "lr"),
    (dict(batch=0), "batch"), (dict(length=0), "length"), (dict(d=0), "d"), (dict(init="xavier"), "init"),
    (dict(eval_every=-1), "eval_every"), (dict(warmup=1.5), "warmup"), (dict(grad_clip=-1.0), "grad_clip"),
    (dict(betas=(0.9, 1.5)), "betas"), (dict(attention="rnn"), "attention"), (dict(seed=-1), "seed"),
    (dict(weight_decay=float("nan")), "weight_decay"), (dict(schedule="step"), "schedule"),
    (dict(init="canonical"), "canonical"), (dict(init_std=0.0), "init_std"), (dict(init_noise=-1e-5), "init_noise"),
    (dict(init_noise=float("inf")), "init_noise"),
])
def test_bad_arguments_raise_before_work(tmp_path, knobs, name):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=name):
        Trainer(**{**TINY, **knobs}, out=out, progress=False)
    assert not out.exists()


def test_bad_device_and_resume(tmp_path):
    with pytest.raises(ValueError, match="device"):
        Trainer(**TINY, device="tpu", progress=False)
    with pytest.raises(ValueError, match="device"):
        pick_device("quantum")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            pick_device("cuda")
    with pytest.raises(ValueError, match="resume"):
        Trainer.from_checkpoint(tmp_path / "nope.pt")


def test_helpers():
    assert pick_device("cpu") == torch.device("cpu")
    assert isinstance(pick_device(None), torch.device)
    seeds = {batch_seed(0, s, stream) for s in range(50) for stream in (0, 1, 2)}
    assert len(seeds) == 150 and all(0 <= s < 2**63 for s in seeds)
    assert batch_seed(3, 7) == batch_seed(3, 7)
    x = sample_batch(MarkovChain(0.2, 0.3), 3, 10, seed=1, device="cpu")
    assert x.shape == (3, 10) and x.dtype == torch.int64
    # warm-up then cosine down to min_lr_ratio
    f = [lr_factor(s, 100, 0.02, 0.1) for s in range(100)]
    assert f[0] == 0.5 and f[1] == 1.0 and f[-1] == pytest.approx(0.1) and all(a >= b for a, b in zip(f[1:], f[2:]))
    assert lr_factor(50, 100, 0.0, 0.1, "constant") == 1.0
    assert TrainConfig(p=0.5, q=0.8).to_dict()["betas"] == [0.9, 0.95]


def test_files_written(tmp_path):
    trainer = Trainer(**TINY, out=tmp_path, progress=False)
    summary = trainer.train()
    with open(tmp_path / "metrics.csv") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == METRIC_COLUMNS
        rows = list(reader)
    assert [int(r["step"]) for r in rows] == list(range(TINY["steps"] + 1))
    assert [int(r["step"]) for r in rows if r["eval_loss"]] == [0, 3, 6, 9, 12]
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["steps_done"] == TINY["steps"] and saved["final_eval_loss"] == summary["final_eval_loss"]
    chain = MarkovChain(TINY["p"], TINY["q"])
    assert saved["entropy_rate"] == pytest.approx(chain.entropy_rate)
    assert saved["gap_entropy_rate"] == pytest.approx(saved["final_eval_loss"] - chain.entropy_rate)
    assert saved["gap_marginal"] == pytest.approx(saved["final_eval_loss"] - chain.marginal_entropy)
    assert set(saved["singular_fractions"]) >= {"W_V", "W_1", "W_2"}


def test_cli_train_and_resume(tmp_path, capsys):
    out = tmp_path / "demo"
    argv = ["train", "--p", "0.5", "--q", "0.8", "--init", "guideline", "--steps", "6", "--length", "16",
            "--batch", "2", "--d", "4", "--eval-every", "2", "--eval-batches", "1", "--checkpoint-every", "3",
            "--out", str(out), "--no-progress", "--seed", "3", "--device", "cpu"]
    assert cli.main(argv) == 0
    assert (out / "metrics.csv").is_file() and (out / "summary.json").is_file() and (out / "checkpoint.pt").is_file()
    assert "entropy rate" in capsys.readouterr().out
    first = json.loads((out / "summary.json").read_text())
    assert first["config"]["init"] == "guideline" and first["config"]["seed"] == 3
    # resuming a finished run changes nothing (the checkpoint at step 6 is the end)
    assert cli.main(["train", "--resume", "--out", str(out), "--no-progress"]) == 0
    assert json.loads((out / "summary.json").read_text())["final_eval_loss"] == first["final_eval_loss"]
    # bad arguments: one error line naming the argument, status 2 (issue 9.6; tests/test_cli.py runs them as a
    # subprocess)
    capsys.readouterr()
    assert cli.main(["train", "--steps", "3", "--no-progress"]) == 2
    assert "--p and --q" in capsys.readouterr().err
    assert cli.main(["train", "--p", "0.5", "--q", "0.8", "--lr", "0", "--no-progress"]) == 2
    assert "argument --lr: lr must be" in capsys.readouterr().err


def test_short_run_reduces_loss():
    # p + q < 1: small Gaussian init reaches the global minimum (reference Sec. 5, Thm 8)
    trainer = Trainer(p=0.1, q=0.1, d=4, length=32, batch=16, steps=100, lr=3e-2, eval_every=50, eval_batches=4,
                      progress=False)
    summary = trainer.train()
    assert summary["initial_eval_loss"] == pytest.approx(math.log(2), abs=0.01)
    assert summary["final_eval_loss"] < summary["initial_eval_loss"] - 0.25
    assert summary["nearest"] == "entropy_rate"


@pytest.mark.slow
def test_bench_train_quick(capsys):
    res = bench_train(quick=True)
    out = capsys.readouterr().out
    assert "speed-up" in out and "steps/s" in out
    assert res["trainer"]["steps_per_s"] > 0 and res["baseline"]["steps_per_s"] > 0
    assert res["speedup"] > 1.0


@pytest.mark.slow
def test_train_many_matches_single_runs_and_validates_first():
    configs = [dict(TINY, seed=s, steps=4) for s in (0, 1)]
    inline = train_many(configs, workers=1, progress=False)
    pooled = train_many(configs, workers=2, progress=False)
    for a, b, cfg in zip(inline, pooled, configs):
        assert losses(a["history"], "train_loss") == losses(b["history"], "train_loss")
        single = Trainer(**cfg, progress=False)
        single.train()
        assert losses(a["history"], "eval_loss") == losses(single.history, "eval_loss")
        assert a["summary"]["steps_done"] == 4
    with pytest.raises(ValueError, match="lr"):
        train_many([dict(TINY), dict(TINY, lr=-1.0)])
    with pytest.raises(ValueError, match="out"):
        train_many([dict(TINY, out="x")])


def test_train_many_snapshots_are_the_weights_at_those_steps():
    cfg = dict(TINY, steps=5, eval_every=0)
    (res,) = train_many([cfg], workers=1, progress=False, snapshot_steps=[0, 2, 5, 99])
    assert sorted(res["snapshots"]) == [0, 2, 5]  # step 99 is never reached
    for name, w in res["weights"].items():
        assert (res["snapshots"][5][name] == w).all()
    trainer = Trainer(**cfg, progress=False)
    init = {k: v.detach().double().numpy() for k, v in trainer.model.named_parameters()}
    trainer.train(stop_at=2)
    for name, w in trainer.model.named_parameters():
        assert (res["snapshots"][0][name] == init[name]).all()
        assert (res["snapshots"][2][name] == w.detach().double().numpy()).all()
    assert "snapshots" not in train_many([cfg], progress=False)[0]
    with pytest.raises(ValueError, match="snapshot_steps"):
        train_many([cfg], progress=False, snapshot_steps=[-1])
    with pytest.raises(ValueError, match="snapshot_steps"):
        train_many([cfg], progress=False, snapshot_steps=3)


def test_context_coefficient_in_evaluation():
    trainer = Trainer(**TINY, progress=False)
    ev = trainer.evaluate()
    assert math.isfinite(ev["context_coefficient"])
    assert ev["coefficient_ratio"] == pytest.approx(ev["context_coefficient"] / trainer.c_star)
    assert trainer.c_star == pytest.approx(math.log(0.8 * 0.7 / (0.2 * 0.3)))


def test_init_noise_perturbs_the_same_start_off_the_rank_one_manifold():
    """TrainConfig.init_noise: the start of the same seed plus N(0, noise^2) on every weight but the bias, drawn from
    its own stream (independent check: the difference's spread and the top singular fraction of W_1, numpy)."""
    import numpy as np

    knobs = dict(TINY, d=8, length=64, init="rank_one", init_std=1e-3)
    base, noisy = Trainer(**knobs, progress=False), Trainer(**knobs, init_noise=1e-5, progress=False)
    again = Trainer(**knobs, init_noise=1e-5, progress=False)
    diffs = []
    for (name, a), (_, b), (_, c) in zip(base.model.named_parameters(), noisy.model.named_parameters(),
                                         again.model.named_parameters()):
        assert torch.equal(b, c), name  # seeded: the same perturbation every time
        if name == "bias":
            assert torch.equal(a, b)
        else:
            diffs.append((b - a).detach().double().reshape(-1).numpy())
    spread = np.concatenate(diffs).std()
    assert 0.9e-5 < spread < 1.1e-5, spread
    frac = lambda m: (lambda s: s[0] ** 2 / np.sum(s ** 2))(np.linalg.svd(m.W_1.detach().double().numpy(),  # noqa: E731
                                                                          compute_uv=False))
    assert frac(base.model) > 1 - 1e-9 and frac(noisy.model) < 0.999
    zero = Trainer(**knobs, init_noise=0.0, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(base.model.parameters(), zero.model.parameters()))
