"""Benchmark: import and export of a large dataset stream at (nearly) constant memory.

Writes a JSONL file of N items with S gold spans each (200k spans by default), then runs
`manage.py import_items` and `manage.py export_items --format jsonl` (and csv, parquet, labelstudio; each
with its data card) as child processes and
prints each one's wall time and peak RSS beside the 300 MB bound (docs/measured.md). A second, 4x smaller
file is run too, so that flat memory shows as peak RSS that does not grow with the file.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/import_export_memory.py \
        [--items 20000] [--spans 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.pgdb import ensure_postgres_database  # noqa: E402

BOUND_MB = 300
WORDS = ["the", "home", "team", "beat", "visitors", "by", "points", "after", "a", "strong", "third", "quarter",
         "led", "by", "their", "guard"]


def _write(path: Path, items: int, spans: int, rng: random.Random) -> int:
    total = 0
    with path.open("w", encoding="utf-8") as handle:
        for i in range(items):
            words = [rng.choice(WORDS) for _ in range(120)]
            output = " ".join(words)
            starts = sorted(rng.sample(range(len(words) - 2), spans))
            offsets, pos = [], 0
            for w in words:
                offsets.append(pos)
                pos += len(w) + 1
            gold = []
            for s in starts:
                start, end = offsets[s], offsets[s + 1] + len(words[s + 1])
                gold.append({"start": start, "end": end, "text": output[start:end], "category": "NUMBER",
                             "explanation": f"error {s}"})
            record = {"id": f"b{i}", "system": f"sys{i % 5}", "inputs": {"Data": f"game {i}"},
                      "outputs": {"Summary": output}, "score": {"accuracy": rng.random()}, "spans": gold}
            handle.write(json.dumps(record) + "\n")
            total += len(gold)
    return total


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Return (seconds, peak RSS in MB) of a child process."""
    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, not the max over all children
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed with exit code {child.returncode}")
    return time.perf_counter() - began, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--spans", type=int, default=10)
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_bench")
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)  # DEBUG is off: the settings require a key
    os.environ["DATABASE_URL"] = env["DATABASE_URL"]
    ensure_postgres_database("bench/import_export_memory.py")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    _, baseline = _run(["check"], env)
    print(f"baseline: `manage.py check` alone peaks at {baseline:.0f} MB (Django + the project's imports)")
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="spanjudge-bench-"))
    for items in (args.items // 4, args.items):
        path = tmp / f"items-{items}.jsonl"
        n_spans = _write(path, items, args.spans, rng)
        name = f"bench-mem-{uuid.uuid4().hex[:6]}"
        size = path.stat().st_size / 2**20
        t_imp, rss_imp = _run(["import_items", str(path), "--dataset", name, "--task", "data-to-text"], env)
        t_exp, rss_exp = _run(["export_items", "--dataset", name, "--format", "jsonl", "-o", str(tmp / "out.jsonl")],
                              env)
        t_csv, rss_csv = _run(["export_items", "--dataset", name, "--format", "csv", "-o", str(tmp / "out.csv")], env)
        t_pq, rss_pq = _run(["export_items", "--dataset", name, "--format", "parquet", "-o",
                             str(tmp / "out.parquet")], env)
        t_ls, rss_ls = _run(["export_items", "--dataset", name, "--format", "labelstudio", "-o",
                             str(tmp / "out.json")], env)
        print(f"{items} items, {n_spans} spans, file {size:.0f} MB:")
        print(f"  import_items       {t_imp:6.1f} s   peak RSS {rss_imp:6.0f} MB  (bound {BOUND_MB} MB)")
        print(f"  export_items jsonl {t_exp:6.1f} s   peak RSS {rss_exp:6.0f} MB  (bound {BOUND_MB} MB)")
        print(f"  export_items csv   {t_csv:6.1f} s   peak RSS {rss_csv:6.0f} MB  (bound {BOUND_MB} MB)")
        print(f"  export_items parquet {t_pq:4.1f} s   peak RSS {rss_pq:6.0f} MB  (bound {BOUND_MB} MB)")
        print(f"  export_items labelstudio {t_ls:.1f} s peak RSS {rss_ls:6.0f} MB  (bound {BOUND_MB} MB)")
        subprocess.run([sys.executable, "-c", (
            "import django,os;django.setup();from annotator.models import Dataset;"
            f"Dataset.objects.filter(name='{name}').delete()")], cwd=ROOT, env=env, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
