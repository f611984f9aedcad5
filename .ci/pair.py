"""Write the paired ``notebooks/*.ipynb`` from the MyST sources (the text file is the source of truth).

``python .ci/pair.py [NAME_FILTER]`` converts each ``notebooks/*.md`` with jupytext, executes it at its
default (quick) scale in its own folder (as nbval and the book do) and writes the ``.ipynb`` with outputs:
Colab opens it, and strict nbval compares against its outputs. ``--no-execute`` only refreshes the inputs.
Never use ``jupytext --sync`` (it picks a direction by file mtime; pitfall P5 in the tooling notes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    execute = "--no-execute" not in argv
    pattern = next((a for a in argv if not a.startswith("--")), "")
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        if pattern not in md.stem:
            continue
        nb = jupytext.read(md)
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        twin = md.with_suffix(".ipynb")
        t0 = time.perf_counter()
        if execute:
            NotebookClient(
                nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(md.parent)}}
            ).execute()
        elif twin.exists():
            old = nbformat.read(twin, as_version=4)
            meta = dict(nb.metadata)  # the text file's metadata wins; what only execution adds is kept
            nb = jupytext.combine.combine_inputs_with_outputs(nb, old)
            jt = {**old.metadata.get("jupytext", {}), **meta.pop("jupytext", {})}
            nb.metadata = nbformat.from_dict({**old.metadata, **meta, "jupytext": jt})
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, twin)
        print(
            f"wrote {twin.relative_to(ROOT)} ({'executed' if execute else 'inputs only'}, "
            f"{time.perf_counter() - t0:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
