"""What every library driver shares: its environment, its one JSON line, its error capture.

Standard library only: drivers run inside a client's cached venv, where nothing of
mcp-matrix's own dependencies may be installed (CALIBRATION-CONTRACT.md, "Library drivers").
"""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import sys
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

# The fake model refuses a request without the run's key; the harness passes it (never a real key).
FAKE_KEY = os.environ.get("MCP_MATRIX_MODEL_KEY", "sk-mcp-matrix-fake-key")
PROMPT = "Call the tools you are given, as you are told, then stop."


@dataclass(frozen=True)
class DriverEnv:
    """The run's settings, from the ``MCP_MATRIX_*`` variables the recipe sets."""

    model_url: str
    provider: str
    server_name: str
    server_command: tuple[str, ...]
    server_url: str | None
    model: str
    options: dict = field(default_factory=dict)  # MCP_MATRIX_DRIVER_OPTIONS: a recipe's knobs

    @property
    def command(self) -> str:
        return self.server_command[0]

    @property
    def args(self) -> list[str]:
        return list(self.server_command[1:])


def read_env() -> DriverEnv:
    """The driver's settings; a missing variable is an input error (exit 2), not a traceback."""
    url = os.environ.get("MCP_MATRIX_MODEL_URL", "").rstrip("/")
    provider = os.environ.get("MCP_MATRIX_PROVIDER", "")
    raw_cmd = os.environ.get("MCP_MATRIX_SERVER_COMMAND", "")
    server_url = os.environ.get("MCP_MATRIX_SERVER_URL") or None
    if not url or not provider or not (raw_cmd or server_url):
        sys.stderr.write(
            "driver: MCP_MATRIX_MODEL_URL, MCP_MATRIX_PROVIDER and MCP_MATRIX_SERVER_COMMAND "
            "(or MCP_MATRIX_SERVER_URL) must be set\n"
        )
        raise SystemExit(2)
    command: tuple[str, ...] = ()
    if raw_cmd:
        try:
            parsed = json.loads(raw_cmd)
        except ValueError:
            parsed = None
        if not (isinstance(parsed, list) and parsed and all(isinstance(a, str) for a in parsed)):
            sys.stderr.write("driver: MCP_MATRIX_SERVER_COMMAND must be a JSON list of strings\n")
            raise SystemExit(2)
        command = tuple(parsed)
    return DriverEnv(
        model_url=url,
        provider=provider,
        server_name=os.environ.get("MCP_MATRIX_SERVER_NAME", "probe"),
        server_command=command,
        server_url=server_url,
        model=os.environ.get("MCP_MATRIX_MODEL", default_model(provider)),
        options=_options(),
    )


def _options() -> dict:
    raw = os.environ.get("MCP_MATRIX_DRIVER_OPTIONS", "")
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        value = None
    if not isinstance(value, dict):
        sys.stderr.write("driver: MCP_MATRIX_DRIVER_OPTIONS must be a JSON object\n")
        raise SystemExit(2)
    return value


def default_model(provider: str) -> str:
    """A real model id per provider (some libraries look names up in their own tables)."""
    return {
        "anthropic": "claude-sonnet-4-5",
        "gemini": "gemini-2.5-flash",
    }.get(provider, "gpt-4o")


@dataclass
class DriverOutcome:
    """What the driver prints: the contract's one JSON line."""

    ok: bool = False
    error: str | None = None
    error_type: str | None = None
    tools_seen: list[str] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return json.dumps(
            {
                "ok": self.ok,
                "error": self.error,
                "error_type": self.error_type,
                "tools_seen": self.tools_seen,
                "notes": self.notes,
            },
            default=str,
        )


def describe(exc: BaseException) -> tuple[str, str]:
    """(message, type) of the innermost interesting exception (task groups wrap them)."""
    group = getattr(builtins, "BaseExceptionGroup", ())  # Python 3.11+
    while group and isinstance(exc, group) and exc.exceptions:
        exc = exc.exceptions[0]
    return (str(exc) or repr(exc))[:4000], f"{type(exc).__module__}.{type(exc).__qualname__}"


def run(main: Callable[[DriverEnv, DriverOutcome], Coroutine[Any, Any, None]]) -> None:
    """Run ``main`` and print its outcome; a library exception is a finding (exit 0)."""
    env = read_env()
    out = DriverOutcome()
    try:
        asyncio.run(main(env, out))
        if out.error is None:
            out.ok = True
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the library's failure is what we came to observe
        out.ok = False
        out.error, out.error_type = describe(exc)
        out.notes.setdefault("traceback_tail", traceback.format_exc().splitlines()[-12:])
    sys.stdout.write(out.line() + "\n")
    sys.stdout.flush()


def installed_version(dist: str) -> str | None:
    """The installed version of ``dist`` (recorded in the notes, beside the recipe's pin)."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
