"""Execute chapter notebooks in place, top to bottom in one fresh kernel (how chapters are committed).

    python tools/execute_notebook.py book/markov_data.ipynb [more.ipynb ...]

Prints each notebook's wall time. Sets the kernelspec to python3 and strips run-time metadata.
"""
import os
import sys
import time

import nbclient
import nbformat


def execute(path: str, timeout: int = 900) -> float:
    os.environ["MARKOVLIB_BATCH"] = "1"  # explorers draw their static figure (markovlib.book.widgets)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata.pop("widgets", None)  # stale widget state would make the book load widget JavaScript from a CDN
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return elapsed


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(f"{p}: {execute(p):.1f} s")
