"""The ``tofusim`` command line.

Exit codes: 0 success, 2 bad input (one line naming the file, the key path
and what was expected), 1 internal error. ``--json`` prints one JSON object
on stdout and nothing else there; progress and logs go to stderr.
"""

from __future__ import annotations

import sys

import click

from .. import ConfigError, __version__
from .alloc import alloc
from .check import check
from .coll import coll
from .map import map_
from .replay import replay
from .report import report
from .reproduce import reproduce
from .rmatt import pattern, rmatt
from .run import run
from .sweep import sweep
from .topo import topo
from .trace import trace


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tofusim")
def cli() -> None:
    """tofusim: simulate supercomputer interconnects and their communication software."""


cli.add_command(topo)
cli.add_command(run)
cli.add_command(reproduce)
cli.add_command(coll)
cli.add_command(pattern)
cli.add_command(rmatt)
cli.add_command(map_)
cli.add_command(alloc)
cli.add_command(trace)
cli.add_command(replay)
cli.add_command(sweep)
cli.add_command(check)
cli.add_command(report)


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps errors to exit codes once, for every command."""
    try:
        cli.main(args=argv, prog_name="tofusim", standalone_mode=False)
    except ConfigError as e:
        click.echo(f"tofusim: error: {e}", err=True)
        return 2
    except click.exceptions.Abort:
        # Ctrl-C outside a simulation (click turns KeyboardInterrupt into
        # Abort); inside one the engine stops and the command exits 130 itself.
        click.echo("tofusim: interrupted", err=True)
        return 130
    except click.UsageError as e:
        hint = f" (see: tofusim {e.ctx.command_path.split(' ', 1)[1] + ' ' if e.ctx and ' ' in e.ctx.command_path else ''}--help)"
        click.echo(f"tofusim: error: {e.format_message()}{hint}", err=True)
        return 2
    except click.ClickException as e:
        click.echo(f"tofusim: error: {e.format_message()}", err=True)
        return 2
    except click.exceptions.Exit as e:
        return e.exit_code
    except SystemExit as e:
        return int(e.code or 0)
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the one place internal errors become exit 1
        click.echo(f"tofusim: internal error: {type(e).__name__}: {e}", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
