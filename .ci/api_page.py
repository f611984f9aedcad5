"""Write ``book/api.md``, the book's API reference: every name of the core modules' ``__all__``.

Classes and functions go through autodoc (``automodule``, NumPy-style docstrings through napoleon) with an
autosummary table per module; constants are written as ``py:data`` entries with their ``#:`` comment (autodoc
would show a dict's own docstring); a name exported by two modules (``sslkit.engine.Hook`` is
``sslkit.algorithms.Hook``) is documented once, the second entry points to the first.
``tests/test_api_page.py`` checks that the committed page is what this script writes: after changing an
``__all__``, run ``python .ci/api_page.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "api.md"

#: (module, section title), in the order of the page
MODULES = (
    ("sslkit.risk", "Paper A, the risk rewrite"),
    ("sslkit.select", "Paper B, RDSS and the other label selectors"),
    ("sslkit.coreset", "Paper C, Retrieve and the other coreset strategies"),
    ("sslkit.algorithms", "The SSL algorithms (losses)"),
    ("sslkit.task", "The data of one run"),
    ("sslkit.engine", "The training loop and the one fit"),
    ("sslkit.callbacks", "Callbacks"),
    ("sslkit.pipeline", "All three papers in one estimator"),
    ("sslkit.data", "Data"),
    ("sslkit.models", "Models"),
    ("sslkit.features", "Image features"),
    ("sslkit.seeding", "Seeding"),
    ("sslkit.device", "Devices"),
    ("sslkit.select_cli", "The sslkit select command"),
)

INTRO = """# API reference

Every public name of the package's core modules (each module's `__all__`), with its docstring; the equations they
cite are the papers' ({doc}`paper_a`, {doc}`paper_b`, {doc}`paper_c`). The how-to pages use them on data of your
own: {doc}`../notebooks/howto_rdss_images`, {doc}`../notebooks/howto_risk_rewrite_csv`,
{doc}`../notebooks/howto_retrieve_loop` and {doc}`../notebooks/howto_pipeline`.

The estimators follow scikit-learn's conventions (`get_params` / `set_params`, `sklearn.base.clone`, a `fit` that
starts afresh, `y = -1` for an unlabeled row) and PyTorch's (`Dataset` and `DataLoader` inputs, your own optimiser
and scheduler, any device). Each section lists its module's classes and functions, then documents every name of
its `__all__`, constants included.
"""


def comment_of(module, name: str) -> str:
    """The ``#:`` comment of ``name`` in ``module`` or one of its sub-modules ("" when there is none)."""
    from sphinx.pycode import ModuleAnalyzer

    names = [module.__name__]
    if hasattr(module, "__path__"):
        names += [f"{module.__name__}.{m.name}" for m in pkgutil.iter_modules(module.__path__)]
    for modname in names:
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:  # noqa: BLE001 - a module the analyzer cannot read has no comments to give
            continue
        if ("", name) in docs:
            return " ".join(line.strip() for line in docs["", name] if line.strip())
    return ""


def page() -> str:
    out, seen = [INTRO], {}
    for modname, title in MODULES:
        module = importlib.import_module(modname)
        names = list(module.__all__)
        again = [n for n in names if id(getattr(module, n)) in seen and not _is_plain_value(getattr(module, n))]
        code = [n for n in names if callable(getattr(module, n)) and n not in again]
        data = [n for n in names if not callable(getattr(module, n))]
        out.append(f"## {title}\n")
        out.append(f"```{{eval-rst}}\n.. currentmodule:: {modname}\n\n.. autosummary::\n   :nosignatures:\n")
        out.extend(f"   {n}" for n in code)
        excluded = data + again
        out.append(f"\n.. automodule:: {modname}\n   :members:")
        if excluded:
            out.append(f"   :exclude-members: {', '.join(excluded)}")
        out.append("")
        for n in again:
            first = seen[id(getattr(module, n))]
            out.append(f".. py:data:: {n}\n   :no-index:\n\n   The same object as :obj:`{first}`.\n")
        for n in data:
            out.append(f".. py:data:: {n}\n\n   {comment_of(module, n) or 'A constant of ' + modname + '.'}\n")
        out.append("```\n")
        for n in code:
            seen.setdefault(id(getattr(module, n)), f"{modname}.{n}")
    return "\n".join(out)


def _is_plain_value(obj) -> bool:
    return isinstance(obj, (int, float, str, tuple))


def main() -> int:
    PAGE.write_text(page(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
