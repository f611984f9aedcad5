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
