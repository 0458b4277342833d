"""Connect to a faulty server mode as one client session would, in a process of its own, and
print what happened as JSON (with this process's peak memory): the hostile wire tests run it so
a runaway buffer shows as a figure, not as a test runner that swelled.

    python wire_probe.py MODE [stdio|http] [CALL_TIMEOUT]
"""

import json
import resource
import sys
import time

from mcp_matrix.targets.kinds import Target
from mcp_matrix.wire.errors import WireError
from mcp_matrix.wire.session import Session, Timeouts


def peak_rss_mb() -> float:
    """This process's own peak (VmHWM): ru_maxrss survives exec, so it would report the pytest
    worker that forked us, not what the wire code used."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    mode = sys.argv[1]
    transport = sys.argv[2] if len(sys.argv) > 2 else "stdio"
    call_timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    target = Target.bundled(f"faulty --mode {mode}", transport=transport)
    wire = target.transport(connect_timeout=30)
    session = Session(wire, timeouts=Timeouts(initialize=30, list=30, call=call_timeout))
    out: dict = {"mode": mode, "steps": []}
    started = time.monotonic()
    try:
        wire.start()
        session.initialize()
        out["steps"].append("initialized")
        listing = session.list_tools()
        out["steps"].append(f"listed {len(listing.tools)}")
        response = session.call_tool("echo", {"text": "hi"})
        out["result"] = response.result
    except WireError as exc:
        out["error"] = {"kind": exc.kind, "message": exc.message}
    out["elapsed"] = time.monotonic() - started
    out["problems"] = [p["kind"] for p in session.problems.items]
    closing = time.monotonic()
    session.close()
    out["close_seconds"] = time.monotonic() - closing
    out["stderr"] = list(wire.stderr_tail())
    proc = getattr(wire, "_proc", None)  # a bundled HTTP server's process
    out["pid"] = getattr(wire, "pid", None) or getattr(proc, "pid", None)
    out["rss_mb"] = peak_rss_mb()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
