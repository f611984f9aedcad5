"""The layer order of the package (README "Layout", ``sslkit/__init__``), read with ``ast`` (nothing is imported).

Layers, bottom to top; a module may import from its own layer and the layers below, never from above:

0. the bottom: each paper's mathematics -- ``risk`` (A), ``select`` (B), ``coreset`` (C) -- and ``data``,
   ``models``, ``features``, the shared checks ``_checks``, ``device``, ``seeding`` and ``task`` (the data of one
   run); the three papers' mathematics are independent of each other (none of ``risk``, ``select``, ``coreset``
   imports another);
1. ``algorithms`` (losses only) and ``active`` (the active-learning selections of paper B's baselines, with the
   training losses two of them need);
2. ``engine`` and ``callbacks`` (the one loop and its callbacks);
3. ``experiments`` and ``pipeline`` (the three papers chained in one estimator);
4. ``cli``.

Imports inside functions count too: a lazy import hides a dependency, it does not remove it.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: top-level component of sslkit -> layer
LAYERS = {
    "_checks": 0,
    "device": 0,
    "seeding": 0,
    "task": 0,
    "risk": 0,
    "select": 0,
    "coreset": 0,
    "data": 0,
    "models": 0,
    "features": 0,
    "algorithms": 1,
    "active": 1,
    "engine": 2,
    "callbacks": 2,
    "experiments": 3,
    "pipeline": 3,
    "cli": 4,
    "select_cli": 4,
}
#: the three papers' mathematics: none may import another
PAPERS = ("risk", "select", "coreset")


def component(module: str) -> str | None:
    """``sslkit.coreset.retrieve`` -> ``coreset``; None for the package itself and non-sslkit modules."""
    parts = module.split(".")
    return parts[1] if parts[0] == "sslkit" and len(parts) > 1 else None


def edges() -> set:
    """``(importer component, imported component, file)`` for every import of one sslkit component by another."""
    out = set()
    for path in (ROOT / "sslkit").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        here = component(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [target] if node.module or not node.level else [f"{target}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                there = component(t)
                if there is not None and here is not None and there != here:
                    out.add((here, there, str(path.relative_to(ROOT))))
    return out


def test_every_component_has_a_layer():
    found = {p.stem if p.is_file() else p.name for p in (ROOT / "sslkit").iterdir() if p.suffix != ".typed"}
    found = {name for name in found if name not in ("__init__", "__pycache__")}  # py.typed: PEP 561's marker
    assert found == set(LAYERS), f"components without a layer: {sorted(found - set(LAYERS))}"


def test_nothing_imports_upward():
    upward = sorted((a, b, f) for a, b, f in edges() if LAYERS[b] > LAYERS[a])
    assert not upward, "imports from a higher layer: " + "; ".join(f"{f}: {a} -> {b}" for a, b, f in upward)


def test_the_three_papers_mathematics_are_independent():
    crossed = sorted((a, b, f) for a, b, f in edges() if a in PAPERS and b in PAPERS)
    assert not crossed, "paper modules importing each other: " + "; ".join(f"{f}: {a} -> {b}" for a, b, f in crossed)


def test_the_checks_see_the_imports():
    found = edges()
    assert ("callbacks", "coreset", "sslkit/callbacks.py") in found
    assert any(a == "experiments" and b == "engine" for a, b, _ in found)
    assert ("coreset", "_checks", "sslkit/coreset/retrieve.py") in found
