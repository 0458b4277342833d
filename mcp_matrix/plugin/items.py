"""The matrix as pytest items: one collector (``mcp-matrix``) and one item a cell, failing where
the release policy fails with the fix; their ids, markers and escaped texts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from mcp_matrix.plugin.plan import MatrixCollectError, MatrixPlan

if TYPE_CHECKING:  # pytest's own types for repr_failure, not exported by the pytest package
    from _pytest._code.code import TerminalRepr, TracebackStyle

ROOT = "mcp-matrix"  # the first part of every matrix item's node id, and the items' collector
POLICY = "policy"  # the name of the item that judges the run as a whole


def client_marker(profile: str) -> str:
    """The marker of one client's cells: ``mcp_client_`` + the profile name with ``_`` for ``-``."""
    return "mcp_client_" + "".join(ch if ch.isalnum() else "_" for ch in profile)


class MatrixCollector(pytest.Collector):
    """The matrix's items, under one node (``mcp-matrix``): so they count as collected, and their
    node ids can be given on the command line and rerun by ``--lf``."""

    def __init__(self, *, plan: MatrixPlan, asked: list[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.plan = plan
        self.asked = asked

    def collect(self) -> list[pytest.Item]:
        items: dict[str, MatrixItem] = {}
        for cell in [*self.plan.cells(), {"event": "run"}]:
            name = cell_id(cell)
            if name in items:  # a server that lists a name twice: the first stands for it
                continue
            items[name] = MatrixItem.from_parent(
                self, name=name, nodeid=f"{ROOT}::{name}", cell=cell, plan=self.plan
            )
        if not self.asked or ROOT in self.asked:
            return list(items.values())
        missing = [a for a in self.asked if a.split("::", 1)[1] not in items]
        if missing:
            from mcp_matrix.core.errors import did_you_mean

            raise MatrixCollectError(
                f"no such item: {safe_id(missing[0])}"
                f"{did_you_mean(missing[0], [f'{ROOT}::{n}' for n in items])}"
            )
        return [items[a.split("::", 1)[1]] for a in dict.fromkeys(self.asked)]

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, MatrixCollectError):
            return safe_text(f"mcp-matrix: {excinfo.value}")
        return super().repr_failure(excinfo)


class MatrixItem(pytest.Item):
    """One cell of the matrix: fails when the release policy fails it, with the fix."""

    def __init__(self, *, cell: dict, plan: MatrixPlan, **kw: Any) -> None:
        super().__init__(**kw)
        self.cell = cell
        self.plan = plan
        names = {"client": cell.get("profile"), "tool": cell.get("tool"), "case": cell.get("case")}
        self.add_marker(pytest.mark.mcp_matrix(**{k: v for k, v in names.items() if v is not None}))
        if cell.get("profile"):
            self.add_marker(getattr(pytest.mark, client_marker(cell["profile"])))

    def runtest(self) -> None:
        judged = self.plan.judged()
        if judged.error:
            raise MatrixCellFailure(judged.error)
        if self.cell["event"] == "run":
            if judged.run_level:
                raise MatrixCellFailure("\n".join(judged.run_level))
            return
        profile, tool, case = self.cell["profile"], self.cell["tool"], self.cell.get("case")
        key = (self.cell["event"], profile, tool, case)
        if key not in judged.cells:
            why = judged.skipped.get((profile, tool, case)) or judged.skipped.get(
                (None, tool, case)
            )
            if why:
                pytest.skip(safe_text(why))
            if profile in judged.unmeasured:
                raise MatrixCellFailure(
                    f"{profile} could not be measured: {judged.unmeasured[profile]}"
                )
            raise MatrixCellFailure(
                f"{self.name}: the run made no such cell (the server's tool list changed "
                "between collection and the run?)"
            )
        if key in judged.failing:
            raise MatrixCellFailure(judged.failing[key])

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, MatrixCellFailure):
            return safe_text(str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{ROOT}: {self.name}"


class MatrixCellFailure(Exception):
    """A cell the release policy fails."""


def cell_id(cell: dict) -> str:
    """An item's name: ``tool[client]`` (discovery), ``tool[client]::case`` (a call), ``policy``.

    The client in brackets selects exactly (``-k "[claude-code]"`` never matches
    ``claude-code-278``); names are masked already and shown escaped (``mcp_matrix.core.text.safe``)."""
    if cell.get("event") == "run":
        return POLICY
    base = f"{safe_id(cell['tool'])}[{cell['profile']}]"
    return f"{base}::{safe_id(cell['case'])}" if cell.get("event") == "call" else base


def safe_id(text: str) -> str:
    from mcp_matrix.core.text import safe

    return safe(text)


def safe_text(text: str) -> str:
    """A failure's or skip's text as a terminal shows but never obeys (a server's words in it)."""
    return "\n".join(safe_id(line) for line in text.split("\n"))
