"""The chapters' shape, checked without executing their science: papermill-friendly parameters (one name per line,
each with a comment, listed by papermill's own inspection), a second parameter set for CI, a generated
"What was verified" table, and bad parameters stopped in the validation cell with a ValueError naming them."""
import ast
import math
from pathlib import Path

import nbformat
import papermill
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [ch["file"] for part in toc["parts"] for ch in part.get("chapters", [])]
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").is_file()]


CHAPTERS = _chapters()
IDS = [nb.stem for nb in CHAPTERS]


def _code_cells(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    return nb, [c for c in nb.cells if c.cell_type == "code"]


def _parameters(nb_path):
    """(name, default value, line) of every assignment in the cell tagged ``parameters``."""
    _, code = _code_cells(nb_path)
    cell = code[0]
    assert "parameters" in cell.metadata.get("tags", []), "the first code cell must be tagged 'parameters'"
    tree = ast.parse(cell.source)
    lines = cell.source.splitlines()
    out = []
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target = node.target  # `p: float = 0.5` (the annotation gives papermill the type)
        else:
            assert isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name), \
                f"parameters cell: one name per assignment, got {ast.unparse(node)!r}"
            target = node.targets[0]
        assert node.lineno == node.end_lineno, f"parameters cell: one line per parameter ({target.id})"
        line = lines[node.lineno - 1]
        out.append((target.id, ast.literal_eval(node.value), line))
    return out


def test_there_are_chapters():
    assert len(CHAPTERS) >= 8


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_title_has_no_math(nb_path):
    """A chapter's title goes into every page's navigation, also on pages that load no MathJax (the index, the
    search page), where TeX would stay raw: write symbols as Unicode there."""
    nb = nbformat.read(nb_path, as_version=4)
    title = next(line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                 if line.startswith("# "))
    assert "$" not in title and "\\(" not in title, title


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_parameters_one_name_per_line_each_with_a_comment(nb_path):
    params = _parameters(nb_path)
    assert params, "no parameters"
    for name, _, line in params:
        assert "#" in line, f"parameter {name} has no comment"
    inspected = papermill.inspect_notebook(str(nb_path))
    assert list(inspected) == [name for name, _, _ in params]
    for name, info in inspected.items():
        assert info["help"], f"papermill lists {name} without its comment"


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_second_parameter_set_exists_and_names_parameters(nb_path):
    path = ROOT / "book" / "ci_params" / f"{nb_path.stem}.yaml"
    assert path.is_file(), f"missing {path.relative_to(ROOT)}"
    values = yaml.safe_load(path.read_text())
    assert isinstance(values, dict) and values
    names = {name for name, _, _ in _parameters(nb_path)}
    assert set(values) <= names, f"unknown parameters {sorted(set(values) - names)}"


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_what_was_verified_table_is_generated(nb_path):
    nb, code = _code_cells(nb_path)
    assert code[-1].source.strip().splitlines()[-1] == "verified.table()", \
        "the last code cell must end by showing the generated table"
    text = code[-1].outputs[0]["data"]["text/plain"] if code[-1].outputs else ""
    assert "| claim |" in text and "FAIL" not in text
    heading = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## What was verified" in c.source]
    assert heading, "no '## What was verified' section"
    for c in nb.cells[heading[0]:]:
        if c.cell_type == "markdown":
            assert "|---" not in c.source.replace(" ", ""), "a typed table under 'What was verified'"


