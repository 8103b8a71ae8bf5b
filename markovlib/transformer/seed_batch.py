"""Plain SGD on many seeds at once: the escape runs of trap_or_plateau (tools/run_escape.py ``--seed-batch``) with
the seeds stacked along a leading axis, one forward and one backward pass per step for all of them.

A run of the binary model at batch 1 spends almost all of its 2-3 ms per step in per-operation overhead (the model
has 4 d^2 + 2 r d + N d ~ 1,300 weights at d = 8, N = 64). Stacking S seeds keeps the number of operations and
multiplies their size, so S seeds cost about what one did (measured: 20 seeds in about 2.6 ms per step, one seed in
about 3 ms, on the same loaded core). The runs are the :class:`~markovlib.transformer.training.Trainer`'s runs of
:func:`~markovlib.transformer.escape.escape_config` with ``optimizer="sgd"``, rewritten without the Trainer's
machinery:

- the same initialization (each seed's Trainer is built and its weights stacked);
- the same data, bit for bit: :func:`train_batches` draws every (seed, step) batch from the generator that
  :func:`~markovlib.transformer.sampling.sample_batch` seeds with ``batch_seed(seed, step)``, and only vectorizes
  the arithmetic after the draws (tested against ``sample_batch``);
- the same step (reference Sec. 2): next-symbol BCE with logits averaged over the batch and the positions,
  gradient clipping at norm ``clip`` per seed as ``torch.nn.utils.clip_grad_norm_`` does it
  (coefficient min(1, clip / (||g|| + 1e-6))), then p <- p - lr g;
- the same evaluations: each seed's Trainer evaluates its own weights on its own held-out batches, and the canonical
  projection (e, w), E(e, w) (Lemma 1) and W_1's top singular fraction are read as
  :func:`~markovlib.transformer.escape.train_with_energy` reads them.

:func:`stacked_logits` is the forward pass of :class:`~markovlib.transformer.model.MarkovTransformer` (softmax
attention, binary, tied head) written for stacked weights; it is checked against the model, and a few hundred steps
of :class:`SeedBatchSGD` against the Trainer's (float32: the sums run in another order, so the runs agree to
rounding, not bit for bit, and two runs of a noisy plateau drift apart slowly; the agreement is measured in the
tests and in the chapter).
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import torch
import torch.nn.functional as F

from ..book.progress import progress_bar
from ..markov.chain import MarkovChain, _geometric_scales, _runs_needed
from ..numerics import checks
from .device import TRAIN_STREAM, batch_seed
from .escape import EVAL_COLUMNS, escape_config, projection
from .sampling import sample_batch

PARAMETERS = ("embedding", "bias", "positional", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")
__all__ = ["PARAMETERS", "train_batches", "stacked_logits", "SeedBatchSGD"]


def train_batches(chain: MarkovChain, seeds, step0, n_steps, batch, length) -> torch.Tensor:
    """The training batches of steps ``step0 .. step0 + n_steps - 1`` of the runs ``seeds``: an int64 tensor of
    shape (n_steps, len(seeds), batch, length), entry [t, i] equal to ``sample_batch(chain, batch, length,
    batch_seed(seeds[i], step0 + t), "cpu")``.

    The draws (a float64 uniform per row for the first state, float64 Exp(1) run lengths) are made per (seed, step)
    from that generator in the sampler's order; the run lengths, states and the expansion into symbols are computed
    for the whole block at once. A (seed, step) whose runs do not cover the sequence (astronomically rare: the
    sampler then redraws with twice the runs) is drawn by ``sample_batch`` itself."""
    if not chain.is_binary:
        raise ValueError("train_batches needs a binary chain")
    p, q = chain.p, chain.q
    n_runs = _runs_needed(p, q, length)
    scale = torch.tensor(_geometric_scales(p, q), dtype=torch.float64)
    gen = torch.Generator()
    cells = [(step0 + t, s) for t in range(n_steps) for s in seeds]
    first_u = torch.empty(len(cells), batch, dtype=torch.float64)
    expo = torch.empty(len(cells), batch, n_runs, dtype=torch.float64)
    for j, (step, seed) in enumerate(cells):
        gen.manual_seed(batch_seed(seed, step, TRAIN_STREAM))
        first_u[j] = torch.rand(batch, generator=gen, dtype=torch.float64)
        expo[j].exponential_(generator=gen)
    first = (first_u < p / (p + q)).long()
    state = (first[..., None] + torch.arange(n_runs)) & 1
    runs = torch.ceil(expo * scale[state]).clamp(min=1).long()
    ends = torch.cumsum(runs, dim=-1)
    short = (ends[..., -1] < length).any(dim=-1)
    ends = ends.clamp(max=length)
    counts = torch.diff(ends, dim=-1, prepend=torch.zeros(*ends.shape[:-1], 1, dtype=ends.dtype))
    counts[short] = 0  # those cells are redrawn below; their rows stay empty here
    x = torch.zeros(len(cells), batch, length, dtype=torch.long)
    ok = ~short
    x[ok] = torch.repeat_interleave(state[ok].reshape(-1), counts[ok].reshape(-1)).reshape(-1, batch, length)
    for j in torch.nonzero(short).flatten().tolist():
        step, seed = cells[j]
        x[j] = sample_batch(chain, batch, length, batch_seed(seed, step, TRAIN_STREAM), "cpu")
    return x.reshape(n_steps, len(seeds), batch, length)


def stacked_logits(params: dict, x: torch.Tensor) -> torch.Tensor:
    """Logits (S, B, N) of S binary softmax-attention models with stacked weights ``params`` (each of shape
    (S, *the model's shape)) on symbols ``x`` of shape (S, B, N) (reference Sec. 2):
    h = x e + p_n, y = h + W_O softmax-att(W_Q h, W_K h) W_V h, z = y + W_2 ReLU(W_1 y), logit = <e, z> + b."""
    n = x.shape[-1]
    e = params["embedding"][:, None, None, :]
    h = x.to(e.dtype)[..., None] * e + params["positional"][:, None, :n, :]

    def right(name):  # h @ W^T for every seed: (S, 1, d_in, d_out), broadcast over the batch
        return params[name].transpose(-1, -2)[:, None]

    q, k, v = h @ right("W_Q"), h @ right("W_K"), h @ right("W_V")
    att = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(q.shape[-1]))
    y = h + att @ right("W_O")
    z = y + F.relu(y @ right("W_1")) @ right("W_2")
    return (z * e).sum(-1) + params["bias"][:, None, None]


class SeedBatchSGD:
    """Plain SGD runs of ``escape_config(p, q, "sgd", lr, seed, steps, eval_every=, batch=)`` for every seed in
    ``seeds`` at once (module docstring), with clipping at norm ``clip`` (0: none), on one CPU thread.

    ``train(out=None, checkpoint_every=0)`` returns {seed: evaluation rows with the columns of
    :data:`~markovlib.transformer.escape.EVAL_COLUMNS`}, as ``train_with_energy`` returns them for one seed. With
    ``out`` (a file) and ``checkpoint_every`` the weights, step and rows are saved there atomically every so many
    steps, and a later call with the same ``out`` resumes from them."""

    def __init__(self, p, q, seeds, lr, steps, *, eval_every=1000, batch=1, clip=1.0, block=250):
        from .training import Trainer

        seeds = [checks.nonnegative_int("seeds", s) for s in seeds]
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be a non-empty list of distinct integers, got {seeds!r}")
        self.seeds = seeds
        self.steps = checks.positive_int("steps", steps)
        self.eval_every = checks.positive_int("eval_every", eval_every)
        if not isinstance(clip, (int, float)) or not math.isfinite(clip) or clip < 0:
            raise ValueError(f"clip must be a finite number >= 0 (0: no clipping), got {clip!r}")
        self.clip = float(clip)
        self.block = checks.positive_int("block", block)
        self.lr = checks.positive_real("lr", lr)
        self.trainers = [Trainer(**escape_config(p, q, "sgd", lr, s, steps, eval_every=eval_every, batch=batch),
                                 progress=False) for s in seeds]
        cfg = self.trainers[0].config
        if cfg.grad_clip != 1.0 or cfg.momentum != 0.0 or cfg.weight_decay != 0.0:
            raise ValueError("SeedBatchSGD mirrors escape_config's plain SGD (clipping 1, no momentum or decay)")
        self.chain, self.batch, self.length = self.trainers[0].chain, cfg.batch, cfg.length
        self.params = {n: torch.stack([getattr(t.model, n).detach() for t in self.trainers]).clone()
                       for n in PARAMETERS}
        self.step = 0
        self.evals = {s: [] for s in seeds}

    def loss(self, x):
        """Per-seed training loss (S,) on symbols x (S, B, length + 1)."""
        logits = stacked_logits(self.params, x[..., :-1])
        return F.binary_cross_entropy_with_logits(logits, x[..., 1:].to(logits.dtype), reduction="none").mean((1, 2))

    def sgd_step(self, x):
        """One clipped SGD step of every seed on its batch x[i]; returns the per-seed losses."""
        for v in self.params.values():
            v.requires_grad_(True)
        loss = self.loss(x)
        grads = torch.autograd.grad(loss.sum(), [self.params[n] for n in PARAMETERS])
        with torch.no_grad():
            if self.clip > 0:  # as clip_grad_norm_: the norm of the per-parameter norms, per seed
                norms = torch.stack([torch.linalg.vector_norm(g.reshape(len(g), -1), dim=1) for g in grads], dim=1)
                coef = (self.clip / (torch.linalg.vector_norm(norms, dim=1) + 1e-6)).clamp(max=1.0)
                grads = [g * coef.view(-1, *[1] * (g.dim() - 1)) for g in grads]
            for n, g in zip(PARAMETERS, grads):
                self.params[n] = self.params[n].detach().add(g, alpha=-self.lr)
        self.step += 1
        return loss.detach()

    def evaluate(self):
        """Each seed's Trainer evaluates its own weights at the current step (its held-out batches)."""
        with torch.no_grad():
            for i, (seed, tr) in enumerate(zip(self.seeds, self.trainers)):
                for n in PARAMETERS:
                    getattr(tr.model, n).copy_(self.params[n][i])
                tr.step = self.step
                row = {"step": self.step, **tr.evaluate()}
                row.update(projection(tr, row))
                self.evals[seed].append({c: row[c] for c in EVAL_COLUMNS})

    def _save(self, out):
        tmp = Path(str(out) + ".tmp")
        torch.save({"step": self.step, "params": self.params, "evals": json.dumps(self.evals)}, tmp)
        os.replace(tmp, out)

    def train(self, out=None, checkpoint_every=0, progress=False, stop_at=None):
        """Train to ``steps`` (or only to ``stop_at``, to simulate an interruption); see the class docstring."""
        end = self.steps if stop_at is None else min(checks.positive_int("stop_at", stop_at), self.steps)
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            if out is not None and Path(out).is_file():
                state = torch.load(out, weights_only=True)
                self.step, self.params = int(state["step"]), state["params"]
                self.evals = {int(k): v for k, v in json.loads(state["evals"]).items()}
            if self.step == 0 and not any(self.evals.values()):
                self.evaluate()
            bar = progress_bar(total=self.steps, initial=self.step, disable=not progress, desc="seed-batch SGD")
            while self.step < end:
                n = min(self.block, end - self.step)
                xs = train_batches(self.chain, self.seeds, self.step, n, self.batch, self.length + 1)
                for x in xs:
                    self.sgd_step(x)
                    if self.step % self.eval_every == 0 or self.step == self.steps:
                        self.evaluate()
                    if out is not None and checkpoint_every and self.step % checkpoint_every == 0:
                        self._save(out)
                bar.update(n)
            bar.close()
        finally:
            torch.set_num_threads(old)
        return {s: list(rows) for s, rows in self.evals.items()}
