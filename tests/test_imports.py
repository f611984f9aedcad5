"""The import structure of the package: no import cycle among sslkit modules, and no module uses another
module's ``_``-prefixed names (``from m import _x`` or ``m._x``). Read with ``ast``; nothing is imported.
Imports inside functions count too: a lazy import hides a cycle, it does not remove it."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Private names still shared while sslkit/algorithms is redesigned (issue 9 §1: "no algorithm imports
#: another algorithm's private names"); remove the entry when that lands.
KNOWN: set = set()


def _modules() -> dict:
    out = {}
    for path in (ROOT / "sslkit").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(modules: dict):
    """``(edges, private)``: module -> modules it imports; ``(importer, module, name)`` of private names used."""
    edges, private = {}, set()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        bound, edges[name] = {}, set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                if target not in modules:
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in modules:
                        edges[name].add(sub)
                        bound[a.asname or a.name] = sub
                    else:
                        edges[name].add(target)
                        if a.name.startswith("_"):
                            private.add((name, target, a.name))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                private.add((name, bound[node.value.id], node.attr))
    return edges, private


def _cycle(edges: dict):
    """One import cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = "done"
        stack.pop()
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_checks_see_the_package():
    modules = _modules()
    edges, _ = _imports(modules)
    assert (
        "sslkit.experiments.paper_a" in modules
        and "sslkit.experiments.paper_a" in edges["sslkit.experiments.paper_a.appendix"]
    )
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    edges, _ = _imports(_modules())
    assert _cycle(edges) is None, " -> ".join(_cycle(edges))


def test_no_private_name_used_across_modules():
    _, private = _imports(_modules())
    assert sorted(private - KNOWN) == []
