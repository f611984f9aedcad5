"""CI stage 2: every notebook at quick scale through papermill, then nbval.

* papermill: each registered reproducible notebook runs through ``sslkit reproduce NAME --scale quick``
  (the same path a reader uses); any other notebook (theory pages) runs through papermill directly.
  Executed copies land in ``_build/ci/papermill`` (kept as CI artefacts).
* nbval: notebooks whose MyST header says ``sslkit: {nbval: strict}`` have their committed ``.ipynb`` twins
  re-executed and compared cell by cell against their committed outputs (floats, addresses and temp paths
  sanitised by ``tests/nbval_sanitize.cfg``). The rest are "lax" (every cell must execute without error): papermill
  has just executed exactly that, the same code cells as the twin's (checked here, as in
  ``tests/test_notebooks_paired.py``), so ``--nbval-lax`` would only execute them a second time; it runs only with
  ``--lax-again``. Strict comparison needs the real datasets the committed outputs were made with, so without
  ``SSLKIT_DATA_DIR`` a strict notebook is lax too.

Run from the repository root with the venv's python: ``python .ci/notebooks.py [--lax-again] [NAME_FILTER]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import papermill

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "ci" / "papermill"


def registered():
    from sslkit.experiments.notebooks import registry

    return {(ROOT / spec.path).resolve(): spec.name for spec in registry()}


def nbval_mode(md: Path) -> str:
    from sslkit.experiments.notebooks import front_matter

    return front_matter(md).get("nbval", "lax")


def run_papermill(md: Path, names: dict) -> None:
    name = names.get(md.resolve())
    if name:
        script = Path(sys.executable).with_name("sslkit")  # the console script a reader uses
        cmd = [str(script) if script.exists() else "sslkit", "reproduce", name, "--scale", "quick", "--out", str(OUT)]
        print("  $", " ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=ROOT, check=True)
        return
    nb = jupytext.read(md)
    tmp = OUT / (md.stem + ".source.ipynb")
    jupytext.write(nb, tmp)
    has_params = any("parameters" in c.metadata.get("tags", []) for c in nb.cells)
    papermill.execute_notebook(
        str(tmp),
        str(OUT / f"{md.stem}.ipynb"),
        cwd=str(ROOT),
        kernel_name="python3",
        parameters={"scale": "quick"} if has_params else None,
        progress_bar=False,
    )


def same_code(md: Path, twin: Path) -> bool:
    """The twin's code cells are the source's (what papermill executed), in order."""
    import nbformat

    def code(nb):
        return [c.source.strip() for c in nb.cells if c.cell_type == "code"]

    return code(jupytext.read(md)) == code(nbformat.read(twin, as_version=4))


def main(argv: list[str]) -> int:
    lax_again = "--lax-again" in argv
    argv = [a for a in argv if a != "--lax-again"]
    pattern = argv[0] if argv else ""
    OUT.mkdir(parents=True, exist_ok=True)
    sources = sorted(p for p in (ROOT / "notebooks").glob("*.md") if pattern in p.stem)
    if not sources:
        print("no notebooks matched", repr(pattern))
        return 1
    names = registered()
    strict, lax = [], []
    for md in sources:
        t0 = time.perf_counter()
        print(f"[papermill] {md.relative_to(ROOT)}", flush=True)
        run_papermill(md, names)
        print(f"[papermill] {md.stem}: {time.perf_counter() - t0:.1f} s", flush=True)
        twin = md.with_suffix(".ipynb")
        if not twin.exists():
            print(f"missing paired notebook {twin.relative_to(ROOT)}: run python .ci/pair.py")
            return 1
        mode = nbval_mode(md)
        if mode == "strict" and not os.environ.get("SSLKIT_DATA_DIR"):
            # committed outputs were produced with the real datasets; without them only lax makes sense
            print(f"[nbval] {md.stem}: SSLKIT_DATA_DIR is not set, so lax instead of strict")
            mode = "lax"
        if not same_code(md, twin):
            print(f"{twin.relative_to(ROOT)} is out of sync with {md.name}: run python .ci/pair.py {md.stem}")
            return 1
        (strict if mode == "strict" else lax).append(str(twin.relative_to(ROOT)))
    base = [sys.executable, "-m", "pytest", "-q", "--nbval-current-env", "--nbval-cell-timeout=1200"]
    rc = 0
    if strict:
        print("[nbval strict]", *strict, flush=True)
        rc |= subprocess.run(
            base + ["--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", *strict], cwd=ROOT
        ).returncode
    if lax and lax_again:
        print("[nbval lax]", *lax, flush=True)
        rc |= subprocess.run(base + ["--nbval-lax", *lax], cwd=ROOT).returncode
    elif lax:
        print(f"[nbval lax] not run again: papermill executed the same code of {len(lax)} notebook(s) without error")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
