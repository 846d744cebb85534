"""Benchmark: Google's side-by-side MQM ratings of WMT23 en-de (10,970 rows): import, round trip and pairwise figures.

Imports the release (../shared/data/mqm/sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz, read with
tarfile) with the service `import_mqm` calls, writes it back as `export_annotations --format mqm-tsv` does and
compares the bytes, then computes what `pairwise_scores` prints and the counts behind its shares, with the raters'
agreement (stats.mqm) beside them. Prints each time; `--json PATH` writes the pairwise JSON. The imported dataset
and its sources are deleted afterwards.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_mqm_bench python bench/sxs_mqm.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_mqm_bench")

from bench.pgdb import ensure_postgres_database  # noqa: E402

DEFAULT_FILE = (Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mqm"
                / "sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--json", type=Path, help="Write the pairwise_scores JSON here.")
    args = parser.parse_args()
    if not args.file.exists():
        raise SystemExit(f"{args.file} is not there (the shared data set lives in ../shared/data/mqm)")
    ensure_postgres_database("bench/sxs_mqm.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from analytics.selectors.mqm import agreement, dataset_ratings, stats_ratings
    from analytics.selectors.pairwise import dataset_judged, dataset_pairwise
    from corpus.interop.mqm_sxs import sxs_tsv_lines
    from corpus.models import Dataset, Source
    from corpus.selectors.mqm import mqm_sources, sxs_file
    from corpus.services.mqm_import import mqm_import
    from stats.pairwise import consistency

    name, prefix = f"sxs-bench-{uuid.uuid4().hex[:8]}", f"bench{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory() as folder, tarfile.open(args.file) as archive:
        member = next(m for m in archive.getmembers() if m.isfile())
        original = archive.extractfile(member).read()  # type: ignore[union-attr]
        path = Path(folder) / Path(member.name).name
        path.write_bytes(original)
        start = time.perf_counter()
        report = mqm_import(path=path, dataset_name=name, prefix=prefix, side_by_side=True)
        print(report.summary())
        print(f"import            {time.perf_counter() - start:6.2f} s")
    try:
        dataset = Dataset.objects.get(name=name)
        start = time.perf_counter()
        read = sxs_file(dataset, mqm_sources(dataset, prefix))
        same = "".join(sxs_tsv_lines(read.header, read.ratings)).encode("utf-8") == original
        print(f"export            {time.perf_counter() - start:6.2f} s   (byte-identical: {same})")
        start = time.perf_counter()
        result = dataset_pairwise(dataset, prefix=prefix)
        print(f"pairwise figures  {time.perf_counter() - start:6.2f} s   (1,000 bootstrap refits of the model)")
        together, others = consistency(dataset_judged(dataset, prefix=prefix)[0])
        print(f"consistency: shown together {together.hits}/{together.n} = {together.share:.4f} "
              f"[{together.ci_low:.4f}, {together.ci_high:.4f}]; others {others.hits}/{others.n} = "
              f"{others.share:.4f} [{others.ci_low:.4f}, {others.ci_high:.4f}]")
        agreed = agreement(stats_ratings(dataset_ratings(dataset, prefix)))
        print(f"raters' agreement on segment scores: Pearson {agreed.scores.pearson:.3f}, Kendall "
              f"{agreed.scores.kendall:.3f} over {agreed.scores.n} pairs of ratings; spans character F1 "
              f"{agreed.char.f1:.3f} (labelled {agreed.char_labelled.f1:.3f})")
        print(json.dumps({k: result[k] for k in ("position_bias", "consistency")}, indent=1))
        for row in result["systems"]:
            print(f"  {row['system']:14s} {row['strength']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] "
                  f"ranks {row['rank_range']}")
        for p in result["pairs"]:
            if p["shown_together"]:
                print(f"  {p['a']} vs {p['b']}: {p['a_better']}-{p['b_better']} ({p['ties']} ties), win rate "
                      f"{p['a_win_rate']:.3f} [{p['ci_low']:.3f}, {p['ci_high']:.3f}], p {p['p_value']:.2g}, "
                      f"Holm {p['p_holm']:.2g}")
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    finally:
        Dataset.objects.filter(name=name).delete()
        Source.objects.filter(label__startswith=f"{prefix}:").delete()
    print(f"load average at the start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
