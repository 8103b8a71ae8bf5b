"""A tiny notebook for the sweep tests: a parameters cell and one body cell (tests/test_sweep.py, test_interrupt.py)."""
import nbformat


def write_notebook(path, parameters: str, body: str):
    """Write a python3 notebook with a cell tagged ``parameters`` and one code cell; return ``path``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nbformat.write(nb, str(path))
    return path
