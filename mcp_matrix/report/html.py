"""HTML writer: one offline, self-contained file (inline CSS and JS, no network).

A caniuse-style grid (tools x clients, a colour and symbol per worst verdict, a legend);
clicking a cell shows every verdict behind it (reason, mutations, behaviours, evidence with
links, advice); filters by client, by verdict and by tool name; the run's metadata.

It stays usable at 5,000 tools x 20 clients: every text (findings, advice, reasons, evidence,
pointers) is stored once in ``texts`` and cells name it by number, as do the distinct findings,
evidence entries and cell details (``details``: a cell is ``[row, profile, detail]``; a 5,000-tool
report repeating the same few texts per cell was 228 MB, and is now a few MB). The page draws the
grid a page of rows at a time, folds the tools visible in every client into one line when there is
more than a page, and builds a cell's details only when it is clicked.

Untrusted text never reaches the page as markup: the metadata is rendered by jinja2 with
autoescape, and the data is embedded as ``<script type="application/json">`` (ASCII JSON
with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes), read with ``JSON.parse``
and put on the page only through ``textContent`` and attributes. The page's
Content-Security-Policy allows no network and only the page's own inline script and style
(by hash), so even a missed escape could not load or run anything. Every string of the report is
shown as ``mcp_matrix.core.text.safe`` shows it (``shown``): control characters and bidi overrides
(U+202E makes a name display reversed) become visible escapes; line breaks stay.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from mcp_matrix.core.events import Event
from mcp_matrix.core.json_record import JsonRecord
from mcp_matrix.core.text import safe
from mcp_matrix.core.verdicts import MEANING, SEVERITY, SYMBOL, css_rules
from mcp_matrix.report.cause_words import cause_title, cause_where, citable, problems
from mcp_matrix.report.document import GridRow, Report, ReportCell, ReportRun
from mcp_matrix.report.grid import ASSUMED_KEY, ASSUMED_MARK, RELEASE_FAILING, assumed_cells
from mcp_matrix.report.json_report import describe_target
from mcp_matrix.report.model import read_model
from mcp_matrix.report.triage import build_triage

TEMPLATES = Path(__file__).parent / "templates"
PAGE_ROWS = 100  # rows of the grid drawn at a time (the page's first choice of page size)

# A detail is one JSON array in this order; texts are numbers into ``texts`` (null: none).
DETAIL_COLUMNS = (
    "verdict",
    "kind",  # 0 discovery, 1 call
    "case",
    "reason",
    "blast_radius",
    "behaviours",  # [text]
    "evidence",  # [evidence entry]
    "weakest_evidence",
    "advice",
    "findings",  # [finding entry]
    "release_failing",  # 0 or 1
    "frequency",
    "stale",  # 0 or 1
    "mutations",  # JSON as recorded (calls only)
    "answer",  # JSON as recorded (calls only)
)
FINDING_COLUMNS = ("code", "message", "behaviour")
# What differs from tool to tool stays in the cell, so that details repeat across tools:
# [row, profile, detail, pointer, model name (where it is not the tool's), finding pointers...]
CELL_COLUMNS = ("row", "profile", "detail", "pointer", "model_name", "finding_pointers")
PROBLEM_COLUMNS = ("verdict", "title", "where", "fix", "evidence", "weakest")
PROBLEMS_SHOWN = 100  # root causes written into the page; the rest are drawn on request
EVIDENCE_COLUMNS = ("level", "source", "note", "behaviour")
_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str)


def _escape_script(text: str) -> str:
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def script_json(value: object) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>``, ``&`` or line separators."""
    return _escape_script(_ENCODER.encode(value))


