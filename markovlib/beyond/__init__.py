"""Beyond the papers, and the closing chapter.

- ``multistate``: the symmetric K-state and lag-k chains, their yardsticks, the plateau ladder, the samplers.
- ``kstate_training``: the K-state inits and training loop (Adam or plain SGD, tied or untied head).
- ``kstate_checks``: the K-state chapter's Monte Carlo tolerances, rounding scale and read-out of a trained model.
- ``kstate_stored``: reading the stored K-state runs (ladder classification, per-cell counts, stored-set checks).
- ``conservation``: GD, SGD, Adam and weight decay on a numpy loss, recording a conserved quantity along the run.
- ``drift_problems``: the closing chapter's three problems (Parts I, II, III), built once.
- ``drift_study``: the closing chapter's prediction study (convergence, training times, draws, largest step).
- ``drift_drawings``, ``drawings``: the two chapters' explorers, headless.
"""
