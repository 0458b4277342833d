"""Secrets are masked by value: every secret a user gives (in the ``--stdio`` command line, the
URL, a header, ``--env``, an inherited environment), in every form a transport derives from it
(URL-encoded, HTTP Basic), never appears in any output byte, even when a hostile server echoes
all of it back (tests/hostile/echo_server.py) into tool names, descriptions, results and stderr.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from mcp_matrix.core.credentials import inherited_secrets
from tests.hostile.cli_env import cli_with_env, listening
from tests.hostile.conftest import FORMATS, TIMEOUTS

ECHO_SERVER = Path(__file__).with_name("echo_server.py")

# The stdio command line: each secret in one of the shapes the red team found unmasked.
ENV_PREFIX = "envprefix-S3cr3t-1a"  # env API_KEY=... python server.py
KEY_FLAG = "keyflag-S3cr3t-2b"  # --key VALUE
P_FLAG = "pflag-S3cr3t-3c"  # -p VALUE
PG_PASSWORD = "pg-p@ss/w0rd-4d"  # postgresql://user:PASSWORD@host/db (URL-encoded on the line)
POSITIONAL = "sk-positional0Secret5e"  # a bare API key as an argument
ENV_VALUE = "env-S3cr3t-6f"  # --env SERVICE_TOKEN=...
INHERITED = "ghp_inheritedS3cr3t7g"  # GITHUB_TOKEN in mcp-matrix's environment, --inherit-env

# Streamable HTTP: the URL's userinfo and query, and a header.
URL_PASSWORD = "urlpass-S3cr3t-8h"
QUERY_PASSWORD = "querypw-S3cr3t-9i"
QUERY_SIG = "sig-S3cr3t-0j"
HEADER_VALUE = "hdr-S3cr3t-1k"
USERINFO_TOKEN = "userinfo-S3cr3t-2l"


def forms(secret: str, user: str | None = None) -> set[str]:
    """``secret`` as a server can echo it: raw, URL-encoded, and in a Basic header."""
    out = {secret, quote(secret, safe=""), quote_plus(secret)}
    if user is not None:
        out.add(base64.b64encode(f"{user}:{secret}".encode()).decode())
    return out


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return cli_with_env(*args, env=env or {})


def run_every_output(out: Path, target: list[str], env: dict | None = None) -> dict[str, str]:
    """``run`` with its results and every report, ``snapshot`` to a file and to stdout,
    ``discover --json`` and ``diff`` (terminal and Markdown): every output byte, by name."""
    texts: dict[str, str] = {}
    run_args = ["run", *target, "--results", str(out / "r.jsonl"), *TIMEOUTS]
    run_args += ["--client", "claude-code", "--client", "continue"]
    for fmt, name in FORMATS.items():
        run_args += ["--report", f"{fmt}:{out / name}"]
    commands = {
        "run": run_args,
        "snapshot": ["snapshot", *target, "-o", str(out / "snap.json")],
        "snapshot stdout": ["snapshot", *target],
        "discover": ["discover", *target, "--json", "--client", "claude-code"],
    }
    for name, args in commands.items():
        r = cli(*args, env=env)
        assert "Traceback" not in r.stderr, r.stderr[-3000:]
        texts[f"{name} stdout"], texts[f"{name} stderr"] = r.stdout, r.stderr
    assert (out / "snap.json").is_file(), texts["snapshot stderr"][-2000:]
    side = f"stdio:{target[1]}" if target[0] == "--stdio" else target[1]  # diff's live side
    options = target[2:]
    for name, extra in {
        "diff": [],
        "diff md": ["--format", "md", "-o", str(out / "diff.md")],
    }.items():
        r = cli("diff", str(out / "snap.json"), side, *options, *extra, env=env)
        assert "Traceback" not in r.stderr, r.stderr[-3000:]
        texts[f"{name} stdout"], texts[f"{name} stderr"] = r.stdout, r.stderr
    # the results stream (version 3: names, schemas and answers in entry lines) and its merge
    r = cli("merge", str(out / "r.jsonl"), str(out / "r.jsonl"), "-o", str(out / "merged.jsonl"))
    assert r.returncode == 0, r.stderr[-3000:]
    texts["merge stdout"], texts["merge stderr"] = r.stdout, r.stderr
    for path in out.iterdir():
        texts[path.name] = path.read_text(encoding="utf-8", errors="replace")
    assert set(FORMATS.values()) | {"r.jsonl", "merged.jsonl", "snap.json", "diff.md"} <= set(texts)
    lines = [json.loads(line) for line in texts["r.jsonl"].splitlines()]
    assert lines[0]["version"] == 3 and {"text", "node", "row", "cell"} <= {
        next(iter(e)) for e in lines
    }
    return texts


def assert_no_secret(texts: dict[str, str], secrets: dict[str, set[str]]) -> None:
    leaks = [
        (output, secret, form)
        for output, text in texts.items()
        for secret, all_forms in secrets.items()
        for form in all_forms
        if form in text
    ]
    assert not leaks, leaks[:10]


def test_stdio_command_line_env_and_inherited_secrets_are_in_no_output(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    command = " ".join(
        [
            f"env API_KEY={ENV_PREFIX}",
            sys.executable,
            str(ECHO_SERVER),
            "--key",
            KEY_FLAG,
            "-p",
            P_FLAG,
            f"postgresql://user:{quote(PG_PASSWORD, safe='')}@db.example/app",
            POSITIONAL,
        ]
    )
    target = ["--stdio", command, "--env", f"SERVICE_TOKEN={ENV_VALUE}", "--inherit-env"]
    texts = run_every_output(out, target, env={"GITHUB_TOKEN": INHERITED})
    assert_no_secret(
        texts,
        {
            "env prefix": forms(ENV_PREFIX),
            "--key": forms(KEY_FLAG),
            "-p": forms(P_FLAG),
            "URL password": forms(PG_PASSWORD, user="user"),
            "positional": forms(POSITIONAL),
            "--env": forms(ENV_VALUE),
            "inherited": forms(INHERITED),
        },
    )
    # The server's echo arrived (so there was something to mask), and the command stays readable.
    assert "echo" in texts["r.jsonl"] and "***" in texts["r.html"]
    assert (
        "--key" in texts["r.jsonl"] and "postgresql://user:***@db.example/app" in texts["r.jsonl"]
    )


@pytest.fixture
def echo_http():
    """tests/hostile/echo_server.py over Streamable HTTP; its URL."""
    with listening([sys.executable, str(ECHO_SERVER), "--http"]) as url:
        yield url


def test_http_userinfo_query_and_header_secrets_and_their_basic_form_are_in_no_output(
    tmp_path, echo_http
):
    host_path = echo_http.split("://", 1)[1]
    url = f"http://user:{URL_PASSWORD}@{host_path}?password={QUERY_PASSWORD}&sig={QUERY_SIG}&v=1"
    out = tmp_path / "out"
    out.mkdir()
    texts = run_every_output(out, ["--http", url, "--header", f"X-Api-Key: {HEADER_VALUE}"])
    assert_no_secret(
        texts,
        {
            "URL password": forms(URL_PASSWORD, user="user"),
            "?password=": forms(QUERY_PASSWORD),
            "?sig=": forms(QUERY_SIG),
            "header": forms(HEADER_VALUE),
        },
    )
    # The server saw them and echoed them (its Authorization header is the Basic form).
    assert "Authorization" in texts["r.jsonl"] and "v=1" in texts["r.jsonl"]


def test_a_userinfo_only_token_and_its_basic_form_are_in_no_output(tmp_path, echo_http):
    url = echo_http.replace("://", f"://{USERINFO_TOKEN}@")
    out = tmp_path / "out"
    out.mkdir()
    texts = run_every_output(out, ["--http", url])
    token_forms = forms(USERINFO_TOKEN) | {base64.b64encode(f"{USERINFO_TOKEN}:".encode()).decode()}
    assert_no_secret(texts, {"userinfo token": token_forms})
    assert "Authorization" in texts["r.jsonl"]


def test_env_settings_are_shown_and_env_credentials_masked_in_what_the_server_echoes(tmp_path):
    """``--env READ_ONLY=true`` or ``LOG_LEVEL=info`` are settings: masked as secrets, every
    ``readOnlyHint: true`` and every "information" a server wrote read ``***`` (H4, on real
    servers). A value under a credential's name, or any value that is not a setting, still is."""
    settings = {"LOG_LEVEL": "info", "READ_ONLY": "true", "NODE_ENV": "production", "PORT": "8080"}
    secrets = {"DB_PASSWORD": "swordfish", "MODE": "hunter2x", "SIM_PIN": "4321"}
    secrets |= {"VAULT_PASSCODE": "48213", "PIN2": "5555", "KEY_PASSPHRASE": "disabled"}
    env = [x for k, v in {**settings, **secrets}.items() for x in ("--env", f"{k}={v}")]
    r = cli("snapshot", "--stdio", f"{sys.executable} {ECHO_SERVER}", *env, *TIMEOUTS)
    assert r.returncode == 0, r.stderr[-2000:]
    description = json.loads(r.stdout)["tools"][0]["tool"]["description"]
    for key, value in settings.items():
        assert f"'{key}': '{value}'" in description, description
    for key, value in secrets.items():
        assert f"'{key}': '***'" in description and value not in r.stdout + r.stderr


