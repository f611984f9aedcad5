"""The catalog of experiments (sslkit.experiments.catalog, issue 20): every committed results file has exactly one
spec, each spec's grid makes the committed keys, a record's reading is explicit, an experiment's name lives in one
place, and `sslkit run` runs an experiment of each paper at quick scale."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from sslkit.cli import main
from sslkit.experiments import catalog, load_results, run_key
from sslkit.experiments.runs.experiment import KINDS, QUICK, REPLAY_RULES, SCALES

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "notebooks" / "results"
FILES = sorted(RESULTS.glob("*/*.jsonl"))
#: the package that declares an experiment of each paper ("-": the three papers chained, the chapter "All three
#: together")
PACKAGE = {"A": "paper_a", "B": "paper_b", "C": "paper_c", "-": "pipeline"}


def test_every_results_file_has_exactly_one_spec():
    assert FILES, "no committed results file"
    for path in FILES:
        makers = [
            (e.name, s)
            for e in catalog.experiments()
            for s in e.scales
            if e.source(s) == f"{path.parent.name}/{path.stem}"
        ]
        assert len(makers) == 1, (path, makers)
        assert catalog.for_file(path) == (catalog.get(makers[0][0]), makers[0][1])
    assert catalog.uncatalogued() == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_specs_grid_makes_the_committed_keys(path):
    """Every committed record is a (config, seed) of its spec's grid at its scale, with its key; the records of a
    reading are never the main grid's."""
    e, scale = catalog.for_file(path)
    s = e.scale(scale)
    keys = e.keys(scale)
    records = load_results(path, all_versions=True)
    outside = [r["config"] for r in records if r["key"] not in keys]
    assert not outside, f"{len(outside)} records of {path.name} are not in the grid of {e.name}/{scale}: {outside[:3]}"
    assert all(r["key"] == run_key(r["config"], r["seed"], scale) and r["scale"] == scale for r in records)
    main_grid = [json.dumps(c, sort_keys=True) for c in s.configs(readings=False)]
    for r in s.readings:
        theirs = {json.dumps(c, sort_keys=True) for c in r.grid()}
        assert not theirs & set(main_grid), f"reading {r.name!r} of {e.name} shares configurations with the main grid"
    assert len(set(main_grid)) == len(main_grid), f"{e.name}/{scale}: the grid repeats a configuration"


def test_specs_are_complete_and_consistent():
    names = [e.name for e in catalog.experiments()]
    assert len(names) == len(set(names))
    stems = {p.stem for p in (REPO / "notebooks").glob("*.md")}
    for e in catalog.experiments():
        assert e.paper in PACKAGE and e.notebook in stems, e.name
        assert e.replay in REPLAY_RULES and set(e.scales) <= set(SCALES) and e.version >= 1
        assert set(e.uses) <= set(names)
        for name, s in e.scales.items():
            assert s.kind in KINDS and (name != "quick" or s.kind == QUICK), (e.name, name)
            assert len(s.seeds) >= 1 and s.configs(), (e.name, name)
            assert all(isinstance(s.data_of(c), str) and s.data_of(c) for c in s.configs()), (e.name, name)
            fn = e.call(name)
            assert set(fn.keywords) <= set(__import__("inspect").signature(fn.func).parameters), (e.name, name)
        for f in e.pick_by:
            assert any(f in c for s in e.scales.values() for c in s.configs()), (e.name, f)


def test_the_robust_and_tradeoff_readings_are_explicit():
    """The mean-1 weights of CRAIG / GradMatch / CRUST, the robust stand-in's longer schedules and CRUST without
    MixUp are named readings of the cpu grid, never the main one: each reading's configurations differ from the
    main grid's by its own key (or, for CRUST without MixUp, its own method name; for VAT with entropy minimisation on
    CIFAR-10 and for its lr-0.003 reading, its own protocol)."""
    own_key = {"weights scaled to mean 1": "normalize_weights", "Full VAT, longer schedules": "epochs"}
    own_method = {"CRUST without MixUp": ("crust_nomixup", "crust")}
    own_protocol = {
        "VAT with entropy minimisation": ("cpu_cifar10_em", "cpu_cifar10"),
        "every method at lr 0.003": ("cpu_cifar10_lowlr", "cpu_cifar10"),
    }
    seen = set()
    for e in catalog.experiments("C"):
        s = e.scales.get("cpu")
        for r in s.readings if s else ():
            seen.add(r.name)
            for c in r.grid():
                assert s.reading_of(c) is r and catalog.reading_of(e.name, "cpu", c) == r.name
                if r.name in own_method or r.name in own_protocol:
                    field = "method" if r.name in own_method else "protocol"
                    mine, main = {**own_method, **own_protocol}[r.name]
                    assert c[field] == mine
                    assert catalog.reading_of(e.name, "cpu", {**c, field: main}) == ""
                else:
                    key = own_key[r.name]
                    assert c.get(key) not in (None, False)
                    assert catalog.reading_of(e.name, "cpu", {k: v for k, v in c.items() if k != key}) == ""
    assert seen == set(own_key) | set(own_method) | set(own_protocol)


