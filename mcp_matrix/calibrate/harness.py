"""The harness engine: runs one client recipe against the fake model and a tapped server.

A recipe (``clients/harnesses/<profile>.yaml``, CALIBRATION-CONTRACT.md) is data: what to
install, which files to write under a temporary HOME, which env to add, which command to run.
This module installs the pinned version once into ``~/.cache/mcp-matrix/calibrate/`` (under a
lock: another engineer or CI job may install the same thing), then runs the client with a
minimal environment, a bounded time, and kills its whole process group afterwards (clients
start MCP servers and helpers that would otherwise outlive the run).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_matrix.calibrate import interpreters
from mcp_matrix.calibrate import tap as taps
from mcp_matrix.calibrate.fake_model import FakeModel, ScriptedCall
from mcp_matrix.core.errors import InputError, MeasureError
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.yamlfile import load_yaml_checked

PROVIDERS = ("anthropic", "openai-chat", "openai-responses", "gemini")
PLACEHOLDERS = (
    "model_url",
    "model_key",  # the run's API key: the fake model refuses every request without it
    "home",
    "workdir",
    "install",
    "python",
    "server_name",
    "server_command_json",
    "server_command",
    "server_args_json",
    "server_url",
    "prompt",
    "client",
    "repo",
    "tap_log",
)
DEFAULT_PROMPT = "Call each of the available probe tools once, with the arguments you are given."
INSTALL_TIMEOUT = 900.0
OUTPUT_CAP = 200_000
# The folder holding the ``mcp_matrix`` package: the checkout, or site-packages when installed.
REPO = Path(__file__).resolve().parents[2]

RECIPE_SCHEMA: dict = {
    "type": "object",
    "required": ["profile", "client", "kind", "install", "version", "provider", "run"],
    "additionalProperties": False,
    "properties": {
        "profile": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
        "client": {"type": "string"},
        "kind": {"enum": ["app", "library"]},
        "install": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "npm": {"type": "array", "items": {"type": "string"}},
                "pip": {"type": "array", "items": {"type": "string"}},
                # recipes of one library with different providers/options share one folder
                "cache": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]*$"},
                # the Python a pip client needs (PEP 440), when ours may not do: ">=3.13"
                "python": {"type": "string", "minLength": 1},
            },
        },
        "version": {"type": "string"},
        "provider": {"enum": list(PROVIDERS)},
        "binary": {"type": "string"},
        "version_command": {"type": "array", "items": {"type": "string"}},
        "files": {"type": "object", "additionalProperties": {"type": "string"}},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "run": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600},
        "transport": {"enum": ["stdio", "http"]},
        "server_name": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
        "prompt": {"type": "string"},
        "notes": {"type": "string"},
        # the client lists its tools without a model request (its driver prints them): discovery
        # cells only, no call is made (Amp's `amp tools list`/`show`)
        "list_only": {"type": "boolean"},
    },
}


@dataclass(frozen=True)
class Recipe:
    """A loaded harness recipe."""

    profile: str
    client: str
    kind: str
    version: str
    provider: str
    run: tuple[str, ...]
    npm: tuple[str, ...] = ()
    pip: tuple[str, ...] = ()
    binary: str = ""
    version_command: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 180.0
    transport: str = "stdio"
    server_name: str = "probe"
    prompt: str = DEFAULT_PROMPT
    notes: str = ""
    source: str = ""
    cache: str = ""  # install.cache: the shared folder name, else profile-version
    python: str = ""  # install.python: the interpreter versions the client supports
    list_only: bool = False  # tools read from the driver's list, calls not compared

    @property
    def name(self) -> str:
        """The recipe's name (its file name): what ``--client`` takes."""
        return Path(self.source).stem if self.source else self.profile

    @property
    def install_key(self) -> str:
        return self.cache or f"{self.name}-{self.version}"


def harness_dir() -> Path:
    from mcp_matrix.profiles.loader import bundled_profiles_dir

    return bundled_profiles_dir() / "harnesses"


def recipe_names() -> list[str]:
    return sorted(p.stem for p in harness_dir().glob("*.yaml"))


