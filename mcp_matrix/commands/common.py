"""Options shared by subcommands: the target, timeouts, the client identity.

Registering the flags imports nothing heavy (every CLI process registers its command's
flags); what reads a snapshot or the profiles is imported by the function that does it.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_matrix.commands.outputs import json_stdout, protect
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.text import redact_value
from mcp_matrix.targets.inputs import parse_pairs
from mcp_matrix.targets.kinds import BUNDLED_TRANSPORTS, KINDS, Target, TargetOptions
from mcp_matrix.wire.session import Timeouts

if TYPE_CHECKING:
    from mcp_matrix.profiles.model import Profile
    from mcp_matrix.targets.snapshot import Snapshot


def add_target_options(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    g = parser.add_argument_group("target (one of)")
    if positional:
        g.add_argument(
            "source",
            nargs="?",
            metavar="SNAPSHOT",
            help="a snapshot JSON file instead of a live target",
        )
    for kind in KINDS.values():
        g.add_argument(kind.option, metavar=kind.metavar, help=kind.help)
    o = parser.add_argument_group("target options")
    o.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K:V",
        help="HTTP header (repeatable); values are masked in output",
    )
    o.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment for a stdio server (repeatable); values masked but settings (true, info, 8080)",
    )
    o.add_argument("--cwd", help="working directory for a stdio server")
    o.add_argument(
        "--inherit-env",
        action="store_true",
        help="pass this whole environment to a stdio server (default: a minimal set plus --env)",
    )
    o.add_argument(
        "--cold-start",
        action="store_true",
        help="start every server process as its command says, none forked from a warm template",
    )
    o.add_argument(
        "--server-transport",
        choices=BUNDLED_TRANSPORTS,
        default="stdio",
        help="how to run a bundled server (default stdio; sse: legacy HTTP+SSE)",
    )
    o.add_argument(
        "--name",
        default="",
        help="the server's name in the client config (used in prefixed tool names)",
    )
    t = parser.add_argument_group("timeouts (seconds)")
    d = Timeouts()
    t.add_argument(
        "--timeout-initialize", type=seconds, default=d.initialize, help=f"default {d.initialize}"
    )
    t.add_argument("--timeout-list", type=seconds, default=d.list, help=f"default {d.list}")
    t.add_argument("--timeout-call", type=seconds, default=d.call, help=f"default {d.call}")


CLIENT_HELP = "only these profiles (repeatable)"


def add_profile_options(
    parser: argparse.ArgumentParser, client_help: str | None = CLIENT_HELP
) -> None:
    """``--client NAME`` (repeatable; none when ``client_help`` is None) and ``--profiles-dir DIR``."""
    if client_help is not None:
        parser.add_argument(
            "--client", action="append", default=[], metavar="NAME", help=client_help
        )
    parser.add_argument(
        "--profiles-dir", action="append", default=[], metavar="DIR", help="extra profile YAML dirs"
    )


def profiles_from(args: argparse.Namespace) -> list[Profile]:
    """The runnable profiles ``--client`` names (all when none is), bundled and ``--profiles-dir``."""
    # the loader alone: mcp_matrix.api would import the gate, the policy and run.matrix
    # (~37 ms of every replay, diff and discover process) for nothing here
    from mcp_matrix.profiles import loader

    return loader.runnable_profiles(getattr(args, "client", None) or [], args.profiles_dir)


MAX_TIMEOUT = 86400.0


def seconds(text: str) -> float:
    """A timeout: a positive, finite number of seconds (``nan`` or ``inf`` would mean no bound)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected a positive, finite number of seconds, got {text!r}"
        )
    if value > MAX_TIMEOUT:  # the OS refuses waits this long (1e300 s overflowed a queue wait)
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_TIMEOUT:.0f} seconds (one day), got {text!r}"
        )
    return value


def timeouts_from(args: argparse.Namespace) -> Timeouts:
    return Timeouts(
        initialize=args.timeout_initialize, list=args.timeout_list, call=args.timeout_call
    )


def target_options(args: argparse.Namespace) -> TargetOptions:
    """What ``--header``, ``--env``, ``--cwd``, ``--inherit-env``, ``--name`` and
    ``--server-transport`` say (each kind of target takes those that apply to it)."""
    return TargetOptions(
        headers=parse_pairs(args.header, ":", "--header"),
        env=parse_pairs(args.env, "=", "--env"),
        cwd=args.cwd,
        inherit_env=args.inherit_env,
        name=args.name,
        server_transport=args.server_transport,
        cold_start=getattr(args, "cold_start", False),
    )


def given_kinds(args: argparse.Namespace) -> list[str]:
    """The target kinds whose option was given (``--stdio``, ``--http``, ...)."""
    return [k for k in KINDS if getattr(args, k, None) is not None]


def target_from(args: argparse.Namespace, default_server: str | None = None) -> Target | None:
    """The live target the options name, or None (e.g. a snapshot file was given)."""
    given = given_kinds(args)
    if len(given) > 1:
        named = ", ".join(kind.option for kind in KINDS.values())
        raise InputError(f"give only one of {named}", where="target")
    if given == ["server"] and not args.server.strip():
        raise InputError("--server needs a name (it was empty)", where="--server")
    options = target_options(args)
    target = None
    if given:  # --stdio "" is an error, never the demo server
        target = KINDS[given[0]].build(getattr(args, given[0]), options)
    elif default_server and not getattr(args, "source", None):
        target = KINDS["server"].build(default_server, options)
    if target is not None:  # one scrubber for every command's output
        protect(target.secrets(), json_stdout=json_stdout(args))
    return target


def snapshot_from(args: argparse.Namespace, default_server: str | None = None) -> Snapshot:
    """A snapshot: read from the positional file, or taken live from the target."""
    from mcp_matrix.targets.snapshot import Snapshot, load_snapshot, take_snapshot

    source = getattr(args, "source", None)
    if source:
        if given_kinds(args):
            raise InputError("give a snapshot file or a live target, not both", where=source)
        if not Path(source).exists():
            raise InputError("no such snapshot file", where=source)
        return load_snapshot(source)
    target = target_from(args, default_server)
    if target is None:
        kinds = [f"{k.option} {k.metavar}" for k in KINDS.values()]
        raise InputError(
            f"no target: give a SNAPSHOT file, {', '.join(kinds[:-1])} or {kinds[-1]}",
            where="target",
        )
    doc = take_snapshot(target, timeouts=timeouts_from(args))
    return Snapshot(redact_value(doc, target.secrets()), source="live")  # what a server echoed


__all__ = [
    "add_profile_options",
    "add_target_options",
    "profiles_from",
    "snapshot_from",
    "target_from",
    "target_options",
    "timeouts_from",
]