class _ValueTable:
    """Distinct JSON values in first-seen order, each kept as its JSON text; ``ref`` is its number."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._numbers: dict[str, int] = {}

    def ref(self, value: object) -> int:
        text = _ENCODER.encode(value)
        number = self._numbers.get(text)
        if number is None:
            number = self._numbers[text] = len(self.texts)
            self.texts.append(text)
        return number

    def json(self) -> str:
        return "[" + ",".join(self.texts) + "]"


class _Packer:
    """The report document's cells as numbered references into tables of distinct values."""

    def __init__(self, tools: list[str], profiles: list[str]) -> None:
        self.texts: dict[str, int] = {}  # every distinct text, numbered in first-seen order
        self.findings = _ValueTable()
        self.evidence = _ValueTable()
        self.details = _ValueTable()
        self.rows = {t: i for i, t in enumerate(tools)}
        self.columns = {p: j for j, p in enumerate(profiles)}
        self.cells: list[str] = []

    def text(self, value: object) -> int | None:
        if value is None or value == "":
            return None
        return self.texts.setdefault(str(value), len(self.texts))

    def cell(self, c: ReportCell) -> None:
        row = self.rows.get(c.tool)
        column = self.columns.get(c.profile)
        if row is None or column is None:  # every cell is in the grid; a guard, not a path
            return
        text = self.text
        findings = [
            self.findings.ref([text(f.code), text(f.message), text(f.behaviour)])
            for f in c.findings
        ]
        evidence = [
            self.evidence.ref([text(e.level), text(e.source), text(e.note), text(e.behaviour)])
            for e in c.evidence
        ]
        model_name = c.model_name
        detail = [
            text(c.verdict),
            0 if c.kind == "discovery" else 1,
            text(c.case),
            text(c.reason),
            text(c.blast_radius),
            [text(b) for b in c.behaviours],
            evidence,
            text(c.weakest_evidence),
            text(c.advice),
            findings,
            1 if c.release_failing else 0,
            text(c.frequency),
            1 if c.stale else 0,
            [m.to_json() for m in c.mutations],
            c.answer,
        ]
        cell = [
            row,
            column,
            self.details.ref(detail),
            text(c.pointer),
            text(model_name) if model_name and model_name != c.tool else None,
            *(text(f.snapshot_pointer) for f in c.findings),
        ]
        while cell[-1] is None and len(cell) > 3:
            cell.pop()
        self.cells.append(_ENCODER.encode(cell))

    def grid(self, rows: Sequence[GridRow]) -> str:
        return "[" + ",".join(_ENCODER.encode([self.text(v) for v in r.cells]) for r in rows) + "]"


def page_data(doc: Report, later_problems: Sequence[Mapping[str, Any]] = ()) -> str:
    """The page's data as JSON text (see the module docstring; ``script_json`` rules apply)."""
    grid = doc.grid
    packer = _Packer([r.tool for r in grid.rows], list(grid.profiles))
    for c in doc.cells:
        packer.cell(c)
    text = packer.text
    worst = {(r.tool, p): v for r in grid.rows for p, v in zip(grid.profiles, r.cells)}
    marked = assumed_cells(doc.cells, lambda tool, profile: worst.get((tool, profile)))
    small = {
        "verdicts": [{"verdict": v, "symbol": SYMBOL[v], "meaning": MEANING[v]} for v in SEVERITY],
        "legend": [x.to_json() for x in doc.legend],
        "profiles": list(grid.profiles),
        "tools": [r.tool for r in grid.rows],
        "page_rows": PAGE_ROWS,
        # [row, column] of each cell whose verdict rests on assumed evidence (report.grid)
        "assumed": sorted([packer.rows[t], packer.columns[p]] for t, p in marked),
        "assumed_mark": ASSUMED_MARK,
        "assumed_key": ASSUMED_KEY,
        "cell_columns": CELL_COLUMNS,
        "detail_columns": DETAIL_COLUMNS,
        "finding_columns": FINDING_COLUMNS,
        "evidence_columns": EVIDENCE_COLUMNS,
        "problem_columns": PROBLEM_COLUMNS,
        "problems": [
            [
                text(p["verdict"]),
                text(p["title"]),
                text(p["where"]),
                text(p["fix"]),
                [text(e) for e in p["evidence"]],
                text(p["weakest"]),
            ]
            for p in later_problems
        ],
        "skipped": [[text(x.tool), text(x.case), text(x.reason)] for x in doc.skipped],
        "profile_errors": [[text(x.profile), text(x.error)] for x in doc.profile_errors],
    }
    grid_json = packer.grid(grid.rows)
    parts = [_ENCODER.encode(small)[:-1]]
    for key, table in (
        ("grid", grid_json),
        ("cells", "[" + ",".join(packer.cells) + "]"),
        ("details", packer.details.json()),
        ("findings", packer.findings.json()),
        ("evidence", packer.evidence.json()),
        ("texts", _ENCODER.encode(list(packer.texts))),
    ):
        parts.append(f',"{key}":{table}')
    return _escape_script("".join(parts) + "}")


def shown(value: _T) -> _T:
    """``value`` (the report, or any part of it) with every string as the page shows it:
    control and format characters (ESC, BEL, U+202E) as visible escapes, line breaks kept."""
    return _shown(value)  # type: ignore[no-any-return]


_T = TypeVar("_T")