def load_recipe(name_or_path: str) -> Recipe:
    """A recipe by profile name (``clients/harnesses/NAME.yaml``) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = harness_dir() / f"{name_or_path}.yaml"
        if not path.exists():
            from mcp_matrix.core.errors import did_you_mean

            raise InputError(
                f"no harness recipe for client {name_or_path!r}{did_you_mean(name_or_path, recipe_names())}; "
                f"known: {', '.join(recipe_names())}",
                where="--client",
            )
    data = load_yaml_checked(path, RECIPE_SCHEMA, noun="harness recipe")
    install = data["install"]
    return Recipe(
        profile=data["profile"],
        client=data["client"],
        kind=data["kind"],
        version=str(data["version"]),
        provider=data["provider"],
        run=tuple(data["run"]),
        npm=tuple(install.get("npm", ())),
        pip=tuple(install.get("pip", ())),
        binary=data.get("binary", ""),
        version_command=tuple(data.get("version_command", ())),
        files=dict(data.get("files", {})),
        env=dict(data.get("env", {})),
        timeout=float(data.get("timeout", 180)),
        transport=data.get("transport", "stdio"),
        server_name=data.get("server_name", "probe"),
        prompt=data.get("prompt", DEFAULT_PROMPT),
        notes=data.get("notes", ""),
        source=str(path),
        cache=install.get("cache", ""),
        python=install.get("python", ""),
        list_only=bool(data.get("list_only", False)),
    )


# -- templates ------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace the known ``{placeholder}``s only, so JSON and TOML braces stay as they are."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


# -- installing -----------------------------------------------------------------------------


def cache_root() -> Path:
    return (
        Path(os.environ.get("MCP_MATRIX_CACHE", Path.home() / ".cache" / "mcp-matrix"))
        / "calibrate"
    )


class InstallError(MeasureError):
    """A pinned client could not be installed (registry unreachable, package missing)."""


def install(recipe: Recipe, root: Path | None = None, log=None) -> Path:
    """The cache folder holding ``recipe``'s pinned packages, installing them once under a lock."""
    root = root or cache_root()
    folder = root / recipe.install_key
    root.mkdir(parents=True, exist_ok=True)
    spec = json.dumps(_install_spec(recipe), sort_keys=True)
    marker = folder / ".installed"
    with open(root / f"{recipe.install_key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and _marker_ok(marker, recipe):
            return folder
        folder.mkdir(exist_ok=True)
        if recipe.npm:
            if not (folder / "package.json").exists():
                (folder / "package.json").write_text('{"private": true}\n')
            _install_step(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", *recipe.npm],
                folder,
                recipe,
                "npm",
            )
        if recipe.pip:
            venv = folder / "venv"
            if not (venv / "bin" / "python").exists():
                _install_step(
                    [interpreter_for(recipe), "-m", "venv", str(venv)], folder, recipe, "venv"
                )
            pip = [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
            ]
            _install_step(pip + [_expand_repo(p) for p in recipe.pip], folder, recipe, "pip")
        marker.write_text(spec + "\n")
    return folder


def _marker_ok(marker: Path, recipe: Recipe) -> bool:
    text = marker.read_text().strip()
    try:
        doc = json.loads(text)
    except ValueError:  # an older marker holding the package spec as text
        return all(p in text for p in recipe.npm + recipe.pip)
    return doc == _install_spec(recipe)


def _install_spec(recipe: Recipe) -> dict:
    spec: dict = {"npm": list(recipe.npm), "pip": list(recipe.pip)}
    if recipe.python:
        spec["python"] = recipe.python
    return spec


def interpreter_for(recipe: Recipe) -> str:
    """The newest interpreter satisfying ``install.python`` (ours when the recipe names none);
    none found is an install error, never a silent fall back to an older release."""
    if not recipe.python:
        return sys.executable
    try:
        exe, seen = interpreters.matching(recipe.python)
    except ValueError:
        raise InputError(
            f"install.python {recipe.python!r} is not a version specifier (e.g. '>=3.13')",
            where=recipe.source or recipe.name,
        ) from None
    if exe is None:
        raise InstallError(
            f"{recipe.client} {recipe.version} needs Python {recipe.python}; the interpreters found "
            f"(PATH, pyenv) are {', '.join(seen) or 'none'}: install one (e.g. `pyenv install 3.13`)"
        )
    return exe


def _expand_repo(item: str) -> str:
    return item.replace("{repo}", str(REPO))


def _install_step(argv: list[str], cwd: Path, recipe: Recipe, what: str) -> None:
    try:
        done = subprocess.run(
            argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
    except FileNotFoundError:
        raise InstallError(
            f"cannot install {recipe.client} {recipe.version}: {argv[0]!r} is not on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise InstallError(
            f"installing {recipe.client} {recipe.version} with {what} took over {INSTALL_TIMEOUT:.0f} s "
            "(is the package registry reachable?)"
        ) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
        raise InstallError(
            f"cannot install {recipe.client} {recipe.version} with {what} (exit {done.returncode}); "
            "is the package registry reachable? " + " | ".join(tail)
        )


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    """The server the client is pointed at: a stdio argv, or an HTTP URL."""

    argv: tuple[str, ...] = ()
    url: str = ""

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"


@dataclass
class HarnessRun:
    """Everything one run produced: the client's exit, what its model saw, what the server got."""

    recipe: Recipe
    client_version: str
    argv: list[str]
    returncode: int | None
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str
    requests: list[dict]
    tap: list[dict]
    workdir: str = ""
    refused: list[dict] = field(default_factory=list)  # model requests without the run's key


def minimal_env(home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a run gets: enough to start node/python, nothing of the user's."""
    node_dir = str(Path(shutil.which("node") or "/usr/bin/node").parent)
    path = os.pathsep.join(
        dict.fromkeys(
            [str(Path(sys.executable).parent), node_dir, "/usr/local/bin", "/usr/bin", "/bin"]
        )
    )
    env = {
        "PATH": path,
        "HOME": str(home),
        "USERPROFILE": str(home),
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "NO_UPDATE_NOTIFIER": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "DO_NOT_TRACK": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


def client_version(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
    """What ``CLIENT --version`` prints (first version-looking word), or ''."""
    try:
        done = subprocess.run(
            list(argv),
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"\d+\.\d+\.\d+[\w.+-]*", done.stdout + " " + done.stderr)
    return m.group(0) if m else ""


def kill_group(proc: subprocess.Popen) -> None:
    """End the process group ``proc`` leads: TERM, a bounded wait, then KILL."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; make sure no child of the group is left
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-OUTPUT_CAP:].decode("utf-8", "replace")


def run_recipe(
    recipe: Recipe,
    server: ServerSpec,
    calls: Sequence[ScriptedCall] = (),
    *,
    client_command: Sequence[str] | None = None,
    timeout: float | None = None,
    keep: bool = False,
    install_root: Path | None = None,
    tool_names: Sequence[str] = (),
    server_tools: Sequence[dict] = (),
    provider_limits: bool = False,
) -> HarnessRun:
    """Run ``recipe``'s client once: fake model up, tap in front of ``server``, client headless.

    ``client_command`` replaces the installed client (``--client-command``): nothing is
    installed and ``{client}`` (or the first word of ``run``) becomes that command.
    ``tool_names`` are the server's tools the fake model loads when the client defers them;
    ``server_tools`` the tools themselves, so the fake model finds a renamed one by its content;
    ``provider_limits``: the fake model refuses what the real provider refuses (``ProbeSet``).
    """
    folder = Path(install_root or cache_root()) if client_command else install(recipe, install_root)
    tmp = Path(tempfile.mkdtemp(prefix=f"mcp-matrix-{recipe.profile}-"))
    home, workdir = tmp / "home", tmp / "work"
    for d in (home, workdir, home / "tmp", home / ".config"):
        d.mkdir(parents=True, exist_ok=True)
    tap_log = tmp / "tap.jsonl"
    http_tap = None
    model = FakeModel(
        calls, tools=tool_names, server_tools=server_tools, provider_limits=provider_limits
    ).start()  # with a new key: only our client has it
    try:
        values = {
            "model_url": model.url,
            "model_key": model.key,
            "home": str(home),
            "workdir": str(workdir),
            "install": str(folder),
            "python": str(folder / "venv" / "bin" / "python"),
            "server_name": recipe.server_name,
            "prompt": recipe.prompt,
            "repo": str(REPO),
            "tap_log": str(tap_log),
        }
        if server.url:
            http_tap = taps.HttpTap(server.url, tap_log).start()
            values.update(
                server_url=http_tap.url,
                server_command_json="[]",
                server_command="",
                server_args_json="[]",
            )
        else:
            argv = taps.stdio_command(tap_log, list(server.argv))
            values.update(
                server_url="",
                server_command_json=json.dumps(argv),
                server_command=argv[0],
                server_args_json=json.dumps(argv[1:]),
            )
        binary = fill(recipe.binary, values) if recipe.binary else ""
        values["client"] = " ".join(client_command) if client_command else binary
        run_argv = [fill(a, values) for a in recipe.run]
        if client_command:  # the user's copy stands in for the installed binary (run[0])
            run_argv = list(client_command) + run_argv[1:]
        for key, text in recipe.files.items():
            path = Path(fill(key, values))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(fill(text, values))
        env = minimal_env(home, {k: fill(v, values) for k, v in recipe.env.items()})
        env.update(_driver_env(recipe, values, server))
        if recipe.kind == "library":
            env["PYTHONPATH"] = driver_pythonpath(tmp)
        version = recipe.version
        if client_command:
            vcmd = list(client_command) + [
                fill(a, values) for a in (recipe.version_command[1:] or ("--version",))
            ]
            version = client_version(vcmd, env, str(workdir)) or "unknown"
        out_path, err_path = tmp / "stdout", tmp / "stderr"
        limit = timeout or recipe.timeout
        start = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    run_argv,
                    cwd=workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                raise MeasureError(
                    f"cannot start {recipe.client}: {run_argv[0]!r}: {exc.strerror or exc}"
                ) from None
            timed_out = False
            try:
                proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                kill_group(proc)
        seconds = time.monotonic() - start
        return HarnessRun(
            recipe=recipe,
            client_version=version,
            argv=run_argv,
            returncode=None if timed_out else proc.returncode,
            timed_out=timed_out,
            seconds=round(seconds, 2),
            stdout=_tail(out_path),
            stderr=_tail(err_path),
            requests=model.requests_json(),
            tap=taps.read_log(tap_log),
            workdir=str(tmp),
            refused=model.refused_json(),
        )
    finally:
        model.close()
        if http_tap is not None:
            http_tap.close()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _driver_env(recipe: Recipe, values: Mapping[str, str], server: ServerSpec) -> dict[str, str]:
    """The env a library driver reads (CALIBRATION-CONTRACT.md), set for every recipe."""
    env = {
        "MCP_MATRIX_MODEL_URL": values["model_url"],
        "MCP_MATRIX_MODEL_KEY": values["model_key"],
        "MCP_MATRIX_PROVIDER": recipe.provider,
        "MCP_MATRIX_SERVER_NAME": values["server_name"],
        "MCP_MATRIX_SERVER_COMMAND": values["server_command_json"],
    }
    if server.url:
        env["MCP_MATRIX_SERVER_URL"] = values["server_url"]
    return env


def driver_pythonpath(tmp: Path) -> str:
    """A path that makes ``mcp_matrix`` importable in a client's venv and nothing else.

    In a checkout that is the checkout; installed, ``REPO`` is the site-packages folder, and
    putting it on the path would shadow the client's own pinned packages (mcp, pydantic) with
    mcp-matrix's, so a folder holding only a link to the ``mcp_matrix`` package is used instead.
    """
    if (REPO / "pyproject.toml").exists():
        return str(REPO)
    only = tmp / "pythonpath"
    only.mkdir(parents=True, exist_ok=True)
    if not (only / "mcp_matrix").exists():
        (only / "mcp_matrix").symlink_to(REPO / "mcp_matrix", target_is_directory=True)
    return str(only)


def start_http_server(argv: Sequence[str], timeout: float = 30.0) -> tuple[subprocess.Popen, str]:
    """Start a server that prints ``MCP_MATRIX_LISTENING <url>``; return it and its URL."""
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            break
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("MCP_MATRIX_LISTENING "):
            return proc, line.split(None, 1)[1].strip()
    kill_group(proc)
    raise MeasureError(
        f"the HTTP server {argv[0]!r} did not announce its URL within {timeout:.0f} s"
    )


def parse_driver_line(stdout: str) -> dict[str, JSON] | None:
    """The last JSON-object line a library driver printed (CALIBRATION-CONTRACT.md), or None."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict) and "ok" in doc:
                return doc
    return None
