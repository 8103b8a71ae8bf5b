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


# Groups of tests that skip as a whole where the machine lacks something, and what to do about it (issue 25).
SKIPPED_GROUPS = {
    "browser": "Debian's chromium is not installed; install it with `sudo apt-get install -y chromium`",
    "gpu": "no CUDA device",
}


def pytest_terminal_summary(terminalreporter):
    """One line per group of tests that was skipped, naming the group and why, at the end of the report."""
    counts = {}
    for report in terminalreporter.stats.get("skipped", []):
        for group in SKIPPED_GROUPS:
            if group in getattr(report, "keywords", {}):
                counts[group] = counts.get(group, 0) + 1
    for group, n in counts.items():
        terminalreporter.write_line(f"skipped groups: {group}: {n} tests skipped: {SKIPPED_GROUPS[group]}")
