"""`python -m benchmarks`: run every benchmarks/bench_*.py, print one table, write results.json.

Each bench file exposes ``measure() -> list[dict]`` with keys name, unit ("ms" | "per_s" | "KB" |
"ratio" | "tokens" | "count" | "h"), median, p10, p90, runs, target and better ("lower" |
"higher"). An HTTP
figure adds ``healthz_per_s`` (the same server's GET /healthz throughput, measured in the same
run) and ``ratio`` (a number, or {"median", "p10", "p90"} over runs); with ``ratio_target`` its
verdict is judged on the ratio rather than the absolute figure. Every file runs in its own
subprocess, so an import error or a crash shows up as a FAILED row and the other files still run;
that process multiplies matrices on the threads the server does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.json"
MARKER = "@@credence-bench-figures@@"
REQUIRED = {
    "name": str,
    "unit": str,
    "median": (int, float),
    "p10": (int, float),
    "p90": (int, float),
    "runs": int,
    "target": (int, float),
    "better": str,
}
UNITS = ("ms", "per_s", "KB", "ratio", "tokens", "count", "h")
# Runs one bench file in a child process and prints its figures after a marker line, so whatever
# else the bench prints cannot be mistaken for results.
_CHILD = f"""
import importlib, json, sys
from credence.memory.semantics.model import limit_blas_threads
limit_blas_threads()  # the compute threads the server runs with (services.open_services)
figures = importlib.import_module(sys.argv[1]).measure()
print({MARKER!r})
print(json.dumps(figures, allow_nan=True, default=str))
"""


def discover(selected: list[str]) -> list[Path]:
    """bench_*.py files in name order, optionally only those whose area is in ``selected``."""
    found = sorted(HERE.glob("bench_*.py"))
    if selected:
        wanted = {name.removeprefix("bench_").removesuffix(".py") for name in selected}
        found = [path for path in found if path.stem.removeprefix("bench_") in wanted]
    return found


def run_file(path: Path, timeout_s: float) -> tuple[list[dict], float]:
    """Run one bench file's measure() in a subprocess; a crash becomes one failed row."""
    module = f"benchmarks.{path.stem}"
    began = time.monotonic()
    try:
        completed = subprocess.run(
            [sys.executable, "-c", _CHILD, module],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    except subprocess.TimeoutExpired:
        return [failed_row(path, f"timed out after {timeout_s:.0f} s")], time.monotonic() - began
    elapsed = time.monotonic() - began
    if completed.returncode != 0 or MARKER not in completed.stdout:
        return [failed_row(path, _last_error(completed))], elapsed
    payload = completed.stdout.split(MARKER, 1)[1]
    try:
        figures = json.loads(payload)
    except json.JSONDecodeError as exc:
        return [failed_row(path, f"measure() output is not JSON: {exc}")], elapsed
    if not isinstance(figures, list) or not figures:
        return [failed_row(path, "measure() returned no figures")], elapsed
    rows = []
    for figure in figures:
        problem = invalid(figure)
        rows.append(failed_row(path, problem) if problem else {**figure, "file": path.name})
    return attach_healthz(rows), elapsed


def attach_healthz(rows: list[dict]) -> list[dict]:
    """Give HTTP figures their file's /healthz baseline when they do not carry one themselves.

    A bench may instead report /healthz as its own per_s figure (its name containing
    "healthz"); then each other figure whose name contains "http" is compared with it.
    """
    baseline = next(
        (
            r
            for r in rows
            if "error" not in r and "healthz" in r["name"].lower() and r["unit"] == "per_s"
        ),
        None,
    )
    if baseline is None:
        return rows
    for row in rows:
        if "error" in row or "healthz_per_s" in row or "healthz" in row["name"].lower():
            continue
        if "http" in row["name"].lower():
            row["healthz_per_s"] = baseline["median"]
            if row["unit"] == "per_s" and baseline["median"]:
                row["ratio"] = row["median"] / baseline["median"]
    return rows


def _last_error(completed: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in completed.stderr.strip().splitlines() if line.strip()]
    tail = lines[-1] if lines else f"exit code {completed.returncode}"
    return f"exit code {completed.returncode}: {tail.strip()}"[:300]


def invalid(figure: Any) -> str | None:
    """Why a figure does not follow the bench contract, or None."""
    if not isinstance(figure, dict):
        return f"figure is not an object: {figure!r}"[:200]
    for key, kind in REQUIRED.items():
        if key not in figure:
            return f"figure {figure.get('name', '?')!r} lacks {key!r}"
        if not isinstance(figure[key], kind) or isinstance(figure[key], bool):
            return (
                f"figure {figure.get('name', '?')!r}: {key} has type {type(figure[key]).__name__}"
            )
    if figure["unit"] not in UNITS:
        return f"figure {figure['name']!r}: unit {figure['unit']!r} is not one of {UNITS}"
    if figure["better"] not in ("lower", "higher"):
        return f"figure {figure['name']!r}: better must be 'lower' or 'higher'"
    return None


def failed_row(path: Path, error: str) -> dict:
    """A row that stands for a bench file (or figure) that could not be measured."""
    return {"name": f"{path.stem}: FAILED", "file": path.name, "error": error}


def ratio_median(figure: dict) -> float | None:
    """The figure-to-/healthz ratio's median, whether given as a number or a summary."""
    ratio = figure.get("ratio")
    if isinstance(ratio, dict):
        ratio = ratio.get("median")
    return float(ratio) if isinstance(ratio, int | float) else None


def verdict(figure: dict) -> str:
    """ok / miss against the figure's target (its ratio target when it has one), or FAILED."""
    if "error" in figure:
        return "FAILED"
    higher = figure["better"] == "higher"
    value, target = figure["median"], figure["target"]
    ratio = ratio_median(figure)
    if "ratio_target" in figure and ratio is not None:
        value, target = ratio, figure["ratio_target"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "miss"
    return "ok" if (value >= target if higher else value <= target) else "miss"


def _number(value: Any, unit: str) -> str:
    if not isinstance(value, int | float) or math.isnan(value):
        return "-"
    if unit == "per_s":
        return f"{value:,.0f}/s" if value >= 100 else f"{value:,.1f}/s"
    if unit == "KB":
        return f"{value:,.1f} KB"
    if unit == "ratio":
        return f"{value:.3f}"
    if unit == "tokens":
        return f"{value:,.0f} tok"
    if unit == "count":
        return f"{value:,.4g}"
    if unit == "h":
        return f"{value:.1f} h"
    if value >= 100:
        return f"{value:,.0f} ms"
    return f"{value:.3g} ms"


def _target(figure: dict) -> str:
    sign = "≥" if figure["better"] == "higher" else "≤"
    if "ratio_target" in figure:
        return f"{sign} {figure['ratio_target']:g}× healthz"
    return f"{sign} {_number(figure['target'], figure['unit'])}"


def table(rows: list[dict]) -> str:
    """The one table `make bench` prints."""
    header = ["figure", "median", "p10–p90", "runs", "target", "healthz", "ratio", ""]
    lines = []
    for figure in rows:
        if "error" in figure:
            lines.append([figure["name"], "-", "-", "-", "-", "-", "-", "FAILED"])
            continue
        unit = figure["unit"]
        spread = f"{_number(figure['p10'], unit)} – {_number(figure['p90'], unit)}"
        health = figure.get("healthz_per_s")
        ratio = ratio_median(figure)
        lines.append(
            [
                figure["name"],
                _number(figure["median"], unit),
                spread,
                str(figure["runs"]),
                _target(figure),
                _number(health, "per_s") if health is not None else "",
                f"{ratio:.2f}×" if ratio is not None else "",
                verdict(figure),
            ]
        )
    widths = [max(len(str(row[i])) for row in [header, *lines]) for i in range(len(header))]
    right = {1, 2, 3, 5, 6}

    def render(cells: list[str]) -> str:
        return "  ".join(
            (cell.rjust(width) if i in right else cell.ljust(width))
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * width for width in widths)
    out = [render(header), rule, *(render(cells) for cells in lines)]
    for figure in rows:
        if "error" in figure:
            out.append(f"  {figure['file']}: {figure['error']}")
    return "\n".join(out)


def machine() -> dict:
    """Where the figures were measured: they mean little without it."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cores": os.cpu_count(),
        "usable_cores": affinity,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; exit 1 when any bench file failed to produce figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("areas", nargs="*", help="only these areas, e.g. decisions ingest")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per bench file")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    files = discover(args.areas)
    if not files:
        print("no benchmarks/bench_*.py matched", file=sys.stderr)
        return 2
    info = machine()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    rows: list[dict] = []
    timings: dict[str, float] = {}
    for path in files:
        print(f"running {path.name} …", file=sys.stderr, flush=True)
        found, elapsed = run_file(path, args.timeout)
        timings[path.name] = round(elapsed, 1)
        rows.extend(found)
    for figure in rows:
        figure["verdict"] = verdict(figure)
    print(
        f"\nCredence benchmarks — {info['cores']} cores ({info['usable_cores']} usable),"
        f" Python {info['python']}, {info['platform']}"
    )
    print("HTTP figures are measured against `credence serve` in a subprocess on loopback;")
    print("healthz = that same server's GET /healthz throughput in the same run.\n")
    print(table(rows))
    ok = sum(1 for figure in rows if figure["verdict"] == "ok")
    failed = sum(1 for figure in rows if figure["verdict"] == "FAILED")
    print(f"\n{ok} ok, {len(rows) - ok - failed} miss, {failed} failed; wrote {args.output}")
    args.output.write_text(
        json.dumps(
            _finite({"started_at": started, "machine": info, "seconds": timings, "figures": rows}),
            indent=2,
            default=str,
        )
        + "\n",
        encoding="utf-8",
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
