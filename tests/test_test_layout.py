"""The tests mirror the library: every library module has a test module of the same name.

The library is every module of ``sslkit`` outside ``sslkit/experiments`` (the reproduction: its run functions,
claims and pages; its tests are apart, named after the experiment, e.g. ``test_paper_c.py``). The name rule, flat
in ``tests/`` (folders would give three ``test_registry.py`` and two ``test_inputs.py``):

* ``sslkit/<package>/__init__.py`` -> ``tests/test_<package>.py`` (the package's public front: re-exports,
  registries);
* ``sslkit/<package>/<module>.py`` -> ``tests/test_<package>_<module>.py``;
* ``sslkit/<module>.py`` -> ``tests/test_<module>.py``, leading underscores dropped (``_checks`` -> ``test_checks``);
* ``sslkit/__init__.py`` -> ``tests/test_imports.py`` (the package's front door: importing it is cheap).

:data:`KNOWN_UNTESTED` lists the library modules that have no test module of their name yet (their behaviour may
still be tested inside another file). It may only shrink: a module that gets its test module must leave the list
(a stale entry fails), and a new module without one fails.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: library modules without a test module of their name yet (``sslkit/`` relative paths): empty, every library module
#: has one; keep it empty (a new module comes with its test module)
KNOWN_UNTESTED = frozenset()


def expected_test_file(module: str) -> str:
    """``coreset/retrieve.py`` -> ``test_coreset_retrieve.py`` (module docstring)."""
    parts = list(Path(module).with_suffix("").parts)
    if parts == ["__init__"]:
        return "test_imports.py"
    if parts[-1] == "__init__":
        parts.pop()
    return "test_" + "_".join(p.lstrip("_") for p in parts) + ".py"


def library_modules() -> list[str]:
    package = ROOT / "sslkit"
    return sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py") if "experiments" not in p.parts[1:])


def test_the_name_rule():
    assert expected_test_file("coreset/retrieve.py") == "test_coreset_retrieve.py"
    assert expected_test_file("coreset/__init__.py") == "test_coreset.py"
    assert expected_test_file("_checks.py") == "test_checks.py"
    assert expected_test_file("select_cli.py") == "test_select_cli.py"
    assert expected_test_file("__init__.py") == "test_imports.py"
    assert "coreset/retrieve.py" in library_modules() and "pipeline.py" in library_modules()
    assert not any(m.startswith("experiments/") for m in library_modules())


def test_every_library_module_has_a_test_module_of_its_name():
    missing = {m for m in library_modules() if not (ROOT / "tests" / expected_test_file(m)).is_file()}
    new = sorted(missing - KNOWN_UNTESTED)
    assert not new, "library modules without their test module: " + ", ".join(
        f"sslkit/{m} -> tests/{expected_test_file(m)}" for m in new
    )
    stale = sorted(KNOWN_UNTESTED - missing)
    assert not stale, f"KNOWN_UNTESTED lists modules that now have their test module (or are gone): {stale}"
