"""Test helpers: a tiny notebook for the sweep tests (test_sweep.py, test_interrupt.py), and a chapter's
parameter defaults for the spec tests."""
import nbformat


def write_notebook(path, parameters: str, body: str):
    """Write a python3 notebook with a cell tagged ``parameters`` and one code cell; return ``path``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nbformat.write(nb, str(path))
    return path


def chapter_defaults(chapter: str) -> dict:
    """The values of a chapter's parameters cell (its paired percent script ``book/<chapter>.py``), executed: the
    defaults that the chapter's declared parameters (markovlib.book.specs) must accept."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "book" / f"{chapter}.py").read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)\n# %%', text, re.S).group(1)
    namespace = {}
    exec(cell, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}
