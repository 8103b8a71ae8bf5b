"""markovlib.book.runner: the command line the paper-scale tools share, their runs of ``python -m markovlib train``,
and the files of a stored set (curves, reproducible gzipped CSVs, the manifest of a Part I grid)."""
import argparse
import csv
import gzip
import hashlib
import json
import sys
import types

import pytest

from markovlib.book import runner
from markovlib.book.provenance import Provenance


def test_cluster_arguments_and_their_defaults():
    ap = runner.add_cluster_arguments(argparse.ArgumentParser(), workers=3)
    args = ap.parse_args([])
    assert (args.workers, args.scheduler, args.allowed_failures) == (3, None, 2)
    args = ap.parse_args(["--workers", "4", "--scheduler", "tcp://h:8786", "--allowed-failures", "0"])
    assert (args.workers, args.scheduler, args.allowed_failures) == (4, "tcp://h:8786", 0)


def test_seed_list_takes_ranges_and_lists_and_refuses_the_rest():
    assert runner.seed_list("3-6") == [3, 4, 5, 6] and runner.seed_list("0,2,5") == [0, 2, 5]
    assert runner.seed_list("7") == [7]
    for bad in ("a-b", "1,1", "5-3", "1-2-3", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            runner.seed_list(bad)


def test_parse_args_with_seeds_and_tag(tmp_path):
    work = tmp_path / "work"
    args, got = runner.parse_args(["--work", str(work), "--seeds", "5-6", "--tag", "seeds5_6"], "d", "w",
                                  tmp_path / "out", seeds=[0, 1])
    assert got == work and work.is_dir() and args.seeds == [5, 6] and args.suffix == "_seeds5_6"
    assert args.out == str(tmp_path / "out") and not args.collect and args.workers == 2
    args, _ = runner.parse_args(["--work", str(work)], "d", "w", tmp_path / "out", seeds=[0, 1])
    assert args.seeds == [0, 1] and args.suffix == ""
    with pytest.raises(SystemExit):
        runner.parse_args(["--work", str(work), "--tag", "a/b"], "d", "w", tmp_path, seeds=[0])
    args, _ = runner.parse_args(["--work", str(work), "--collect", "--noise", "0.5"], "d", "w", tmp_path,
                                extra=lambda ap: ap.add_argument("--noise", type=float))
    assert args.collect and args.noise == 0.5 and not hasattr(args, "seeds") and not hasattr(args, "suffix")


def test_train_command_and_its_printable_form(tmp_path):
    cmd = runner.train_command(["--p", "0.2"], tmp_path / "run")
    assert cmd[:4] == [sys.executable, "-m", "markovlib", "train"] and cmd[-2:] == ["--out", str(tmp_path / "run")]
    assert runner.printable(cmd) == "python -m markovlib train --p 0.2 --device cpu --no-progress --out OUT"


def _finished(folder, rows):
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text("{}")
    (folder / "metrics.csv").write_text("step,loss\n" + "".join(f"{s},{v}\n" for s, v in rows))


def test_run_one_reads_a_finished_run_without_running_it_and_reports_a_failed_command(tmp_path):
    _finished(tmp_path / "done", [(0, 1.0), (1, 0.5)])
    assert runner.run_one(["false"], tmp_path / "done") == [{"step": "0", "loss": "1.0"}, {"step": "1", "loss": "0.5"}]
    with pytest.raises(RuntimeError, match="exit status 3: boom"):
        runner.run_one([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"], tmp_path / "new")
    script = ("import os, pathlib, sys; o = pathlib.Path(sys.argv[1]); o.mkdir(); "
              "(o / 'metrics.csv').write_text('step,t\\n0,' + os.environ['OMP_NUM_THREADS'] + '\\n'); "
              "(o / 'summary.json').write_text('{}')")
    assert runner.run_one([sys.executable, "-c", script, str(tmp_path / "ran")], tmp_path / "ran") == [
        {"step": "0", "t": "1"}]  # run with ENV: one thread


def test_run_all_collects_only_the_finished_runs(tmp_path):
    _finished(tmp_path / "a", [(0, 1.0)])
    jobs = [(("x", 0), ["cmd-a"], tmp_path / "a"), (("x", 1), ["cmd-b"], tmp_path / "b")]
    results, failed = runner.run_all(jobs, types.SimpleNamespace(collect=True))
    assert results == [(("x", 0), ["cmd-a"], [{"step": "0", "loss": "1.0"}])]
    assert failed == [(("x", 1), "not finished")]


def test_write_curves_keeps_the_chosen_rows(tmp_path):
    results = [(("a", 0), None, [{"step": "0", "loss": "1", "x": "9"}, {"step": "1", "loss": "2", "x": "9"}])]
    runner.write_curves(tmp_path / "c.csv", ["name", "seed"], ["loss"], results, keep=lambda r: r["step"] != "0")
    with open(tmp_path / "c.csv") as fh:
        assert list(csv.reader(fh)) == [["name", "seed", "step", "loss"], ["a", "0", "1", "2"]]


def test_write_gz_is_the_same_bytes_for_the_same_rows(tmp_path):
    runner.write_gz(tmp_path / "a.csv.gz", ["x", "y"], [[1, 2], [3, 4]])
    runner.write_gz(tmp_path / "b.csv.gz", ["x", "y"], [[1, 2], [3, 4]])
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()) == b"x,y\n1,2\n3,4\n"


def test_write_manifest_of_a_part_one_grid(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["tools/run_fig4.py"])
    prov = Provenance(tmp_path)
    (tmp_path / "curves.csv").write_text("step\n0\n")
    results = [((0.5, 0.8, "standard", 0), [sys.executable, "-m", "markovlib", "train", "--out", "x"], [])]
    runner.write_manifest(tmp_path / "manifest.json", "desc", results, prov, ["curves.csv"],
                          failed=[((0.5, 0.8, "guideline", 0), "boom")], seeds=[0], chains=[[0.5, 0.8]])
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["description"] == "desc" and man["seeds"] == [0] and man["chains"] == [[0.5, 0.8]]
    assert man["runs"] == [[0.5, 0.8, "standard", 0]] and man["commands"] == ["python -m markovlib train --out OUT"]
    assert man["failed_runs"] == [[[0.5, 0.8, "guideline", 0], "boom"]] and man["environment"] == runner.ENV
    assert man["provenance"]["seeds"] == [0] and "markovlib" in man["versions"]
    assert man["provenance"]["files"]["curves.csv"]["sha256"] == hashlib.sha256(b"step\n0\n").hexdigest()
