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
from ruda.plugin import install_command

COMMANDS_GROUP = "ruda.commands"


#: below this many columns (a pipe, CI logs, a narrow terminal) ``ruda info`` prints a block per
#: backend instead of a table, so that reasons and fixes are never cut
WIDE = 120


def _info(args: argparse.Namespace) -> int:
    rows = _registry.backends()
    if args.json:
        print(json.dumps({"ruda": __version__, "backends": [r.as_dict() for r in rows]}, indent=2))
        return 0
    console = Console()
    (_info_table if console.width >= WIDE else _info_blocks)(console, rows)
    missing = [name for name in _registry.KNOWN_EXTRAS if name not in _registry.installed()]
    if missing:
        print(
            "not installed: "
            + ", ".join(f"{n} ({install_command(_registry.KNOWN_EXTRAS[n])})" for n in missing)
        )
    return 0


def _status(row: _registry.BackendInfo) -> str:
    return "[green]available[/green]" if row.available else "[red]unavailable[/red]"


def _info_table(console: Console, rows: Sequence[_registry.BackendInfo]) -> None:
    table = Table(title=f"ruda {__version__}: backends")
    for column in ("backend", "package", "status", "devices", "details"):
        table.add_column(column)
    for row in rows:
        package = f"{row.distribution} {row.version}" if row.distribution else "?"
        status = _status(row)
        if not row.available:
            fix = f"\n[yellow]fix:[/yellow] {escape(row.fix)}" if row.fix else ""
            status += f": {escape(row.reason or '')}{fix}"
        details = escape(", ".join(f"{k} {v}" for k, v in row.details.items()))
        table.add_row(row.name, escape(package), status, ", ".join(map(str, row.devices)), details)
    console.print(table)


def _info_blocks(console: Console, rows: Sequence[_registry.BackendInfo]) -> None:
    """One block per backend: its status line, then each of devices, details, reason and fix in full."""
    console.print(f"[bold]ruda {__version__}: backends[/bold]")
    for row in rows:
        package = f"{row.distribution} {row.version}" if row.distribution else "?"
        console.print(f"\n[bold]{row.name}[/bold]  {_status(row)}  ({escape(package)})")
        lines = {
            "devices": ", ".join(map(str, row.devices)),
            "details": ", ".join(f"{k} {v}" for k, v in row.details.items()),
            "reason": "" if row.available else row.reason or "",
            "fix": "" if row.available else row.fix or "",
        }
        for label, text in lines.items():
            if text:
                console.print(f"  {label}: {escape(text)}", soft_wrap=True)


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
    sub = parser.add_subparsers(dest="command")
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `ruda`: what it can do
        parser.print_help()
        return 0
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
