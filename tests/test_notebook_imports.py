"""Every name a notebook imports from sslkit exists, and no page asserts outside an exercise solution.

A notebook runs only in stage 4 of the test command (papermill, half an hour in); a module split that moves a
name (``LENET_CONTROLS`` from ``paper_b.experiments`` to ``paper_b.controls``) broke a page there once. This
test parses every notebook's code cells and resolves each ``from sslkit... import name`` here, in seconds.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import jupytext
import pytest
from IPython.core.inputtransformer2 import TransformerManager

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.md"))


def sslkit_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) for each ``from sslkit... import name`` and (module, None) for ``import sslkit...``."""
    found = []
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "code":
            continue
        # IPython's own transformer turns magics and shell lines into Python (a `!=` stays an operator)
        src = TransformerManager().transform_cell(cell.source)
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("sslkit"):
                found += [(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, None) for a in node.names if a.name.startswith("sslkit")]
    return found


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 30


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_sslkit_import_resolves(path):
    missing = []
    for module, name in sslkit_imports(path):
        mod = importlib.import_module(module)
        if name is not None and not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{module}.{name}")
    assert not missing, f"{path.name} imports names that do not exist: {missing}"


def test_the_check_sees_a_missing_name(tmp_path):
    nb = tmp_path / "x.md"
    nb.write_text(
        "```{code-cell} ipython3\nif True:\n    %matplotlib inline\nfrom sslkit.risk import nothing_here\n```\n"
    )
    assert ("sslkit.risk", "nothing_here") in sslkit_imports(nb)
    with pytest.raises(AssertionError, match="nothing_here"):
        test_every_sslkit_import_resolves(nb)


def page_asserts(path: Path) -> list[str]:
    """The ``assert`` statements of a notebook's code cells, except in folded exercise solutions (cells tagged
    ``solution``), which check the reader's answer where it runs. A page shows its checks as output; the checks
    themselves are tests under tests/."""
    found = []
    for i, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type != "code" or "solution" in cell.metadata.get("tags", []):
            continue
        tree = ast.parse(TransformerManager().transform_cell(cell.source))
        found += [f"cell {i}, line {n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_assert_on_a_page_outside_exercise_solutions(path):
    assert not page_asserts(path), f"{path.name}: asserts on the page (move the check to tests/): {page_asserts(path)}"


def test_the_assert_check_sees_an_assert_and_spares_a_solution(tmp_path):
    nb = tmp_path / "x.md"
    body = "```{code-cell} ipython3\nassert 1 + 1 == 2\n```\n"
    solution = "```{code-cell} ipython3\n:tags: [hide-cell, solution]\n\nassert 2 > 1\n```\n"
    nb.write_text(body + "\n" + solution)
    assert page_asserts(nb) == ["cell 0, line 1"]
