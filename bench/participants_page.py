"""Benchmark: the participants page and the vigilance API of a study with 500 participants, against 1 s each.

Generates a campaign recruited by link: 500 participants, each with ITEMS_EACH finished items of two machine
spans plus the campaign's decoys on them, every span judged with its audit event (as the item screen leaves
them), then asks, as a signed-in researcher on PostgreSQL, `GET /campaigns/ID/participants/` (the payment
list: one row per participant with their screening reasons) and `GET /api/campaigns/ID/vigilance` (every
annotator's figures). Each is timed cold (the checks computed) and warm (the same state asked again).

Before the checks were computed once per state, the page recomputed them for every participant: 500 x the
campaign's whole vigilance, quadratic in the study's size.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_participants_bench \
        python bench/participants_page.py [--participants 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_participants_bench")

from bench.pgdb import ensure_postgres_database  # noqa: E402

TARGET_SECONDS = 1.0
ITEMS_EACH = 4
SPANS_PER_ITEM = 2


def _generate(n_participants: int):  # noqa: PLR0914 - a linear data generator
    from django.utils import timezone

    from accounts.models import Role, User
    from annotator.models import Assignment, Campaign, CampaignRun, JudgmentEvent, SpanJudgment
    from corpus.models import Annotation, Dataset, ErrorSpan, Item, SourceKind, TaskType
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from quality.models import CheckSource, CheckSpan
    from studies.models import Participant, StudyLink

    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    aspect = Aspect.objects.get(task__slug="data-to-text", name="accuracy")
    dataset = Dataset.objects.create(name=f"bench-participants-{nonce}", task=task)
    output = "The home side beat the visitors 102-95 on Sunday; Smith scored 31 points and Jones 12."
    n_items = max(10, n_participants * ITEMS_EACH // 2)  # two judges per item
    items = Item.objects.bulk_create(Item(dataset=dataset, position=i, external_id=str(i), system="sys",
                                          output=output, inputs={"Data": "home 102 | away 95"})
                                     for i in range(n_items))
    evaluator = Evaluator.objects.create(name=f"bench-{nonce}", kind=Evaluator.Kind.SINGLE)
    run = EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, aspect=aspect,
                                      label=f"bench-run-{nonce}", status="done")
    annotations = Annotation.objects.bulk_create(Annotation(item=it, source=run, kind="annotator", aspect="accuracy",
                                                            model="bench") for it in items)
    spans = ErrorSpan.objects.bulk_create(
        ErrorSpan(annotation=a, position=k, text=text, start=start, end=start + len(text), match="exact",
                  explanation="Not supported by the data.", severity=3)
        for a in annotations for k, (text, start) in enumerate((("102-95", 29), ("31 points", 55))))
    campaign = Campaign.objects.create(name=f"bench participants {nonce}", dataset=dataset, aspects=["accuracy"],
                                       annotators_per_item=2, decoys=0.25, vigilance_min=0.6,
                                       status=Campaign.Status.OPEN)
    campaign_run = CampaignRun.objects.create(campaign=campaign, run=run, label="Evaluator A")
    checks = CheckSource.objects.create(label=f"checks {nonce}", kind=SourceKind.CHECK, campaign=campaign)
    decoy_annotations = Annotation.objects.bulk_create(
        Annotation(item=it, source=checks, kind="annotator", aspect="accuracy", model="") for it in items[::4])
    decoy_spans = ErrorSpan.objects.bulk_create(
        ErrorSpan(annotation=a, position=9, text="Sunday", start=40, end=46, match="exact",
                  explanation="The day is not in the data.", severity=2) for a in decoy_annotations)
    CheckSpan.objects.bulk_create(CheckSpan(campaign=campaign, span=s, campaign_run=campaign_run, role="decoy",
                                            key_span_verdict="not_error", key_explanation_verdict="not_error")
                                  for s in decoy_spans)
    link = StudyLink.objects.create(campaign=campaign, token=uuid.uuid4().hex, pass_code="PASS", fail_code="FAIL",
                                    items=[it.pk for it in items])
    users = User.objects.bulk_create(User(username=f"p-{nonce}-{i}", role=Role.ANNOTATOR)
                                     for i in range(n_participants))
    now = timezone.now()
    Participant.objects.bulk_create(Participant(link=link, user=u, prolific_pid=f"PID{i:05d}")
                                    for i, u in enumerate(users))
    by_item = {}
    for s in [*spans, *decoy_spans]:
        by_item.setdefault(s.annotation.item_id, []).append(s)
    assignments = []
    for i, user in enumerate(users):
        for k in range(ITEMS_EACH):
            it = items[(i * ITEMS_EACH // 2 + k) % n_items]
            assignments.append(Assignment(campaign=campaign, item=it, annotator=user, order=k + 1, status="done",
                                          phase="done", started_at=now, finished_at=now, seconds_spent=90,
                                          active_seconds=60.0))
    assignments = Assignment.objects.bulk_create(assignments, batch_size=5000, ignore_conflicts=False)
    judgments = []
    for a in assignments:
        for s in by_item[a.item_id]:
            confirm = (a.annotator_id + s.pk) % 3 != 0  # most confirm, so decoys catch some of them
            judgments.append(SpanJudgment(span=s, annotator_id=a.annotator_id, assignment=a,
                                          span_verdict="error" if confirm else "not_error",
                                          explanation_verdict="correct" if confirm else "not_error"))
    judgments = SpanJudgment.objects.bulk_create(judgments, batch_size=5000)
    JudgmentEvent.objects.bulk_create(
        (JudgmentEvent(judgment=j, user_id=j.annotator_id, field="span_verdict", old_value="", new_value=j.span_verdict,
                       ms=400 + (j.pk % 7) * 300) for j in judgments), batch_size=5000)
    researcher = User.objects.create(username=f"bench-researcher-{nonce}", role=Role.RESEARCHER)
    return campaign, researcher, len(judgments)


def _time(client, url: str, repeat: int, clear) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(repeat):
        clear()
        start = time.perf_counter()
        response = client.get(url)
        cold.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
        start = time.perf_counter()
        client.get(url)
        warm.append(time.perf_counter() - start)
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ensure_postgres_database("bench/participants_page.py")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from quality.selectors import vigilance

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    campaign, researcher, n_judgments = _generate(args.participants)
    print(f"generated {args.participants} participants, {n_judgments} judgments in "
          f"{time.perf_counter() - started:.1f} s")
    client = Client()
    client.force_login(researcher)
    load = os.getloadavg()[0]
    for name, url in (("participants page", f"/campaigns/{campaign.pk}/participants/"),
                      ("vigilance API", f"/api/campaigns/{campaign.pk}/vigilance")):
        cold, warm = _time(client, url, args.repeat, vigilance._MEMO.clear)
        verdict = "meets" if cold <= TARGET_SECONDS else "MISSES"
        print(f"{name:18s} cold {cold:.3f} s  warm {warm:.3f} s  (target <= {TARGET_SECONDS:.1f} s: {verdict})")
    print(f"load average at the start: {load:.2f} on {os.cpu_count()} cores (other work shares the machine)")


if __name__ == "__main__":
    main()
