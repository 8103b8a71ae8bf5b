"""The configuration of a training run (reference Sec. 7): :class:`TrainConfig`, its named recipes and the files a
run writes.

:class:`TrainConfig` holds every knob with its default (the paper's code: AdamW, lr 2e-3, betas (0.9, 0.95),
weight decay 1e-3, 2 % warm-up then cosine, batch 16, length 1024, d = 8, gradient clipping at norm 1) and
validates it on construction: a bad value raises ValueError naming the field and what is allowed. Each field's
``metadata["help"]`` is its documentation; the options of ``python -m markovlib train`` are generated from it
(:mod:`markovlib.transformer.train_cli`). Mixed precision is opt-in (``amp=False`` by default, on every device).
:data:`RECIPES` names the settings of the stored runs (:func:`recipe`).

The rest of a run's machinery lives beside it: devices and seeds in :mod:`~markovlib.transformer.device`, the batch
sampler in :mod:`~markovlib.transformer.sampling`, the learning-rate schedules in
:mod:`~markovlib.transformer.schedules`, the optimizer's decay groups in :mod:`~markovlib.transformer.optim`.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..numerics import checks
from .inits import INITS, TWO_TOKEN_INITS, canonical_scheme
from .model import ATTENTIONS

OPTIMIZERS = ("adamw", "sgd")
SCHEDULES = ("cosine", "constant", "onecycle")
MODELS = ("binary", "two_token")
DECAY_GROUPS = ("all", "nanogpt")
DTYPES = ("float32", "float64")
CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.csv"
SUMMARY_NAME = "summary.json"
METRIC_COLUMNS = ("step", "lr", "train_loss", "grad_norm", "eval_loss", "gap_entropy_rate", "gap_marginal",
                  "context_coefficient", "coefficient_ratio", "elapsed_s")
# singular fractions s_1^2 / sum s_i^2 of the weight matrices, recorded at every evaluation (Sec. 5.1, Fig. 3)
RANK_COLUMNS = tuple(f"top_fraction_{m}" for m in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional", "embedding"))
METRIC_COLUMNS = METRIC_COLUMNS + RANK_COLUMNS
INIT_KWARGS = ("e", "w", "a", "b", "alpha", "u")




def _knob(default, help, **meta):
    """A dataclass field with its documentation (``metadata["help"]``, also the CLI's help text)."""
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help, **meta})
    return field(default=default, metadata={"help": help, **meta})


# Named recipes (knobs of TrainConfig), so that a stored run, its CI slice and a chapter's live run cannot drift.
RECIPES = {
    # Fig. 4 with the optimizer settings of the authors' code (reference Sec. 7): AdamW with nanoGPT decay groups,
    # OneCycleLR, no gradient clipping, N = 1024, batch 16, d = 8, 1000 steps. Not their numerics: their code trains
    # under float16 autocast on a GPU; a run of this recipe is float32 (amp is off unless asked for).
    "authors_fig4": dict(steps=1000, length=1024, batch=16, d=8, optimizer="adamw", lr=2e-3, betas=(0.9, 0.95),
                         weight_decay=1e-3, decay_groups="nanogpt", schedule="onecycle", warmup=0.02, grad_clip=0.0),
    # Sec. 5.1 (Figs. 3, 6, 7): p = 0.2, q = 0.3, N = 1024, d = 8, batch 16, 800 plain-SGD steps from a tiny start
    # (std 0.001), no weight decay, no clipping; the paper gives no step size (swept by tools/run_lowrank.py).
    "sec51_sgd": dict(steps=800, length=1024, batch=16, d=8, init_std=1e-3, optimizer="sgd", momentum=0.0,
                      weight_decay=0.0, grad_clip=0.0),
}


