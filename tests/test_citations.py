"""What the project cites, a reader can open: no file outside the repository, and every cited
docs page and section exists.

Evidence for a client rule is a URL, a calibration record (clients/calibrations/) or a page of
docs/clients/; the design is docs/design.md. Documents that only lived next to the repository
(a design card, a research catalogue, the records of past decisions, a machine's paths) are not citable.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO

# Spelled in pieces so that this file does not cite them itself.
MACHINE_PATH = re.compile(re.escape("/wo" + "rk/"))
FORBIDDEN = (
    re.compile(re.escape("DESIGN" + ".md")),
    re.compile(re.escape("client" + "-quirks"), re.IGNORECASE),
    MACHINE_PATH,
    re.compile(r"decision\s+" + "record", re.IGNORECASE),
    re.compile(re.escape("shared/" + "seeds")),
)
# A calibration record keeps what the client printed, its own stack traces included: recorded
# evidence, not a citation, so a machine path there is not counted.
RECORDED = "clients/calibrations/"
# docs/<page>.md#<section>, written from the repository's root; and a page's links to its
# neighbours inside docs/clients/ (](page.md#section)).
CITED = re.compile(r"\bdocs/((?:[\w-]+/)*[\w-]+\.md)(?:#([\w-]+))?")
LOCAL_LINK = re.compile(r"\]\(([\w-]+\.md)(?:#([\w-]+))?\)")


@cache
def tracked() -> tuple[Path, ...]:
    """The files git tracks, outside a virtual environment."""
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.decode()
    return tuple(
        REPO / n
        for n in filter(None, names.split("\0"))
        if not n.startswith((".venv/", "venv/")) and (REPO / n).is_file()
    )


def text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None  # a binary file cites nothing


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    s = heading.strip().lower().replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    body = text(page) or ""
    return frozenset(
        slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", body, re.MULTILINE)
    )


def test_the_repository_lists_its_files():
    assert any(p.name == "pyproject.toml" for p in tracked())


@pytest.mark.parametrize("pattern", FORBIDDEN, ids=lambda p: p.pattern)
def test_no_tracked_file_cites_a_document_outside_the_repository(pattern):
    hits = []
    for path in tracked():
        if pattern is MACHINE_PATH and str(path.relative_to(REPO)).startswith(RECORDED):
            continue
        body = text(path)
        if body is None:
            continue
        for number, line in enumerate(body.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not hits, "cites something a reader cannot open:\n" + "\n".join(hits[:40])


def citations() -> list[tuple[str, Path, str | None]]:
    """(where, page, section) for every docs page cited in a tracked file."""
    out = []
    for path in tracked():
        body = text(path)
        if body is None:
            continue
        where = str(path.relative_to(REPO))
        for m in CITED.finditer(body):
            out.append((where, REPO / "docs" / m.group(1), m.group(2)))
        if path.parent == REPO / "docs" / "clients" and path.suffix == ".md":
            for m in LOCAL_LINK.finditer(body):
                out.append((where, path.parent / m.group(1), m.group(2)))
    return out


def test_every_cited_docs_page_and_section_exists():
    found = citations()
    assert any("docs/clients/" in str(page) for _, page, _ in found), (
        "no docs/clients citation seen"
    )
    broken = []
    for where, page, section in found:
        if not page.is_file():
            broken.append(f"{where}: {page.relative_to(REPO)} does not exist")
        elif section and section not in anchors(page):
            broken.append(f"{where}: {page.relative_to(REPO)} has no section #{section}")
    assert not broken, "\n".join(sorted(set(broken)))


def test_a_report_shows_in_repo_evidence_whole_and_drops_bare_section_numbers():
    from mcp_matrix.report.cause_words import citable

    for source in (
        "docs/clients/anthropic.md#claude-code",
        "clients/calibrations/codex/0.171.0.json",
        "https://github.com/anthropics/claude-code/issues/95504",
    ):
        assert citable(source) == source
    url = "https://github.com/anthropics/claude-code/issues/4886"
    assert citable(f"notes.md §1, §2 [ISSUE]: {url}") == url
    assert citable(f"{url} (§1)") == url


# `mcp_matrix.module.name` in a page: a Python name a reader can import (a split that moved the
# name leaves the page wrong without it).
PYTHON_NAME = re.compile(r"`(mcp_matrix(?:\.[A-Za-z_]\w*)+)")


def _resolves(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_python_name_the_docs_give_can_be_imported():
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", *sorted((REPO / "docs").rglob("*.md"))]
    named = [
        (page.relative_to(REPO), m.group(1))
        for page in pages
        for m in PYTHON_NAME.finditer(text(page) or "")
        if "__main__" not in m.group(1)  # importing it runs the command line
    ]
    assert len(named) > 50
    assert [(str(page), name) for page, name in named if not _resolves(name)] == []
