"""The training loop (reference Sec. 2, Sec. 7), nanoGPT style.

    trainer = Trainer(p=0.5, q=0.8, init="guideline", steps=1000, out="runs/demo")
    summary = trainer.train()        # history in trainer.history; metrics.csv, summary.json under out/

One step: draw a fresh batch of ``batch`` sequences of ``length + 1`` symbols from the chain on the training
device (vectorized sampler, seeded by :func:`~markovlib.transformer.device.batch_seed` from (seed, step) so that a
resumed run sees the same data), next-symbol cross-entropy (BCE with logits for the binary model), backward, gradient
clipping, optimizer and learning-rate schedule step (linear warm-up over the first ``warmup`` fraction of the
steps, then cosine down to ``min_lr_ratio * lr``). Every ``eval_every`` steps the loss on fresh held-out batches
is compared with the two yardsticks of reference Sec. 1: the entropy rate (bigram loss, the global minimum,
Thm 4) and H(pi) (unigram loss, the bad local minimum of Thm 5). ``train(callback=fn)`` calls ``fn`` after every
step.

Configuration: :class:`~markovlib.transformer.config.TrainConfig`. Mixed precision (autocast bf16, or fp16 with a
gradient scaler on CUDA) is opt-in (``amp=True``); evaluation is in the parameters' dtype (float32). On CPU a run is
deterministic for a fixed seed and thread count, and a resumed run reproduces the uninterrupted loss curve bit for bit.
Nothing here touches torch's global random generator."""
from __future__ import annotations

import contextlib
import csv
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..book.progress import progress_bar
from ..markov.canonical import c_star
from ..markov.chain import MarkovChain
from ..numerics import checks
from .config import CHECKPOINT_NAME, METRIC_COLUMNS, METRICS_NAME, SUMMARY_NAME, TrainConfig
from .device import EVAL_STREAM, INIT_STREAM, TRAIN_STREAM, batch_seed, pick_device
from .inits import perturb
from .model import MarkovTransformer
from .optim import parameter_groups
from .readout import context_coefficient, singular_fractions
from .sampling import sample_batch
from .schedules import make_scheduler


