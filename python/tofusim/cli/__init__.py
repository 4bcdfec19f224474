"""The ``tofusim`` command line.

Exit codes, decided in ``main`` alone: 0 success; 2 bad input (one line
naming the file, the key path and what was expected); 130 interrupted
(Ctrl-C; what was measured is printed, marked incomplete); 1 a failure the
simulation found (a deadlock, a broken invariant, a wrong collective
result: :class:`~tofusim.cli.outcome.Failed`) or an internal error.
``--json`` prints one JSON object on stdout and nothing else there;
progress and logs go to stderr.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import ConfigError, __version__

# Each command's module, imported only when that command runs (or when
# ``--help`` lists them all): the modules pull in rich, concurrent.futures,
# the trace and report code, and importing them all cost ~80 ms of every
# command's start, more than a short flow-model run itself.
_COMMANDS: dict[str, tuple[str, str]] = {
    "alloc": ("alloc", "alloc"),
    "check": ("check", "check"),
    "coll": ("coll", "coll"),
    "explain": ("explain", "explain"),
    "jobs": ("jobs", "jobs"),
    "map": ("map", "map_"),
    "mpi-bench": ("mpi_bench", "mpi_bench"),
    "pattern": ("rmatt", "pattern"),
    "replay": ("replay", "replay"),
    "report": ("report", "report"),
    "reproduce": ("reproduce", "reproduce"),
    "rmatt": ("rmatt", "rmatt"),
    "run": ("run", "run"),
    "sweep": ("sweep", "sweep"),
    "topo": ("topo", "topo"),
    "trace": ("trace", "trace"),
}


class _LazyCommands(click.Group):
    """A group whose subcommands are imported by name on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = _COMMANDS.get(cmd_name)
        if where is None:
            return None
        module = importlib.import_module(f".{where[0]}", __name__)
        return getattr(module, where[1])


@click.group(cls=_LazyCommands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tofusim")
def cli() -> None:
    """tofusim: simulate supercomputer interconnects and their communication software."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps errors to exit codes once, for every command."""
    from ..origin import WHERE

    # Refusals name the command line while the command runs, and Python's
    # <arguments> again after it (main may be called in-process).
    token = WHERE.set("<command line>")
    try:
        return _main(argv)
    finally:
        WHERE.reset(token)


def _main(argv: list[str] | None) -> int:
    from .outcome import Failed, Interrupted

    try:
        cli.main(args=argv, prog_name="tofusim", standalone_mode=False)
    except ConfigError as e:
        click.echo(f"tofusim: error: {e}", err=True)
        return 2
    except (Interrupted, Failed) as e:
        click.echo(f"tofusim: {e}", err=True)
        return e.exit_code
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
    except OSError as e:
        # A file or directory the command could not read or write (an --out
        # under /proc, a full disk): the user's input, not a defect.
        where = f"{e.filename}: " if e.filename else ""
        click.echo(f"tofusim: error: {where}{e.strerror or e}", err=True)
        return 2
    except Exception as e:  # noqa: BLE001 - the one place internal errors become exit 1
        click.echo(f"tofusim: internal error: {type(e).__name__}: {e}", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
