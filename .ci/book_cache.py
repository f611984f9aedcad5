"""CI between stages 4 and 5: the book reuses the notebooks papermill just executed instead of executing them again.

The book is built with ``execute_notebooks: cache`` (``_config.yml``): myst-nb looks each notebook up in the
jupyter-cache at ``_build/.jupyter_cache`` by a hash of its code cells (sources and metadata) and its kernelspec,
and executes only the notebooks it does not find. Stage 4 has just executed every notebook at quick scale through
papermill (``_build/ci/papermill/NAME.ipynb``). For each, this script takes the MyST source as jupytext reads it
(the same hash as myst-nb's reading), checks that papermill executed exactly its code cells -- the same sources in
the same order, after the cell papermill injects with the parameters -- and stores the source with papermill's
outputs in the cache. A notebook whose code differs, or whose run failed, is left out: the book executes it itself.

What the book then shows is the output of the same code, at the same (quick) scale, in the same CI job, run with
the repository root as working directory (papermill's) rather than ``notebooks/`` (myst-nb's); the notebooks find
their files through ``sslkit``'s repository root, not the working directory.

Run from the repository root with the venv's python: ``python .ci/book_cache.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

ROOT = Path(__file__).resolve().parents[1]
EXECUTED = ROOT / "_build" / "ci" / "papermill"
CACHE = ROOT / "_build" / ".jupyter_cache"


def with_outputs(md: Path, executed: Path):
    """The source notebook of ``md`` with the outputs papermill gave its code cells, or a reason why not."""
    nb = jupytext.read(md)
    ran = nbformat.read(executed, as_version=4)
    injected = "injected-parameters"  # the cell papermill adds with the parameters
    ran_code = [c for c in ran.cells if c.cell_type == "code" and injected not in c.metadata.get("tags", [])]
    code = [c for c in nb.cells if c.cell_type == "code"]
    if [c.source.strip() for c in code] != [c.source.strip() for c in ran_code]:
        return None, "its code differs from what papermill executed"
    if any(o.get("output_type") == "error" for c in ran_code for o in c.get("outputs", [])):
        return None, "papermill's run has an error"
    for n, (cell, done) in enumerate(zip(code, ran_code), start=1):
        cell.outputs = done.get("outputs", [])
        cell.execution_count = n
    return nb, ""


def main() -> int:
    cache = get_cache(str(CACHE))
    stored = 0
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        executed = EXECUTED / f"{md.stem}.ipynb"
        if not executed.is_file():
            print(f"[book cache] {md.stem}: not executed by papermill in this job; the book executes it")
            continue
        if executed.stat().st_mtime < md.stat().st_mtime:
            print(f"[book cache] {md.stem}: papermill's copy is older than the source; the book executes it")
            continue
        nb, why = with_outputs(md, executed)
        if nb is None:
            print(f"[book cache] {md.stem}: {why}; the book executes it")
            continue
        cache.cache_notebook_bundle(CacheBundleIn(nb, str(md.resolve())), check_validity=True, overwrite=True)
        stored += 1
    print(f"[book cache] {stored} executed notebook(s) stored for the book in {CACHE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
