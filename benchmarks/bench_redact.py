"""Benchmark: redacting 1 MB of adversarial text, a typical episode, 1 MB of dense candidates."""

from __future__ import annotations

import base64
import random
import statistics
import time
from collections.abc import Callable

from credence.memory.ingest import redact as redaction

MB = 1_000_000
RUNS = 7
SEED = 20261201


KEY = bytes(range(32))


def redact(text: str) -> object:
    """Redact with a fixed installation key."""
    return redaction.redact(text, digest_key=KEY)


def _fill(unit: str, size: int = MB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def adversarial_inputs() -> dict[str, str]:
    """1 MB inputs shaped to make a backtracking matcher (or a careless pattern) go quadratic.

    They hold few or no candidates; text that is a candidate every few bytes is dense_inputs().
    """
    return {
        "one letter": "a" * MB,
        "jwt prefixes": "eyJ" + _fill("a.", MB - 3),
        "begin markers": _fill("-----BEGIN "),
        "private key headers without end": _fill("-----BEGIN RSA PRIVATE KEY-----\n"),
        "scheme then colons": "https://" + ":" * (MB - 8),
        "url authorities without at": _fill("https://a:b"),
        "one megabyte password": "x://u:" + "p" * (MB - 7) + "@",
        "base64 run": base64.b64encode(random.Random(SEED).randbytes(MB * 3 // 4)).decode(),
        "keys without values": _fill("password="),
        "one megabyte value": "token=" + _fill("Xy7kP9mQ2wLz", MB - 6),
        "whitespace after a key": "password" + " " * MB,
        "token prefixes": _fill("sk-ghp_AKIAcrd_xoxb-glpat-AIza"),
        # Every vendor prefix, none with a body: each rule runs, and each match attempt fails.
        "vendor prefixes": _fill(
            "npm_ pypi-AgE SG. SK shpat_ GOCSPX- 0Q~ hf_ dop_v1_ -us :AA sq0atp- dapi hvs."
            " AGE-SECRET-KEY-1 ATATT3 lin_api_ PMAK- pul- glc_ NRAK- sntrys_ dp.pt. pscale_tkn_"
            " fo1_ ntn_ HRKU- dt0c01. LTAI ops_eyJ dckr_pat_ .atlasv1. sbp_ pat AKCp v1.0-"
            " AccountKey= whsec_ xapp- GR1348941 "
        ),
        "hex runs before a suffix": _fill("0123456789abcdef" * 4 + "-u"),
        "digits before a colon": _fill("1234567890:A"),
        "connection string keys": "AccountKey=" + _fill("Ab+/", MB - 11),
        "unicode": _fill("é password=ü€ sk-ant-"),
    }


def dense_inputs() -> dict[str, str]:
    """1 MB that is nothing but secrets, or nothing but near misses each judged and rejected.

    Here the cost is per candidate (a few microseconds of Python each), not per byte.
    """
    rng = random.Random(SEED)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    pieces = []
    size = 0
    while size < MB:
        kind = rng.randrange(3)
        if kind == 0:
            piece = "AKIA" + "".join(rng.choices(alphabet, k=16))
        elif kind == 1:
            piece = "token=" + "".join(rng.choices(alphabet + "abcdefghijklmnop", k=20))
        else:
            piece = "postgres://app:" + "".join(rng.choices(alphabet, k=12)) + "@db/app"
        pieces.append(piece)
        size += len(piece) + 1
    return {
        "secrets": " ".join(pieces)[:MB],
        "headers without values": _fill("Authorization: "),
        "keys with ordinary words": _fill("password: reset-required "),
    }


def typical_episode() -> str:
    """About 1 KB: a turn summary with tool output, a stack trace, and two secrets in it."""
    key_id = "AKIA" + "Q" * 12 + "7EXA"
    return (
        "User asked to re-run the nightly export after it failed on the 12 MB invoice PDF. "
        "I retried the upload with a smaller chunk size and it went through on the third try. "
        "The user then said: 'don't retry more than twice, just tell me'. Noted for next time.\n"
        "Tool output (shell):\n"
        "$ aws s3 cp export.csv s3://finance-exports/2026-12-01/ --region eu-central-1\n"
        "upload failed: export.csv to s3://finance-exports/2026-12-01/export.csv "
        "An error occurred (RequestTimeout) when calling the UploadPart operation\n"
        f"  using credentials AWS_ACCESS_KEY_ID={key_id} from environment\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/export/run.py", line 214, in upload_part\n'
        "    response = client.upload_part(Bucket=bucket, Key=key, PartNumber=n, Body=chunk)\n"
        '  File "/srv/export/.venv/lib/python3.11/site-packages/botocore/client.py", line 565\n'
        "botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL\n"
        "Connected to postgres://export:Xy7kP9mQ2wLzR4@db.internal:5432/finance for the "
        "invoice list; 1,204 rows, commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 of the "
        "exporter, request id 123e4567-e89b-12d3-a456-426614174000. Password reset emails were "
        "not touched. The max_tokens=4096 setting of the summariser stayed as it was.\n"
    )


def _timed(action: Callable[[], object], runs: int) -> list[float]:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return timings


def _figure(
    name: str, unit: str, values: list[float], target: float, better: str
) -> dict[str, object]:
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return {
        "name": name,
        "unit": unit,
        "median": round(statistics.median(values), 3),
        "p10": round(deciles[0], 3),
        "p90": round(deciles[-1], 3),
        "runs": len(values),
        "target": target,
        "better": better,
    }


def timings_per_input(inputs: dict[str, str], runs: int = RUNS) -> dict[str, list[float]]:
    """Milliseconds per run of redact() for each input."""
    redact("warm up AKIAIOSFODNN7EXAMPLE")
    return {
        name: [seconds * 1000 for seconds in _timed(lambda text=text: redact(text), runs)]
        for name, text in inputs.items()
    }


def _worst(timings: dict[str, list[float]]) -> list[float]:
    # A figure over several inputs is its worst input: a target holds only if it holds for all.
    return max(timings.values(), key=statistics.median)


def measure() -> list[dict[str, object]]:
    """Run the benchmark and return its figures."""
    adversarial = _worst(timings_per_input(adversarial_inputs()))
    figures = [_figure("redact 1 MB adversarial text", "ms", adversarial, 100, "lower")]

    episode = typical_episode()
    batch = 200
    per_second = [
        batch / seconds for seconds in _timed(lambda: [redact(episode) for _ in range(batch)], RUNS)
    ]
    figures.append(_figure("redact typical episode", "per_s", per_second, 10000, "higher"))

    dense = _worst(timings_per_input(dense_inputs()))
    figures.append(_figure("redact 1 MB dense candidates", "ms", dense, 1000, "lower"))
    return figures


if __name__ == "__main__":
    for inputs in (adversarial_inputs(), dense_inputs()):
        for name, timings in timings_per_input(inputs).items():
            print(f"  {name:34} median {statistics.median(timings):7.1f} ms")
    for figure in measure():
        print(figure)
