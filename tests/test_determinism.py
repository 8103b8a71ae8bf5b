"""A deterministic torch path (issue 9.4): no global reseeding, mixed precision opt-in, float32 evaluation; and
the Trainer's per-step callback."""
import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer.config import TrainConfig
from markovlib.transformer.model import MarkovTransformer, build_model
from markovlib.transformer.training import Trainer

TINY = dict(p=0.2, q=0.3, d=4, length=16, batch=4, steps=6, eval_every=3, eval_batches=1)


@pytest.mark.parametrize("scheme", ["standard", "rank_one", "guideline", "public_constants_scalar"])
def test_unseeded_init_leaves_the_global_generator_alone(scheme):
    torch.manual_seed(1234)
    state = torch.get_rng_state()
    a = MarkovTransformer(4, 8).init_weights(scheme)
    b = MarkovTransformer(4, 8).init_weights(scheme)
    assert torch.equal(torch.get_rng_state(), state)
    if scheme != "public_constants_scalar":  # the unseeded draws are fresh (OS entropy), not a fixed default seed
        assert not torch.equal(a.W_1, b.W_1)
    build_model("standard", d=4, max_len=8)
    assert torch.equal(torch.get_rng_state(), state)


def test_unseeded_sample_leaves_the_global_generator_alone():
    torch.manual_seed(99)
    state = torch.get_rng_state()
    chain = MarkovChain(0.3, 0.6)
    x = chain.sample(64, 64, backend="torch")
    y = chain.sample(64, 64, backend="torch")
    k = MarkovChain.from_kernel([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2]]).sample(8, 16, backend="torch")
    assert torch.equal(torch.get_rng_state(), state)
    assert not torch.equal(x, y) and k.shape == (8, 16)
    # a chapter's own torch.manual_seed keeps working after unseeded draws
    torch.manual_seed(7)
    first = torch.rand(3)
    torch.manual_seed(7)
    chain.sample(4, 4, backend="torch")
    MarkovTransformer(4, 8).init_weights("standard")
    assert torch.equal(torch.rand(3), first)


def test_training_and_resume_leave_the_global_generator_alone(tmp_path):
    torch.manual_seed(5)
    state = torch.get_rng_state()
    t = Trainer(**TINY, checkpoint_every=3, out=tmp_path, progress=False)
    t.train()
    Trainer.from_checkpoint(tmp_path / "checkpoint.pt", progress=False)
    assert torch.equal(torch.get_rng_state(), state)


def test_mixed_precision_is_opt_in_and_evaluation_is_float32():
    assert TrainConfig(p=0.5, q=0.8).amp is False
    plain = Trainer(**TINY, progress=False)
    assert plain.autocast_dtype is None
    amp = Trainer(**TINY, amp=True, device="cpu", progress=False)
    assert amp.autocast_dtype == torch.bfloat16  # opt-in works on the CPU too
    row = amp.train_step()
    assert row["train_loss"] == row["train_loss"]  # finite
    ev_amp, ev_plain = amp.evaluate(), Trainer(**TINY, progress=False).evaluate()
    # evaluation never autocasts: the same weights give the same float32 evaluation with and without amp
    fresh_amp = Trainer(**TINY, amp=True, device="cpu", progress=False)
    assert fresh_amp.evaluate() == ev_plain
    assert isinstance(ev_amp["eval_loss"], float)
    with pytest.raises(ValueError, match="amp"):
        TrainConfig(p=0.5, q=0.8, amp="yes")


def test_callback_sees_every_step_and_records_diagnostics():
    seen = []

    def record(trainer, row):
        seen.append((trainer.step, "eval_loss" in row))
        return {"w1_norm": float(trainer.model.W_1.detach().norm())}

    t = Trainer(**TINY, progress=False)
    t.train(callback=record)
    assert seen == [(s, s % 3 == 0) for s in range(1, TINY["steps"] + 1)]
    norms = [r["w1_norm"] for r in t.history if "w1_norm" in r]
    assert len(norms) == TINY["steps"] and norms[-1] == pytest.approx(float(t.model.W_1.detach().norm()))
    # the callback does not change the run
    ref = Trainer(**TINY, progress=False)
    ref.train()
    assert [r["train_loss"] for r in ref.history if "train_loss" in r] == \
        [r["train_loss"] for r in t.history if "train_loss" in r]
    with pytest.raises(ValueError, match="callback"):
        Trainer(**TINY, progress=False).train(callback=3)
    with pytest.raises(ValueError, match="callback"):
        Trainer(**TINY, progress=False).train(callback=lambda tr, row: 1.0)
