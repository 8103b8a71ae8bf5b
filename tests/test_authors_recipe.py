"""The authors' training recipe in the Trainer: the 2-token model, their inits, nanoGPT decay groups, OneCycleLR."""
import math

import pytest
import torch

from markovlib.transformer.config import TrainConfig
from markovlib.transformer.model import MarkovTransformer
from markovlib.transformer.optim import parameter_groups
from markovlib.transformer.schedules import onecycle_factor
from markovlib.transformer.training import Trainer


def test_onecycle_schedule_equals_its_closed_form():
    steps, lr = 200, 2e-3
    tr = Trainer(p=0.5, q=0.8, model="two_token", steps=steps, length=8, batch=2, schedule="onecycle", lr=lr,
                 progress=False, eval_every=0)
    lrs = []
    for _ in range(steps):
        lrs.append(tr.optimizer.param_groups[0]["lr"])
        tr.optimizer.step()
        tr.scheduler.step()
    for k in (0, 1, 3, 4, 5, 50, 150, 199):
        assert math.isclose(lrs[k], lr * onecycle_factor(k, steps), rel_tol=1e-9), k
    assert math.isclose(lrs[0], lr / 100, rel_tol=1e-12) and math.isclose(lrs[-1], lr / 5, rel_tol=1e-9)
    assert math.isclose(max(lrs), lr, rel_tol=1e-9)


def test_nanogpt_decay_groups_spare_embeddings_positions_and_biases():
    m = MarkovTransformer(4, 8, n_states=2)
    decay, keep = parameter_groups(m, 1e-3, "nanogpt")
    names = {id(p): n for n, p in m.named_parameters()}
    assert sorted(names[id(p)] for p in decay["params"]) == sorted(["W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"])
    assert sorted(names[id(p)] for p in keep["params"]) == ["bias", "embedding", "positional"]
    assert decay["weight_decay"] == 1e-3 and keep["weight_decay"] == 0.0


def test_two_token_training_with_the_authors_public_init_starts_at_log_2():
    tr = Trainer(p=0.5, q=0.8, model="two_token", init="authors_public", steps=3, length=32, batch=4,
                 decay_groups="nanogpt", schedule="onecycle", progress=False, eval_every=0)
    summary = tr.train()
    assert abs(summary["initial_eval_loss"] - math.log(2)) < 1e-6
    assert summary["context_coefficient"] is not None  # read from the logit difference of the 2-token head


def test_inits_and_models_must_match():
    with pytest.raises(ValueError, match="does not fit model"):
        TrainConfig(p=0.5, q=0.8, init="authors_public")
    with pytest.raises(ValueError, match="does not fit model"):
        TrainConfig(p=0.5, q=0.8, model="two_token", init="guideline")
    with pytest.raises(ValueError, match="model"):
        TrainConfig(p=0.5, q=0.8, model="three_token")
    assert TrainConfig(p=0.5, q=0.8, init="guideline_authors").init == "public_constants_scalar"


def test_the_authors_inits_need_the_two_token_model():
    with pytest.raises(ValueError, match="n_states=2"):
        MarkovTransformer(4, 8).init_weights("authors_public")
    m = MarkovTransformer(4, 8, n_states=2).init_weights("authors_submission", seed=0)
    assert float(m.W_1.detach().min()) == 1.0 and float(m.W_2.detach().max()) == -1.0
    assert torch.all(m.bias.detach() == 0)


def test_every_recipe_round_trips_through_the_command_line():
    """A stored run's command (tools/run_fig4.py, tools/run_lowrank.py) and the chapters' in-process Trainer use
    one recipe: its command-line form parses back into the same TrainConfig."""
    import argparse

    import pytest

    from markovlib.transformer.config import RECIPES, recipe
    from markovlib.transformer.train_cli import add_train_arguments, cli_arguments, config_from_args

    for name in RECIPES:
        ap = argparse.ArgumentParser()
        add_train_arguments(ap)
        ns = ap.parse_args(["--p", "0.2", "--q", "0.3", *cli_arguments(recipe(name, seed=3))])
        assert config_from_args(ns).to_dict() == TrainConfig(p=0.2, q=0.3, **recipe(name, seed=3)).to_dict()
    with pytest.raises(ValueError, match="recipe"):
        recipe("nope")
    with pytest.raises(ValueError, match="knobs"):
        cli_arguments({"init_kwargs": {}})


def test_the_stored_fig4_commands_are_the_recipe():
    import argparse
    import json
    import shlex
    from pathlib import Path

    from markovlib.book.stored import PARTS
    from markovlib.transformer.config import recipe
    from markovlib.transformer.train_cli import add_train_arguments, config_from_args

    folder = Path(__file__).parents[1] / "book" / "data" / "fig4"
    commands = [cmd for name in PARTS["fig4"] for cmd in json.loads((folder / name).read_text())["commands"]]
    assert len(commands) >= 160  # every part: 20 seeds x 2 chains x 4 initializations
    ap = argparse.ArgumentParser()
    add_train_arguments(ap)
    for cmd in commands:
        argv = shlex.split(cmd)[4:]  # drop "python -m markovlib train"
        argv = argv[:argv.index("--out")] if "--out" in argv else argv
        cfg = config_from_args(ap.parse_args(argv)).to_dict()
        want = TrainConfig(**{k: cfg[k] for k in ("p", "q", "model", "init", "seed", "eval_every", "eval_batches")},
                           **recipe("authors_fig4")).to_dict()
        assert cfg == want, cmd
