import os

import pytest

# Chapters executed by nbval are batch runs: explorers draw their static figure only (see markovlib.book.widgets).
# (Do not set MPLBACKEND here: the nbval kernels inherit it, and a non-inline backend drops every figure output.)
os.environ["MARKOVLIB_BATCH"] = "1"


def pytest_collection_modifyitems(config, items):
    """Mark every nbval notebook item ``notebook`` (so ``-m "not notebook"`` leaves the chapters out)."""
    for item in items:
        if str(getattr(item, "fspath", "")).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebook)
