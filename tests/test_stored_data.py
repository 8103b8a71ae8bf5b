"""Manifests a stranger can trust (issue 23): every stored set under book/data/ records the exact command, the seeds,
the library versions, the git commit with a dirty flag, the CPU model and its instruction-set flags, the wall time
and a sha256 of every data file; the checksums match the files; book/data/ stays under 25 MB."""
import hashlib
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
UNKNOWN = "not recorded when the set was made"
MANIFESTS = sorted(DATA.glob("*/manifest*.json"))
LIMIT_BYTES = 25 * 2**20


def _id(path):
    return f"{path.parent.name}/{path.name}"


def test_every_set_has_a_manifest():
    assert MANIFESTS, "no stored sets"
    for folder in (p for p in DATA.iterdir() if p.is_dir() and any(p.iterdir())):  # git keeps no empty folder
        assert list(folder.glob("manifest*.json")), f"{folder.name} has no manifest"


@pytest.mark.parametrize("path", MANIFESTS, ids=_id)
def test_manifest_records_the_provenance(path):
    prov = json.loads(path.read_text())["provenance"]
    for key in ("command", "seeds", "versions", "git", "cpu", "wall_seconds", "files"):
        assert key in prov and prov[key] not in (None, "", [], {}), f"{_id(path)}: provenance.{key} missing"
    assert {"commit", "dirty"} <= set(prov["git"]) and len(prov["git"]["commit"]) == 40
    assert {"model", "isa_flags"} <= set(prov["cpu"])
    assert {"python", "numpy"} <= set(prov["versions"])
    if "backfilled" in prov:  # an old set: what was not recorded says so
        return
    # a set made by a tool of today records everything
    assert isinstance(prov["git"]["dirty"], bool) and isinstance(prov["wall_seconds"], (int, float))
    assert isinstance(prov["cpu"]["isa_flags"], list) and prov["cpu"]["model"] != UNKNOWN
    assert prov["command"].startswith(("python tools/run_", "python tools/check_sgd_drift.py"))
    assert UNKNOWN not in json.dumps(prov)


@pytest.mark.parametrize("path", MANIFESTS, ids=_id)
def test_checksums_match_the_files(path):
    files = json.loads(path.read_text())["provenance"]["files"]
    for name, entry in files.items():
        data = (path.parent / name).read_bytes()
        assert len(data) == entry["bytes"], f"{_id(path)}: {name} has {len(data)} bytes, the manifest {entry['bytes']}"
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{_id(path)}: {name} differs from its checksum"


def test_every_data_file_is_covered_by_one_manifest_and_the_store_is_small():
    covered = {}
    for path in MANIFESTS:
        for name in json.loads(path.read_text())["provenance"]["files"]:
            key = path.parent / name
            assert key not in covered, f"{key} is listed by {covered.get(key)} and {path}"
            covered[key] = path
    files = [p for p in DATA.rglob("*") if p.is_file() and not p.name.startswith("manifest")]
    assert sorted(set(files) - set(covered)) == [], "data files without a checksum"
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert total < LIMIT_BYTES, f"book/data holds {total / 2**20:.1f} MB (limit 25 MB)"


def test_fig4_set_in_parts_has_twenty_seeds_of_every_run_and_full_curves():
    """book/data/fig4, made in two parts (seeds 0-4, then 5-19 with ``--seeds 5-19 --tag seeds5_19``): every
    (chain, initialization) pair has 20 disjoint seeds, no run failed, every curve has the 1000 training steps and
    the held-out loss every 10 steps."""
    from markovlib.book.stored import PARTS, read_parts

    curves, parts = read_parts(DATA / "fig4", PARTS["fig4"], same=["chains", "inits"])
    assert all(part.get("failed_runs", []) == [] for part in parts)
    assert sorted(curves.seed.unique()) == list(range(20))
    keys = ["p", "q", "init", "seed"]
    assert curves.groupby(keys).ngroups == 20 * len(parts[0]["chains"]) * len(parts[0]["inits"])
    for _, g in curves.groupby(keys):
        train = g.dropna(subset=["train_loss"])
        ev = g.dropna(subset=["eval_loss"]).sort_values("step")
        assert sorted(train.step) == list(range(1, 1001))
        assert ev.step.tolist() == list(range(0, 1001, 10))


