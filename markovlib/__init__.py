"""markovlib: the theory and experiments of a single-layer transformer learning a first-order Markov chain.

One module per idea: ``chain`` (Markov sources and the two loss yardsticks), ``canonical`` (the canonical low-rank
model), ``energy`` (the conserved energy and the predicted limits), ``flow`` (gradient flow), ``attention`` (the
attention scalar in 3-D), ``transformer`` (the full torch model), ``trainer`` (training), ``sweep`` (papermill
sweeps on dask), ``plotting`` (the book's figure style), ``widgets`` and ``progress`` (interactive vs batch), and the
command line (``python -m markovlib``).
"""

__version__ = "0.1.0"
