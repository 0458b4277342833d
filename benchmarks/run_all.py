"""Every benchmark in turn, and benchmarks/README.md's table made from what they printed.

Each benchmark ends with ``RESULT {...}`` lines (``whole.result``): what was measured, its
baseline in the same run, both figures, the ratio, the target and whether it was met. This script
runs them one after another (never side by side: they would share the cores they measure) and
collects those lines; ``--write-readme`` puts the table between the README's two markers, so
the table holds what the benchmarks printed and nothing typed by hand.

    python benchmarks/run_all.py                       # every benchmark, default sizes
    python benchmarks/run_all.py --write-readme        # ... and the README's table
    python benchmarks/run_all.py --smoke --only replay,diff   # tiny sizes (the suite runs this)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
BEGIN = "<!-- run_all.py: the table below is written by `python benchmarks/run_all.py --write-readme` -->"
END = "<!-- run_all.py: end of the table -->"

# name -> the script and its arguments at full size (README's "How to reproduce")
BENCHMARKS: dict[str, list[str]] = {
    "discovery": ["discovery.py"],
    "calls": ["calls.py"],
    "replay": ["replay.py"],
    "diff": ["diff.py"],
    "report_json": ["report_json.py"],
    "html_report": ["html_report.py"],
    "snapshot_speed": ["snapshot_speed.py"],
    "run_cost": ["run_cost.py"],
}


def run(name: str, smoke: bool) -> list[dict]:
    """One benchmark as a process of its own; its RESULT rows (a failed one: a row saying so)."""
    script, *args = BENCHMARKS[name]
    argv = [sys.executable, str(HERE / script), *args, *(["--smoke"] if smoke else [])]
    print(f"== {name}: {' '.join(argv[1:])}", flush=True)
    done = subprocess.run(argv, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    rows = [json.loads(line[7:]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not rows:
        tail = (done.stderr.strip().splitlines() or ["no RESULT line"])[-1]
        print(f"   {name} failed (exit {done.returncode}): {tail}", flush=True)
        rows.append({"benchmark": name, "what": f"`{script}` failed: {tail[:160]}", "met": False})
    return rows


def table(rows: list[dict], smoke: bool, only: str = "") -> str:
    """The README's table: a row per RESULT line, with when and at what load it was measured."""
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    loads = [r["load"] for r in rows if "load" in r]
    span = f"{min(loads):.0f}-{max(loads):.0f}" if loads else "?"
    flags = (" --smoke" if smoke else "") + (f" --only {only}" if only else "")
    head = (
        f"Measured {now} by `python benchmarks/run_all.py{flags}` ({os.cpu_count()} cores; "
        f"load average {span} as each benchmark ended).\n\n"
        "| benchmark | command (A) | baseline (B, same run) | A | B | A/B | target | met? |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    lines = [
        "| {benchmark} | {what} | {baseline} | {a} | {b} | {ratio} | {target} | {met} |".format(
            **{k: _cell(r.get(k, "")) for k in ("benchmark", "what", "baseline", "a", "b")},
            ratio=_cell(r.get("ratio", "")),
            target=_cell(r.get("target", "")),
            met="yes" if r.get("met") else "**no**",
        )
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def write_readme(text: str, readme: Path) -> None:
    """Replace what stands between the markers (added after the first heading if missing)."""
    doc = readme.read_text(encoding="utf-8")
    block = f"{BEGIN}\n\n{text}\n{END}"
    if BEGIN in doc and END in doc:
        before, rest = doc.split(BEGIN, 1)
        _, after = rest.split(END, 1)
        doc = before + block + after
    else:
        title, _, body = doc.partition("\n")
        doc = f"{title}\n\n{block}\n{body}"
    readme.write_text(doc, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="each benchmark's tiny sizes")
    ap.add_argument("--only", default="", help="comma-separated names: " + ", ".join(BENCHMARKS))
    ap.add_argument("--write-readme", action="store_true", help="write the README's table")
    ap.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
    rows = [row for name in names for row in run(name, args.smoke)]
    text = table(rows, args.smoke, args.only)
    print(text)
    if args.write_readme:
        write_readme(text, args.readme)
        print(f"wrote the table into {args.readme}")
    return 0 if all("a" in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
