"""Training the single-layer transformer (reference Sec. 2) on a Markov chain, nanoGPT style.

    trainer = Trainer(p=0.5, q=0.8, init="guideline", steps=1000, out="runs/demo")
    summary = trainer.train()        # history in trainer.history; metrics.csv, summary.json under out/

One step: draw a fresh batch of ``batch`` sequences of ``length + 1`` symbols from the chain on the training
device (vectorized sampler, seeded by :func:`batch_seed` from (seed, step) so that a resumed run sees the same
data), next-symbol cross-entropy (BCE with logits for the binary model), backward, gradient clipping, optimizer
and learning-rate schedule step (linear warm-up over the first ``warmup`` fraction of the steps, then cosine down
to ``min_lr_ratio * lr``). Every ``eval_every`` steps the loss on fresh held-out batches is compared with the
two yardsticks of reference Sec. 1: the entropy rate (bigram loss, the global minimum, Thm 4) and H(pi)
(unigram loss, the bad local minimum of Thm 5).

Defaults follow the paper's code (reference Sec. 7): AdamW, lr 2e-3, betas (0.9, 0.95), weight decay 1e-3,
2 % warm-up then cosine, batch 16, length 1024, d = 8, gradient clipping at norm 1.
Mixed precision (autocast bf16, or fp16 with a gradient scaler) is used on CUDA only; CPU and MPS train in
float32. On CPU a run is deterministic for a fixed seed and thread count, and a run resumed from a checkpoint
reproduces the uninterrupted loss curve bit for bit.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from . import _checks
from .canonical import c_star
from .benchmarks import multinomial_loop_sampler
from .chain import MarkovChain
from .transformer import INITS, MarkovTransformer, context_coefficient, singular_fractions

OPTIMIZERS = ("adamw", "sgd")
SCHEDULES = ("cosine", "constant")
CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.csv"
SUMMARY_NAME = "summary.json"
METRIC_COLUMNS = ("step", "lr", "train_loss", "grad_norm", "eval_loss", "gap_entropy_rate", "gap_marginal",
                  "context_coefficient", "coefficient_ratio", "elapsed_s")

# streams of :func:`batch_seed`
TRAIN_STREAM, EVAL_STREAM, INIT_STREAM = 0, 1, 2


# ------------------------------------------------------------------------------------------------------------
# helpers shared with the benchmark and the book
# ------------------------------------------------------------------------------------------------------------
def pick_device(device=None) -> torch.device:
    """The training device: ``None`` or ``"auto"`` picks CUDA, then Apple MPS, then CPU; otherwise ``device``
    (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or a torch.device), which must be available."""
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}") from None
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    if dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError(f"device {device!r} requested but Apple MPS is not available")
    return dev


def batch_seed(seed, step, stream=TRAIN_STREAM) -> int:
    """The seed of the batch drawn at ``step`` of a run with base ``seed``: a 63-bit integer from numpy's
    SeedSequence([seed, stream, step]), so training (stream 0), evaluation (1) and initialization (2) draws
    never share a seed, and the data of step k does not depend on how the run got to step k (exact resume)."""
    seed = _checks.nonnegative_int("seed", seed)
    step = _checks.nonnegative_int("step", step)
    state = np.random.SeedSequence([seed, int(stream), step]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))  # < 2**63


def sample_batch(chain: MarkovChain, batch, length, seed, device) -> torch.Tensor:
    """``chain.sample(..., backend="torch")`` on ``device`` (the sampler works in float64, which MPS lacks:
    there the batch is drawn on the CPU and moved)."""
    device = torch.device(device)
    if device.type == "mps":
        return chain.sample(batch, length, seed=seed, backend="torch").to(device)
    return chain.sample(batch, length, seed=seed, backend="torch", device=device)


# ------------------------------------------------------------------------------------------------------------
# configuration
# ------------------------------------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """Every knob of a run (defaults: the paper's code, reference Sec. 7). ``length`` is the context N: each
    training sequence has N + 1 symbols and contributes N predictions."""

    p: float
    q: float
    steps: int = 1000
    d: int = 8
    batch: int = 16
    length: int = 1024
    attention: str | None = "softmax"
    init: str = "standard"
    init_std: float = 0.02
    init_kwargs: dict = field(default_factory=dict)  # e, w, a, b, alpha for "guideline" / "canonical"
    optimizer: str = "adamw"
    lr: float = 2e-3
    betas: tuple = (0.9, 0.95)
    weight_decay: float = 1e-3
    momentum: float = 0.0  # SGD only
    schedule: str = "cosine"
    warmup: float = 0.02  # fraction of the steps
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0  # 0 disables
    seed: int = 0
    eval_every: int = 100  # 0: evaluate only at the start and the end
    eval_batches: int = 4
    checkpoint_every: int = 0  # 0: no periodic checkpoints
    dtype: str = "float32"
    amp: bool = True  # autocast on CUDA only

    def __post_init__(self):
        self.p = _checks.probability("p", self.p)
        self.q = _checks.probability("q", self.q)
        self.steps = _checks.positive_int("steps", self.steps)
        self.d = _checks.positive_int("d", self.d)
        self.batch = _checks.positive_int("batch", self.batch)
        self.length = _checks.positive_int("length", self.length)
        if self.attention is not None:
            _checks.choice("attention", self.attention, {"softmax", "linear"})
        _checks.choice("init", self.init, set(INITS))
        self.init_std = _checks.positive_real("init_std", self.init_std)
        if not isinstance(self.init_kwargs, dict):
            raise ValueError(f"init_kwargs must be a dict, got {self.init_kwargs!r}")
        unknown = set(self.init_kwargs) - {"e", "w", "a", "b", "alpha", "u"}
        if unknown:
            raise ValueError(f"init_kwargs may only hold e, w, a, b, alpha, u; got {sorted(unknown)}")
        _checks.choice("optimizer", self.optimizer, set(OPTIMIZERS))
        self.lr = _checks.positive_real("lr", self.lr)
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
        _checks.choice("schedule", self.schedule, set(SCHEDULES))
        self.warmup = self._nonneg("warmup", self.warmup)
        if self.warmup >= 1:
            raise ValueError(f"warmup must be a fraction of the steps in [0, 1), got {self.warmup!r}")
        self.min_lr_ratio = self._nonneg("min_lr_ratio", self.min_lr_ratio)
        if self.min_lr_ratio > 1:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")
        self.grad_clip = self._nonneg("grad_clip", self.grad_clip)
        self.seed = _checks.nonnegative_int("seed", self.seed)
        self.eval_every = _checks.nonnegative_int("eval_every", self.eval_every)
        self.eval_batches = _checks.positive_int("eval_batches", self.eval_batches)
        self.checkpoint_every = _checks.nonnegative_int("checkpoint_every", self.checkpoint_every)
        _checks.choice("dtype", self.dtype, {"float32", "float64"})
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


def lr_factor(step, steps, warmup=0.02, min_lr_ratio=0.1, schedule="cosine") -> float:
    """Multiplier of the base learning rate at optimizer step ``step`` (0-based): linear warm-up from 1/W to 1
    over the first W = ceil(warmup * steps) steps, then cosine from 1 down to ``min_lr_ratio`` at the last step
    (``schedule="constant"``: 1 after the warm-up)."""
    n_warm = math.ceil(warmup * steps)
    if step < n_warm:
        return (step + 1) / n_warm
    if schedule == "constant":
        return 1.0
    span = max(steps - n_warm - 1, 1)
    progress = min((step - n_warm) / span, 1.0)
    return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


# ------------------------------------------------------------------------------------------------------------
# the trainer
# ------------------------------------------------------------------------------------------------------------
class Trainer:
    """Train a :class:`~markovlib.transformer.MarkovTransformer` on ``MarkovChain(p, q)``.

    ``Trainer(config)`` or ``Trainer(p=..., q=..., **knobs)`` (knobs of :class:`TrainConfig`), plus
    ``out`` (directory for metrics.csv, summary.json, checkpoint.pt; ``None``: nothing written),
    ``device`` (see :func:`pick_device`) and ``progress`` (tqdm bar). Every argument is validated before any
    work starts. ``Trainer.from_checkpoint(path)`` resumes a run exactly.
    """

    def __init__(self, config: TrainConfig | None = None, *, out=None, device=None, progress=True, **knobs):
        if config is None:
            config = TrainConfig(**knobs)
        elif knobs:
            config = TrainConfig(**{**config.to_dict(), **knobs})
        elif not isinstance(config, TrainConfig):
            raise ValueError(f"config must be a TrainConfig, got {type(config).__name__}")
        self.config = cfg = config
        self.device = pick_device(device)
        self.out = Path(out) if out is not None else None
        self.progress = bool(progress)

        self.chain = MarkovChain(cfg.p, cfg.q)
        self.entropy_rate = self.chain.entropy_rate
        self.marginal_entropy = self.chain.marginal_entropy
        self.c_star = c_star(cfg.p, cfg.q)  # coefficient of x_n in the bigram logit (reference Sec. 3)
        dtype = torch.float32 if cfg.dtype == "float32" else torch.float64
        gen = torch.Generator().manual_seed(batch_seed(cfg.seed, 0, INIT_STREAM))
        init_kw = dict(cfg.init_kwargs)
        if cfg.init == "canonical":
            init_kw.setdefault("p", cfg.p)
            init_kw.setdefault("q", cfg.q)
            if "e" not in init_kw or "w" not in init_kw:
                raise ValueError("init='canonical' needs init_kwargs with the canonical scalars e and w")
        model = MarkovTransformer(cfg.d, cfg.length, attention=cfg.attention, dtype=dtype)
        model.init_weights(cfg.init, std=cfg.init_std, generator=gen, **init_kw)
        self.model = model.to(self.device)

        if cfg.optimizer == "adamw":
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, betas=cfg.betas,
                                               weight_decay=cfg.weight_decay)
        else:
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                                             weight_decay=cfg.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: lr_factor(s, cfg.steps, cfg.warmup, cfg.min_lr_ratio, cfg.schedule))

        self.autocast_dtype = None
        if self.device.type == "cuda" and cfg.amp:
            self.autocast_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.autocast_dtype == torch.float16)

        self.step = 0  # optimizer steps completed
        self.history: list[dict] = []
        self.elapsed = 0.0  # training wall time over all sessions of the run

    # -- one step -----------------------------------------------------------------------------------------
    def _autocast(self):
        if self.autocast_dtype is None:
            return torch.autocast(device_type="cpu", enabled=False)
        return torch.autocast(device_type="cuda", dtype=self.autocast_dtype)

    def get_batch(self, step, stream=TRAIN_STREAM, index=0) -> torch.Tensor:
        """The (batch, length + 1) symbols of ``step`` (``index`` numbers the evaluation batches)."""
        cfg = self.config
        seed = batch_seed(cfg.seed, step, stream) if stream == TRAIN_STREAM else \
            batch_seed(cfg.seed, step * cfg.eval_batches + index, stream)
        return sample_batch(self.chain, cfg.batch, cfg.length + 1, seed, self.device)

    def train_step(self) -> dict:
        """One optimizer step on the batch of the current step; returns the history row it appends."""
        cfg = self.config
        x = self.get_batch(self.step)
        lr = self.optimizer.param_groups[0]["lr"]
        self.model.train()
        with self._autocast():
            loss = self.model.loss(x)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        if cfg.grad_clip > 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        else:
            grad_norm = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(p.grad) for p in self.model.parameters()
                             if p.grad is not None]))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.step += 1
        row = {"step": self.step, "lr": lr, "train_loss": float(loss.detach()), "grad_norm": float(grad_norm)}
        self.history.append(row)
        return row

    @torch.no_grad()
    def evaluate(self) -> dict:
        """Loss on ``eval_batches`` fresh held-out batches (their own seed stream), its gaps to the entropy rate
        and to H(pi), and (binary model) the context coefficient c-hat of
        :func:`~markovlib.transformer.context_coefficient` with its ratio to c* = log((1-p)(1-q)/(pq)):
        about 1 at the bigram predictor, 0 at the unigram one."""
        self.model.eval()
        losses, contexts, all_logits = [], [], []
        for j in range(self.config.eval_batches):
            x = self.get_batch(self.step, EVAL_STREAM, j)
            ctx, target = x[:, :-1], x[:, 1:]
            with self._autocast():
                logits = self.model(ctx)
            logits = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
            if self.model.binary:
                losses.append(float(F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype))))
                contexts.append(ctx)
                all_logits.append(logits)
            else:
                losses.append(float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))))
        loss = float(np.mean(losses))
        out = {"eval_loss": loss, "gap_entropy_rate": loss - self.entropy_rate,
               "gap_marginal": loss - self.marginal_entropy}
        if self.model.binary:
            coef = context_coefficient(torch.cat(all_logits), torch.cat(contexts))
            out["context_coefficient"] = coef
            out["coefficient_ratio"] = coef / self.c_star if self.c_star != 0 else float("nan")
        return out

    def _record_eval(self):
        ev = self.evaluate()
        if self.history and self.history[-1]["step"] == self.step:
            self.history[-1].update(ev)
        else:
            self.history.append({"step": self.step, **ev})
        return ev

    # -- the loop -----------------------------------------------------------------------------------------
    def train(self, *, stop_at=None) -> dict:
        """Train up to ``config.steps`` (or only up to step ``stop_at``, to simulate an interruption); evaluate
        at step 0, every ``eval_every`` steps and at the end; checkpoint every ``checkpoint_every`` steps;
        write the files under ``out``. Returns the summary (also in summary.json)."""
        from .progress import progress_bar

        cfg = self.config
        end = cfg.steps if stop_at is None else min(_checks.positive_int("stop_at", stop_at), cfg.steps)
        if self.out is not None:
            self.out.mkdir(parents=True, exist_ok=True)
        if self.step == 0 and not self.history:
            self._record_eval()
        bar = progress_bar(total=cfg.steps, initial=self.step, disable=not self.progress, desc="train",
                   dynamic_ncols=True, leave=False)
        t0 = time.perf_counter()
        last_gap = None
        try:
            while self.step < end:
                row = self.train_step()
                if (cfg.eval_every and self.step % cfg.eval_every == 0) or self.step == cfg.steps:
                    self._record_eval()
                bar.update(1)
                if "eval_loss" in row:
                    last_gap = row["gap_entropy_rate"]
                if self.step % 10 == 0 or self.step == end:
                    post = {"loss": f"{row['train_loss']:.4f}"}
                    if last_gap is not None:
                        post["eval_gap_H"] = f"{last_gap:+.4f}"
                    bar.set_postfix(post, refresh=False)
                if cfg.checkpoint_every and self.step % cfg.checkpoint_every == 0:
                    self.elapsed += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    self.history[-1]["elapsed_s"] = self.elapsed
                    if self.out is not None:
                        self.save_checkpoint()
                        self.write_metrics()
        finally:
            bar.close()
        self.elapsed += time.perf_counter() - t0
        if self.history:
            self.history[-1]["elapsed_s"] = self.elapsed
        summary = self.summary()
        if self.out is not None:
            self.write_metrics()
            if self.step == cfg.steps:
                (self.out / SUMMARY_NAME).write_text(json.dumps(summary, indent=2) + "\n")
        return summary

    def summary(self) -> dict:
        """Final figures: last evaluation, gaps, which yardstick the run is nearer, singular fractions."""
        evals = [r for r in self.history if "eval_loss" in r]
        trains = [r["train_loss"] for r in self.history if "train_loss" in r]
        last = evals[-1] if evals else {}
        out = {
            "config": self.config.to_dict(),
            "device": str(self.device),
            "steps_done": self.step,
            "entropy_rate": self.entropy_rate,
            "marginal_entropy": self.marginal_entropy,
            "initial_eval_loss": evals[0]["eval_loss"] if evals else None,
            "final_eval_loss": last.get("eval_loss"),
            "final_train_loss": float(np.mean(trains[-10:])) if trains else None,
            "gap_entropy_rate": last.get("gap_entropy_rate"),
            "gap_marginal": last.get("gap_marginal"),
            "c_star": self.c_star,
            "context_coefficient": last.get("context_coefficient"),
            "coefficient_ratio": last.get("coefficient_ratio"),
            "elapsed_s": self.elapsed,
            "steps_per_s": (self.step / self.elapsed) if self.elapsed > 0 else None,
            "singular_fractions": singular_fractions(self.model),
        }
        if evals:
            out["nearest"] = ("entropy_rate" if abs(last["gap_entropy_rate"]) <= abs(last["gap_marginal"])
                              else "marginal_entropy")
        return out

    # -- files --------------------------------------------------------------------------------------------
    def write_metrics(self, path=None):
        """The history as CSV (one row per step; evaluation columns empty between evaluations)."""
        path = Path(path) if path is not None else self.out / METRICS_NAME
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=METRIC_COLUMNS, extrasaction="ignore")
            writer.writeheader()
            for row in self.history:
                writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
        os.replace(tmp, path)
        return path

    def state_dict(self) -> dict:
        state = {
            "config": self.config.to_dict(),
            "step": self.step,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "history": self.history,
            "elapsed": self.elapsed,
            "torch_rng": torch.get_rng_state(),
            "seed": self.config.seed,
        }
        if torch.cuda.is_available():
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        return state

    def save_checkpoint(self, path=None) -> Path:
        """Model, optimizer, scheduler, scaler, step, seed and RNG state, history; written atomically."""
        path = Path(path) if path is not None else self.out / CHECKPOINT_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        torch.save(self.state_dict(), tmp)
        os.replace(tmp, path)
        return path

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        self.step = int(state["step"])
        self.history = [dict(r) for r in state["history"]]
        self.elapsed = float(state.get("elapsed", 0.0))
        torch.set_rng_state(state["torch_rng"])
        if "cuda_rng" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])

    @classmethod
    def from_checkpoint(cls, path, *, out=None, device=None, progress=True) -> "Trainer":
        """Resume the run saved at ``path`` (its configuration, weights, optimizer and schedule state, step,
        history); ``out`` defaults to the checkpoint's directory."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"resume checkpoint {str(path)!r} does not exist")
        state = torch.load(path, map_location="cpu", weights_only=True)
        cfg = dict(state["config"])
        cfg["betas"] = tuple(cfg["betas"])
        trainer = cls(TrainConfig(**cfg), out=out if out is not None else path.parent, device=device,
                      progress=progress)
        trainer.load_state_dict(state)
        return trainer


def train(p, q, **kwargs) -> tuple[Trainer, dict]:
    """Convenience: ``Trainer(p=p, q=q, **kwargs)`` then ``.train()``; returns (trainer, summary)."""
    trainer = Trainer(p=p, q=q, **kwargs)
    return trainer, trainer.train()


def _train_one(config: dict) -> dict:
    torch.set_num_threads(1)
    trainer = Trainer(**config, progress=False)
    summary = trainer.train()
    return {"summary": summary, "history": trainer.history}


def train_many(configs, *, workers=1, progress=True) -> list[dict]:
    """Train one run per dict of ``configs`` (keywords of :class:`Trainer`, e.g. p, q, init, seed, steps; no
    ``out``), each on one CPU thread, in ``workers`` processes (spawned; ``workers=1`` runs them here).
    Returns, in the order of ``configs``, {"summary": ..., "history": ...} per run. Runs are deterministic, so the
    result does not depend on ``workers``. Every config is validated before any run starts."""
    from .progress import progress_bar

    configs = [dict(c) for c in configs]
    workers = _checks.positive_int("workers", workers)
    for c in configs:
        if "out" in c or "progress" in c:
            raise ValueError("train_many configs may not set out or progress")
        Trainer(**c, progress=False)  # validation only: raises ValueError before any work
    results = [None] * len(configs)
    bar = progress_bar(total=len(configs), desc="runs", disable=not progress, leave=False)
    try:
        if workers == 1 or len(configs) <= 1:
            old = torch.get_num_threads()
            try:
                for i, c in enumerate(configs):
                    results[i] = _train_one(c)
                    bar.update(1)
            finally:
                torch.set_num_threads(old)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(workers, len(configs)),
                                     mp_context=mp.get_context("spawn")) as pool:
                futures = {pool.submit(_train_one, c): i for i, c in enumerate(configs)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    return results


# ------------------------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------------------------
def add_train_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options of ``python -m markovlib train`` (defaults: :class:`TrainConfig`)."""
    d = TrainConfig.__dataclass_fields__
    parser.add_argument("--p", type=float, default=None, help="P(1|0), in (0, 1) (required unless --resume)")
    parser.add_argument("--q", type=float, default=None, help="P(0|1), in (0, 1) (required unless --resume)")
    parser.add_argument("--init", default="standard", choices=[i for i in INITS],
                        help="initialization scheme (default standard)")
    parser.add_argument("--init-std", type=float, default=d["init_std"].default, help="std of the Gaussian init")
    parser.add_argument("--e", type=float, default=None, help="canonical e (guideline / canonical init)")
    parser.add_argument("--w", type=float, default=None, help="canonical w (guideline / canonical init)")
    parser.add_argument("--a", type=float, default=None, help="canonical a (canonical init, linear attention)")
    parser.add_argument("--attention", default="softmax", choices=["softmax", "linear", "none"])
    parser.add_argument("--steps", type=int, default=d["steps"].default)
    parser.add_argument("--seed", type=int, default=d["seed"].default)
    parser.add_argument("--d", type=int, default=d["d"].default, help="embedding dimension")
    parser.add_argument("--batch", type=int, default=d["batch"].default)
    parser.add_argument("--length", type=int, default=d["length"].default, help="context length N")
    parser.add_argument("--lr", type=float, default=d["lr"].default)
    parser.add_argument("--optimizer", default=d["optimizer"].default, choices=list(OPTIMIZERS))
    parser.add_argument("--weight-decay", type=float, default=d["weight_decay"].default)
    parser.add_argument("--momentum", type=float, default=d["momentum"].default, help="SGD momentum")
    parser.add_argument("--schedule", default=d["schedule"].default, choices=list(SCHEDULES))
    parser.add_argument("--warmup", type=float, default=d["warmup"].default, help="warm-up fraction of steps")
    parser.add_argument("--grad-clip", type=float, default=d["grad_clip"].default, help="0 disables")
    parser.add_argument("--eval-every", type=int, default=d["eval_every"].default)
    parser.add_argument("--eval-batches", type=int, default=d["eval_batches"].default)
    parser.add_argument("--checkpoint-every", type=int, default=d["checkpoint_every"].default)
    parser.add_argument("--resume", nargs="?", const="auto", default=None, metavar="CHECKPOINT",
                        help="resume from CHECKPOINT (default: OUT/checkpoint.pt); the run's saved "
                             "configuration is used")
    parser.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda[:N], mps")
    parser.add_argument("--out", default=None, help="output directory (metrics.csv, summary.json, checkpoint.pt)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def train_from_args(args) -> dict:
    """Run ``python -m markovlib train`` from parsed arguments; prints and returns the summary."""
    progress = not args.no_progress
    if args.resume is not None:
        path = Path(args.out) / CHECKPOINT_NAME if args.resume == "auto" else Path(args.resume)
        if args.resume == "auto" and args.out is None:
            raise ValueError("--resume without a path needs --out (the checkpoint is OUT/checkpoint.pt)")
        trainer = Trainer.from_checkpoint(path, out=args.out, device=args.device, progress=progress)
    else:
        if args.p is None or args.q is None:
            raise ValueError("p and q are required (--p, --q) unless --resume is given")
        init_kwargs = {k: getattr(args, k) for k in ("e", "w", "a") if getattr(args, k) is not None}
        trainer = Trainer(p=args.p, q=args.q, steps=args.steps, d=args.d, batch=args.batch, length=args.length,
                          attention=None if args.attention == "none" else args.attention, init=args.init,
                          init_std=args.init_std, init_kwargs=init_kwargs, optimizer=args.optimizer, lr=args.lr,
                          weight_decay=args.weight_decay, momentum=args.momentum, schedule=args.schedule,
                          warmup=args.warmup, grad_clip=args.grad_clip, seed=args.seed,
                          eval_every=args.eval_every, eval_batches=args.eval_batches,
                          checkpoint_every=args.checkpoint_every, out=args.out, device=args.device,
                          progress=progress)
    summary = trainer.train()
    print(f"step {summary['steps_done']}: eval loss {summary['final_eval_loss']:.5f}  "
          f"(entropy rate {summary['entropy_rate']:.5f}, gap {summary['gap_entropy_rate']:+.5f}; "
          f"H(pi) {summary['marginal_entropy']:.5f}, gap {summary['gap_marginal']:+.5f})")
    if trainer.out is not None:
        print(f"wrote {trainer.out / METRICS_NAME} and {trainer.out / SUMMARY_NAME}")
    return summary


# ------------------------------------------------------------------------------------------------------------
# benchmark
# ------------------------------------------------------------------------------------------------------------
class _PeakMemory:
    """Peak memory of a block: torch.cuda.max_memory_allocated on CUDA; on CPU the peak resident set size
    above the value at entry, polled from /proc/self/statm every millisecond (falls back to ru_maxrss)."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.peak = None

    @staticmethod
    def _rss():
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return None

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
            return self
        self.base = self._rss()
        self.max = self.base
        self._stop = threading.Event()
        if self.base is not None:
            def poll():
                while not self._stop.wait(0.001):
                    self.max = max(self.max, self._rss())
            self._thread = threading.Thread(target=poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device) - self.base
            self.kind = "cuda max_memory_allocated"
            return False
        if self.base is not None:
            self._stop.set()
            self._thread.join()
            self.max = max(self.max, self._rss())
            self.peak = self.max - self.base
            self.kind = "peak RSS increase"
        else:
            import resource

            self.peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            self.kind = "process ru_maxrss"
        return False


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench_train(quick=False, *, device=None, threads=1) -> dict:
    """Training throughput at the paper configuration (d = 8, length 1024, batch 16, AdamW): the Trainer
    (vectorized sampler, fused causal attention, float32) next to a plain baseline loop in the same run
    (per-position torch.multinomial sampler, attention with the materialized length x length matrix).
    Prints steps/s, tokens/s, peak memory and the speed-up; returns the figures. On CPU torch uses
    ``threads`` threads during the benchmark (default 1: the per-core figure)."""
    dev = pick_device(device)
    threads = _checks.positive_int("threads", threads)
    n_fast, n_base = (6, 2) if quick else (30, 6)
    d, length, batch = 8, 1024, 16
    old_threads = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(threads)
    try:
        results = {}
        # -- the Trainer ------------------------------------------------------------------------------------
        trainer = Trainer(p=0.5, q=0.8, d=d, length=length, batch=batch, steps=n_fast + 1, device=dev,
                          progress=False)
        trainer.train_step()  # warm-up
        _sync(dev)
        with _PeakMemory(dev) as mem:
            t0 = time.perf_counter()
            for _ in range(n_fast):
                trainer.train_step()
            _sync(dev)
            dt = time.perf_counter() - t0
        results["trainer"] = {"steps_per_s": n_fast / dt, "tokens_per_s": n_fast * batch * length / dt,
                              "peak_bytes": mem.peak, "memory_kind": mem.kind}
        del trainer
        # -- the baseline -----------------------------------------------------------------------------------
        chain = MarkovChain(0.5, 0.8)
        model = MarkovTransformer(d, length, attention="softmax", reference_impl=True, dtype=torch.float32)
        model.init_weights("standard", std=0.02, seed=0)
        model = model.to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.95), weight_decay=1e-3)
        seeds = iter(range(10**6))

        def base_step():
            x = multinomial_loop_sampler(chain, batch, length + 1, seed=next(seeds)).to(dev)
            loss = model.loss(x)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        base_step()
        _sync(dev)
        with _PeakMemory(dev) as mem:
            t0 = time.perf_counter()
            for _ in range(n_base):
                base_step()
            _sync(dev)
            dt = time.perf_counter() - t0
        results["baseline"] = {"steps_per_s": n_base / dt, "tokens_per_s": n_base * batch * length / dt,
                               "peak_bytes": mem.peak, "memory_kind": mem.kind}
    finally:
        torch.set_num_threads(old_threads)
    speedup = results["trainer"]["steps_per_s"] / results["baseline"]["steps_per_s"]
    results.update(speedup=speedup, device=str(dev), threads=threads if dev.type == "cpu" else None,
                   config={"d": d, "length": length, "batch": batch, "trainer_steps": n_fast,
                           "baseline_steps": n_base})
    where = f"{dev}" + (f", {threads} thread(s)" if dev.type == "cpu" else "")
    print(f"bench train: d={d}, length={length}, batch={batch}, AdamW, float32 ({where})")
    print(f"{'':34s} {'steps/s':>9s} {'tokens/s':>11s} {'peak memory':>13s}")
    for name, label in (("trainer", "Trainer (fused attention)"),
                        ("baseline", "baseline (per-position, N x N)")):
        r = results[name]
        mem = f"{r['peak_bytes'] / 2**20:9.1f} MiB" if r["peak_bytes"] is not None else "n/a"
        print(f"{label:34s} {r['steps_per_s']:9.2f} {r['tokens_per_s']:11.0f} {mem:>13s}")
    print(f"speed-up: {speedup:.1f}x  (memory: {results['trainer']['memory_kind']})")
    return results
