"""``--verbose``'s cell lines: every cell that is not fine, printed in one print (a rich print
costs more than the short line it prints), the same text and colours as one print a line."""

from __future__ import annotations

import io

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


def test_one_print_writes_what_a_print_per_line_would(full_events):
    events = typed_events(full_events)
    lines = list(terminal._cell_lines(events))
    assert any(line.spans or line.style for line in lines)  # styles to keep
    for colour in (False, True):
        one, each = _console(colour), _console(colour)
        terminal.write_cells(events, one)
        for line in lines:
            each.print(line, soft_wrap=True)
        assert one.file.getvalue() == each.file.getvalue()
        assert ("\x1b[" in one.file.getvalue()) is colour


def test_no_cell_to_print_prints_nothing():
    quiet = _console(False)
    terminal.write_cells([], quiet)
    assert quiet.prints == 0 and quiet.file.getvalue() == ""
