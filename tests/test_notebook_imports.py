"""Every name a notebook imports from sslkit exists.

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
