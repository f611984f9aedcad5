"""The registry of reproducible notebooks, read from their front matter, and :func:`reproduce`, which executes
one through papermill.

Notebook sources are MyST markdown files in the repository's ``notebooks/`` folder (they ship with the git
repository, not with the wheel). The ``sslkit:`` block of each one's YAML header holds its ``title``,
``paper``, ``gpu_recommended``, ``nbval`` mode and the paper ``targets`` it reproduces; :func:`registry`
reads them, and the CLI, the scorecard, CI and the ``_toc.yml`` test all use it. Each notebook has a code
cell tagged ``parameters`` that defines at least ``scale`` and ``device``. :func:`reproduce` converts the
source with jupytext, sets the kernelspec (papermill refuses a notebook without one), injects the parameters
and executes it with papermill in the repository root (papermill's working directory is otherwise the
caller's).
"""

from __future__ import annotations

import ast
import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .runs.store import repo_root

SCALES = ("quick", "cpu", "paper")
DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class NotebookSpec:
    """One reproducible notebook, as its front matter's ``sslkit:`` block describes it.

    ``name`` is the file's stem with ``-`` for ``_`` (``notebooks/a_table1.md`` -> ``a-table1``); ``path`` is
    relative to the repository root (an absolute path is used as is); ``paper`` is ``"A"``, ``"B"``, ``"C"`` or
    ``"-"`` (not tied to one paper); ``nbval`` is ``"strict"`` (CI compares the outputs) or ``"lax"``;
    ``targets`` are the paper items it reproduces (dicts with ``item``, ``what`` and optionally ``note``),
    which the scorecard lists.
    """

    name: str
    path: str
    title: str
    paper: str = "-"
    gpu_recommended: bool = False
    nbval: str = "lax"
    targets: tuple = ()


def front_matter(path) -> dict:
    """The ``sslkit:`` block of a MyST notebook's YAML header (``{}`` when there is none)."""
    import yaml

    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    header = yaml.safe_load(text[4 : text.index("\n---\n", 3)]) or {}
    return header.get("sslkit") or {}


@functools.cache
def registry() -> tuple[NotebookSpec, ...]:
    """Every ``notebooks/*.md`` of the repository whose front matter's ``sslkit:`` block has a ``title``, by
    paper then name. Empty where the notebooks are not shipped (an installed wheel)."""
    specs = []
    for md in sorted((repo_root() / "notebooks").glob("*.md")):
        meta = front_matter(md)
        if "title" not in meta:
            continue
        specs.append(
            NotebookSpec(
                name=md.stem.replace("_", "-"),
                path=f"notebooks/{md.name}",
                title=meta["title"],
                paper=str(meta.get("paper", "-")),
                gpu_recommended=bool(meta.get("gpu_recommended")),
                nbval=meta.get("nbval", "lax"),
                targets=tuple(meta.get("targets", ())),
            )
        )
    return tuple(sorted(specs, key=lambda s: (s.paper, s.name)))


def get_notebook(name) -> NotebookSpec:
    """The registered :class:`NotebookSpec` called ``name`` (a spec is returned as is)."""
    if isinstance(name, NotebookSpec):
        return name
    specs = registry()
    for spec in specs:
        if spec.name == name:
            return spec
    if not specs:
        raise FileNotFoundError(f"no notebooks under {repo_root() / 'notebooks'}: {_NOT_SHIPPED}")
    names = ", ".join(spec.name for spec in specs)
    raise ValueError(f"unknown notebook {name!r}; reproducible notebooks: {names}")


_NOT_SHIPPED = (
    "the notebooks ship with the sslkit git repository, not with the installed package (wheel): "
    "clone the repository and install it with `pip install -e .` from its root"
)


def notebook_path(spec: NotebookSpec) -> Path:
    """Absolute path of the notebook's source; ``FileNotFoundError`` explaining where notebooks live."""
    path = repo_root() / spec.path
    if not path.is_file():
        raise FileNotFoundError(
            f"notebook {spec.name!r} not found at {path}. The n{_NOT_SHIPPED[1:]}, then run this again."
        )
    return path


def _read(path: Path):
    import jupytext

    return jupytext.read(path)


def _parameters_cell(nb, where: str):
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    raise ValueError(f"{where} has no code cell tagged 'parameters'")


def notebook_parameters(source, where=None, *, literal_only=False) -> dict:
    """Names and default values assigned in the ``parameters``-tagged cell of a notebook.

    ``source`` is a path to a notebook (MyST markdown, py:percent or .ipynb) or a read notebook.

    Values that are not Python literals are given as their source text (left out with ``literal_only``).
    """
    nb = source if hasattr(source, "cells") else _read(Path(source))
    cell = _parameters_cell(nb, where or str(source))
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise ValueError(f"the parameters cell of {where or source} is not valid Python: {exc}") from exc
    params = {}
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if getattr(node, "value", None) is None:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    params[target.id] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError):
                    if not literal_only:
                        params[target.id] = ast.get_source_segment(cell.source, node.value)
    return params