def _table_rows(nb_path):
    """The committed "What was verified" table of a chapter: its header and rows (cells split on unescaped |)."""
    import re

    _, code = _code_cells(nb_path)
    text = code[-1].outputs[0]["data"]["text/plain"]
    lines = text.splitlines()
    split = lambda line: [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]  # noqa: E731
    return lines[0], [split(line) for line in lines[2:]]


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_every_row_says_its_kind_of_evidence_and_prints_a_measurement(nb_path):
    """Issue 21: a `kind` column (independent, same code, identity, stored data); the measured column holds a
    measurement (never a bare yes/no, never the threshold); counts over seeds use at least 10 seeds live or 20
    stored."""
    import re

    from markovlib.book.report import KINDS, TABLE_HEADER, check_measured

    header, rows = _table_rows(nb_path)
    assert header == TABLE_HEADER
    assert rows
    for claim, _check, kind, measured, tolerance, result in rows:
        assert kind in KINDS, (claim, kind)
        check_measured(measured, tolerance, categorical=not re.search(r"\d", measured))
        for k, n in re.findall(r"(\d+)/(\d+) seeds", measured):
            assert int(n) >= (20 if kind == "stored data" else 10), (claim, measured)
        assert result == "PASS"
    assert any(kind != "identity" for _, _, kind, *_ in rows), "a chapter verifies something"


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_every_glued_name_in_the_prose_is_glued_by_the_chapter(nb_path):
    """Prose statistics come from the run (myst-nb glue): each {glue:text}`name` in a markdown cell names a value
    that a code cell of the same chapter glued (the build would warn, this says where)."""
    import re

    nb, code = _code_cells(nb_path)
    used = {m for c in nb.cells if c.cell_type == "markdown" for m in re.findall(r"\{glue:\w+\}`([^`:]+)", c.source)}
    glued = {o.get("metadata", {}).get("scrapbook", {}).get("name") for c in code for o in c.get("outputs", [])}
    assert used <= glued, f"glued in the prose but not by the chapter: {sorted(used - glued)}"


def _bad_override(params):
    """The first scalar parameter and a value that no validator accepts (-1 for counts and seeds, NaN for reals)."""
    for name, value, _ in params:
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return name, -1
        if isinstance(value, float):
            return name, math.nan
    return None


@pytest.mark.slow
@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_bad_parameter_stops_in_the_validation_cell(nb_path, tmp_path):
    bad = _bad_override(_parameters(nb_path))
    assert bad is not None
    name, value = bad
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(str(nb_path), str(tmp_path / "out.ipynb"), parameters={name: value},
                                   cwd=str(ROOT), progress_bar=False, kernel_name="python3")
    err = info.value
    assert err.ename == "ValueError" and name in err.evalue, (err.ename, err.evalue)
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    code = [c for c in out.cells if c.cell_type == "code"]
    # cells: parameters, injected-parameters, validation: the error is in the validation cell
    failed = [i for i, c in enumerate(code) if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert failed == [2], f"the error should stop the validation cell (code cell 2), got {failed}"


@pytest.mark.slow
def test_a_sweep_of_a_chapter_gives_its_headline_numbers_as_columns(tmp_path):
    """`python -m markovlib sweep` over a light chapter: results.csv has the recorded headline numbers and the
    verification counts as columns, one row per grid point, every run ok."""
    import csv
    import subprocess
    import sys

    out = tmp_path / "sweep"
    proc = subprocess.run([sys.executable, "-m", "markovlib", "sweep", str(ROOT / "book" / "markov_data.ipynb"),
                           "--grid", "seed=1,2", "--workers", "1", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    science = set(rows[0]) - {"seed", "status", "error", "seconds", "notebook"}
    assert {"checks", "checks_passed"} <= science
    assert len(science - {"checks", "checks_passed", "checks_independent"}) >= 2, science
    assert all(r["checks"] == r["checks_passed"] for r in rows)


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=IDS)
def test_the_chapter_shows_its_summary_with_this_runs_numbers_in_jupyter(nb_path):
    """Issue 34, item 8: the last code cell but one shows "What this chapter shows" with the values this kernel glued
    (markovlib.book.glue.summary), for a reader in Jupyter; the rendered book removes it (its summary has them)."""
    _, code = _code_cells(nb_path)
    cell = code[-2]
    assert f'summary("{nb_path.stem}")' in cell.source, "the last code cell but one must call summary(<chapter>)"
    assert "remove-cell" in cell.metadata.get("tags", [])
    assert cell.outputs and "text/markdown" in cell.outputs[0].get("data", {}), "run the chapter: no summary shown"
    shown = cell.outputs[0]["data"]["text/markdown"]
    for raw in ("{glue:", "{prf:", "{cite:", "not computed in this run"):
        assert raw not in shown, raw