def test_the_working_directory_is_no_secret_but_a_token_beside_it_is():
    """``PWD`` reads like a password's name; under ``--inherit-env`` its value, the directory,
    was masked in every path a report printed (R1's review)."""
    found = inherited_secrets({"PWD": "/home/me/project", "OLDPWD": "/tmp", "GH_TOKEN": INHERITED})
    assert found == [INHERITED]


def test_a_secret_holding_a_quote_is_masked_in_the_verbose_command_line(tmp_path):
    """``--verbose`` printed the command as ``redact(shlex.join(argv))``: shlex quoted a secret
    holding ``'`` into pieces (``'hunter2'"'"'xyzzy'``), so the whole value was never found."""
    secret = "hunter2'xyzzy-S3cr3t"
    command = f'{sys.executable} {ECHO_SERVER} --api-key "{secret}"'
    r = cli("run", "--stdio", command, "--client", "claude-code", "--verbose", "--quiet", *TIMEOUTS)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    shown = [line for line in (r.stdout + r.stderr).splitlines() if "server processes:" in line]
    assert shown and "--api-key '***'" in shown[0], shown
    assert "hunter2" not in shown[0] and "xyzzy" not in shown[0], shown


def test_versions_and_release_tags_under_names_that_are_not_credentials_mask_no_text():
    """``--pin latest`` masked every "latest" a server wrote, and an inherited ``OTP_VERSION``
    (Erlang/OTP's release, set in every erlang Docker image; ``otp`` is a credential word) every
    "26.2.5.6": a name ending in ``version`` holds no credential, and a version or release tag is
    none under the short words (pin, key, otp, sig). A PIN, a value under a long word (token,
    password, api key) and an inherited token stay masked, versions or not."""
    args = "--pin latest --secret-version latest --pin 482913 --api-key 2.4.17"
    env = {"NODE_VERSION": "20.11.1", "RELEASE_PIN": "v1.2.3", "PIN2": "73519"}
    env |= {"DB_PASSWORD": "9.8.71"}
    flags = [x for k, v in env.items() for x in ("--env", f"{k}={v}")]
    inherited = {"OTP_VERSION": "26.2.5.6", "NOTE": "the latest build", "GH_TOKEN": INHERITED}
    r = cli(
        "snapshot",
        "--stdio",
        f"{sys.executable} {ECHO_SERVER} {args}",
        *flags,
        "--inherit-env",
        *TIMEOUTS,
        env=inherited,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    description = json.loads(r.stdout)["tools"][0]["tool"]["description"]
    shown = (
        "argv=['--pin', 'latest', '--secret-version', 'latest', '--pin', '***', '--api-key', '***']"
    )
    assert shown in description, description[:300]
    for key, value in {"NODE_VERSION": "20.11.1", "RELEASE_PIN": "v1.2.3", **inherited}.items():
        if key != "GH_TOKEN":
            assert f"'{key}': '{value}'" in description, description
    for secret in ("482913", "2.4.17", "73519", "9.8.71", INHERITED):
        assert secret not in r.stdout + r.stderr
    assert "'PIN2': '***'" in description and "'GH_TOKEN': '***'" in description
