"""Every MyST notebook source has an ``.ipynb`` twin whose cells are the same (text file = source of truth).

When this fails, regenerate the twin with ``python .ci/pair.py NAME`` (never ``jupytext --sync``).
"""

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

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
def test_every_table_is_a_book_table(md):
    """A page shows its tables through ``book_table`` (index moved into columns, no NaN, split to fit the column).
    A bare DataFrame as a cell's value renders pandas' own HTML (class "dataframe" alone) with its index."""
    ipynb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    bare = [
        i
        for i, c in enumerate(ipynb.cells)
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if 'class="dataframe"' in o.get("data", {}).get("text/html", "")
    ]
    assert not bare, f"{md.stem}: cells {sorted(set(bare))} show a DataFrame without book_table"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_first_cell_installs_sslkit_in_colab(md):
    """The first cell installs sslkit in Colab from the one install source: ``repository.url`` of ``_config.yml``
    (``python .ci/publish.py URL`` changes both); the twin's first cell is the same."""
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    first = next(c for c in jupytext.read(md).cells if c.cell_type == "code")
    assert "google.colab" in first.source and "pip install" in first.source
    assert f'"sslkit @ git+{url}"' in first.source, f"{md.name}: the install cell does not install from {url}"
    twin = md.with_suffix(".ipynb")
    if twin.exists():
        twin_first = next(c for c in nbformat.read(twin, as_version=4).cells if c.cell_type == "code")
        assert twin_first.source == first.source, f"{twin.name}: install cell differs from {md.name}'s"


def test_every_registered_notebook_takes_scale_and_device():
    from sslkit.experiments.notebooks import notebook_parameters, registry, repo_root

    for spec in registry():
        params = notebook_parameters(repo_root() / spec.path)
        assert {"scale", "device"} <= set(params), f"{spec.path}: parameters cell lacks scale/device: {params}"


def test_toc_lists_every_registered_notebook_under_its_paper():
    """Every notebook source is registered (its front matter has an ``sslkit: title``), and ``_toc.yml`` lists
    exactly the registered notebooks, each in the part of its paper ("Foundations" for no single paper)."""
    import yaml

    from sslkit.experiments.notebooks import registry

    specs = {spec.path: spec for spec in registry()}
    assert sorted(specs) == [f"notebooks/{md.name}" for md in SOURCES], "a notebook's front matter lacks sslkit: title"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = {}
    for part in toc["parts"]:
        paper = part["caption"].split(" ")[0] if " · " in part["caption"] else None
        for chapter in part["chapters"]:
            if chapter["file"].startswith("notebooks/"):
                listed[chapter["file"] + ".md"] = paper
    assert sorted(listed) == sorted(specs), "_toc.yml and the notebook registry list different notebooks"
    for path, paper in listed.items():
        if paper is not None:
            assert specs[path].paper == paper, f"{path} (paper {specs[path].paper}) sits in part {paper} of _toc.yml"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_papermill_reads_every_parameter(md):
    """papermill parses the parameters cell line by line; a line it cannot parse (e.g. one whose comment holds an '=')
    is dropped with a warning ("Passed unknown parameter"): papermill then neither lists it nor checks it."""
    import ast

    from papermill.translators import PythonTranslator

    nb = jupytext.read(md)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{md.name} must have one cell tagged parameters, has {len(cells)}"
    assigned = [t.id for node in ast.parse(cells[0].source).body for t in getattr(node, "targets", [])]
    parsed = [p.name for p in PythonTranslator.inspect(cells[0])]
    assert parsed == assigned, f"{md.name}: papermill reads {parsed} of the parameters {assigned}"


def _strict_sources():
    return [md for md in SOURCES if jupytext.read(md).metadata.get("sslkit", {}).get("nbval") == "strict"]


def test_strict_nbval_masks_every_glued_figure():
    """nbval skips a cell's own ``image/png`` but compares a glued figure (``application/papermill.record/image/png``)
    byte for byte, and a figure's pixels round differently on another CPU (c_theory's did). The sanitiser masks every
    PNG as it masks every float: a page's figure is checked by the asserts on its data, not by its pixels."""
    patterns = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
    assert patterns[0][1] == "PNG", "the PNG rule must come first, before the float rule can touch the base64"
    glued = [
        o["data"][key]
        for md in _strict_sources()
        for c in nbformat.read(md.with_suffix(".ipynb"), as_version=4).cells
        for o in c.get("outputs", [])
        for key in o.get("data", {})
        if key.endswith("image/png")
    ]
    assert glued, "no strict twin glues a figure: this test checks nothing"
    for png in glued:
        masked = png
        for regex, replace in patterns:
            masked = re.sub(regex, replace, masked)
        assert masked.strip() == "PNG", f"a glued figure is not masked: {masked[:60]!r}"
