"""The ``mcp-matrix`` command line: one module per subcommand in mcp_matrix.commands.

Exit codes (README.md, "Exit codes"): 0 nothing over the threshold; 1 findings over the threshold;
2 usage or input error; 3 the target could not be measured; 130 interrupted.
Machine output goes to stdout alone; progress and errors go to stderr.
"""

from __future__ import annotations

import gc
import sys

_HELD: list[int] = []  # signals received while the program was still starting
_ORIGINAL: dict[int, signals.Handler] = {}  # the handlers before they were held


def _program() -> bool:
    """This process is the ``mcp-matrix`` program (the console script or ``python -m mcp_matrix``),
    not a caller importing this module."""
    parts = (sys.argv[0] if sys.argv else "").replace("\\", "/").split("/")
    return parts[-1] == "mcp-matrix" or parts[-2:] == ["mcp_matrix", "__main__.py"]


def _hold_early_signals() -> None:
    """Ctrl-C or SIGTERM in the first second (imports, argument parsing: longer under load) was
    a traceback: until ``main`` handles them, they are held, then delivered where they stop the
    command cleanly (exit 130 or 143). ``_signal``: ``signal`` would import ``enum`` first."""
    import _signal

    if not _program():
        return
    for sig in (_signal.SIGINT, _signal.SIGTERM):
        try:
            _ORIGINAL[sig] = _signal.signal(sig, lambda signum, frame: _HELD.append(signum))
        except ValueError:  # not the main thread: signals are not ours to handle
            return


_hold_early_signals()  # before the imports below, which are most of the start-up time

import argparse  # after the signals are held
import importlib
import os
import signal
import threading
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

from mcp_matrix import __version__
from mcp_matrix.commands import outputs, signals
from mcp_matrix.core import outfiles
from mcp_matrix.core.errors import EXIT_INPUT, MatrixError
from mcp_matrix.core.text import safe
from mcp_matrix.targets.kinds import before_connecting  # imported with commands.outputs anyway

# Each command's one-line help, for the overview (``mcp-matrix --help``), which needs no command's
# flags and so imports no command module; each module's own ``register`` repeats its line
# (tests/test_startup_imports.py checks the two agree).
SUMMARIES = {
    "snapshot": "take a snapshot of a live server, or summarise a snapshot file",
    "discover": "which tools each client can see (offline on a snapshot, or live)",
    "run": "run the live matrix: every tool and case through every client profile",
    "report": "write results (JSON lines from `run --results`) as terminal, md, json, junit, "
    "sarif, html, a CI job summary or GitHub annotations",
    "check": "the release checklist: fail CI before a silent break ships",
    "merge": "join results files from several runs or shards into one",
    "diff": "what changes between two versions of a server, per client and per frozen caller",
    "fix": "write the corrected tool list and prove it in every client profile",
    "replay": "replay recorded calls (live, retry queue, transcripts) through every client profile",
    "profiles": "list client profiles, or show one (profiles show NAME)",
    "calibrate": "run a real client on the probe tool lists and print its drift from the bundled "
    "profile",
}
COMMANDS = tuple(SUMMARIES)


