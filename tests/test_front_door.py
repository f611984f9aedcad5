"""The practitioner's front door: held-out bad inputs and the install's promises, each fixed with a test here.

Every test below failed on the code before its fix (the packaging, the records' store, the catalog without records,
the platform fingerprint, the CLI's one-line errors, the estimators' argument checks); the last one, that the core
imports no pandas / matplotlib / yaml / Jupyter, guards what already held.
"""

import gzip
import io
import json
import math
import shutil
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.cli import main
from sslkit.experiments.runs import executors, published
from sslkit.experiments.runs.runner import run_grid

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------- the records' store
def _ok(x, seed):
    return {"v": x + seed}


def _fails(x, seed):
    raise RuntimeError("boom")


@pytest.mark.parametrize("text", [b"hello world\n", b"hello world", b"<html>not a results file</html>\n"])
@pytest.mark.parametrize("via_symlink", [False, True])
def test_run_grid_refuses_a_file_that_is_not_a_results_file_and_leaves_it(tmp_path, text, via_symlink):
    target = tmp_path / "notes.txt"
    target.write_bytes(text)
    path = tmp_path / "r.jsonl"
    if via_symlink:
        path.symlink_to(target)
    else:
        path = target
    with pytest.raises(ValueError, match="not a results file"):
        run_grid(_ok, {"x": [1]}, path, seeds=[0], progress=False)
    assert target.read_bytes() == text  # neither truncated nor appended to


