"""Benchmark: importing Google's MQM ratings of the WMT21 TED talks (en-de, 8,435 rows), against < 30 s and < 500 MB.

Imports ../shared/data/mqm/mqm_ted_ende.tsv with the service `import_mqm` calls (one transaction: 7,406 items,
7,406 ratings, 4,031 errors), then scores it as `mqm_scores` does, and prints each time and the process's peak
resident memory beside its target; the imported dataset and its sources are deleted afterwards.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_mqm_bench python bench/mqm_import.py [--file PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_mqm_bench")

from bench.pgdb import ensure_postgres_database  # noqa: E402

TARGET_SECONDS = 30.0
TARGET_MB = 500.0
DEFAULT_FILE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mqm" / "mqm_ted_ende.tsv"


def _rss_mb() -> float:
    """The resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()
    if not args.file.exists():
        raise SystemExit(f"{args.file} is not there (the shared data set lives in ../shared/data/mqm)")
    ensure_postgres_database("bench/mqm_import.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from analytics.selectors.mqm import dataset_scores
    from corpus.models import Dataset, Source
    from corpus.services.mqm_import import mqm_import

    name, prefix = f"mqm-bench-{uuid.uuid4().hex[:8]}", f"bench{uuid.uuid4().hex[:6]}"
    before = _rss_mb()
    start = time.perf_counter()
    report = mqm_import(path=args.file, dataset_name=name, prefix=prefix)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        print(report.summary())
        verdict = "ok" if seconds < TARGET_SECONDS else "MISSED"
        print(f"import            {seconds:6.2f} s   (target < {TARGET_SECONDS:.0f} s: {verdict})")
        verdict = "ok" if peak < TARGET_MB else "MISSED"
        print(f"peak memory       {peak:6.0f} MB  (target < {TARGET_MB:.0f} MB: {verdict}; the process held "
              f"{before:.0f} MB before the import, Django and the project loaded)")
        start = time.perf_counter()
        systems = dataset_scores(Dataset.objects.get(name=name), prefix=prefix)["systems"]
        print(f"scores            {time.perf_counter() - start:6.2f} s   ({len(systems)} systems, 1,000 bootstrap "
              "resamples, 10,000 per paired test)")
        for row in systems:
            print(f"  {row['system']:16s} {row['score']:.4f} -> {row['score']:.2f}  [{row['ci_low']:.2f}, "
                  f"{row['ci_high']:.2f}]  ranks {row['rank_range']}")
    finally:
        Dataset.objects.filter(name=name).delete()
        Source.objects.filter(label__startswith=f"{prefix}:").delete()
    print(f"load average at the start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (other work shares the "
          "machine)")


if __name__ == "__main__":
    main()
