"""The seed-batched SGD runner (markovlib.transformer.seed_batch) against the Trainer's runs it replaces.

Evidence: the sampler is compared bit for bit with sample_batch (independent: the Trainer's own sampler); the
stacked forward pass with MarkovTransformer's (independent: the model's own code); a few hundred clipped SGD steps
with train_with_energy's (independent: autograd through the model, torch.optim.SGD, clip_grad_norm_), to float32
rounding; the resume from a checkpoint with an uninterrupted run of the same runner (same code)."""
from __future__ import annotations

import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer.device import batch_seed
from markovlib.transformer.escape import escape_config, train_with_energy
from markovlib.transformer.sampling import sample_batch
from markovlib.transformer.seed_batch import PARAMETERS, SeedBatchSGD, stacked_logits, train_batches


@pytest.mark.parametrize("p, q, batch", [(0.5, 0.8, 1), (0.5, 0.8, 16), (0.05, 0.97, 4), (0.9, 0.02, 2)])
def test_train_batches_are_the_trainers_batches_bit_for_bit(p, q, batch):
    chain, seeds = MarkovChain(p, q), [0, 5, 11]
    xs = train_batches(chain, seeds, 7, 30, batch, 65)
    assert xs.shape == (30, 3, batch, 65)
    for t in range(30):
        for i, s in enumerate(seeds):
            assert torch.equal(xs[t, i], sample_batch(chain, batch, 65, batch_seed(s, 7 + t), "cpu"))


def test_stacked_logits_are_the_models_logits():
    run = SeedBatchSGD(0.5, 0.8, [0, 1, 2], 4.0, 10, batch=4)
    # move the weights off their tiny initialization so that every term matters
    gen = torch.Generator().manual_seed(0)
    run.params = {n: v + 0.3 * torch.randn(v.shape, generator=gen, dtype=v.dtype) for n, v in run.params.items()}
    x = train_batches(run.chain, run.seeds, 0, 1, 4, 64)[0]
    got = stacked_logits(run.params, x)
    for i, tr in enumerate(run.trainers):
        with torch.no_grad():
            for n in PARAMETERS:
                getattr(tr.model, n).copy_(run.params[n][i])
            ref = tr.model(x[i])
        torch.testing.assert_close(got[i], ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lr, batch", [(6.0, 16), (7.0, 1)])
def test_a_few_hundred_steps_agree_with_the_trainer(lr, batch):
    seeds = [0, 3]
    got = SeedBatchSGD(0.5, 0.8, seeds, lr, 300, eval_every=100, batch=batch).train()
    for s in seeds:
        ref = train_with_energy(escape_config(0.5, 0.8, "sgd", lr, s, 300, eval_every=100, batch=batch))
        assert [r["step"] for r in ref] == [r["step"] for r in got[s]] == [0, 100, 200, 300]
        for a, b in zip(ref, got[s]):
            for col in ("eval_loss", "e", "w", "energy", "top_fraction_W_1"):
                assert b[col] == pytest.approx(a[col], rel=1e-3, abs=1e-6), (s, a["step"], col)


def test_clipping_binds_and_matches_clip_grad_norm():
    # at a large step the first gradients exceed norm 1: the clipped run must still follow the Trainer's
    seeds = [1]
    got = SeedBatchSGD(0.5, 0.8, seeds, 8.0, 50, eval_every=50, batch=16).train()[1]
    ref = train_with_energy(escape_config(0.5, 0.8, "sgd", 8.0, 1, 50, eval_every=50, batch=16))
    assert got[-1]["w"] == pytest.approx(ref[-1]["w"], rel=1e-3)


def test_resume_from_a_checkpoint_gives_the_uninterrupted_run(tmp_path):
    whole = SeedBatchSGD(0.5, 0.8, [2, 4], 6.0, 120, eval_every=40, batch=2).train()
    ckpt = tmp_path / "arm.pt"
    SeedBatchSGD(0.5, 0.8, [2, 4], 6.0, 120, eval_every=40, batch=2).train(out=ckpt, checkpoint_every=40, stop_at=90)
    resumed = SeedBatchSGD(0.5, 0.8, [2, 4], 6.0, 120, eval_every=40, batch=2).train(out=ckpt, checkpoint_every=40)
    assert resumed == whole


@pytest.mark.parametrize("kw, name", [({"seeds": []}, "seeds"), ({"seeds": [1, 1]}, "seeds"), ({"lr": 0}, "lr"),
                                       ({"steps": 0}, "steps"), ({"clip": -1.0}, "clip"), ({"eval_every": 0},
                                                                                           "eval_every")])
def test_bad_arguments_are_refused(kw, name):
    args = dict(p=0.5, q=0.8, seeds=[0], lr=1.0, steps=10)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        SeedBatchSGD(**args)
