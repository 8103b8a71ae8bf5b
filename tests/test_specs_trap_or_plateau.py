"""markovlib.book.specs.trap_or_plateau: the chapter's defaults pass, each condition refuses."""
import ast
import re
from pathlib import Path

import pytest

from markovlib.book import specs

BOOK = Path(__file__).resolve().parents[1] / "book"


def defaults(chapter):
    """The parameters cell of ``book/<chapter>.py`` evaluated (literal values only)."""
    text = (BOOK / f"{chapter}.py").read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)\n# %%', text, re.S).group(1)
    out = {}
    for node in ast.parse(cell).body:
        out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def test_trap_or_plateau_defaults_and_conditions(monkeypatch):
    spec, v = specs.load("trap_or_plateau"), defaults("trap_or_plateau")
    spec.check(dict(v))
    with pytest.raises(ValueError, match=re.escape("sgd_exponent[0] < sgd_exponent[1]")):
        spec.check({**v, "sgd_exponent": [2.5, 1.5]})
    for name in ("drift_steps", "late_start", "slice_steps"):  # stored evaluations only
        with pytest.raises(ValueError, match=f"{name} must be a multiple of 50"):
            spec.check({**v, name: v[name] + 10})
    reach = specs.trap_or_plateau.REACH
    monkeypatch.setattr(specs.trap_or_plateau, "REACH", reach.clip(upper=100))  # a shorter measured prefix
    with pytest.raises(ValueError, match="slice_steps <= the measured prefix of slice_seed"):
        spec.check({**v, "slice_steps": 150})
