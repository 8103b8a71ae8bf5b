"""Part I, the full model (Makkuva et al., Secs. 2, 5, 7): the single-layer transformer and its training, in torch.

- ``model``: the single-layer model (softmax / linear attention, binary and K-state).
- ``inits``: the initializations (standard, rank one, guideline, canonical, the authors' constants).
- ``two_token``: the authors' 2-token model and its map to the binary model.
- ``readout``: closed forms of the canonical logit and bias; singular fractions; canonical scalars of a model.
- ``exact``: the exact population loss by enumerating every sequence.
- ``config``: ``TrainConfig`` and its recipes; ``device``: devices and seeds; ``sampling``: the batch sampler;
  ``schedules``: the learning-rate schedules; ``optim``: the optimizer's decay groups.
- ``training``: the ``Trainer``; ``runs``: ``train_many``; ``train_cli``: ``python -m markovlib train``.
- ``escape``: trap or plateau, the standard init under four optimizers with the energy E(e, w) along training.
- ``benchmarks``: ``python -m markovlib bench`` (sampler, flow, train).
- ``yardsticks``: Thms 4 and 5 in the full model (the construction, perturbations, explicit directions).
- ``stored_runs``: the stored Fig. 4 runs (outcomes, counts, the slice cap, replays); ``lowrank``: low rank in trained
  weights (Sec. 5.1); ``guideline``: where a run goes, read from c-hat (Sec. 5.2); ``drawings``: the weights' figures.
"""