def test_a_run_of_named_readings_only_leaves_out_the_main_grid():
    s = catalog.get("c_robust").scale("cpu")
    only = s.configs(["CRUST without MixUp"], main=False)
    assert only and all(c["method"] == "crust_nomixup" and s.reading_of(c) for c in only)
    assert len(s.configs(["CRUST without MixUp"])) == len(s.configs(False)) + len(only)
    with pytest.raises(ValueError, match="no reading \\['no such reading'\\]"):
        s.configs(["no such reading"], main=False)


def test_sslkit_run_reading_runs_that_reading_only(tmp_path, capsys):
    """``sslkit run NAME --reading R``: the named reading's runs, none of the main grid's; an unknown name is a
    usage error that names the scale's readings, before anything runs."""
    argv = ["run", "c_robust", "--scale", "cpu", "--results-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--reading", "no such reading"]) == 2
    assert "CRUST without MixUp" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_an_experiment_name_lives_in_its_spec_only():
    """Issue 20: the generic layers (the runs, the reports, the catalog, the CLI) name no experiment; a name is written
    in its paper's experiments modules (experiments.py, or an experiments_*.py that it gathers), and outside notebooks/
    the trade-off experiment's name is in at most 3 files."""
    generic = ["sslkit/experiments/runs", "sslkit/experiments/report", "sslkit/experiments/catalog.py", "sslkit/cli.py"]
    for e in catalog.experiments():
        found = subprocess.run(["grep", "-rlw", e.name, *generic], cwd=REPO, capture_output=True, text=True).stdout
        assert not found.split(), (e.name, found)
        spec = subprocess.run(["grep", "-rlw", e.name, "sslkit"], cwd=REPO, capture_output=True, text=True).stdout
        specs = [
            f for f in spec.split() if re.fullmatch(rf"sslkit/experiments/{PACKAGE[e.paper]}/experiments(_\w+)?\.py", f)
        ]
        assert specs, e.name
    tradeoff = catalog.experiments("C")[0].name
    found = subprocess.run(["grep", "-rl", tradeoff, "sslkit", "tests"], cwd=REPO, capture_output=True, text=True)
    assert 1 <= len(found.stdout.split()) <= 3, found.stdout


def test_run_refuses_what_it_cannot_do(tmp_path):
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        catalog.run("nope")
    with pytest.raises(ValueError, match="has no scale 'cpu'"):
        catalog.run("b_figure3", "cpu", results_dir=tmp_path)
    with pytest.raises(ValueError, match="paper's protocol for a GPU"):
        catalog.run("b_table4_ssl", "paper", device="cpu", results_dir=tmp_path)
    with pytest.raises(ValueError, match="no argument"):
        catalog.run("b_figure3", fixed={"nope": 1}, results_dir=tmp_path)
    with pytest.raises(ValueError, match="seeds= or seed="):
        catalog.run("b_figure3", seed=1, seeds=[1], results_dir=tmp_path)


# one cheap experiment per paper, narrowed by the CLI's grid options
QUICK_RUNS = {
    "A": [
        "supervised_baseline",
        "--seeds",
        "0",
        "-o",
        "datasets=breast_cancer",
    ],  # ships with scikit-learn: runs with no data folder
    "B": ["b_figure3", "--seeds", "0"],
    "C": ["c_tradeoff", "--seeds", "0", "-o", "algorithms=vat", "-o", "methods=full,random"],
}


@pytest.mark.slow
@pytest.mark.parametrize("paper", sorted(QUICK_RUNS))
def test_sslkit_run_at_quick_scale(paper, tmp_path, capsys):
    argv = ["run", *QUICK_RUNS[paper][:1], "--scale", "quick", "--device", "cpu", "--results-dir", str(tmp_path)]
    argv += QUICK_RUNS[paper][1:] + ["--no-progress"]
    assert main(argv) == 0
    e = catalog.get(QUICK_RUNS[paper][0])
    path = tmp_path / e.name / "quick.jsonl"
    assert capsys.readouterr().out.strip().endswith(str(path))
    records = load_results(path)
    assert records and {r["seed"] for r in records} == {0} and all(r["scale"] == "quick" for r in records)
    assert all(r["protocol_version"] == e.version for r in records)
    fn = e.call("quick", "cpu")
    assert all(r["call"]["function"] == f"{fn.func.__module__}.{fn.func.__qualname__}" for r in records)
    assert {r["key"] for r in records} <= e.keys("quick")
    assert main(argv) == 0  # a second run reuses every record
    assert len(load_results(path, all_versions=True)) == len(records)


