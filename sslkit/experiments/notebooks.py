"""The registry of reproducible notebooks and :func:`reproduce`, which executes one through papermill.

Notebook sources are MyST markdown files in the repository's ``notebooks/`` folder (they ship with the
git repository, not with the wheel). Each has a code cell tagged ``parameters`` that defines at least
``scale`` and ``device``. :func:`reproduce` converts the source with jupytext, sets the kernelspec
(tooling pitfall P2: papermill refuses a notebook without one), injects the parameters and executes it
with papermill in the repository root (pitfall P16: papermill's working directory is otherwise the
caller's).
"""

from __future__ import annotations

import ast
import tempfile
from dataclasses import dataclass
from pathlib import Path

SCALES = ("quick", "paper")
DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class NotebookSpec:
    """One reproducible notebook.

    ``path`` is relative to the repository root (an absolute path is used as is);
    ``paper`` is ``"A"``, ``"B"``, ``"C"`` or ``"-"`` (not tied to one paper).
    """

    name: str
    path: str
    title: str
    paper: str = "-"
    gpu_recommended: bool = False


NOTEBOOKS: tuple[NotebookSpec, ...] = (
    NotebookSpec(
        name="supervised-baseline",
        path="notebooks/supervised_baseline.md",
        title="Supervised MLP: accuracy vs number of labels (Breast Cancer, Banknote)",
        paper="A",
        gpu_recommended=False,
    ),
    NotebookSpec(name="a-theory", path="notebooks/a_theory.md",
                 title="Theorems 1-10 of the risk rewrite, derived and checked in sympy",
                 paper="A", gpu_recommended=False),
    NotebookSpec(name="a-monte-carlo", path="notebooks/a_monte_carlo.md",
                 title="Monte Carlo check of the risk estimators' mean and variance (Thm 1, 2, 7)",
                 paper="A", gpu_recommended=False),
    NotebookSpec(name="a-figure1", path="notebooks/a_figure1.md",
                 title="Figure 1: variance of PN, PNU and optimal linear risk estimators",
                 paper="A", gpu_recommended=False),
    NotebookSpec(name="a-appendix-b", path="notebooks/a_appendix_b.md",
                 title="Appendix B: multiclass variance comparison (Dry Bean, Covertype)",
                 paper="A", gpu_recommended=False),
    NotebookSpec(name="a-table1", path="notebooks/a_table1.md",
                 title="Table 1: binary classification with the risk rewrite", paper="A", gpu_recommended=True),
    NotebookSpec(name="a-table2", path="notebooks/a_table2.md",
                 title="Table 2: multiclass classification with the risk rewrite", paper="A", gpu_recommended=True),
    NotebookSpec(name="a-fixmatch", path="notebooks/a_fixmatch.md",
                 title="Table 3: FixMatch with a confidence-threshold sweep", paper="A", gpu_recommended=True),
    NotebookSpec(name="a-ablations", path="notebooks/a_ablations.md",
                 title="Tables 4-10: covariance-set size, equal-covariance diagnostic, non-negative correction",
                 paper="A", gpu_recommended=True),
    NotebookSpec(name="b-theory", path="notebooks/b_theory.md",
                 title="RDSS theory: the alpha-MMD identity, Frank-Wolfe step, Lemmas B.3/B.6, Theorem 5.6, alpha interval",
                 paper="B", gpu_recommended=False),
    NotebookSpec(name="b-figure2", path="notebooks/b_figure2.md",
                 title="Figure 2: GKHR vs GKH (criterion D) on the four App. D.1 distributions",
                 paper="B", gpu_recommended=False),
    NotebookSpec(name="b-figure3", path="notebooks/b_figure3.md",
                 title="Figure 3: every selector on a 10-component GMM, with alpha-MMD2 and MMD2",
                 paper="B", gpu_recommended=False),
    NotebookSpec(name="b-table4", path="notebooks/b_table4.md",
                 title="Table 4: the alpha ablation (selection measures + supervised proxy on CPU; FreeMatch on a GPU)",
                 paper="B", gpu_recommended=True),
    NotebookSpec(name="b-table1", path="notebooks/b_table1.md",
                 title="Table 1: selectors x FlexMatch/FreeMatch (CPU stand-in; the paper's protocol on a GPU)",
                 paper="B", gpu_recommended=True),
    NotebookSpec(name="b-table5", path="notebooks/b_table5.md",
                 title="Table 5: selector wall-clock at n = 50 000, m = 400, and the official code's defects",
                 paper="B", gpu_recommended=False),
)


def repo_root() -> Path:
    """The folder that holds the ``sslkit`` package: the repository root for an editable install or a clone."""
    import sslkit

    return Path(sslkit.__file__).resolve().parent.parent


def get_notebook(name) -> NotebookSpec:
    """The registered :class:`NotebookSpec` called ``name`` (a spec is returned as is)."""
    if isinstance(name, NotebookSpec):
        return name
    for spec in NOTEBOOKS:
        if spec.name == name:
            return spec
    names = ", ".join(spec.name for spec in NOTEBOOKS)
    raise ValueError(f"unknown notebook {name!r}; reproducible notebooks: {names}")


def notebook_path(spec: NotebookSpec) -> Path:
    """Absolute path of the notebook's source; ``FileNotFoundError`` explaining where notebooks live."""
    path = repo_root() / spec.path
    if not path.is_file():
        raise FileNotFoundError(
            f"notebook {spec.name!r} not found at {path}. The notebooks ship with the sslkit git "
            "repository, not with the installed package (wheel): clone the repository and install it "
            "with `pip install -e .` from its root, then run this again."
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


def notebook_parameters(source, where=None) -> dict:
    """Names and default values assigned in the ``parameters``-tagged cell of a notebook.

    ``source`` is a path to a notebook (MyST markdown, py:percent or .ipynb) or a read notebook.

    Values that are not Python literals are given as their source text.
    """
    nb = source if hasattr(source, "cells") else _read(Path(source))
    cell = _parameters_cell(nb, where or str(source))
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise ValueError(f"the parameters cell of {where or source} is not valid Python: {exc}") from exc
    params = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if getattr(node, "value", None) is None:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    params[target.id] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError):
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
        A name from :data:`NOTEBOOKS` (see ``sslkit list``), or a spec for a notebook not registered.
    scale : {"quick", "paper"}
        Injected as the notebook's ``scale`` parameter.
    device : {"auto", "cpu", "cuda", "mps"} or "cuda:N"
        Injected as the notebook's ``device`` parameter.
    parameters : dict, optional
        More parameters to inject; each key must be assigned in the notebook's parameters cell.
    out_dir : path
        Folder of the executed notebook (``<out_dir>/<source stem>.ipynb``), relative to the caller's
        working directory; created when missing.
    kernel : str
        Jupyter kernel to run (``python3`` is the environment's own interpreter).
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
    if not isinstance(kernel, str) or not kernel:
        raise ValueError(f"kernel must be a kernel name such as 'python3', got {kernel!r}")

    source = notebook_path(spec)
    nb = _read(source)
    defined = notebook_parameters(nb, where=str(source))
    injected = {"scale": scale, "device": device, **parameters}
    for key in injected:
        if key not in defined:
            raise ValueError(
                f"notebook {spec.name!r} has no parameter {key!r}; its parameters are: {', '.join(sorted(defined))}"
            )

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