def parse_parameter(text: str) -> tuple[str, object]:
    """Parse a ``key=value`` command-line parameter; the value as a Python literal when it is one, else a string.

    ``"n=3" -> ("n", 3)``, ``"quick=True" -> ("quick", True)``, ``"name=mnist" -> ("name", "mnist")``.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ValueError(f"parameter {text!r} must look like key=value with key a Python name")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = raw
    return key, value


def _type_name(value) -> str:
    return "str" if isinstance(value, str) else type(value).__name__


def check_parameter_types(parameters: dict, defaults: dict, name: str) -> None:
    """Refuse a parameter whose value does not have the type of its default in the parameters cell.

    The rule: an ``int`` default takes an int, a ``float`` default an int or a float, a ``bool`` default
    a bool, a ``str`` default a str, a list or tuple default a list or tuple, a ``dict`` default a dict
    (bools are not numbers here). A ``None`` default takes anything, and so does a parameter missing from
    ``defaults`` (pass ``notebook_parameters(..., literal_only=True)``: a default that is not a Python
    literal has no type to check against). The ``executor`` parameter of a notebook (default ``"local"``) takes
    an executor's name or a dict of resources per run (``{'name': 'ray', 'num_gpus': 1}``), checked by
    :func:`~sslkit.experiments.runs.executors.parse_executor`.
    ``ValueError`` naming the parameter, its default and the value given.
    """
    for key, value in parameters.items():
        default = defaults.get(key)
        if default is None:
            continue
        if key == "executor":
            from .runs.executors import parse_executor

            parse_executor(value)
            continue
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, (list, tuple)):
            ok = isinstance(value, (list, tuple))
        elif isinstance(default, dict):
            ok = isinstance(value, dict)
        else:
            ok = True
        if not ok:
            hint = f" (for the text, quote it: {key}=\"'{value}'\")" if isinstance(default, str) else ""
            raise ValueError(
                f"notebook {name!r} parameter {key!r} must be a {_type_name(default)} like its default "
                f"{default!r}, got {value!r} ({_type_name(value)}){hint}"
            )


def check_kernel(kernel) -> str:
    """Return ``kernel`` when it names an installed Jupyter kernel; ``ValueError`` listing the installed ones."""
    if not isinstance(kernel, str) or not kernel:
        raise ValueError(f"kernel must be a kernel name such as 'python3', got {kernel!r}")
    from jupyter_client.kernelspec import KernelSpecManager

    installed = sorted(KernelSpecManager().find_kernel_specs())
    if kernel not in installed:
        raise ValueError(f"no Jupyter kernel named {kernel!r}; installed kernels: {', '.join(installed) or 'none'}")
    return kernel


def reproduce(
    name,
    *,
    scale="quick",
    device="auto",
    parameters=None,
    out_dir="_build/reproduce",
    kernel="python3",
    progress=True,
) -> Path:
    """Execute a registered notebook with papermill and return the path of the executed ``.ipynb``.

    Parameters
    ----------
    name : str or NotebookSpec
        A name from :func:`registry` (see ``sslkit list``), or a spec for a notebook not registered.
    scale : {"quick", "paper"}
        Injected as the notebook's ``scale`` parameter.
    device : {"auto", "cpu", "cuda", "mps"} or "cuda:N"
        Injected as the notebook's ``device`` parameter.
    parameters : dict, optional
        More parameters to inject; each key must be assigned in the notebook's parameters cell, and each
        value must have the type of its default there (:func:`check_parameter_types`).
    out_dir : path
        Folder of the executed notebook (``<out_dir>/<source stem>.ipynb``), relative to the caller's
        working directory; created when missing.
    kernel : str
        Jupyter kernel to run (``python3`` is the environment's own interpreter); it must be installed
        (:func:`check_kernel`).
    progress : bool
        Show papermill's per-cell progress bar.

    The notebook runs with the repository root as working directory. A failing cell raises papermill's
    ``PapermillExecutionError``; the executed notebook, with the error, is still written.
    """
    spec = get_notebook(name)
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}")
    if not isinstance(device, str) or not (device in DEVICES or (device.startswith("cuda:") and device[5:].isdigit())):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} or 'cuda:N'; got {device!r}")
    parameters = dict(parameters or {})
    for reserved, arg in (("scale", "scale"), ("device", "device")):
        if reserved in parameters:
            raise ValueError(f"give {reserved!r} through the {arg}= argument (--{arg}), not through parameters")
    kernel = check_kernel(kernel)

    source = notebook_path(spec)
    nb = _read(source)
    defined = notebook_parameters(nb, where=str(source))
    injected = {"scale": scale, "device": device, **parameters}
    for key in injected:
        if key not in defined:
            raise ValueError(
                f"notebook {spec.name!r} has no parameter {key!r}; its parameters are: {', '.join(sorted(defined))}"
            )
    check_parameter_types(parameters, notebook_parameters(nb, where=str(source), literal_only=True), spec.name)

    import papermill

    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    output = (out_dir / f"{source.stem}.ipynb").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        import jupytext

        executable = Path(tmp) / f"{source.stem}.ipynb"
        jupytext.write(nb, executable, fmt="ipynb")
        papermill.execute_notebook(
            str(executable),
            str(output),
            parameters=injected,
            cwd=str(repo_root()),
            kernel_name=kernel,
            progress_bar=progress,
        )
    return output
