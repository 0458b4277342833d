"""Report and discover output at scale: ``report -f json`` and ``discover`` (terminal, --json).

A synthetic server of N tools (``benchmarks/synthetic.py``) through the first C profiles by
name. The results file is what ``mcp-matrix run`` writes for discovery (run-started, the
snapshot, a discovery cell per tool and profile, run-finished), made in-process through the run's
own writer (``mcp_matrix.run.results.ResultsWriter``, ``benchmarks/html_report.py``). Every command runs as
a whole process, as users run it; each A runs beside its B in turn (pairs), and the ratios are
taken pair by pair: CPU is the steady figure on a loaded machine.

    python benchmarks/report_json.py [--tools 5000] [--clients 36] [--pairs 2]
    python benchmarks/report_json.py --only report --results r.jsonl   # an existing results file
    python benchmarks/report_json.py --per-line   # typed read and write of one discovery line
    python benchmarks/report_json.py --smoke     # tiny sizes: the suite runs this so it cannot rot

Pairs (A against its baseline B, measured in the same run):

- ``mcp-matrix report r.jsonl -f json -o out.json`` against reading the same results file and
  writing it back (``json.loads`` of every line, ``json.dumps`` of the list: the C encoder);
- ``mcp-matrix discover s.json`` (the terminal) against ``mcp-matrix discover s.json --json``.

Targets (issue 25): the JSON report < 30 MB and < 500 MiB peak; the terminal's CPU <= --json's;
--json < 20 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from whole import MB, MIB, READ_WRITE_BACK, Measured, measure, median_ratio, result

# The baseline of the report: read every line of the results file and write it back as JSON.
RAW = READ_WRITE_BACK


def write_inputs(tools: int, clients: int, where: Path) -> tuple[Path, Path]:
    from html_report import results_events
    from synthetic import snapshot_doc, tool_list

    from mcp_matrix.run.results import ResultsWriter

    results, snapshot = where / "r.jsonl", where / "s.json"
    with results.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for event in results_events(tools, clients):
            writer(event)
    snapshot.write_text(json.dumps(snapshot_doc(tool_list(tools))), encoding="utf-8")
    return results, snapshot


def _evidence(note: str) -> dict:
    return {"level": "code", "source": "cline/cline ClineToolSet.ts@791d238996^", "note": note}


# A discovery line with 2 findings (each with its evidence), as the results file holds it.
LINE = {
    "event": "discovery",
    "profile": "cline",
    "tool": "since_account_61",
    "index": 61,
    "verdict": "degraded",
    "model_name": "ce5c890mcp0since_account_61",
    "model_schema": {"type": "object", "properties": {"a": {"type": "string"}}},
    "findings": [
        {
            "code": "dangling-ref",
            "message": f"$ref '#/$defs/item' at /properties/{name}/$ref pointed into a root key",
            "pointer": f"/inputSchema/properties/{name}/$ref",
            "lost": True,
            "materiality": "constraint",
            "blast_radius": "tool",
            "behaviour": "cline-native-flatten",
            "evidence": [_evidence("Params from inputSchema.properties only: root keys lost")],
        }
        for name in ("owner", "tags")
    ],
    "weakest_evidence": "code",
}


def per_line(lines: int = 3000, repeats: int = 9) -> None:
    """Typed read (``build_event`` of the parsed line: the schema check aside, the same for
    any reader) and write (``to_json``, then the C encoder) of one line, in microseconds of
    process CPU (best of ``repeats`` over ``lines``): the CPU figure holds on a loaded machine."""
    import time

    from mcp_matrix.core.events import build_event

    text = json.dumps(LINE, ensure_ascii=False)
    parsed = [json.loads(text) for _ in range(lines)]
    typed = [build_event(d) for d in parsed]
    assert json.dumps(typed[0].to_json(), ensure_ascii=False) == text  # the same bytes back

    def best(work: object) -> float:
        spent = []
        for _ in range(repeats):
            started = time.process_time()
            work()  # type: ignore[operator]
            spent.append(time.process_time() - started)
        return min(spent) / lines * 1e6

    read = best(lambda: [build_event(d) for d in parsed])
    write = best(lambda: [e.to_json() for e in typed])
    dumped = best(lambda: [json.dumps(e.to_json(), ensure_ascii=False) for e in typed])
    print(
        f"a discovery line with 2 findings: read (build_event) {read:.1f} us, "
        f"write (to_json) {write:.1f} us, to_json + json.dumps {dumped:.1f} us"
    )


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_matrix", *args]


def profile_args(clients: int) -> list[str]:
    from mcp_matrix.profiles.loader import load_profiles

    names = sorted(p.name for p in load_profiles().values() if not p.abstract)[:clients]
    return [a for n in names for a in ("--client", n)]


def report_pair(results: Path, where: Path) -> tuple[Measured, Measured]:
    out, raw = where / "out.json", where / "raw.json"
    a = measure(cli("report", str(results), "-f", "json", "-o", str(out)))
    b = measure([sys.executable, "-c", RAW, str(results), str(raw)])
    sizes(out)
    return (
        Measured(a.cpu, a.peak, out.stat().st_size, a.wall),
        Measured(b.cpu, b.peak, raw.stat().st_size, b.wall),
    )


def sizes(path: Path) -> None:
    """Where the report's bytes go: each top-level key's share (its value as written, with the
    line breaks between a table's entries), largest first."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    size = {
        k: len(dump(v).encode()) + (len(v) if isinstance(v, list) else 0) for k, v in doc.items()
    }
    big = sorted(((n, k) for k, n in size.items()), reverse=True)[:8]
    shares = ", ".join(f"{k} {n / MB:.2f}" for n, k in big)
    print(f"  version {doc.get('version')}, MB by key: {shares}")


