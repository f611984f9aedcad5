"""Every MyST notebook source has an ``.ipynb`` twin whose cells are the same (text file = source of truth).

When this fails, regenerate the twin with ``python .ci/pair.py NAME`` (never ``jupytext --sync``).
"""

from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("*.md"))


def _cells(nb):
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no MyST sources"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_pair_in_sync(md):
    twin = md.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} is missing: run python .ci/pair.py {md.stem}"
    src = jupytext.read(md)
    ipynb = nbformat.read(twin, as_version=4)
    assert _cells(src) == _cells(ipynb), f"{twin.name} is out of sync with {md.name}: run python .ci/pair.py {md.stem}"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_twin_is_executed_and_error_free(md):
    ipynb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    code = [c for c in ipynb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), f"{md.stem}.ipynb is not fully executed"
    for cell in code:
        assert not any(o.get("output_type") == "error" for o in cell.outputs), f"{md.stem}.ipynb holds an error"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_first_cell_installs_sslkit_in_colab(md):
    first = next(c for c in jupytext.read(md).cells if c.cell_type == "code")
    assert "google.colab" in first.source and "pip install" in first.source


def test_every_registered_notebook_takes_scale_and_device():
    from sslkit.experiments.notebooks import NOTEBOOKS, notebook_parameters, repo_root

    for spec in NOTEBOOKS:
        params = notebook_parameters(repo_root() / spec.path)
        assert {"scale", "device"} <= set(params), f"{spec.path}: parameters cell lacks scale/device: {params}"


def test_every_notebook_source_is_registered_and_in_the_toc():
    from sslkit.experiments.notebooks import NOTEBOOKS

    registered = {spec.path for spec in NOTEBOOKS}
    toc = (ROOT / "_toc.yml").read_text()
    for md in SOURCES:
        rel = f"notebooks/{md.name}"
        assert rel in registered, f"{rel} is not in sslkit.experiments.notebooks.NOTEBOOKS"
        assert f"file: notebooks/{md.stem}\n" in toc, f"{rel} is not in _toc.yml"
