"""``--verbose``'s cell lines: every cell that is not fine, printed many lines a print (a rich
print costs more than the short line it prints), the same text and colours as one print a line."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from mcp_matrix.core.events import typed_events
from mcp_matrix.report import terminal


class _Counted(Console):
    """A console that counts its prints."""

    prints = 0

    def print(self, *objects, **kw) -> None:  # type: ignore[override]
        self.prints += 1
        super().print(*objects, **kw)


def _console(colour: bool) -> _Counted:
    return _Counted(
        file=io.StringIO(),
        width=120,
        force_terminal=colour,
        color_system="truecolor" if colour else None,
        highlight=False,
        emoji=False,
    )


def test_every_cell_line_goes_out_in_one_print(full_events):
    console = _console(False)
    terminal.write_cells(typed_events(full_events), console)
    assert console.prints == 1 and len(console.file.getvalue().splitlines()) > 5


@pytest.mark.parametrize("per_print", [terminal.CELLS_A_PRINT, 3])
def test_the_prints_write_what_a_print_per_line_would(full_events, monkeypatch, per_print):
    monkeypatch.setattr(terminal, "CELLS_A_PRINT", per_print)
    events = typed_events(full_events)
    lines = list(terminal._cell_lines(events))
    assert any(line.spans or line.style for line in lines)  # styles to keep
    for colour in (False, True):
        batched, each = _console(colour), _console(colour)
        terminal.write_cells(events, batched)
        for line in lines:
            each.print(line, soft_wrap=True)
        assert batched.prints == -(-len(lines) // per_print)
        assert batched.file.getvalue() == each.file.getvalue()
        assert ("\x1b[" in batched.file.getvalue()) is colour


def test_no_cell_to_print_prints_nothing():
    quiet = _console(False)
    terminal.write_cells([], quiet)
    assert quiet.prints == 0 and quiet.file.getvalue() == ""
