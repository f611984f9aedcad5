"""The checks every package front (``sslkit/<package>/__init__.py``) passes, for its test module
(``tests/test_<package>.py``): what it exports is what its modules define, and a public name of a module is exported
or named as internal on purpose."""

from __future__ import annotations

import importlib
import inspect
import pkgutil


def submodules(package) -> dict:
    """``{name: module}`` of the package's modules (imported)."""
    return {
        info.name: importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    }


def check_exports(package, *, internal: dict | None = None, modules_internal: tuple = ()) -> None:
    """``package.__all__`` has no repeat, every name resolves to the very object of the module that defines it, every
    function and class has a docstring, and every name of a module's ``__all__`` is exported -- except the names in
    ``internal`` (``{module: names}``) and the whole modules of ``modules_internal``."""
    names = list(package.__all__)
    assert len(names) == len(set(names)), (
        f"{package.__name__}.__all__ repeats {sorted(n for n in names if names.count(n) > 1)}"
    )
    for name in names:
        obj = getattr(package, name)  # AttributeError: exported but not defined
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__module__.startswith(package.__name__ + "."), f"{name} comes from {obj.__module__}"
            assert getattr(importlib.import_module(obj.__module__), name) is obj, name
            assert inspect.getdoc(obj), f"{package.__name__}.{name} has no docstring"
    internal = internal or {}
    for mod_name, module in submodules(package).items():
        if mod_name in modules_internal:
            continue
        left = sorted(set(getattr(module, "__all__", ())) - set(names) - set(internal.get(mod_name, ())))
        assert not left, f"{package.__name__}.{mod_name} exports {left}, which {package.__name__} does not"
    stale = {m: sorted(set(v) & set(names)) for m, v in internal.items() if set(v) & set(names)}
    assert not stale, f"names listed as internal are exported: {stale}"