def _shown(value: object, depth: int = 0) -> Any:
    if isinstance(value, str):
        if value.isprintable():
            return value
        return "\n".join(safe(line) for line in value.split("\n"))
    if isinstance(value, JsonRecord):  # a value of the typed report: the same one when unchanged
        names = [f.name for f in dataclasses.fields(value)]
        given = [getattr(value, n) for n in names]
        changed = [_shown(v, depth + 1) for v in given]
        if all(a is b for a, b in zip(given, changed)):
            return value
        return type(value)(**dict(zip(names, changed)))
    if depth > _DEEP and isinstance(value, (Mapping, tuple, list)):
        return _shown_json(value)  # no frame per level from here
    if isinstance(value, Mapping):
        return {_shown(k): _shown(v, depth + 1) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_shown(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [_shown(v, depth + 1) for v in value]
    return value


_DEEP = 100  # levels walked a frame each (the usual report: faster than the loop below)


def _shown_json(root: Mapping | tuple | list) -> Any:
    """A mapping, tuple or list rebuilt with each string shown, without a frame per level:
    a server's schema 300 levels deep overflowed the stack (a traceback, for ``report -f html``
    and ``run --report html:``)."""
    stack = [_open(root)]  # [items left, what is built, its kind, the key being built]
    while True:
        frame = stack[-1]
        items, built, kind = frame[0], frame[1], frame[2]
        for item in items:
            key, value = item if kind is dict else (None, item)
            if isinstance(value, (Mapping, tuple, list)):
                frame[3] = key
                stack.append(_open(value))
                break
            _put(built, kind, key, _shown(value))
        else:
            stack.pop()
            done = tuple(built) if kind is tuple else built
            if not stack:
                return done
            parent = stack[-1]
            _put(parent[1], parent[2], parent[3], done)


def _open(value: Mapping | tuple | list) -> list[Any]:
    if isinstance(value, Mapping):
        return [iter(value.items()), {}, dict, None]
    return [iter(value), [], tuple if isinstance(value, tuple) else list, None]


def _put(built: Any, kind: type, key: object, value: object) -> None:
    if kind is dict:
        built[_shown(key)] = value
    else:
        built.append(value)


def _finalize(value: object) -> object:
    """What the template prints: strings shown as ``shown`` shows them (markup is ours)."""
    return value if isinstance(value, Markup) or not isinstance(value, str) else shown(value)


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=True,
        finalize=_finalize,
    )


def write_html(
    events: list[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(render_html(read_model(events, failing), build_triage(events)))


def render_html(doc: Report, causes: list | None = None) -> str:
    template = _environment().get_template("report.html.j2")
    # The inline style and script are static blocks: render them alone to hash them for the CSP.
    # The style's verdict colours come from the verdict table (``VerdictRow.css``).
    verdict_css = Markup(css_rules())
    style = "".join(template.blocks["style"](template.new_context({"verdict_css": verdict_css})))
    script = "".join(template.blocks["script"](template.new_context({})))
    doc = shown(doc)  # the grid, the details and the metadata the page draws from it
    server = doc.server or {}
    runs = [
        {**r.to_json(), "target_text": describe_target(r.target), "status": _status(r)}
        for r in doc.runs
    ]
    listed = [
        {
            "verdict": c.verdict,
            "title": cause_title(c),
            "where": cause_where(c),
            "fix": c.fix,
            "evidence": [citable(src) for _, src in c.evidence[:3]],
            "weakest": c.weakest,
        }
        for c in problems(causes or [])
    ]
    listed = shown(listed)
    return template.render(
        title=f"{server.get('name') or 'unknown server'} {server.get('version') or ''}".strip(),
        server=server,
        doc=doc,
        runs=runs,
        problems=listed[:PROBLEMS_SHOWN],
        problems_total=len(listed),
        triaged=causes is not None,
        data=Markup(page_data(doc, listed[PROBLEMS_SHOWN:])),
        verdict_css=verdict_css,
        csp=f"default-src 'none'; style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src data:; base-uri 'none'; form-action 'none'",
    )


def _status(run: ReportRun) -> str:
    if not run.finished:
        return "unfinished (no run-finished event)"
    if run.interrupted:
        return "interrupted"
    if not run.measured:
        return "not measured"
    return "finished"


__all__ = [
    "DETAIL_COLUMNS",
    "PAGE_ROWS",
    "PROBLEMS_SHOWN",
    "page_data",
    "render_html",
    "script_json",
    "shown",
    "write_html",
]
