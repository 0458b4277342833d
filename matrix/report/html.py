"""HTML writer: one offline, self-contained file (inline CSS and JS, no network).

A caniuse-style grid (tools x clients, a colour and symbol per worst verdict, a legend);
clicking a cell shows every verdict behind it (reason, mutations, behaviours, evidence with
links, advice); filters by client and by verdict; the run's metadata.

Untrusted text never reaches the page as markup: the metadata is rendered by jinja2 with
autoescape, and the report document is embedded as ``<script type="application/json">``
with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes, read with ``JSON.parse``
and put on the page only through ``textContent`` and attributes. The page's
Content-Security-Policy allows no network and only the page's own inline script and style
(by hash), so even a missed escape could not load or run anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from matrix.report.grid import RELEASE_FAILING
from matrix.report.json_report import build_report, describe_target
from matrix.report.triage import build_triage, cause_title, cause_where, citable, problems
from matrix.verdicts import MEANING, SEVERITY, SYMBOL

TEMPLATES = Path(__file__).parent / "templates"


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>``, ``&`` or line separators."""
    text = json.dumps(value, ensure_ascii=True, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=True,
    )


def write_html(
    events: list[dict], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(render_html(build_report(events, failing), build_triage(events)))


def render_html(doc: Mapping[str, Any], causes: list | None = None) -> str:
    template = _environment().get_template("report.html.j2")
    # The inline style and script are static blocks: render them alone to hash them for the CSP.
    style = "".join(template.blocks["style"](template.new_context({})))
    script = "".join(template.blocks["script"](template.new_context({})))
    data = {
        "report": doc,
        "verdicts": [{"verdict": v, "symbol": SYMBOL[v], "meaning": MEANING[v]} for v in SEVERITY],
    }
    server = doc.get("server") or {}
    runs = [
        dict(r, target_text=describe_target(r.get("target")), status=_status(r))
        for r in doc["runs"]
    ]
    return template.render(
        title=f"{server.get('name') or 'unknown server'} {server.get('version') or ''}".strip(),
        server=server,
        doc=doc,
        runs=runs,
        problems=[
            {
                "verdict": c.verdict,
                "title": cause_title(c),
                "where": cause_where(c),
                "fix": c.fix,
                "evidence": [citable(src) for _, src in c.evidence[:3]],
                "weakest": c.weakest,
            }
            for c in problems(causes or [])
        ],
        triaged=causes is not None,
        data=Markup(script_json(data)),
        csp=f"default-src 'none'; style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src data:; base-uri 'none'; form-action 'none'",
    )


def _status(run: Mapping[str, Any]) -> str:
    if not run.get("finished"):
        return "unfinished (no run-finished event)"
    if run.get("interrupted"):
        return "interrupted"
    if not run.get("measured", True):
        return "not measured"
    return "finished"


__all__ = ["render_html", "script_json", "write_html"]
