"""Fuzz every API operation with schemathesis at length: at least 10,000 cases, 0 server errors.

Runs tests/test_api_schema.py (the CI check, in process, on the test database) with many more examples per
operation, then counts what came back. Every case must also match the schema: status, content type, shape.
The same run sends every write operation raw byte bodies (invalid UTF-8, lone surrogates as bytes, overlong
forms), counted on their own line: 0 server errors, and 400 for every body that is not UTF-8.

    DATABASE_URL=postgres://... python bench/api_fuzz.py [--examples 200]

Prints the number of cases beside the target (>= 10,000) and the number of 5xx answers beside its bound (0).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_CASES = 10_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="hypothesis examples per operation")
    parser.add_argument("--role", default="researcher", choices=["researcher", "admin", "annotator"],
                        help="the role of the token's user (admin reaches the run, DHP and comparison launches)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "answers.log"
        env = {**os.environ, "SPANJUDGE_API_FUZZ_EXAMPLES": str(args.examples), "SPANJUDGE_API_FUZZ_LOG": str(log),
               "SPANJUDGE_API_FUZZ_ROLE": args.role, "DJANGO_SETTINGS_MODULE": "config.settings"}
        started = time.perf_counter()
        command = [sys.executable, "-m", "pytest", "tests/test_api_schema.py", "-q", "-p", "no:cacheprovider"]
        done = subprocess.run(command, cwd=REPO, env=env)
        elapsed = time.perf_counter() - started
        lines = log.read_text().splitlines() if log.exists() else []
    raw = [line for line in lines if " [raw bytes] " in line]
    lines = [line for line in lines if " [raw bytes] " not in line]
    statuses = collections.Counter(line.rsplit(" ", 1)[1] for line in lines)
    server_errors = sum(n for status, n in statuses.items() if status.startswith("5"))
    operations = len({line.rsplit(" ", 1)[0] for line in lines})
    raw_statuses = collections.Counter(line.rsplit(" ", 1)[1] for line in raw)
    raw_errors = sum(n for status, n in raw_statuses.items() if status.startswith("5"))
    print(f"operations fuzzed: {operations} as {args.role}; examples per operation asked: {args.examples}; "
          f"{elapsed:.0f} s")
    print(f"cases: {len(lines)} (target >= {TARGET_CASES})")
    print(f"server errors (5xx): {server_errors} (bound 0)")
    print("statuses: " + ", ".join(f"{status} x{n}" for status, n in sorted(statuses.items())))
    print(f"raw byte bodies: {len(raw)} cases over {len({line.rsplit(' ', 3)[0] for line in raw})} write operations; "
          f"server errors (5xx): {raw_errors} (bound 0); statuses: "
          + ", ".join(f"{status} x{n}" for status, n in sorted(raw_statuses.items())))
    print(f"schema conformance (status, content type, shape): {'held' if done.returncode == 0 else 'FAILED'}")
    ok = done.returncode == 0 and server_errors == 0 and raw_errors == 0 and len(lines) >= TARGET_CASES
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
