"""The book's machinery, below every part (it imports none of them).

- ``report``: the output policy's formatting and the ``Verification`` records behind "What was verified".
- ``params``: papermill parameter validation.
- ``sweep``: papermill over a grid on dask, and ``record_results``.
- ``plotting``: the book's figure style and colours.
- ``widgets``: the ipywidgets wiring of the live explorers; ``explorers``: the static explorers of the rendered
  book (sliders over precomputed frames); ``session``: live kernel or batch run; ``progress``: progress bars.
"""
