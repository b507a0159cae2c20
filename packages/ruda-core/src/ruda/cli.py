"""The ``ruda`` command line: ``ruda info``, ``ruda demo``, and subcommands of plugins.

Plugins add subcommands through the entry point group ``ruda.commands``; each
entry point is a function ``add_parser(subparsers)`` that adds its parser and
sets ``func`` (a callable taking the parsed arguments, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ruda import __version__, _registry
from ruda._demo import run_demo

COMMANDS_GROUP = "ruda.commands"


def _info(args: argparse.Namespace) -> int:
    rows = _registry.backends()
    if args.json:
        print(json.dumps({"ruda": __version__, "backends": [r.as_dict() for r in rows]}, indent=2))
        return 0
    table = Table(title=f"ruda {__version__}: backends")
    for column in ("backend", "package", "status", "devices", "details"):
        table.add_column(column)
    for row in rows:
        package = f"{row.distribution} {row.version}" if row.distribution else "?"
        if row.available:
            status = "[green]available[/green]"
        else:
            fix = f"\n[yellow]fix:[/yellow] {escape(row.fix)}" if row.fix else ""
            status = f"[red]unavailable[/red]: {escape(row.reason or '')}{fix}"
        details = escape(", ".join(f"{k} {v}" for k, v in row.details.items()))
        table.add_row(row.name, escape(package), status, ", ".join(map(str, row.devices)), details)
    Console().print(table)
    missing = [name for name in _registry.KNOWN_EXTRAS if name not in _registry.installed()]
    if missing:
        print(
            "not installed: "
            + ", ".join(f'{n} (pip install "ruda[{_registry.KNOWN_EXTRAS[n]}]")' for n in missing)
        )
    return 0


def _demo(args: argparse.Namespace) -> int:
    results = run_demo()
    failed = [r for r in results if not r.ok and not r.message.startswith("unavailable")]
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
        return 1 if failed else 0
    table = Table(title="ruda demo: least squares on every backend, compared with NumPy")
    for column in ("backend", "result", "seconds", "max rel. error", "detail"):
        table.add_column(column)
    for r in results:
        verdict = (
            "[green]ok[/green]"
            if r.ok
            else "[dim]skipped[/dim]"
            if r.seconds is None and r.message.startswith("unavailable")
            else "[red]FAILED[/red]"
        )
        table.add_row(
            r.backend,
            verdict,
            "" if r.seconds is None else f"{r.seconds:.3f}",
            "" if r.max_error is None else f"{r.max_error:.1e}",
            escape(r.message),
        )
    Console().print(table)
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ruda", description="Array API backends for Python.")
    parser.add_argument("--version", action="version", version=f"ruda {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="list backends, versions, devices and status")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(func=_info)
    demo = sub.add_parser("demo", help="run a small least-squares fit on every backend")
    demo.add_argument("--json", action="store_true", help="machine-readable output")
    demo.set_defaults(func=_demo)
    for ep in md.entry_points(group=COMMANDS_GROUP):
        try:
            ep.load()(sub)
        except Exception as err:  # a broken plugin command must not break `ruda info`
            print(f"ruda: ignoring command {ep.name!r} from a broken plugin: {err}", file=sys.stderr)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