def test_run_grid_keeps_a_complete_corrupt_last_record(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(_ok, {"x": [1]}, path, seeds=[0], progress=False)
    corrupt = path.read_bytes() + b'{"key": "abc", "config": {"x": 2}, "seed": 0, "metrics": {"v": 2}}}\n'
    path.write_bytes(corrupt)
    with pytest.raises(ValueError, match=r"line 2 is not valid JSON \(Extra data\); the file is corrupt"):
        run_grid(_ok, {"x": [1, 2]}, path, seeds=[0], progress=False)
    assert path.read_bytes() == corrupt  # a complete line (newline included) is not a partial write


def test_run_grid_still_cuts_off_a_truncated_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(_ok, {"x": [1]}, path, seeds=[0], progress=False)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"key": "abc", "con')  # a writer killed mid-line: no newline
    with pytest.warns(RuntimeWarning, match="truncated last line"):
        records = run_grid(_ok, {"x": [1, 2]}, path, seeds=[0], progress=False)
    assert [r["metrics"]["v"] for r in records] == [1, 2]
    assert path.read_bytes().startswith(whole) and path.read_bytes().count(b"\n") == 2


def test_a_failed_first_run_leaves_no_empty_results_file(tmp_path):
    path = tmp_path / "new_experiment" / "paper.jsonl"
    with pytest.raises(RuntimeError, match="boom"):
        run_grid(_fails, {"x": [1]}, path, seeds=[0], progress=False)
    assert not path.exists() and not path.parent.exists()
    kept = tmp_path / "kept.jsonl"
    run_grid(_ok, {"x": [1]}, kept, seeds=[0], progress=False)
    with pytest.raises(RuntimeError):
        run_grid(_fails, {"x": [2]}, kept, seeds=[0], progress=False)
    assert len(kept.read_text().splitlines()) == 1  # a file with records stays


def test_a_corrupt_part_file_is_named(tmp_path):
    (tmp_path / "0123456789abcdef.json").write_text('{"key": "0123')
    with pytest.raises(ValueError, match=r"0123456789abcdef\.json: a Slurm job's part file"):
        executors.read_parts(tmp_path)


@pytest.mark.parametrize(
    "option, value", [("num_gpus", "one"), ("resource_wait_s", "x"), ("num_cpus", -1), ("retries", math.nan)]
)
def test_executor_numbers_are_checked_before_anything_starts(option, value):
    with pytest.raises(ValueError, match=f"executor option '{option}' must be a non-negative number"):
        executors.parse_executor({"name": "ray", option: value})


# ------------------------------------------------------------------------ the catalog without committed records
def test_ledger_and_headline_without_any_committed_records(monkeypatch):
    from sslkit.experiments import catalog
    from sslkit.experiments.report import ledger as L

    absent = Path("/nonexistent/sslkit/notebooks/results")
    monkeypatch.setattr(catalog, "committed_results_dir", lambda: absent, raising=False)
    monkeypatch.setattr(L, "committed_results_dir", lambda: absent)
    catalog._empty_folder.cache_clear()
    with pytest.warns(UserWarning, match="no committed records here"):
        table = catalog.ledger()
    assert len(table) == len(catalog.CLAIMS) and set(table["records"]) == {"none committed"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process, not once per call
        assert catalog.headline("a_table1")["evidence"] == "no committed records yet"
        assert catalog.records("a_table1", "paper") == []


def test_a_null_metric_in_a_record_names_the_file(tmp_path):
    from sslkit.experiments import catalog

    (tmp_path / "a_table1").mkdir()
    lines = (REPO / "notebooks/results/a_table1/paper.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for r in records:
        r["metrics"] = {k: (None if isinstance(v, float) else v) for k, v in r["metrics"].items()}
    (tmp_path / "a_table1" / "paper.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ValueError, match=r"a_table1/paper\.jsonl"):
        catalog.ledger(tmp_path, paper="A", item="Table 1")


# ------------------------------------------------------------------------------ the published records' download
@pytest.mark.parametrize(
    "archive", [b"<!DOCTYPE html><html>rate limited</html>", b"", "truncated"], ids=["html", "empty", "truncated"]
)
def test_a_bad_download_of_the_published_records(tmp_path, monkeypatch, archive):
    if archive == "truncated":
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            data = b"{}\n" * 5000
            info = tarfile.TarInfo("repo-c0ffee/notebooks/results/a_table1/paper.jsonl")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        archive = buf.getvalue()[:-40]
        assert gzip.decompress  # a cut gzip stream: EOFError inside tarfile before the fix
    with pytest.raises(ValueError, match="not a whole gzip tarball"):
        published.extract_results(archive, tmp_path / "x")
    monkeypatch.setattr(published, "repo_root", lambda: tmp_path / "site-packages")
    monkeypatch.setattr(published, "install_source", lambda: ("https://github.com/org/repo", "c0ffee"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SSLKIT_OFFLINE", raising=False)

    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(published.urllib.request, "urlopen", lambda url, timeout: Response(archive))
    with pytest.warns(UserWarning, match="committed records not fetched"):
        got = published.committed_results_dir()
    assert got == tmp_path / "site-packages" / "notebooks" / "results" and not got.exists()
    assert not (tmp_path / "cache" / "sslkit" / "results" / "c0ffee").exists()  # nothing half-extracted is kept


# --------------------------------------------------------------------------------------- the platform fingerprint
def test_the_blas_of_the_fingerprint_does_not_depend_on_the_import_order():
    code = (
        "{}\nfrom sslkit.experiments.runs.hardware import platform_fingerprint\nprint(platform_fingerprint()['blas'])"
    )
    orders = ["import torch, scipy.linalg, numpy", "import numpy", "import scipy.linalg, numpy, torch"]
    got = {
        subprocess.run(
            [sys.executable, "-c", code.format(o)], capture_output=True, text=True, check=True, cwd=REPO
        ).stdout
        for o in orders
    }
    assert len(got) == 1, got


def test_a_replay_accepts_either_blas_of_the_machine_that_made_the_record():
    from sslkit.experiments.runs.hardware import cpu_model, platform_fingerprint
    from sslkit.experiments.runs.replay import platform_differences

    loaded = ["openblas 0.3.30 X", "openblas 0.3.31 SkylakeX"]
    current = {**platform_fingerprint(), "blas": "openblas 0.3.31 SkylakeX", "blas_loaded": loaded}
    label = f"{cpu_model()} (2 cores), torch"
    made = {"hardware": label, "platform": {**current, "blas": "openblas 0.3.30 X"}}
    assert platform_differences(made, current) == {}
    other = {"hardware": label, "platform": {**current, "blas": "mkl 2024 skylake"}}
    assert set(platform_differences(other, current)) == {"blas"}


# --------------------------------------------------------------------------------------------------- the CLI
def cli(capsys, *argv):
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "a_ablations", "-o", "tables=11"], "tables must be among the ablation tables 4-10, got [11]"),
        (["run", "supervised_baseline", "-o", "foo=1"], "no option ['foo'] for this grid; its options: datasets"),
        (["run", "supervised_baseline", "--seeds", "0-99999999999"], "names more than 10000 seeds"),
        (["reproduce", "a-theory", "--scale", "cpu"], "notebook 'a-theory' has no scale 'cpu'; its scales: quick"),
        (["reproduce", "supervised-baseline", "--scale", "cpu"], "has no scale 'cpu'; its scales: quick, paper"),
        (["run", "a_table1", "--executor", "{'name': 'ray', 'num_gpus': 'one'}"], "'num_gpus' must be a non-neg"),
    ],
)
def test_cli_bad_input_is_one_line(capsys, argv, message):
    code, err = cli(capsys, *argv)
    assert code == 2 and err.startswith("sslkit: error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cli_run_on_a_missing_gpu_is_one_line(capsys, tmp_path):
    code, err = cli(capsys, "run", "supervised_baseline", "--device", "cuda", "--results-dir", str(tmp_path))
    assert code == 2 and "CUDA is not available" in err and "Traceback" not in err


def test_cli_names_the_extra_that_installs_a_missing_module(capsys, monkeypatch):
    from sslkit.experiments import notebooks

    def missing(*a, **k):
        raise ModuleNotFoundError("No module named 'jupyter_client'", name="jupyter_client")

    monkeypatch.setattr(notebooks, "reproduce", missing)
    code, err = cli(capsys, "reproduce", "supervised-baseline")
    assert code == 2 and "pip install 'sslkit[book]'" in err, err


def test_cli_failed_notebook_path_has_no_double_slash(capsys, monkeypatch, tmp_path):
    import papermill.exceptions as pm_exc

    from sslkit.experiments import notebooks

    def fails(*a, **k):
        raise pm_exc.PapermillExecutionError(0, 3, "x", "ValueError", "bad", [])

    monkeypatch.setattr(notebooks, "reproduce", fails)
    code, err = cli(capsys, "reproduce", "supervised-baseline", "--out", f"{tmp_path}/runs/")
    assert code == 1 and "//" not in err and f"{tmp_path}/runs/supervised_baseline.ipynb" in err, err


def test_cli_quick_run_offline_narrows_to_the_datasets_that_load(capsys, monkeypatch):
    from sslkit.data import registry
    from sslkit.experiments import catalog

    real = registry.load_dataset

    def load(name, *a, **k):
        if name == "banknote":
            raise registry.DatasetNotFoundError("dataset 'banknote' is not on this machine")
        return real(name, *a, **k)

    seen = {}
    monkeypatch.setattr(registry, "load_dataset", load)
    monkeypatch.setattr(catalog, "run", lambda name, scale, **kw: seen.update(kw) or [])
    code, err = cli(capsys, "run", "supervised_baseline", "--scale", "quick")
    assert code == 0 and seen["datasets"] == ["breast_cancer"], err
    assert "running on breast_cancer only; the data of banknote is not on this machine" in err


def test_clusters_page_says_what_really_happens():
    text = (REPO / "book" / "clusters.md").read_text()
    assert "waits forever" not in text and "resource_wait_s" in text
    assert "unpickl" in text and "only you may write" in text


# ------------------------------------------------------------------------------------ the estimators' arguments
def test_pipeline_refuses_float_row_indices_from_a_custom_selector():
    from sslkit.algorithms import OursEC
    from sslkit.models import MLP
    from sslkit.pipeline import SSLPipeline

    class Halves:
        def fit(self, F):
            self.indices_ = np.arange(6) * 30 + 0.5  # rows 0.5, 30.5, ...: not rows
            return self

    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    pipe = SSLPipeline(MLP(4, 2), OursEC(np.array([0.5, 0.5])), 6, selector=Halves(), device="cpu", num_classes=2)
    with pytest.raises(TypeError, match="row indices must be integers"):
        pipe.select_labels(X)


@pytest.mark.parametrize("batch_size", [0, -1, 1.5, True])
def test_active_selectors_check_batch_size(batch_size):
    from sslkit.active.core_set import CoreSet
    from sslkit.active.learning_loss import LearnLoss
    from sslkit.active.mcdal import MCDAL

    for cls in (CoreSet, LearnLoss, MCDAL):
        with pytest.raises((TypeError, ValueError), match="batch_size"):
            cls(5, batch_size=batch_size)


@pytest.mark.parametrize("weight", [math.nan, math.inf, -1.0])
def test_active_training_refuses_a_weight_that_is_not_finite(weight):
    from sslkit.active.learning_loss import LearnLossTraining
    from sslkit.active.mcdal import MCDALTraining

    for cls in (LearnLossTraining, MCDALTraining):
        with pytest.raises(ValueError, match="weight must be a finite number >= 0"):
            cls(weight=weight)


def test_trainer_builds_the_model_under_its_seed():
    from sslkit.algorithms import Supervised
    from sslkit.engine import Trainer
    from sslkit.models import MLP

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 5)).astype(np.float32), np.arange(40) % 2

    def fit(seed):
        torch.manual_seed(1234 + seed)  # whatever the global state, the seed decides the initial weights
        t = Trainer(lambda: MLP(5, 2), Supervised(), epochs=2, seed=seed, progress=False, device="cpu").fit(X, y)
        return torch.cat([p.detach().flatten() for p in t.model.parameters()]), t

    a, t = fit(0)
    b, _ = fit(0)
    c, _ = fit(1)
    assert torch.equal(a, b) and not torch.equal(a, c)
    first = torch.cat([p.detach().flatten() for p in t.fit(X, y).model.parameters()])
    assert torch.equal(first, a)  # a second fit starts from the same fresh model
    with pytest.raises(TypeError, match="must return a torch.nn.Module"):
        Trainer(lambda: "mlp", Supervised(), progress=False).fit(X, y)


# ----------------------------------------------------------------------------------------------- the install
def test_the_core_imports_no_pandas_matplotlib_yaml_or_jupyter():
    code = (
        "import sys\nimport sslkit.select, sslkit.coreset, sslkit.risk, sslkit.algorithms, sslkit.engine\n"
        "bad = ('pandas', 'matplotlib', 'yaml', 'jupyter', 'jupyter_client', 'IPython', 'nbformat', 'papermill')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(bad)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


def test_license_and_py_typed_are_declared_for_the_wheel():
    text = (REPO / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text and 'license-files = ["LICENSE"]' in text
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert (REPO / "sslkit" / "py.typed").is_file() and '"sslkit" = ["py.typed"]' in text
    ignored = (REPO / ".gitignore").read_text().split()
    assert {"/runs/", "/build/", "_build/"} <= set(ignored)  # `--out runs/` of the README; pip wheel's build/


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout")
def test_the_ignored_folders_are_the_top_level_ones_only():
    probe = ["runs/x.ipynb", "build/lib/x.py", "sslkit/experiments/runs/store.py", "notebooks/results/a/paper.jsonl"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=REPO, capture_output=True, text=True)
    assert done.stdout.split() == probe[:2]
