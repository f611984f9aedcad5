"""Command line: ``sslkit list``, ``sslkit reproduce NAME ...`` and ``sslkit --version``.

User errors (unknown notebook, bad parameter, notebook not shipped) print one line to stderr and exit
with status 2; a notebook that fails while executing exits with status 1 and names the executed notebook.
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
        help="notebook parameter; VALUE is read as a Python literal when it is one (3, 0.5, True, 'x'), else as a string",
    )
    rep.add_argument("--out", default="_build/reproduce", metavar="DIR", help="folder of the executed notebook")
    rep.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: python3)")
    rep.add_argument("--no-progress", action="store_true", help="hide papermill's progress bar")
    return parser


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
        return _reproduce(args)
    except (ValueError, TypeError, FileNotFoundError, ImportError) as exc:
        print(f"sslkit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
