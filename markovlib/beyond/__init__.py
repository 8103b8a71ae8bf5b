"""Beyond the papers, and the closing chapter.

- ``multistate``: the symmetric K-state and lag-k chains, their yardsticks, the plateau ladder, the samplers.
- ``kstate_training``: the K-state inits and training loop (Adam or plain SGD, tied or untied head).
- ``kstate_checks``: the K-state chapter's Monte Carlo tolerances, rounding scale and read-out of a trained model.
- ``kstate_stored``: reading the stored K-state runs (ladder classification, per-cell counts, stored-set checks).
- ``kstate_reference``: the K-state chapter's independent references (eigenvectors, autograd along a line, ...).
- ``kstate_exact``: the K-state chapter's derived checks, one call per step (yardsticks to the conservation laws).
- ``kstate_grid``, ``kstate_phase``: the K-state chapter's stored grid, slice, lag runs and phase set, per step.
- ``kstate_drawings``: the K-state chapter's figures of its stored runs.
- ``conservation``: GD, SGD, Adam and weight decay on a numpy loss, recording a conserved quantity along the run.
- ``drift_problems``: the closing chapter's three problems (Parts I, II, III), built once.
- ``drift_study``: the closing chapter's prediction study (convergence, training times, draws, largest step).
- ``drift_reference``: the closing chapter's independent references (the energy written out, the losses, DOP853).
- ``drift_checks``: the closing chapter's steps, one call each (gradient checks to the prediction study).
- ``closing_drawings``: the closing chapter's static figures (invariant sets, drift study, prediction study).
- ``drift_drawings``, ``drawings``: the two chapters' explorers, headless.
"""
