"""The test run names the groups it skipped and why (conftest.pytest_terminal_summary), so that a newcomer without
Chromium or CUDA learns which tests did not run instead of a silent skip."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the gpu group runs here")
def test_a_skipped_group_is_named_at_the_end_of_the_report():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-o", "addopts=",
                           "tests/test_gpu.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    last = done.stdout.strip().splitlines()
    assert any(line.startswith("skipped groups: gpu:") and "no CUDA device" in line for line in last[-3:]), last[-3:]
