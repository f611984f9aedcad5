"""The book's API reference (book/api.md) documents every public name of the core modules: the committed page is
what ``python .ci/api_page.py`` writes from the modules' ``__all__``; the Sphinx settings it needs are in
``_config.yml``; every how-to page links to it."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def api_page():
    spec = importlib.util.spec_from_file_location("api_page", ROOT / ".ci" / "api_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_up_to_date():
    page = api_page()
    assert (ROOT / "book" / "api.md").read_text(encoding="utf-8") == page.page(), "run python .ci/api_page.py"


def test_every_exported_name_is_on_the_page():
    page = api_page()
    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    for modname, _ in page.MODULES:
        module = importlib.import_module(modname)
        assert f".. automodule:: {modname}\n" in text
        for name in module.__all__:
            # a class or function: in the autosummary table (automodule documents it); a constant: its own entry
            assert f"\n   {name}\n" in text or f".. py:data:: {name}\n" in text, f"{modname}.{name}"


def test_sphinx_settings_and_toc():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert {"sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon"} <= set(config["extra_extensions"])
    assert config["config"]["autosummary_generate"] is False  # stub pages would lie outside _toc.yml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "book/api" in files
    howtos = sorted(p.stem for p in (ROOT / "notebooks").glob("howto_*.md"))
    assert len(howtos) == 4 and all(f"notebooks/{h}" in files for h in howtos)
    for h in howtos:
        assert "{doc}`../book/api`" in (ROOT / "notebooks" / f"{h}.md").read_text(), h


def test_the_reference_resolver_maps_defining_modules_to_exports():
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import api_references as ext
    finally:
        sys.path.pop(0)
    assert ext._exported_name("sslkit.coreset.strategy.SelectionInputs") == "sslkit.coreset.SelectionInputs"
    assert ext._exported_name("sslkit.coreset.craig.Craig.fit") == "sslkit.coreset.Craig.fit"
    assert ext._exists("sslkit.select.kernel.lifted") and not ext._exists("sslkit.select.kernel.no_such_name")
