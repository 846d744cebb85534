"""Benchmark: every number of a campaign dashboard over a generated campaign of 100k judgments, against 2 s.

Generates a dataset (items with human scores and gold spans), three evaluator runs (an ensemble with
annotator-kind answers beside its final ones, two single models), a campaign with two annotators per item
and ~100k complete span judgments (flags, corrected severities, human-added spans), then times
`dashboard_data` - Table 4 with 1,000 bootstrap resamples per group, flags, agreement, gold overlap,
calibration and score correlations - on PostgreSQL. Tables, plots and the evaluators' ranking (both criteria,
10,000 resamples per pair, uncached, against the same 2 s, with the load average beside it) are timed
separately; `--profile` also splits one ranking into its database read, intervals and pairwise tests.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_an_bench python bench/analytics.py \
        [--judgments 100000] [--repeat 5] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Benches run with DEBUG off, where the settings require a key; this one signs nothing that outlives the run.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)

from bench.pgdb import ensure_postgres_database  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_an_bench")

BOUND_SECONDS = 2.0
SPANS_PER_ITEM = (3, 2, 2)  # ensemble, single A, single B: 7 machine spans per item
ANNOTATORS_PER_ITEM = 2
N_ANNOTATORS = 10
SPAN_VERDICTS = ["error"] * 6 + ["not_error"] * 2 + ["no_span", "hallucination"]
EXPLANATION_VERDICTS = ["correct"] * 4 + ["partially_correct"] * 2 + ["incomplete", "vague", "incorrect", "not_error"]



def _generate(n_judgments: int, rng: random.Random):  # noqa: C901 - a linear data generator
    from accounts.models import User
    from annotator.models import AddedSource, Assignment, Campaign, CampaignRun, SpanJudgment
    from corpus.models import Annotation, Dataset, ErrorSpan, Item, Source, SourceKind, TaskType
    from corpus.protocols.opennlgauge import FLAG_VALUES
    from evaluation.models import Aspect, Evaluator, EvaluatorRun

    nonce = uuid.uuid4().hex[:8]
    n_items = max(1, n_judgments // (sum(SPANS_PER_ITEM) * ANNOTATORS_PER_ITEM))
    task = TaskType.objects.get(slug="data-to-text")
    aspect = Aspect.objects.get(task__slug="data-to-text", name="accuracy")
    dataset = Dataset.objects.create(name=f"bench-analytics-{nonce}", task=task, score_aspects=["accuracy"])
    output = "The home side beat the visitors by twelve points in front of a full arena on Sunday night. " * 2
    items = Item.objects.bulk_create(
        Item(dataset=dataset, position=i, external_id=str(i), system=f"sys{i % 4}", output=output,
             human_scores={"accuracy": rng.randint(1, 5)})
        for i in range(n_items)
    )
    runs = []
    for name, kind in (("ens", "ensemble"), ("single-a", "single"), ("single-b", "single")):
        evaluator = Evaluator.objects.create(name=f"bench-{name}-{nonce}", kind=kind)
        runs.append(EvaluatorRun.objects.create(
            evaluator=evaluator, dataset=dataset, aspect=aspect, label=f"bench-{name}-{nonce}", status="done"
        ))
    gold, _ = Source.objects.get_or_create(kind=SourceKind.IMPORT, label="gold")
    annotations = []
    for item in items:
        for run, kind in zip(runs, ("ensemble", "annotator", "annotator"), strict=True):
            annotations.append(Annotation(item=item, aspect="accuracy", source=run, kind=kind,
                                          model="" if kind == "ensemble" else "m", score=rng.randint(1, 5)))
        annotations.append(Annotation(item=item, aspect="accuracy", source=runs[0], kind="annotator",
                                      model="m1", score=rng.randint(1, 5)))
        annotations.append(Annotation(item=item, aspect="", source=gold, kind="gold"))
    annotations = Annotation.objects.bulk_create(annotations, batch_size=5000)

    def spans_for(annotation, count: int) -> list:
        out = []
        for position in range(count):
            start = rng.randrange(0, len(output) - 20)
            located = rng.random() > 0.05
            out.append(ErrorSpan(
                annotation=annotation, position=position, text="x", start=start if located else None,
                end=start + rng.randint(3, 15) if located else None, match="exact" if located else "none",
                severity=rng.randint(1, 5), explanation="because",
            ))
        return out

    spans = []
    per_item = 5  # three final answers, one ignored annotator answer, gold
    for k in range(len(items)):
        block = annotations[k * per_item : (k + 1) * per_item]
        for annotation, count in zip(block[:3], SPANS_PER_ITEM, strict=True):
            spans += spans_for(annotation, count)
        spans += spans_for(block[3], 2) + spans_for(block[4], 3)
    spans = ErrorSpan.objects.bulk_create(spans, batch_size=5000)
    judged = {a.pk for k in range(len(items)) for a in annotations[k * per_item : k * per_item + 3]}
    spans_by_item: dict[int, list] = {}
    item_of = {a.pk: a.item_id for a in annotations}
    for span in spans:
        if span.annotation_id in judged:
            spans_by_item.setdefault(item_of[span.annotation_id], []).append(span)

    users = [User(username=f"bench-{nonce}-{i}", role="annotator") for i in range(N_ANNOTATORS)]
    users = User.objects.bulk_create(users)
    campaign = Campaign.objects.create(name=f"bench-analytics-{nonce}", dataset=dataset, aspects=["accuracy"],
                                       annotators_per_item=ANNOTATORS_PER_ITEM, status="open")
    campaign.annotators.set(users)
    CampaignRun.objects.bulk_create(
        CampaignRun(campaign=campaign, run=run, label=f"Evaluator {'ABC'[i]}") for i, run in enumerate(runs)
    )
    assignments, orders = [], dict.fromkeys(range(N_ANNOTATORS), 0)
    for k, item in enumerate(items):
        for j in range(ANNOTATORS_PER_ITEM):
            who = (k + j) % N_ANNOTATORS
            orders[who] += 1
            assignments.append(Assignment(campaign=campaign, item=item, annotator=users[who], order=orders[who],
                                          status="done", phase="done"))
    assignments = Assignment.objects.bulk_create(assignments, batch_size=5000)
    added_by = {u.pk: AddedSource.objects.create(label=u.username, campaign=campaign, annotator=u) for u in users}
    judgments, added = [], []
    for assignment in assignments:
        for span in spans_by_item[assignment.item_id]:
            flags = {name: rng.random() < 0.05 for name in FLAG_VALUES}
            judgments.append(SpanJudgment(
                span=span, annotator_id=assignment.annotator_id, assignment=assignment,
                span_verdict=rng.choice(SPAN_VERDICTS), explanation_verdict=rng.choice(EXPLANATION_VERDICTS),
                corrected_severity=rng.randint(1, 5) if rng.random() < 0.2 else None, **flags,
            ))
        if rng.random() < 0.3:
            added.append(Annotation(item_id=assignment.item_id, aspect="accuracy",
                                    source=added_by[assignment.annotator_id], kind="human",
                                    author_id=assignment.annotator_id))
    SpanJudgment.objects.bulk_create(judgments, batch_size=10000)
    added = Annotation.objects.bulk_create(added, batch_size=5000)
    ErrorSpan.objects.bulk_create([s for a in added for s in spans_for(a, 1)], batch_size=5000)
    return campaign, dataset, len(judgments)


def _profile_ranking(campaign) -> None:
    """Print where one ranking spends its time: the database read, the intervals, the pairwise tests."""
    import cProfile
    import pstats

    from analytics.selectors import base, ranking
    from stats import bootstrap
    from stats import ranking as engine

    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.runcall(ranking.rankings_compute, campaign, "accuracy")
    total = time.perf_counter() - t0
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    parts = {"database read": base._raw_rows, "bootstrap intervals": bootstrap.bootstrap_ratio_cis_grouped,
             "randomization tests": engine.paired_randomization}
    spent = {}
    for name, function in parts.items():
        code = function.__code__
        spent[name] = sum(row[3] for (path, line, func), row in stats.items()
                          if path == code.co_filename and line == code.co_firstlineno and func == code.co_name)
    rest = total - sum(spent.values())
    print("ranking profile (one run, under cProfile): " + ", ".join(f"{k} {v:.3f} s" for k, v in spent.items())
          + f", the rest {rest:.3f} s; {total:.3f} s in all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the generated rows")
    parser.add_argument("--profile", action="store_true", help="print where one extra run spends its time")
    args = parser.parse_args()

    ensure_postgres_database("bench/analytics.py")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from analytics.plots import dashboard_plots
    from analytics.selectors import Scope, dashboard_data
    from analytics.tables import dashboard_tables

    started = time.perf_counter()
    campaign, dataset, n = _generate(args.judgments, random.Random(42))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"generated {n} judgments on {dataset.items.count()} items in {time.perf_counter() - started:.1f} s")

    scope = Scope(campaign_id=campaign.pk)
    times, queries = [], 0
    data = None
    for _ in range(args.repeat):
        from django.db import reset_queries
        from django.test.utils import CaptureQueriesContext

        reset_queries()
        with CaptureQueriesContext(connection) as captured:
            t0 = time.perf_counter()
            data = dashboard_data(scope, n_resamples=1000, seed=0)
            times.append(time.perf_counter() - t0)
        queries = len(captured)
    assert data is not None
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(dashboard_data, scope, n_resamples=1000, seed=0)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    t0 = time.perf_counter()
    tables = dashboard_tables(data)
    t_tables = time.perf_counter() - t0
    t0 = time.perf_counter()
    plots = dashboard_plots(data)
    t_plots = time.perf_counter() - t0

    pooled = data.accuracy.pooled
    print(f"pooled: {pooled.matrix.total} judged, Span OK {100 * pooled.matrix.span_ok:.1f} %, "
          f"alpha(span) {data.agreement.pooled.alpha_span:.3f} over {data.agreement.pooled.n_units} spans")
    print(f"dashboard numbers ({queries} queries on the calling connection, the rest beside it; "
          "1000 bootstrap resamples per group): "
          f"first {times[0]:.3f} s, median {statistics.median(times):.3f} s, best {min(times):.3f} s "
          f"over {len(times)} runs  (bound {BOUND_SECONDS:.1f} s) -> "
          f"{'OK' if statistics.median(times) <= BOUND_SECONDS else 'OVER'}")
    print(f"tables ({len(tables)}): {t_tables:.3f} s; plots ({len(plots)}, SVG): {t_plots:.3f} s")

    # The ranking the page shows beside the overview: both criteria, uncached (10,000 resamples per pair).
    from analytics.selectors import ranking

    load_before = os.getloadavg()
    rank_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        both = ranking.rankings_compute(campaign, "accuracy")
        rank_times.append(time.perf_counter() - t0)
    load_after = os.getloadavg()
    ranked = [both[by] for by in ranking.BY_CHOICES]
    ranks = ", ".join(f"{e.label.split('-')[1]} {e.rank}" for e in ranked[0].evaluators)
    t_rank = statistics.median(rank_times)
    print(f"ranking by span and by explanation over {n:,} judgments ({len(ranked[0].pairs)} pairs each, "
          f"{ranking.engine.RESAMPLES:,} resamples per pair; span ranks: {ranks}): first {rank_times[0]:.3f} s, "
          f"median {t_rank:.3f} s over {len(rank_times)} runs  (bound {BOUND_SECONDS:.1f} s) -> "
          f"{'OK' if t_rank <= BOUND_SECONDS else 'OVER'}; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after (2 cores shared with other work shift this figure)")
    if args.profile:
        _profile_ranking(campaign)

    if not args.keep:
        from accounts.models import User
        from annotator.models import Campaign
        from corpus.models import Dataset
        from evaluation.models import Evaluator, EvaluatorRun

        users = list(campaign.annotators.values_list("pk", flat=True))
        evaluators = list(EvaluatorRun.objects.filter(dataset=dataset).values_list("evaluator_id", flat=True))
        Campaign.objects.filter(pk=campaign.pk).delete()
        Dataset.objects.filter(pk=dataset.pk).delete()
        Evaluator.objects.filter(pk__in=evaluators).delete()
        User.objects.filter(pk__in=users).delete()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