def discover_pair(snapshot: Path, clients: list[str], where: Path) -> tuple[Measured, Measured]:
    text, doc = where / "discover.txt", where / "discover.json"
    return (
        measure(cli("discover", str(snapshot), *clients), text),
        measure(cli("discover", str(snapshot), *clients, "--json"), doc),
    )


def summary(name: str, pairs: list[tuple[Measured, Measured]], a: str, b: str) -> None:
    ratio = statistics.median(x.cpu / y.cpu for x, y in pairs)
    last_a, last_b = pairs[-1]
    print(f"{name}: {len(pairs)} pair(s)")
    print(
        f"  A {a}: cpu {statistics.median(x.cpu for x, _ in pairs):.2f} s, "
        f"peak {last_a.peak / MIB:.0f} MiB, wrote {last_a.out / MB:.1f} MB"
    )
    print(
        f"  B {b}: cpu {statistics.median(y.cpu for _, y in pairs):.2f} s, "
        f"peak {last_b.peak / MIB:.0f} MiB, wrote {last_b.out / MB:.1f} MB"
    )
    print(f"  A/B cpu: {ratio:.2f}x (pairs: {', '.join(f'{x.cpu / y.cpu:.2f}' for x, y in pairs)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=36)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--only", choices=("report", "discover"), default=None)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one pair")
    ap.add_argument("--per-line", action="store_true", help="typed read/write of one line")
    ap.add_argument(
        "--results",
        type=Path,
        help="report this results file (the same input for two trees: --only report)",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args.tools, args.clients, args.pairs = 30, 3, 1
    load = os.getloadavg()
    if args.per_line or args.smoke:  # the smoke run reads and writes a few lines too
        print(f"load average {load[0]:.1f} {load[1]:.1f}")
        per_line(*((30, 1) if args.smoke else (3000, 9)))
        if args.per_line:
            return 0
    print(f"{args.tools} tools x {args.clients} profiles; load average {load[0]:.1f} {load[1]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        if args.results is not None and args.only == "report":
            results = args.results
            print(f"results file {results.stat().st_size / MB:.1f} MB (given)")
        else:
            results, snapshot = write_inputs(args.tools, args.clients, where)
            print(f"results file {results.stat().st_size / MB:.1f} MB (ResultsWriter, in-process)")
        if args.only in (None, "report"):
            pairs = [report_pair(results, where) for _ in range(args.pairs)]
            summary("report -f json", pairs, "mcp-matrix report -f json -o", "read + json.dumps")
            out = pairs[-1][0]
            small = out.out < 30 * MB and out.peak < 500 * MIB
            print(
                f"  targets: < 30 MB: {'yes' if out.out < 30 * MB else 'NO'}; "
                f"< 500 MiB peak: {'yes' if out.peak < 500 * MIB else 'NO'}"
            )
            result(
                "report_json",
                f"`mcp-matrix report r.jsonl -f json -o out.json`, {args.tools:,} tools x "
                f"{args.clients} profiles",
                "reading every line of the results file and writing it back (C encoder)",
                f"{out.out / MB:.1f} MB, {out.peak / MIB:.0f} MiB peak, "
                f"{statistics.median(x.cpu for x, _ in pairs):.1f} s cpu",
                f"{statistics.median(y.cpu for _, y in pairs):.1f} s cpu",
                median_ratio(pairs),
                "< 30 MB, < 500 MiB peak",
                small,
            )
        if args.only in (None, "discover"):
            clients = profile_args(args.clients)
            pairs = [discover_pair(snapshot, clients, where) for _ in range(args.pairs)]
            summary("discover", pairs, "terminal", "--json")
            doc = pairs[-1][1]
            ratio = statistics.median(x.cpu / y.cpu for x, y in pairs)
            print(
                f"  targets: terminal <= --json cpu: {'yes' if ratio <= 1 else 'NO'}; "
                f"--json < 20 MB: {'yes' if doc.out < 20 * MB else 'NO'}"
            )
            what = f"{args.tools:,} tools x {args.clients} profiles"
            result(
                "discover terminal",
                f"`mcp-matrix discover s.json` (the terminal), {what}",
                "`mcp-matrix discover s.json --json`",
                f"{statistics.median(x.cpu for x, _ in pairs):.1f} s cpu",
                f"{statistics.median(y.cpu for _, y in pairs):.1f} s cpu",
                median_ratio(pairs),
                "<= 1x",
                ratio <= 1,
            )
            result(
                "discover json",
                f"`mcp-matrix discover s.json --json`, {what}: the document's size",
                "",
                f"{doc.out / MB:.1f} MB",
                "",
                "",
                "< 20 MB",
                doc.out < 20 * MB,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