def say_error(message: str) -> None:
    """``mcp-matrix: error: MESSAGE`` on stderr, each line shown, never obeyed: a message names
    files and values from the command line and from input files (a file named with ESC or BEL
    in it cleared the screen or rang the bell), so control characters are escapes."""
    lines = "\n".join(safe(line) for line in message.split("\n"))
    sys.stderr.write(f"mcp-matrix: error: {lines}\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep our prefix
        self.print_usage(sys.stderr)
        say_error(message)
        raise SystemExit(EXIT_INPUT)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the commands ``argv`` can reach registered (every one when ``argv`` is None).

    A command's module imports what its flags need; the rest of the CLI is not imported for
    ``mcp-matrix run ...``, ``--version`` or ``--help`` (each subprocess would pay for it at
    start-up). A command not registered is its name and one-line help alone: what the overview
    prints, with the same choices."""
    parser = _Parser(
        prog="mcp-matrix", description="How every real MCP client will treat your server's tools."
    )
    parser.add_argument("--version", action="version", version=f"mcp-matrix {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    needed = COMMANDS if argv is None else commands_needed(argv)
    for name in COMMANDS:
        if name in needed:
            importlib.import_module(f"mcp_matrix.commands.{name.replace('-', '_')}").register(sub)
        else:
            sub.add_parser(name, help=SUMMARIES[name])  # argv never parses its flags
    return parser


def commands_needed(argv: Sequence[str]) -> tuple[str, ...]:
    """The commands whose flags parsing ``argv`` may read or print: the one it names (also after
    ``-h`` or an option argparse will refuse); none for ``--version``, ``--help`` or no command:
    the overview prints each command's name and one-line help, never its flags."""
    for token in argv:
        if token.startswith("-"):
            continue  # --version, -h, or an option argparse will refuse: none names a command
        return (token,) if token in COMMANDS else ()
    return ()


def main(argv: Sequence[str] | None = None) -> int:
    own_process = argv is None  # this process's command line: the process ends after main
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    except SystemExit:  # --help, --version, a usage error: a signal held meanwhile is moot
        _release_held({})
        raise
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        _release_held({})
        return EXIT_INPUT
    _CONNECTED.clear()
    previous = signals.install()
    previous = _release_held(previous)
    for stream in (sys.stdout, sys.stderr):
        outputs.escape_surrogates(stream)
    try:
        _deliver_held(args)
        outputs.check_output_paths(args)  # before any server starts, not after the whole run
        outfiles.refuse_overwriting(outputs.named_paths(args), input_paths(args))
        code = int(args.handler(args) or 0)
        held = _held_not_delivered()
        if held is not None:
            sys.stderr.write("mcp-matrix: interrupted\n")
            return held
        return _after_write_failures(code)
    except MatrixError as exc:
        say_error(str(exc))
        return exc.exit_code
    except OSError as exc:  # our own output could not be written (a full disk, /dev/full)
        if isinstance(exc, BrokenPipeError):
            return 0
        where = f"{exc.filename}: " if exc.filename else ""
        say_error(f"{where}cannot write: {exc.strerror or exc}")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("mcp-matrix: interrupted\n")
        return signals.interrupted_exit_code()
    finally:
        _HELD.clear()  # this command's; a caller may run main again in this process
        before_connecting(None)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # a scrubbing stream holds a line without its newline
            except (OSError, ValueError):
                pass
        signals.restore(previous)
        if own_process:
            # What the command built is set apart from the collector: the interpreter's last
            # collections at exit walked all of it (0.8-1.0 s of CPU after a 10,000-call replay
            # through every profile, benchmarks/README.md). A caller passing argv collects as before.
            gc.freeze()


_CONNECTED: list[bool] = []  # set once the command has made its first server connection


def _connects(args: argparse.Namespace) -> bool:
    """The command will connect to a server (a live target of any kind, or ``run``'s bundled
    default)."""
    from mcp_matrix.targets.kinds import KINDS  # loaded already by every command with a target

    return args.command == "run" or any(getattr(args, k, None) for k in KINDS)


def _deliver_held(args: argparse.Namespace) -> None:
    """A Ctrl-C (or SIGTERM) before a command connects to its server stops it as the server is
    connected, inside the run's own interrupt handling (``run`` then writes its results, ending
    with ``run-finished``, ``interrupted: true``), not in the middle of loading profiles and
    cases; a second one stops it at once. A command without a server stops at once."""
    if not _connects(args):
        for sig in _HELD[:1]:
            signal.raise_signal(sig)
        return
    if threading.current_thread() is not threading.main_thread():
        return  # a caller running main in a thread: signals reach only the main thread (signals.install)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _until_connected(signal.getsignal(sig)))
    before_connecting(_on_connecting)


def _until_connected(handler: signals.Handler) -> signals.Handler:
    def hold(signum: int, frame: FrameType | None) -> None:
        if not _CONNECTED and not _HELD:
            _HELD.append(signum)  # delivered as the server is connected
        elif callable(handler):
            handler(signum, frame)

    return hold


def _on_connecting() -> None:
    _CONNECTED.append(True)
    for sig in _HELD[:1]:
        # To the process, not with raise(): the first connection may be made on a probe's thread,
        # and a signal raised there reaches the main thread late (mcp_matrix.wire.waits).
        os.kill(os.getpid(), sig)


def _held_not_delivered() -> int | None:
    """The exit code of a signal held for a connection that never came (the command ended or
    failed first), or None."""
    return 128 + _HELD[0] if _HELD and not _CONNECTED else None


def _release_held(previous: dict[int, signals.Handler]) -> dict[int, signals.Handler]:
    """The handlers to restore when ``main`` ends: those from before the hold, not the hold's."""
    if not _ORIGINAL:
        return previous
    restore = {**previous, **_ORIGINAL}
    if not previous:  # no handler of ours replaced the hold: put the originals back now
        signals.restore(restore)
    _ORIGINAL.clear()
    return restore


def input_paths(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Every argument of the command that may name a file it reads: what no output may overwrite
    (``refuse_overwriting`` keeps those that are files)."""
    outs = {"report", "output"} | ({"results"} if args.command in outputs.WRITES_RESULTS else set())
    found = []
    for key, value in vars(args).items():
        if key in outs or key == "handler":
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item:
                found.append((item, item))
    return found


def _after_write_failures(code: int) -> int:
    """Exit 2 naming each output that could not be written (a full disk), unless the command was
    interrupted: a write failure is ours, never a finding (exit 1)."""
    failures = outfiles.write_failures()
    for failure in failures:
        say_error(f"{failure.where}: cannot write: {failure.reason}")
    return code if not failures or code >= 128 else EXIT_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