def _atomic_write_text(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class Trainer:
    """Train a :class:`~markovlib.transformer.model.MarkovTransformer` on ``MarkovChain(p, q)``.

    ``Trainer(config)`` or ``Trainer(p=..., q=..., **knobs)`` (knobs of :class:`TrainConfig`), plus ``out``
    (directory for metrics.csv, summary.json, checkpoint.pt; ``None``: nothing written), ``device`` (see
    :func:`pick_device`) and ``progress`` (tqdm bar). Every argument is validated before any work starts.
    ``Trainer.from_checkpoint(path)`` resumes a run exactly."""

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
        model = MarkovTransformer(cfg.d, cfg.length, attention=cfg.attention, dtype=dtype,
                                  n_states=2 if cfg.model == "two_token" else None)
        model.init_weights(cfg.init, std=cfg.init_std, generator=gen, **init_kw)
        if cfg.init_noise > 0:  # its own stream: the unperturbed start of the same seed, plus the noise
            perturb(model, cfg.init_noise, torch.Generator().manual_seed(batch_seed(cfg.seed, 1, INIT_STREAM)))
        self.model = model.to(self.device)

        groups = parameter_groups(self.model, cfg.weight_decay, cfg.decay_groups)
        if cfg.optimizer == "adamw":
            self.optimizer = torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas)
        else:
            self.optimizer = torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum)
        self.scheduler = make_scheduler(self.optimizer, cfg)

        self.autocast_dtype = None  # mixed precision is opt-in (config.amp), on every device
        if cfg.amp and self.device.type == "cuda":
            self.autocast_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        elif cfg.amp and self.device.type == "cpu":
            self.autocast_dtype = torch.bfloat16
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.autocast_dtype == torch.float16)

        self.step = 0  # optimizer steps completed
        self.history: list[dict] = []
        self.elapsed = 0.0  # training wall time over all sessions of the run

    # -- one step -----------------------------------------------------------------------------------------
    def _autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

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
        :func:`~markovlib.transformer.readout.context_coefficient` with its ratio to c* = log((1-p)(1-q)/(pq)):
        about 1 at the bigram predictor, 0 at the unigram one. Always in the parameters' dtype (float32 by
        default), without autocast, so evaluations do not depend on ``amp``."""
        self.model.eval()
        losses, contexts, all_logits = [], [], []
        for j in range(self.config.eval_batches):
            x = self.get_batch(self.step, EVAL_STREAM, j)
            ctx, target = x[:, :-1], x[:, 1:]
            logits = self.model(ctx)
            if self.model.binary:
                losses.append(float(F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype))))
                contexts.append(ctx)
                all_logits.append(logits)
            else:
                losses.append(float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))))
                if self.model.n_states == 2:  # the 2-token model's binary logit is the difference of its two
                    contexts.append(ctx)
                    all_logits.append(logits[..., 1] - logits[..., 0])
        loss = float(np.mean(losses))
        out = {"eval_loss": loss, "gap_entropy_rate": loss - self.entropy_rate,
               "gap_marginal": loss - self.marginal_entropy,
               **{f"top_fraction_{k}": v for k, v in singular_fractions(self.model).items()}}
        if all_logits:
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
    def train(self, *, stop_at=None, callback=None) -> dict:
        """Train up to ``config.steps`` (or only up to step ``stop_at``, to simulate an interruption); evaluate
        at step 0, every ``eval_every`` steps and at the end; checkpoint every ``checkpoint_every`` steps;
        write the files under ``out``. Returns the summary (also in summary.json).

        ``callback(trainer, row)`` is called after every optimizer step (after that step's evaluation, if any;
        ``trainer.step`` is the number of steps done, ``trainer.model`` the current weights, ``row`` the step's
        history row). If it returns a dict, its entries are added to that row: a chapter records its own
        diagnostics there (``trainer.history``) instead of re-implementing the loop. Values should be scalars
        (they go into checkpoints)."""
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable(trainer, row) or None, got {callback!r}")
        cfg = self.config
        end = cfg.steps if stop_at is None else min(checks.positive_int("stop_at", stop_at), cfg.steps)
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
                if callback is not None:
                    extra = callback(self, row)
                    if extra is not None:
                        if not isinstance(extra, dict):
                            raise ValueError(f"callback must return a dict or None, got {type(extra).__name__}")
                        row.update(extra)
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
                _atomic_write_text(self.out / SUMMARY_NAME, json.dumps(summary, indent=2) + "\n")
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
            "seed": self.config.seed,
        }
        return state

    def save_checkpoint(self, path=None) -> Path:
        """Model, optimizer, scheduler, scaler, step, seed, history; written atomically (temporary file, then
        ``os.replace``), so a run killed at any moment leaves the previous checkpoint or the new one."""
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
        # (every random draw of a run comes from its own generators seeded by batch_seed: torch's global RNG
        # state is neither used nor restored, so resuming has no side effect on it)

    @classmethod
    def from_checkpoint(cls, path, *, out=None, device=None, progress=True) -> "Trainer":
        """Resume the run saved at ``path`` (its configuration, weights, optimizer and schedule state, step,
        history); ``out`` defaults to the checkpoint's directory."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"resume checkpoint {str(path)!r} does not exist")
        state = torch.load(path, map_location="cpu", weights_only=True)
        trainer = cls(TrainConfig.from_dict(state["config"]), out=out if out is not None else path.parent,
                      device=device, progress=progress)
        trainer.load_state_dict(state)
        return trainer


def train(p, q, **kwargs) -> tuple[Trainer, dict]:
    """Convenience: ``Trainer(p=p, q=q, **kwargs)`` then ``.train()``; returns (trainer, summary)."""
    trainer = Trainer(p=p, q=q, **kwargs)
    return trainer, trainer.train()
