"""The test run names the groups it skipped and why (conftest.pytest_terminal_summary), so that a newcomer without
Chromium or CUDA learns which tests did not run instead of a silent skip."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the gpu group runs here")
def test_a_skipped_group_is_named_at_the_end_of_the_report():
    # the run a newcomer makes: no options from the environment (CI sets PYTEST_ADDOPTS, e.g. --durations, whose
    # report would follow ours)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-o", "addopts=",
                           "tests/test_gpu.py"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-2000:]
    last = done.stdout.strip().splitlines()
    assert any(line.startswith("skipped groups: gpu:") and "no CUDA device" in line for line in last[-3:]), last[-3:]
