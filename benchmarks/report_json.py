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

And the results file itself (the stream ``run --results`` writes): its size against the same
events written by the version-2 writer (each distinct schema once, every cell whole).

Targets (issue 25): the results stream and the JSON report each < 30 MB, the report < 500 MiB
peak; the terminal's CPU <= --json's; --json < 20 MB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from whole import MB, MIB, READ_WRITE_BACK, Measured, measure, median_ratio, result

# The baseline of the report: read every line of the results file and write it back as JSON.
RAW = READ_WRITE_BACK


def write_inputs(tools: int, clients: int, where: Path) -> tuple[Path, Path]:
    results, snapshot, _ = write_stream(tools, clients, where, baseline=False)
    return results, snapshot


def write_stream_apart(tools: int, clients: int, where: Path) -> tuple[Path, Path, list[Measured]]:
    """``write_stream`` in a child process, so this one stays small: a command measured after
    it would otherwise report this process's peak RSS as its own (Linux carries the high-water
    mark across fork and exec: 681 MiB for a report that peaks at 288)."""
    done = subprocess.run(
        [sys.executable, __file__, "--tools", str(tools), "--clients", str(clients)]
        + ["--write-stream", str(where)],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = [Measured(**m) for m in json.loads(done.stdout.splitlines()[-1])]
    return where / "r.jsonl", where / "s.json", measured


def write_stream(
    tools: int, clients: int, where: Path, baseline: bool = True
) -> tuple[Path, Path, list[Measured]]:
    """The results file (the current version, through the run's own writer) and the snapshot;
    with ``baseline``, the same events through the version-2 writer too (each distinct schema
    once, every cell whole), measured and deleted: each writer's CPU (in-process, the events
    made once beforehand) and the file's size."""
    import time

    from html_report import results_events
    from synthetic import snapshot_doc, tool_list

    from mcp_matrix.run.results import VERSION, ResultsWriter

    events = results_events(tools, clients)
    results, snapshot, measured = where / "r.jsonl", where / "s.json", []
    for version, path in ((VERSION, results), (2, where / "r2.jsonl"))[: 2 if baseline else 1]:
        started = time.process_time()
        with path.open("w", encoding="utf-8") as handle:
            writer = ResultsWriter(handle, version=version)
            for event in events:
                writer(event)
        del writer
        measured.append(Measured(time.process_time() - started, 0, path.stat().st_size, 0))
        if path != results:
            path.unlink()
    snapshot.write_text(json.dumps(snapshot_doc(tool_list(tools))), encoding="utf-8")
    return results, snapshot, measured


def stream_row(tools: int, clients: int, measured: list[Measured]) -> None:
    """The results stream's own row: its size against < 30 MB, beside version 2's."""
    now, before = measured
    print(
        f"results stream: {now.out / MB:.1f} MB ({now.cpu:.1f} s cpu to write), "
        f"version 2 of the same events {before.out / MB:.1f} MB ({before.cpu:.1f} s cpu); "
        f"target < 30 MB: {'yes' if now.out < 30 * MB else 'NO'}"
    )
    result(
        "results stream",
        f"`mcp-matrix run --results` (ResultsWriter, in-process), {tools:,} tools x {clients} "
        "profiles: the file's size",
        "the same events through the version-2 writer",
        f"{now.out / MB:.1f} MB, {now.cpu:.1f} s cpu",
        f"{before.out / MB:.1f} MB, {before.cpu:.1f} s cpu",
        f"{now.out / before.out:.3f}x the size",
        "< 30 MB",
        now.out < 30 * MB,
    )


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
    ap.add_argument("--write-stream", type=Path, help=argparse.SUPPRESS)  # write_stream_apart
    ap.add_argument(
        "--results",
        type=Path,
        help="report this results file (the same input for two trees: --only report)",
    )
    args = ap.parse_args(argv)
    if args.write_stream is not None:
        _, _, measured = write_stream(args.tools, args.clients, args.write_stream)
        print(json.dumps([dataclasses.asdict(m) for m in measured]))
        return 0
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
            results, snapshot, written = write_stream_apart(args.tools, args.clients, where)
            stream_row(args.tools, args.clients, written)
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