def test_lowrank_set_in_parts_has_twenty_seeds_and_the_perturbed_start():
    """book/data/lowrank: seeds 0-2, then 3-9 and 10-19 (``--seeds 3-9 --tag seeds3_9``, ...), every (init,
    optimizer) of the grid with 20 seeds in curves and final; the perturbed rank-one parts (``--noise``) with 20 seeds
    of SGD step 5 and AdamW, the start off the rank-one manifold (every top fraction below 1) and each final row =
    its last curve row."""
    from markovlib.book.stored import PARTS, read_parts

    for file in ("curves", "final"):
        frame, parts = read_parts(DATA / "lowrank", PARTS["lowrank"], same=["chain", "optimizers", "inits"], file=file)
        assert sorted(frame.seed.unique()) == list(range(20)) and all(p.get("failed_runs", []) == [] for p in parts)
        pairs = [(i, o) for i, opts in parts[0]["inits"].items() for o in opts]
        assert frame.groupby(["init", "optimizer", "seed"]).ngroups == 20 * len(pairs)
    same = ["chain", "optimizers", "inits", "init_noise"]
    curves, mans = read_parts(DATA / "lowrank", PARTS["lowrank_perturbed"], same=same, file="curves")
    final, _ = read_parts(DATA / "lowrank", PARTS["lowrank_perturbed"], same=same, file="final")
    for man in mans:
        assert man["failed_runs"] == [] and 0 < man["init_noise"] < 1e-3
        assert all("--init rank_one " in c and "--init-noise" in c for c in man["commands"])
    assert sorted(final.seed.unique()) == list(range(20))
    assert set(final.optimizer) == {"sgd_5", "adamw"} and len(final) == 40
    start = curves[curves.step == 0]
    fractions = [c for c in curves.columns if c.startswith("top_fraction_") and c != "top_fraction_embedding"]
    assert len(start) == 40 and (start[fractions].to_numpy() < 1 - 1e-9).all()
    last = curves[curves.step == curves.step.max()].set_index(["optimizer", "seed"]).sort_index()
    fin = final.set_index(["optimizer", "seed"]).sort_index()
    for c in fractions:
        assert abs(last[c] - fin[c.replace("top_", "")]).max() < 1e-9, c


GUIDELINE = DATA / "guideline"


@pytest.mark.skipif(not (GUIDELINE / "manifest.json").is_file(), reason="no guideline set")
def test_guideline_set_is_complete_and_consistent():
    """book/data/guideline (tools/run_guideline.py): every off-line cell of the grid and the plateau chain with
    20 seeds, no failed run, every stored escape step recomputed from the stored curve, chains within the range."""
    import csv
    import gzip

    man = json.loads((GUIDELINE / "manifest.json").read_text())
    assert man["failed_runs"] == [] and len(man["seeds"]) >= 20
    cells = [tuple(c) for c in man["grid_cells"]]
    assert all(abs(p + q - 1) >= man["margin"] - 1e-12 and 0.1 <= min(p, q) and max(p, q) <= 0.9 for p, q in cells)
    assert any(p + q < 1 for p, q in cells) and any(p + q > 1 for p, q in cells)
    with gzip.open(GUIDELINE / "runs.csv.gz", "rt") as fh:
        runs = list(csv.DictReader(fh))
    with gzip.open(GUIDELINE / "curves.csv.gz", "rt") as fh:
        curves = {}
        for r in csv.DictReader(fh):
            key = (r["experiment"], r["p"], r["q"], r["init"], r["optimizer"], r["seed"])
            curves.setdefault(key, []).append((int(r["step"]), float(r["coefficient_ratio"])))
    expected = len(man["seeds"]) * (2 * len(cells) + 2 * len(man["plateau_chains"]))
    assert len(runs) == len(curves) == expected
    for r in runs:
        key = (r["experiment"], r["p"], r["q"], r["init"], r["optimizer"], r["seed"])
        steps = [s for s, _ in curves[key]]
        assert steps[0] == 0 and steps[-1] == int(r["steps"])
        stays = [i for i in range(len(steps)) if all(v > man["bigram_ratio"] for _, v in curves[key][i:])]
        assert r["steps_to_bigram"] == (str(steps[stays[0]]) if stays else "")


ESCAPE = DATA / "escape"


@pytest.mark.skipif(not (ESCAPE / "manifest.json").is_file(), reason="no escape set")
def test_escape_set_is_complete_and_consistent():
    """book/data/escape (tools/run_escape.py): both chains above the line, every optimizer arm at both learning rates,
    20 seeds, every run to the horizon with the canonical projection at every evaluation, and every stored escape step
    recomputed from the stored curve (the first evaluation at which c-hat / c* reaches the stored ratio)."""
    import math

    import pandas as pd

    man = json.loads((ESCAPE / "manifest.json").read_text())
    assert man["failed_runs"] == [] and man["provenance"]["complete"] and len(man["seeds"]) >= 20
    assert all(p + q > 1 for p, q in man["chains"]) and len({round(p + q, 9) for p, q in man["chains"]}) >= 2
    assert set(man["lrs"]) == {"sgd", "momentum", "adam", "adamw"} and all(len(v) == 2 for v in man["lrs"].values())
    runs = pd.read_csv(ESCAPE / "runs.csv")
    curves = pd.read_csv(ESCAPE / "curves.csv.gz")
    key = ["p", "q", "optimizer", "lr", "seed"]
    assert len(runs) == man["runs_planned"] == len(man["chains"]) * 8 * len(man["seeds"]) == curves.groupby(key).ngroups
    assert curves[["e", "w", "energy", "coefficient_ratio", "eval_loss"]].notna().all().all()
    for (p, q, opt, lr, seed), g in curves.groupby(key):
        assert g.step.iloc[0] == 0 and g.step.iloc[-1] == man["steps"]
        assert g.step.diff().iloc[1:].eq(man["eval_every"]).all()
        row = runs[(runs.p == p) & (runs.q == q) & (runs.optimizer == opt) & (runs.lr == lr) & (runs.seed == seed)]
        hit = g.step[g.coefficient_ratio >= man["escape_ratio"]]
        stored = row.escape_step.iloc[0]
        assert (math.isnan(stored) and hit.empty) or stored == hit.iloc[0]