def test_headline_names_the_pages_evidence_and_verdicts():
    """Issue 21: a page's headline box reads its committed evidence and the ledger's verdicts from the catalog."""
    with pytest.raises(ValueError, match="no experiment"):
        catalog.headline("no_such_page")
    e = catalog.experiments("C")[-1]
    h = catalog.headline(e.notebook)
    committed = [x for x in catalog.experiments("C") if x.notebook == e.notebook and x.committed()]  # the page's
    if committed:
        assert f"{committed[0].name}: " in h["evidence"] and " runs at scale " in h["evidence"]
    else:
        assert h["evidence"] == "no committed records yet"
    assert h["verdicts"].startswith("Of the paper's") or h["verdicts"] == "the ledger tests no claim on them"
    # each machine label whole: a label holds commas ("AMD EPYC (2 cores), torch ..., 1 thread"), so a comma cannot
    # separate two of them
    for page in {x.notebook for x in catalog.experiments()}:
        evidence = catalog.headline(page)["evidence"]
        if "; on " in evidence:
            assert all(label.count("torch") <= 1 for label in evidence.split("; on ", 1)[1].split(" and on ")), evidence


def test_seeds_are_counted_per_configuration_not_per_file():
    """A file with one configuration at 30 seeds and another at 1 used to read "30 seeds"."""
    recs = [{"config": {"m": "a"}, "seed": s} for s in range(30)] + [{"config": {"m": "b"}, "seed": 0}]
    assert catalog.seeds_per_configuration(recs) == "1–30 seeds per configuration"
    assert catalog.seeds_per_configuration(recs[:3]) == "3 seeds per configuration"
    assert catalog.seeds_per_configuration(recs[-1:]) == "1 seed per configuration"


def test_committed_runs_lists_every_paper_and_kind():
    runs = catalog.committed_runs()
    assert {(e.paper, k) for e in catalog.experiments() for k in KINDS} <= set(runs)
    assert all(isinstance(v, int) and v >= 0 for v in runs.values())


def test_sslkit_run_threads_reach_the_runs_and_their_records(tmp_path):
    """``sslkit run --threads N`` sets torch's threads of every local run, over the scale's own count, and each new
    record says so (label and field); torch's count is restored afterwards. Before, a scale with its own count
    (e.g. b_table1's cpu scale, 2) silently overrode --threads."""
    import torch

    before = torch.get_num_threads()
    argv = ["run", "supervised_baseline", "--scale", "quick", "--device", "cpu", "--results-dir", str(tmp_path)]
    assert main([*argv, "--seeds", "0", "-o", "datasets=breast_cancer", "--threads", "1", "--no-progress"]) == 0
    records = load_results(tmp_path / "supervised_baseline" / "quick.jsonl")
    assert records and all(r["torch_threads"] == 1 and r["hardware"].endswith(", 1 thread") for r in records)
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be positive"):
        catalog.run(
            "supervised_baseline", "quick", seeds=[0], results_dir=tmp_path, threads=-1, datasets=["breast_cancer"]
        )


def test_b_table1_cpu_grid_narrows_to_selectors_and_budgets():
    """`sslkit run b_table1 --scale cpu -o selectors=k-Means -o budgets=4000`: the pool's two runs of that cell (one
    per algorithm), the same configs as the full grid's; an unknown selector is refused by name."""
    s = catalog.get("b_table1").scale("cpu")
    full = s.configs()
    some = s.configs(True, selectors=["k-Means"], budgets=[4000])
    assert len(some) == 2 and some == [c for c in full if c["selector"] == "k-Means" and c["m"] == 4000]
    assert {c["pool"] for c in some} == {"full"}
    assert len(s.configs(True, budgets=[40])) == 3 * len(s.configs(True, budgets=[40], selectors=["RDSS", "USL"]))
    with pytest.raises(ValueError, match=r"no selector \['kmeans'\]"):
        s.configs(True, selectors=["kmeans"])


def test_sslkit_run_no_readings_runs_the_narrowed_main_grid_only(tmp_path, capsys, monkeypatch):
    """``--no-readings``: the main grid (narrowed by ``-o``) without any named reading, so ``-o methods=crust --seeds
    3-4`` costs CRUST's runs only; with ``--reading`` it is a usage error."""
    seen = {}

    def fake_run(name, scale, **kw):
        seen.update(kw, name=name, scale=scale)
        return []

    monkeypatch.setattr(catalog, "run", fake_run)
    argv = ["run", "c_robust", "--scale", "cpu", "--results-dir", str(tmp_path), "--no-progress", "--seeds", "3-4"]
    assert main([*argv, "-o", "methods=crust", "-o", "protocols=cpu", "--no-readings"]) == 0
    assert seen["readings"] is False and "main" not in seen and seen["methods"] == ["crust"]
    assert seen["protocols"] == ["cpu"] and seen["seeds"] == [3, 4]
    s = catalog.get("c_robust").scale("cpu")
    assert {c["method"] for c in s.configs(seen["readings"], methods=seen["methods"])} == {"crust"}
    seen.clear()
    assert main([*argv, "--reading", "CRUST without MixUp", "--no-readings"]) == 2
    assert "give one or the other" in capsys.readouterr().err and not seen
