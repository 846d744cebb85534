"""Benchmark: the JSON-list reader takes time linear in the file's size and stays within 1.5x of JSONL.

Builds (a) a list holding one large object (the case that took 300 s for 200 MB when the list was
re-decoded on a growing buffer) at two sizes, the same object as a one-line JSONL file, and (b) a list of
many small objects and the same objects as JSONL, then times `corpus.formats.iter_objects` over each and
prints seconds (best of three reads), MB/s, the list/JSONL time ratios beside their bound (1.5) and peak
RSS of the process.
Linear means the larger single object takes about twice the time of the half-size one.

    python bench/json_list_reader.py [--mb 100]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpus.formats import iter_objects  # noqa: E402

BOUND = 1.5


def _big_object(path: Path, mb: int, jsonl: bool = False) -> None:
    chunk = "word " * 200
    n = mb * 2**20 // len(chunk)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(("" if jsonl else "[") + '{"id": 1, "outputs": {"Text": "x"}, "extra": [')
        handle.write((", " if jsonl else ",\n").join(json.dumps(chunk) for _ in range(n)))
        handle.write("]}\n" if jsonl else "]}]")


def _many(path: Path, n: int, jsonl: bool) -> None:
    objects = (json.dumps({"id": i, "inputs": {"Data": "d" * 300}, "outputs": {"Text": "t" * 500}}) for i in range(n))
    with path.open("w", encoding="utf-8") as handle:
        handle.write("\n".join(objects) if jsonl else "[\n" + ",\n".join(objects) + "\n]")


def _time(path: Path, repeat: int = 3) -> tuple[float, int]:
    """The best of `repeat` reads (other work on a shared machine only ever adds time)."""
    best, count = float("inf"), 0
    for _ in range(repeat):
        began = time.perf_counter()
        count = sum(1 for _ in iter_objects(path))
        best = min(best, time.perf_counter() - began)
    return best, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=100, help="size of the larger single-object file")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="spanjudge-bench-"))
    times = {}
    for mb in (args.mb // 2, args.mb):
        path = tmp / f"one-{mb}.json"
        _big_object(path, mb)
        size = path.stat().st_size / 2**20
        seconds, _ = _time(path)
        times[mb] = seconds
        print(f"one object, {size:6.1f} MB JSON list: {seconds:6.2f} s ({size / seconds:5.1f} MB/s)")
        path.unlink()
    print(f"  time ratio for twice the size: {times[args.mb] / times[args.mb // 2]:.2f} (linear: 2.0)")
    path = tmp / "one.jsonl"
    _big_object(path, args.mb, jsonl=True)
    size = path.stat().st_size / 2**20
    seconds, _ = _time(path)
    path.unlink()
    print(f"one object, {size:6.1f} MB JSONL    : {seconds:6.2f} s ({size / seconds:5.1f} MB/s)")
    print(f"  list/JSONL time ratio, one object: {times[args.mb] / seconds:.2f} (bound: {BOUND})")
    n = args.mb * 2**20 // 900
    many = {}
    for jsonl in (False, True):
        path = tmp / ("many.jsonl" if jsonl else "many.json")
        _many(path, n, jsonl)
        size = path.stat().st_size / 2**20
        seconds, count = _time(path)
        many[jsonl] = seconds
        kind = "JSONL    " if jsonl else "JSON list"
        print(f"{count} objects, {size:6.1f} MB {kind}: {seconds:6.2f} s ({size / seconds:5.1f} MB/s)")
        path.unlink()
    print(f"  list/JSONL time ratio, many objects: {many[False] / many[True]:.2f} (bound: {BOUND})")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