PHASE = DATA / "beyond_two_states"


@pytest.mark.skipif(not (PHASE / "manifest_phase.json").is_file(), reason="no K-state phase set")
def test_kstate_phase_set_is_complete_and_consistent():
    """book/data/beyond_two_states, phase part (tools/run_beyond.py --part phase): every cell of the (K, p) grid in
    every arm (Adam and plain SGD, tied, both inits; Adam untied) with at least 10 seeds, every run to the stored
    horizon with a curve every eval_every steps, and every stored row's yardsticks, gap and trapped flag recomputed
    from the closed forms and the stored final loss."""
    import pandas as pd

    from markovlib.beyond import multistate as ms

    man = json.loads((PHASE / "manifest_phase.json").read_text())
    assert man["failed_runs"] == [] and man["provenance"]["complete"] and len(man["seeds"]) >= 10
    assert man["settings"]["steps"] >= 5000
    arms = {(a["optimizer"], bool(a["tied"]), a["init"]) for a in man["arms"]}
    assert {("sgd", True, "standard"), ("adam", True, "standard"), ("adam", False, "standard")} <= arms
    runs = pd.read_csv(PHASE / "phase_runs.csv")
    curves = pd.read_csv(PHASE / "phase_curves.csv")
    cells = [(int(K), p) for K, ps in man["grid"].items() for p in ps]
    key = ["K", "p", "optimizer", "tied", "lr", "init", "seed"]
    assert len(runs) == man["runs_planned"] == len(cells) * len(arms) * len(man["seeds"]) == curves.groupby(key).ngroups
    for K, p in cells:
        for arm in arms:
            g = runs[(runs.K == K) & (runs.p == p) & (runs.optimizer == arm[0]) & (runs.tied == int(arm[1]))
                     & (runs.init == arm[2])]
            assert sorted(g.seed) == sorted(man["seeds"]), (K, p, arm)
    every, horizon = man["settings"]["eval_every"], man["settings"]["steps"]
    for _, g in curves.groupby(key):
        assert g.step.iloc[0] == 0 and g.step.iloc[-1] == horizon and g.step.diff().iloc[1:].eq(every).all()
    rate = [ms.symmetric_entropy_rate(K, p) for K, p in zip(runs.K, runs.p)]
    marg = runs.K.map(ms.symmetric_marginal_entropy)
    assert max(abs(runs.entropy_rate - rate)) < 1e-12 and max(abs(runs.marginal_entropy - marg)) < 1e-12
    gap = (runs.final_loss - runs.entropy_rate) / (runs.marginal_entropy - runs.entropy_rate)
    assert max(abs(gap - runs.gap)) < 1e-12 and (runs.trapped == (runs.gap > man["trap_threshold"]).astype(int)).all()
    last = curves.sort_values("step").groupby(key).loss.last()
    assert max(abs(last.to_numpy() - runs.set_index(key).loc[last.index].final_loss.to_numpy())) == 0


@pytest.mark.parametrize("name", ["fig4", "guideline", "lowrank", "escape", "beyond_two_states"])
def test_slice_prefix_is_measured_in_both_ci_configurations(name):
    """tools/run_slice_prefix.py: the deterministic prefix of a stored set, measured for the same stored runs in the
    developer configuration and in CI's second one (one thread, baseline SIMD, torch's default kernels), which its
    manifest records."""
    import pandas as pd

    prefix = pd.read_csv(DATA / name / "slice_prefix.csv")
    assert {"developer", "baseline"} <= set(prefix.config)
    keys = [c for c in prefix.columns if c not in ("config", "step") and not c.endswith("diff")]
    runs = {cfg: set(map(tuple, g[keys].drop_duplicates().to_numpy().tolist())) for cfg, g in prefix.groupby("config")}
    assert runs["developer"] == runs["baseline"], "the configurations measured different runs"
    env = json.loads((DATA / name / "manifest_slice_prefix.json").read_text())["configurations"]["baseline"]["cpu"]
    assert env["numeric_environment"].get("ATEN_CPU_CAPABILITY") == "default"
    assert env["numeric_environment"].get("NPY_DISABLE_CPU_FEATURES")
