"""Command line: ``sslkit list``, ``sslkit reproduce NAME ...``, the paper-scale sweeps of paper A
(``sslkit sweep-a`` for Tables 1-2, ``sslkit sweep-a-appendix`` for Tables 3-10) and ``sslkit --version``.

User errors (unknown notebook, unknown parameter or one whose value does not have the type of its
default in the notebook's parameters cell, unknown Jupyter kernel, notebook not shipped, a file or
folder that cannot be read or written, a results file another process is writing) print one line to
stderr and exit with status 2; a notebook that fails while executing exits with status 1 and names
the executed notebook.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sslkit

from .experiments import notebooks


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sslkit", description="Semi-supervised learning, reproduced: list and run the book's notebooks."
    )
    parser.add_argument("--version", action="version", version=f"sslkit {sslkit.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list the reproducible notebooks")
    rep = sub.add_parser("reproduce", help="execute one notebook through papermill")
    rep.add_argument("name", help="notebook name (see `sslkit list`)")
    rep.add_argument("--scale", choices=notebooks.SCALES, default="quick", help="experiment scale (default: quick)")
    rep.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device (default: auto)")
    rep.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="notebook parameter; VALUE is read as a Python literal when it is one (3, 0.5, True, 'x'), "
        "else as a string",
    )
    rep.add_argument("--out", default="_build/reproduce", metavar="DIR", help="folder of the executed notebook")
    rep.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: python3)")
    rep.add_argument("--no-progress", action="store_true", help="hide papermill's progress bar")
    a = sub.add_parser("sweep-a", help="run (or resume) paper A's Table 1 or 2 into its results file")
    a.add_argument("--table", type=int, required=True)
    a.add_argument("--datasets", required=True, help="comma-separated")
    a.add_argument("--methods", default=None, help="comma-separated table method names (default: all)")
    app = sub.add_parser("sweep-a-appendix", help="run (or resume) paper A's Tables 3-10 into their results files")
    app.add_argument("--tables", required=True, help="comma-separated, 3..10")
    app.add_argument("--datasets", default=None, help="comma-separated (default: every row of the tables)")
    for sweep in (a, app):
        sweep.add_argument("--seeds", default="0-4", help="'0-29' or '0,1,2'")
        sweep.add_argument("--scale", default="paper")
        sweep.add_argument("--device", default="auto")
        sweep.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
        sweep.add_argument("--results-dir", default=None)
    return parser


def parse_seeds(text: str) -> list:
    """``"0-4"`` -> ``[0, 1, 2, 3, 4]``; ``"0,2"`` -> ``[0, 2]``."""
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def _sweep(args) -> int:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    seeds = parse_seeds(args.seeds)
    kw = dict(scale=args.scale, device=args.device, results_dir=args.results_dir, progress=True)
    if args.command == "sweep-a":
        from .experiments.paper_a import run_table

        methods = None if args.methods is None else args.methods.split(",")
        records = run_table(args.table, [d for d in args.datasets.split(",") if d], seeds, methods=methods, **kw)
    else:
        from .experiments.paper_a_appendix import run_tables

        datasets = None if args.datasets is None else [d for d in args.datasets.split(",") if d]
        records = run_tables([int(t) for t in args.tables.split(",")], seeds, datasets=datasets, **kw)
    print(f"{len(records)} runs done")
    return 0


def _list() -> int:
    header = ("NAME", "PAPER", "GPU?", "PATH", "TITLE")
    rows = [header] + [
        (s.name, s.paper, "yes" if s.gpu_recommended else "no", s.path, s.title) for s in notebooks.registry()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    return 0


def _reproduce(args) -> int:
    params = dict(notebooks.parse_parameter(p) for p in args.parameter)
    try:
        import papermill.exceptions as pm_exc

        execution_error = pm_exc.PapermillExecutionError
    except ImportError:  # pragma: no cover - papermill missing
        execution_error = ()
    try:
        path = notebooks.reproduce(
            args.name,
            scale=args.scale,
            device=args.device,
            parameters=params,
            out_dir=args.out,
            kernel=args.kernel,
            progress=not args.no_progress,
        )
    except execution_error as exc:
        stem = Path(notebooks.get_notebook(args.name).path).stem
        print(
            f"sslkit: error: notebook {args.name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}\n"
            f"the executed notebook, with the error, is {args.out}/{stem}.ipynb",
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
        if args.command.startswith("sweep-"):
            return _sweep(args)
        return _reproduce(args)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        print(f"sslkit: error: {' '.join(str(exc).split())}", file=sys.stderr)  # one line
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
