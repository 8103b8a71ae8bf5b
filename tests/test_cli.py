"""The command line fails like a command-line tool (issue 9.6), and its train options come from TrainConfig."""
import dataclasses
import os
import subprocess
import sys

import pytest

from markovlib import cli
from markovlib.transformer.config import TrainConfig

PREFIX = "python -m markovlib: error: "
# (argv, what the one error line must contain: the argument and what is allowed)
BAD = [
    (["train", "--p", "1.5", "--q", "0.5"], "argument --p: p must be in the open interval (0, 1), got 1.5"),
    (["train", "--resume"], "--resume without a path needs --out"),
    (["train", "--p", "0.5"], "--p and --q are required"),
    (["train", "--p", "0.5", "--q", "0.5", "--steps", "0"], "argument --steps: steps must be a positive integer"),
    (["train", "--p", "0.5", "--q", "0.5", "--steps", "abc"], "argument --steps: invalid int value: 'abc'"),
    (["train", "--p", "0.5", "--q", "0.5", "--optimizer", "adam"], "argument --optimizer: invalid choice: 'adam'"),
    (["train", "--p", "0.5", "--q", "0.5", "--warmup", "1.5"], "argument --warmup: warmup must be a fraction"),
    (["train", "--p", "0.5", "--q", "0.5", "--device", "tpu"], "argument --device: device must be 'auto'"),
    (["train", "--p", "0.5", "--q", "0.5", "--init", "canonical"], "init='canonical' needs"),
    (["train", "--resume", "nope.pt"], "resume checkpoint 'nope.pt' does not exist"),
    (["train", "--resume", "--out", "x", "--steps", "5"], "do not give --steps"),
    (["sweep", "missing.ipynb", "--out", "x"], "notebook must be an existing .ipynb file"),
    (["bench", "flow", "--device", "cpu"], "only for 'bench train'"),
    (["bench", "relu-grid", "--threads", "2"], "only for 'bench train', not 'bench relu-grid'"),
    (["bench", "train", "--threads", "0"], "argument --threads: threads must be a positive integer"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_argument_one_line_status_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), captured.err
    assert message in lines[0]
    assert captured.out == ""


def test_bad_grid_is_a_usage_error(tmp_path, capsys):
    nb = tmp_path / "nb.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert cli.main(["sweep", str(nb), "--grid", "p", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(PREFIX) and "grid entries must look like NAME=V1,V2" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()  # nothing ran


@pytest.mark.slow
@pytest.mark.parametrize("argv, message", [BAD[0], BAD[1], BAD[4], BAD[11]])
def test_bad_argument_in_a_subprocess(argv, message, tmp_path):
    done = subprocess.run([sys.executable, "-m", "markovlib", *argv], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()] and done.stderr.startswith(PREFIX)
    assert message in done.stderr


def test_train_options_are_generated_from_the_config(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for f in dataclasses.fields(TrainConfig):
        if f.name == "init_kwargs":
            continue  # given as --e --w --a --b
        assert "--" + f.name.replace("_", "-") in text, f.name
        assert " ".join(f.metadata["help"].split()) in text, f.name
    assert "--no-amp" in text and "--betas X X" in text


def test_generated_options_reach_the_config():
    from markovlib.transformer.train_cli import add_train_arguments, config_from_args

    parser = add_train_arguments(cli._Parser())
    args = parser.parse_args(["--p", "0.3", "--q", "0.6", "--min-lr-ratio", "0.5", "--betas", "0.8", "0.9",
                              "--attention", "none", "--amp", "--e", "1.0", "--w", "-1.0", "--init", "guideline"])
    cfg = config_from_args(args)
    assert (cfg.p, cfg.q, cfg.min_lr_ratio, cfg.betas, cfg.attention, cfg.amp) == (0.3, 0.6, 0.5, (0.8, 0.9), None,
                                                                                     True)
    assert cfg.init_kwargs == {"e": 1.0, "w": -1.0}
    # options not given keep TrainConfig's defaults (one source)
    default = TrainConfig(p=0.3, q=0.6)
    assert (cfg.steps, cfg.lr, cfg.length, cfg.eval_every) == (default.steps, default.lr, default.length,
                                                               default.eval_every)
