"""markovlib.book.stored: checksums of a stored set, a set stored in parts, and the deterministic prefix of its
runs."""
import hashlib
import json

import pandas as pd
import pytest

from markovlib.book.stored import deterministic_prefix, read_parts, verify_checksums


def test_verify_checksums_accepts_the_file_and_names_a_changed_one(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n")
    sha = hashlib.sha256(b"x\n1\n").hexdigest()
    (tmp_path / "manifest.json").write_text(json.dumps({"provenance": {"files": {"a.csv": {"sha256": sha}}}}))
    assert verify_checksums(tmp_path)["provenance"]["files"]["a.csv"]["sha256"] == sha
    (tmp_path / "a.csv").write_text("x\n2\n")
    with pytest.raises(ValueError, match="a.csv"):
        verify_checksums(tmp_path)


def _part(folder, tag, seeds, chains=((0.5, 0.8),)):
    text = "seed,loss\n" + "".join(f"{s},{0.1 * s}\n" for s in seeds)
    (folder / f"curves{tag}.csv").write_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    man = {"seeds": list(seeds), "chains": [list(c) for c in chains],
           "provenance": {"files": {f"curves{tag}.csv": {"sha256": sha}}}}
    (folder / f"manifest{tag}.json").write_text(json.dumps(man))
    return f"manifest{tag}.json"


def test_read_parts_joins_disjoint_parts_and_refuses_overlap_other_settings_or_a_changed_file(tmp_path):
    a, b = _part(tmp_path, "", [0, 1]), _part(tmp_path, "_more", [2, 3])
    frame, mans = read_parts(tmp_path, [a, b], same=["chains"])
    assert sorted(frame.seed) == [0, 1, 2, 3] and [m["seeds"] for m in mans] == [[0, 1], [2, 3]]
    c = _part(tmp_path, "_overlap", [1, 4])
    with pytest.raises(ValueError, match="earlier part"):
        read_parts(tmp_path, [a, c])
    d = _part(tmp_path, "_other", [5], chains=((0.2, 0.3),))
    with pytest.raises(ValueError, match="chains"):
        read_parts(tmp_path, [a, d], same=["chains"])
    (tmp_path / "curves_more.csv").write_text("seed,loss\n2,0.2\n")
    with pytest.raises(ValueError, match="sha256"):
        read_parts(tmp_path, [a, b])
    with pytest.raises(ValueError, match="at least one"):
        read_parts(tmp_path, [])
    assert sorted(read_parts(tmp_path, [a], file="curves")[0].seed) == [0, 1]
    with pytest.raises(ValueError, match="no single data file final"):
        read_parts(tmp_path, [a], file="final")


def test_deterministic_prefix_stops_at_the_first_step_over_the_level():
    rows = [("r1", s, d) for s, d in [(1, 0.0), (2, 1e-7), (3, 5e-6), (4, 0.0)]]  # over at 3: the prefix is 2
    rows += [("r2", s, 0.0) for s in (1, 2, 3, 4)]                                # never over: all 4
    rows += [("r3", s, 1.0) for s in (1, 2)]                                      # over at once: 0
    frame = pd.DataFrame(rows, columns=["run", "step", "abs_diff"])
    out = deterministic_prefix(frame, ["run"], "abs_diff", 1e-6)
    assert out.to_dict() == {"r1": 2, "r2": 4, "r3": 0}


def test_deterministic_prefix_takes_every_difference_column_and_evaluation_steps():
    frame = pd.DataFrame({"run": ["a"] * 4, "step": [0, 20, 40, 60], "loss_diff": [0, 1e-7, 1e-7, 0],
                          "fraction_diff": [0, 0, 2e-6, 0]})
    assert deterministic_prefix(frame, ["run"], ["loss_diff", "fraction_diff"], 1e-6)["a"] == 20
    with pytest.raises(ValueError, match="level"):
        deterministic_prefix(frame, ["run"], "loss_diff", 0.0)


def test_deterministic_prefix_with_several_rows_per_step_takes_the_worst():
    """Two configurations of one run in one group: a step counts only when both rows are within the level, whatever
    the order of the rows (review of trap_or_plateau: an unstable sort once let a passing row hide a failing one)."""
    rows = [("dev", 50, 0.0), ("base", 50, 1e-7), ("base", 100, 3e-5), ("dev", 100, 0.0), ("dev", 150, 0.0),
            ("base", 150, 0.0)]
    frame = pd.DataFrame(rows, columns=["config", "step", "abs_diff"]).assign(run="a")
    for order in (frame, frame.iloc[::-1]):
        assert deterministic_prefix(order, ["run"], "abs_diff", 1e-5)["a"] == 50


def test_data_dir_finds_a_stored_set_from_the_root_and_from_book(monkeypatch):
    from pathlib import Path

    from markovlib.book.stored import data_dir

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    assert data_dir("escape").resolve() == (root / "book" / "data" / "escape").resolve()
    monkeypatch.chdir(root / "book")
    assert data_dir("escape").resolve() == (root / "book" / "data" / "escape").resolve()
    for bad in ("no_such_set", "", "../data", 3):
        with pytest.raises(ValueError, match="name must be"):
            data_dir(bad)
