"""``python -m markovlib train``: its options are generated from the fields of
:class:`~markovlib.transformer.config.TrainConfig` (name, type, choices, help text from ``metadata["help"]``,
default), so the configuration and the command line cannot disagree. Only options given on the command line are
passed on; the others take TrainConfig's defaults.

Extra options: ``--e --w --a --b`` (canonical scalars of the guideline / canonical init), ``--resume
[CHECKPOINT]``, ``--device``, ``--out``, ``--no-progress``. Bad values raise ValueError before any work starts
(:func:`build_trainer`); the command line turns them into one ``error:`` line and exit status 2.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from .config import CHECKPOINT_NAME, METRICS_NAME, SUMMARY_NAME, TrainConfig

CANONICAL_SCALARS = ("e", "w", "a", "b")
_TYPES = {"int": int, "float": float, "str": str}


def config_fields():
    """The TrainConfig fields that are command-line options (all but ``init_kwargs``)."""
    return [f for f in dataclasses.fields(TrainConfig) if f.metadata.get("cli", True)]


def _default(f):
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def _add_field(parser, f):
    flag = "--" + f.name.replace("_", "-")
    default = _default(f)
    help_ = f.metadata.get("help", "")
    if default is not None:
        help_ += f" (default {default if not isinstance(default, tuple) else ' '.join(map(str, default))})"
    elif f.name in ("p", "q"):
        help_ += " (required unless --resume)"
    kw = dict(default=None, help=help_, dest=f.name)
    if isinstance(default, bool):
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
    elif isinstance(default, tuple):
        parser.add_argument(flag, type=float, nargs=len(default), metavar="X", **kw)
    elif "choices" in f.metadata:
        choices = ["none" if c is None else c for c in f.metadata["choices"]]
        parser.add_argument(flag, choices=choices, **kw)
    else:
        parser.add_argument(flag, type=_TYPES.get(str(f.type), str), **kw)


def cli_arguments(knobs: dict) -> list[str]:
    """The ``python -m markovlib train`` options that set ``knobs`` (TrainConfig fields), e.g. for a recipe of
    :data:`~markovlib.transformer.config.RECIPES`: ``{"lr": 0.002, "betas": (0.9, 0.95)}`` ->
    ``["--lr", "0.002", "--betas", "0.9", "0.95"]``. Unknown or non-command-line fields raise ValueError."""
    fields = {f.name for f in config_fields()}
    out = []
    for name, value in knobs.items():
        if name not in fields:
            raise ValueError(f"knobs: {name!r} is not a command-line field of TrainConfig")
        out.append("--" + name.replace("_", "-"))
        if isinstance(value, bool):
            out[-1] = ("--" if value else "--no-") + name.replace("_", "-")
        elif isinstance(value, (tuple, list)):
            out.extend(repr(float(v)) for v in value)
        else:
            out.append("none" if value is None else str(value))
    return out

def add_train_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options of ``python -m markovlib train`` (module docstring)."""
    for f in config_fields():
        _add_field(parser, f)
    for name in CANONICAL_SCALARS:
        parser.add_argument(f"--{name}", type=float, default=None,
                            help=f"canonical {name} of the guideline / canonical init (init_kwargs)")
    parser.add_argument("--resume", nargs="?", const="auto", default=None, metavar="CHECKPOINT",
                        help="resume from CHECKPOINT (default: OUT/checkpoint.pt); the run's saved "
                             "configuration is used (no configuration options may be given)")
    parser.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda[:N], mps")
    parser.add_argument("--out", default=None, help="output directory (metrics.csv, summary.json, checkpoint.pt)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def config_from_args(args) -> TrainConfig:
    """The TrainConfig of the options given (the others at their defaults); raises ValueError."""
    knobs = {}
    for f in config_fields():
        value = getattr(args, f.name, None)
        if value is None:
            continue
        if f.name == "attention" and value == "none":
            value = None
        knobs[f.name] = tuple(value) if isinstance(value, list) else value
    init_kwargs = {k: getattr(args, k) for k in CANONICAL_SCALARS if getattr(args, k, None) is not None}
    if init_kwargs:
        knobs["init_kwargs"] = init_kwargs
    if knobs.get("p") is None or knobs.get("q") is None:
        raise ValueError("--p and --q are required unless --resume is given (p and q in (0, 1))")
    return TrainConfig(**knobs)


def build_trainer(args):
    """The Trainer of parsed arguments, every argument validated (ValueError) before any work starts."""
    from .training import Trainer

    progress = not args.no_progress
    if args.resume is not None:
        given = [f"--{f.name.replace('_', '-')}" for f in config_fields() if getattr(args, f.name, None) is not None]
        given += [f"--{k}" for k in CANONICAL_SCALARS if getattr(args, k, None) is not None]
        if given:
            raise ValueError(f"--resume uses the run's saved configuration; do not give {', '.join(given)}")
        if args.resume == "auto" and args.out is None:
            raise ValueError("--resume without a path needs --out (the checkpoint is OUT/checkpoint.pt)")
        path = Path(args.out) / CHECKPOINT_NAME if args.resume == "auto" else Path(args.resume)
        return Trainer.from_checkpoint(path, out=args.out, device=args.device, progress=progress)
    return Trainer(config_from_args(args), out=args.out, device=args.device, progress=progress)


def train_from_args(args) -> dict:
    """Run ``python -m markovlib train`` from parsed arguments; prints and returns the summary."""
    trainer = build_trainer(args)
    return run_trainer(trainer)


def run_trainer(trainer) -> dict:
    """Train, print the summary line (and where the files are); return the summary."""
    summary = trainer.train()
    print(f"step {summary['steps_done']}: eval loss {summary['final_eval_loss']:.5f}  "
          f"(entropy rate {summary['entropy_rate']:.5f}, gap {summary['gap_entropy_rate']:+.5f}; "
          f"H(pi) {summary['marginal_entropy']:.5f}, gap {summary['gap_marginal']:+.5f})")
    if trainer.out is not None:
        print(f"wrote {trainer.out / METRICS_NAME} and {trainer.out / SUMMARY_NAME}")
    return summary
