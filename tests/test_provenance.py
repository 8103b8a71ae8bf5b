"""markovlib.book.provenance: the repository root, the checkout check, the git state, the versions and the CPU, the
checksums, the command line and the provenance block of every stored set's manifest."""
import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import markovlib
from markovlib.book import provenance as pv

CHECKOUT = Path(__file__).resolve().parents[1]


def test_root_is_the_checkout_of_the_imported_package():
    assert pv.ROOT == CHECKOUT == Path(markovlib.__file__).resolve().parents[1]
    assert (pv.ROOT / "pyproject.toml").is_file() and (pv.ROOT / "tools").is_dir()
    assert pv.check_checkout(CHECKOUT / "tools" / "run_fig4.py") == pv.ROOT
    assert pv.check_checkout(sys.argv[0]) == pv.ROOT  # pytest itself is no tool


def test_check_checkout_refuses_a_tool_of_another_checkout_and_a_package_outside_a_checkout(tmp_path):
    other = tmp_path / "other"
    (other / "markovlib").mkdir(parents=True)
    (other / "tools").mkdir()
    with pytest.raises(RuntimeError, match="PYTHONPATH"):
        pv.check_checkout(other / "tools" / "run_fig4.py")
    (tmp_path / "elsewhere" / "tools").mkdir(parents=True)  # a tools/ folder without a package beside it: no checkout
    assert pv.check_checkout(tmp_path / "elsewhere" / "tools" / "x.py") == pv.ROOT
    with pytest.raises(RuntimeError, match="not from a checkout"):
        pv.check_checkout(CHECKOUT / "tools" / "run_fig4.py", root=tmp_path / "site-packages")


def test_git_state_reads_the_checkout_and_ignores_the_set_being_written(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    (tmp_path / "a.txt").write_text("a\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert pv.git_commit(tmp_path) == head
    assert pv.git_state(root=tmp_path) == {"commit": head, "dirty": False, "changes": []}
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "data.csv").write_text("x\n")
    assert pv.git_state(ignore=[tmp_path / "out"], root=tmp_path)["dirty"] is False
    state = pv.git_state(root=tmp_path)
    assert state["dirty"] and state["changes"] == ["?? out/data.csv"]
    (tmp_path / "a.txt").write_text("b\n")
    assert pv.git_state(ignore=[tmp_path / "out"], root=tmp_path)["changes"] == [" M a.txt"]
    assert len(pv.git_commit()) == 40  # this checkout's


def test_versions_and_cpu_record_what_decides_the_numbers():
    v = pv.versions()
    assert {"python", "numpy", "markovlib"} <= set(v) and v["markovlib"] == markovlib.__version__
    info = pv.cpu()
    assert {"model", "machine", "logical_cores", "isa_flags", "numpy_disable_cpu_features",
            "numeric_environment"} <= set(info)
    assert info["model"] != pv.UNKNOWN
    if Path("/proc/cpuinfo").is_file():
        assert isinstance(info["isa_flags"], list) and all(f.startswith(pv.ISA_PREFIXES) for f in info["isa_flags"])
    assert set(info["numeric_environment"]) <= set(pv.NUMERIC_ENV)


def test_sha256_and_checksums(tmp_path):
    data = b"x,y\n" + b"1,2\n" * 400_000  # over one chunk of 1 MiB
    (tmp_path / "a.csv").write_bytes(data)
    assert pv.sha256(tmp_path / "a.csv") == hashlib.sha256(data).hexdigest()
    assert pv.checksums(tmp_path, ["a.csv"]) == {"a.csv": {"sha256": hashlib.sha256(data).hexdigest(),
                                                           "bytes": len(data)}}


def test_command_line_is_relative_to_the_root_and_quoted():
    cmd = pv.command_line([str(CHECKOUT / "tools" / "run_fig4.py"), "--tag", "a b"])
    assert cmd == "python tools/run_fig4.py --tag 'a b'" and shlex.split(cmd)[-1] == "a b"
    assert pv.command_line(["/elsewhere/x.py", "--y"]) == "python /elsewhere/x.py --y"


def test_provenance_block_holds_every_field_and_the_files_checksums(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["tools/run_fig4.py", "--workers", "2"])
    monkeypatch.chdir(CHECKOUT)
    prov = pv.Provenance(tmp_path)
    assert prov.root == pv.ROOT and prov.command == "python tools/run_fig4.py --workers 2"
    assert pv.Provenance(tmp_path, ["tools/run_fig4.py", "--collect"]).command == "python tools/run_fig4.py --collect"
    (tmp_path / "curves.csv").write_text("step\n0\n")
    block = prov.block([0, 1], ["curves.csv"], complete=True)
    assert {"command", "niceness", "seeds", "versions", "git", "cpu", "started", "wall_seconds", "complete",
            "files"} <= set(block)
    assert block["seeds"] == [0, 1] and block["complete"] is True and list(block)[-1] == "files"
    assert block["files"]["curves.csv"]["sha256"] == hashlib.sha256(b"step\n0\n").hexdigest()
    assert {"commit", "dirty", "changes"} <= set(block["git"]) and block["wall_seconds"] >= 0
    json.dumps(block)  # goes into a manifest as it is
