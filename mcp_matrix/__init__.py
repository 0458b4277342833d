"""mcp-matrix: how every real MCP client will treat your server's tools."""

import sys

__version__ = "0.1.0"

# Integers a server sends (an enum, a default, an id) must reach every reader and writer of this
# process exactly, as numbers: Python converts at most 4,300 digits between int and str by
# default, and a number it cannot convert would be refused or turned into a string. Raised once
# here, process-wide (the setting has no per-thread scope), and never lowered: a longer integer
# is refused by the wire as a protocol error naming this bound (docs/security.md). The bound
# keeps the quadratic cost of converting one such number to about 2 ms.
INT_DIGITS = 10_000
if 0 < sys.get_int_max_str_digits() < INT_DIGITS:
    sys.set_int_max_str_digits(INT_DIGITS)
