"""Training the single-layer transformer (reference Sec. 2, Sec. 7): the public entry point.

    from markovlib.trainer import Trainer, TrainConfig, train, train_many
    trainer = Trainer(p=0.5, q=0.8, init="guideline", steps=1000, out="runs/demo")
    summary = trainer.train(callback=None)   # history in trainer.history; metrics.csv, summary.json under out/

This module only gathers the names, which live in one module each:

* :mod:`markovlib.config`: :class:`TrainConfig` (every knob, validated), ``pick_device``, ``batch_seed``,
  ``sample_batch``, ``lr_factor``, the file names;
* :mod:`markovlib.training`: :class:`Trainer` (the loop, evaluation, checkpoints, per-step callback), ``train``;
* :mod:`markovlib.runs`: ``train_many`` (many runs, one process each);
* :mod:`markovlib.train_cli`: ``python -m markovlib train`` (options generated from TrainConfig);
* :mod:`markovlib.benchmarks`: ``bench_train``.
"""
from __future__ import annotations

from .benchmarks import bench_train
from .config import (
    CHECKPOINT_NAME,
    EVAL_STREAM,
    INIT_STREAM,
    METRIC_COLUMNS,
    METRICS_NAME,
    OPTIMIZERS,
    SCHEDULES,
    SUMMARY_NAME,
    TRAIN_STREAM,
    TrainConfig,
    batch_seed,
    lr_factor,
    pick_device,
    sample_batch,
)
from .inits import INITS
from .runs import train_many
from .train_cli import add_train_arguments, train_from_args
from .training import Trainer, train

__all__ = [
    "CHECKPOINT_NAME", "EVAL_STREAM", "INIT_STREAM", "INITS", "METRIC_COLUMNS", "METRICS_NAME", "OPTIMIZERS",
    "SCHEDULES", "SUMMARY_NAME", "TRAIN_STREAM", "TrainConfig", "Trainer", "add_train_arguments", "batch_seed",
    "bench_train", "lr_factor", "pick_device", "sample_batch", "train", "train_from_args", "train_many",
]