def recipe(name, **overrides) -> dict:
    """The knobs of the named recipe of :data:`RECIPES`, with ``overrides`` on top (a new dict)."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {name!r}")
    return {**RECIPES[name], **overrides}

@dataclass
class TrainConfig:
    """Every knob of a run (defaults: the paper's code, reference Sec. 7). ``length`` is the context N: each
    training sequence has N + 1 symbols and contributes N predictions."""

    p: float = _knob(None, "P(1|0), in (0, 1)")
    q: float = _knob(None, "P(0|1), in (0, 1)")
    steps: int = _knob(1000, "optimizer steps, >= 1")
    d: int = _knob(8, "embedding dimension, >= 1")
    batch: int = _knob(16, "sequences per batch, >= 1")
    length: int = _knob(1024, "context length N (sequences of N + 1 symbols), >= 1")
    model: str = _knob("binary", "binary: the paper's model (symbol x e, one logit); two_token: the authors' code "
                       "(2 x d tied token embedding, 2 logits)", choices=MODELS)
    attention: str | None = _knob("softmax", "attention: softmax, linear or none", choices=ATTENTIONS)
    init: str = _knob("standard", "initialization scheme", choices=INITS)
    init_std: float = _knob(0.02, "std of the Gaussian initialization, > 0")
    init_kwargs: dict = _knob({}, "canonical scalars e, w, a, b, alpha, u of the guideline / canonical init",
                              cli=False)
    init_noise: float = _knob(0.0, "std of Gaussian noise added to every weight but the bias after the init (a start "
                              "perturbed off its manifold), >= 0")
    optimizer: str = _knob("adamw", "optimizer", choices=OPTIMIZERS)
    lr: float = _knob(2e-3, "base learning rate, > 0")
    betas: tuple = _knob((0.9, 0.95), "AdamW betas, two numbers in [0, 1)")
    weight_decay: float = _knob(1e-3, "weight decay, >= 0")
    decay_groups: str = _knob("all", "which parameters decay: all, or nanogpt (the layer's weight matrices only; "
                              "not embeddings, positional rows, biases)", choices=DECAY_GROUPS)
    momentum: float = _knob(0.0, "SGD momentum, in [0, 1)")
    schedule: str = _knob("cosine", "learning-rate schedule: cosine or constant after a linear warm-up, or onecycle "
                          "(torch OneCycleLR as the authors' code: lr/100 -> lr -> lr/5)", choices=SCHEDULES)
    warmup: float = _knob(0.02, "warm-up fraction of the steps, in [0, 1)")
    min_lr_ratio: float = _knob(0.1, "final learning rate / lr of the cosine schedule, in [0, 1]")
    grad_clip: float = _knob(1.0, "gradient clipping norm, >= 0 (0 disables)")
    seed: int = _knob(0, "base seed of initialization, data and evaluation, >= 0")
    eval_every: int = _knob(100, "steps between evaluations, >= 0 (0: only at the start and the end)")
    eval_batches: int = _knob(4, "held-out batches per evaluation, >= 1")
    checkpoint_every: int = _knob(0, "steps between checkpoints, >= 0 (0: none)")
    dtype: str = _knob("float32", "parameter dtype", choices=DTYPES)
    amp: bool = _knob(False, "mixed precision (autocast bf16 / fp16) for training steps; evaluation is float32")

    def __post_init__(self):
        self.p = checks.probability("p", self.p)
        self.q = checks.probability("q", self.q)
        self.steps = checks.positive_int("steps", self.steps)
        self.d = checks.positive_int("d", self.d)
        self.batch = checks.positive_int("batch", self.batch)
        self.length = checks.positive_int("length", self.length)
        if self.attention is not None:
            checks.choice("attention", self.attention, {"softmax", "linear"})
        checks.choice("model", self.model, set(MODELS))
        self.init = canonical_scheme(self.init, "init")
        if (self.init in TWO_TOKEN_INITS) != (self.model == "two_token") and self.init != "standard":
            raise ValueError(f"init {self.init!r} does not fit model {self.model!r}: the two_token model takes "
                             f"standard, {', '.join(TWO_TOKEN_INITS)}; the binary model the others")
        self.init_std = checks.positive_real("init_std", self.init_std)
        self.init_noise = self._nonneg("init_noise", self.init_noise)
        if not isinstance(self.init_kwargs, dict):
            raise ValueError(f"init_kwargs must be a dict, got {self.init_kwargs!r}")
        unknown = set(self.init_kwargs) - set(INIT_KWARGS)
        if unknown:
            raise ValueError(f"init_kwargs may only hold e, w, a, b, alpha, u; got {sorted(unknown)}")
        if self.init == "canonical" and ("e" not in self.init_kwargs or "w" not in self.init_kwargs):
            raise ValueError("init='canonical' needs init_kwargs with the canonical scalars e and w")
        checks.choice("optimizer", self.optimizer, set(OPTIMIZERS))
        self.lr = checks.positive_real("lr", self.lr)
        try:
            b1, b2 = (float(b) for b in self.betas)
        except (TypeError, ValueError):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}") from None
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        self.betas = (b1, b2)
        self.weight_decay = self._nonneg("weight_decay", self.weight_decay)
        self.momentum = self._nonneg("momentum", self.momentum)
        if self.momentum >= 1:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        checks.choice("schedule", self.schedule, set(SCHEDULES))
        checks.choice("decay_groups", self.decay_groups, set(DECAY_GROUPS))
        self.warmup = self._nonneg("warmup", self.warmup)
        if self.warmup >= 1:
            raise ValueError(f"warmup must be a fraction of the steps in [0, 1), got {self.warmup!r}")
        self.min_lr_ratio = self._nonneg("min_lr_ratio", self.min_lr_ratio)
        if self.min_lr_ratio > 1:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")
        self.grad_clip = self._nonneg("grad_clip", self.grad_clip)
        self.seed = checks.nonnegative_int("seed", self.seed)
        self.eval_every = checks.nonnegative_int("eval_every", self.eval_every)
        self.eval_batches = checks.positive_int("eval_batches", self.eval_batches)
        self.checkpoint_every = checks.nonnegative_int("checkpoint_every", self.checkpoint_every)
        checks.choice("dtype", self.dtype, set(DTYPES))
        if not isinstance(self.amp, (bool, np.bool_)):
            raise ValueError(f"amp must be True or False, got {self.amp!r}")
        self.amp = bool(self.amp)

    @staticmethod
    def _nonneg(name, value):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}") from None
        if not math.isfinite(x) or x < 0:
            raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}")
        return x

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["betas"] = list(self.betas)
        return out

    @classmethod
    def from_dict(cls, d) -> "TrainConfig":
        """Inverse of :meth:`to_dict` (a checkpoint's saved configuration)."""
        d = dict(d)
        if "betas" in d:
            d["betas"] = tuple(d["betas"])
        return cls(**d)
