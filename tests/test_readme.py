"""The README's package table names every module of every subpackage (a newcomer finds each module there), and the
README's quick start has exactly the two commands: build the book, run every test."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_package_table_lists_every_module():
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `markovlib\.(\w+)` \| (.*) \|$", README, re.M)}
    subpackages = sorted(p.parent.name for p in (ROOT / "markovlib").glob("*/__init__.py"))
    assert sorted(rows) == subpackages, (sorted(rows), subpackages)
    missing = []
    for sub in subpackages:
        for module in sorted((ROOT / "markovlib" / sub).glob("*.py")):
            if module.stem != "__init__" and f"`{module.stem}`" not in rows[sub]:
                missing.append(f"markovlib.{sub}.{module.stem}")
        for nested in sorted((ROOT / "markovlib" / sub).glob("*/__init__.py")):  # e.g. book.specs: one row entry
            if f"`{nested.parent.name}`" not in rows[sub]:
                missing.append(f"markovlib.{sub}.{nested.parent.name}")
    assert not missing, f"the README's package table misses {missing}"


def test_the_quick_start_has_exactly_two_commands():
    block = README.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    assert "jupyter-book build ." in commands[0] and commands[1].split("#")[0].strip().endswith("&& pytest")
