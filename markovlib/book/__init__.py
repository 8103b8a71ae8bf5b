"""The book's machinery, below every part (it imports none of them).

- ``report``: the output policy's formatting and the ``Verification`` records behind "What was verified".
- ``params``: papermill parameter validation.
- ``sweep``: papermill over a grid on dask, and ``record_results``.
- ``cluster``: grids of tasks on dask.distributed (the sweep and every paper-scale tool).
- ``runner``: what the paper-scale tools (``tools/run_*.py``) share: their command line, their grids on dask, the
  files of a stored set; ``provenance``: the manifests' provenance block (git state, versions, CPU, sha256).
- ``stored``: reading the stored sets in a chapter (checksums, sets in parts, deterministic prefixes).
- ``plotting``: the book's figure style and colours.
- ``widgets``: the ipywidgets wiring of the live explorers; ``explorers``: the static explorers of the rendered
  book (sliders over precomputed frames); ``session``: live kernel or batch run; ``progress``: progress bars.
"""
