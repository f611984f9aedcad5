"""Sphinx extension of the book: cross-references of the API reference (``book/api.md``) to sslkit objects.

The docstrings name objects by the module that defines them (``sslkit.coreset.strategy.SelectionInputs``,
``sslkit.algorithms.risk_terms.prior_class_weights``) or by a sub-module (``:mod:`sslkit.select.herding```),
while the reference documents each object once, under the package that exports it
(``sslkit.coreset.SelectionInputs``). A reference Sphinx cannot resolve is retried under the package that exports
the same name, and a sub-module reference goes to its package's section. What stays plain text, without a
nitpicky warning: references to other packages (numpy, torch: no intersphinx, the book builds offline), to an
sslkit object that exists but is not documented (a private helper, a name relative to the docstring's module or
class), and "types" of NumPy-style parameter and attribute lists that are prose ("float in (0, 1)"), not names.
A name that does not exist still warns.
"""

import importlib
import sys

EXTERNAL = ("torch", "numpy", "np", "scipy", "sklearn", "pandas", "matplotlib", "tqdm", "PIL", "jupyter", "ray")


def _exported_name(target: str):
    """``sslkit.pkg.mod.Name[.attr]`` -> ``sslkit.pkg.Name[.attr]`` when the package ``sslkit.pkg`` exports ``Name``."""
    parts = target.split(".")
    if len(parts) < 3 or parts[0] != "sslkit":
        return None
    for cut in range(2, len(parts) - 1):  # the top package first: the reference documents objects there
        try:
            exported = getattr(importlib.import_module(".".join(parts[:cut])), "__all__", ())
        except ImportError:
            continue
        for j in range(cut, len(parts)):
            if parts[j] in exported:
                return ".".join(parts[:cut] + parts[j:])
    return None


def _exists(target: str) -> bool:
    """Whether ``target`` (``sslkit.x.y.Name``) names an importable sslkit object."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return False
        return True
    return False


def _resolve(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    domain = env.get_domain("py")
    builder = app.builder
    if target.startswith("sslkit."):
        if node.get("reftype") == "mod":
            parts = target.split(".")
            for cut in range(len(parts) - 1, 1, -1):
                found = domain.resolve_xref(env, node["refdoc"], builder, "mod", ".".join(parts[:cut]), node, contnode)
                if found is not None:
                    return found
        short = _exported_name(target)
        if short is not None:
            for kind in ("class", "func", "data", "obj", "meth", "attr"):
                found = domain.resolve_xref(env, node["refdoc"], builder, kind, short, node, contnode)
                if found is not None:
                    return found
    if target.split(".")[0] in EXTERNAL or not all(part.isidentifier() for part in target.split(".")):
        return contnode  # another package, or prose in a type field: plain text, no warning
    if target.startswith("sslkit.") and _exists(target):
        return contnode  # an sslkit object the reference does not document (not exported)
    context = [node.get("py:module"), node.get("py:class")]
    scopes = [context[0], ".".join(c for c in context if c)] if context[0] else []
    if any(_exists(f"{scope}.{target}") for scope in scopes):
        return contnode  # a name relative to the docstring's module or class that the reference does not document
    if any(_exists(f"{name}.{target}") for name in list(sys.modules) if name.startswith("sslkit.")):
        return contnode  # a name of the module that defines the docstring (a helper the reference does not show)
    return None


def setup(app):
    app.connect("missing-reference", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
