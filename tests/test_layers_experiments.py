"""The layer order of sslkit.experiments and the CLI (issue 20): runs at the bottom, then the reports (which know
no paper), then the three papers (independent of each other), then the catalog and the notebook registry, then
the CLI. Read with ``ast`` (imports inside functions count: a lazy import hides a dependency, it does not remove
it); nothing is imported. The lower layers' order (maths, algorithms, engine) is tests/test_layers.py's."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("paper_a", "paper_b", "paper_c")
#: the chapter "All three together": beside the papers, independent of them
CHAPTER = "pipeline"
#: what each part of sslkit.experiments must not import (relative to sslkit.experiments); "cli" is sslkit.cli
FORBIDDEN = {
    "runs": ("report", *PAPERS, CHAPTER, "catalog", "notebooks", "cli"),
    "report": (*PAPERS, CHAPTER, "catalog", "cli"),
    "paper_a": ("paper_b", "paper_c", CHAPTER, "catalog", "notebooks", "cli"),
    "paper_b": ("paper_a", "paper_c", CHAPTER, "catalog", "notebooks", "cli"),
    "paper_c": ("paper_a", "paper_b", CHAPTER, "catalog", "notebooks", "cli"),
    CHAPTER: (*PAPERS, "catalog", "notebooks", "cli"),
    "paper_numbers": ("runs", "report", *PAPERS, CHAPTER, "catalog", "notebooks", "cli"),
    "notebooks": ("report", *PAPERS, CHAPTER, "catalog", "cli"),
    "catalog": ("cli",),
}


def imported_modules(path: Path) -> set:
    """Absolute names of the sslkit modules ``path`` imports (``from . import x`` resolved against its package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[:-1]  # a module's package; an __init__'s package is its own folder, also parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            out.add(target)
            out |= {f"{target}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("sslkit")}


def part_of(module: str) -> str | None:
    """The part of sslkit.experiments (or "cli") a module belongs to."""
    if module == "sslkit.cli":
        return "cli"
    prefix = "sslkit.experiments."
    if not module.startswith(prefix):
        return None
    return module[len(prefix) :].split(".")[0]


def experiments_files():
    return sorted((ROOT / "sslkit" / "experiments").rglob("*.py"))


def test_the_checks_see_the_layers():
    catalog = ROOT / "sslkit" / "experiments" / "catalog.py"
    assert {"sslkit.experiments.paper_a.experiments", "sslkit.experiments.report.ledger"} <= imported_modules(catalog)
    assert part_of("sslkit.experiments.paper_c.claims") == "paper_c" and part_of("sslkit.cli") == "cli"
    assert set(FORBIDDEN) <= {p.parent.name if p.parent.name != "experiments" else p.stem for p in experiments_files()}


@pytest.mark.parametrize("path", experiments_files(), ids=lambda p: str(p.relative_to(ROOT / "sslkit")))
def test_experiments_import_only_the_layers_below(path):
    rel = path.relative_to(ROOT / "sslkit" / "experiments").parts
    part = rel[0] if len(rel) > 1 else Path(rel[0]).stem
    if part not in FORBIDDEN:  # the package's __init__: re-exports only
        assert part == "__init__", part
        bad = {part_of(m) for m in imported_modules(path)} & {*PAPERS, "catalog", "cli"}
        assert not bad, f"sslkit.experiments re-exports {bad}: importing the package would import them"
        return
    bad = sorted(m for m in imported_modules(path) if part_of(m) in FORBIDDEN[part])
    assert not bad, f"{path.relative_to(ROOT)} ({part}) imports {bad}, a layer it must not depend on"


def test_lower_layers_do_not_import_the_experiments_or_the_cli():
    for path in (ROOT / "sslkit").rglob("*.py"):
        rel = path.relative_to(ROOT / "sslkit").parts
        if rel[0] in ("experiments", "cli.py"):
            continue
        bad = sorted(m for m in imported_modules(path) if part_of(m) is not None or m.startswith("sslkit.experiments"))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_no_module_is_over_500_lines():
    """Every module of the package, library and experiments alike (one idea per module; the trainer and the
    label-selection baselines were split to meet it)."""
    files = sorted((ROOT / "sslkit").rglob("*.py"))
    assert len(files) > 100 and set(experiments_files()) < set(files)
    long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text().splitlines())) > 500}
    assert not long, long
