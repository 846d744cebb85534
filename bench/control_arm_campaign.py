"""A simulated campaign with a crossed control arm, end to end, and its priming figures.

RotoWire summaries with their gold factual-error spans are imported; an OpeNLGauge ensemble (two annotator
models and a supervisor) pre-annotates them on the simulated Ollama (tests/ollama_sim, default answers: errors
at words the inputs do not have); a campaign with `control_arm` 0.5 and two judges per output is created through
the API; four scripted experts work every assignment through the API (marks, Done marking, verdicts, added
errors, working time, Finish); then `manage.py priming` prints the figures and the labeled set's data card
its design.

The experts' behaviour is invented, and says so: the gold spans stand for the true errors. Working alone an
expert finds each true error with probability FIND and marks one false alarm on FALSE_ALARM of the outputs.
Shown a machine span, they confirm it with probability CONFIRM_TRUE if it overlaps a true error, CONFIRM_FALSE
otherwise (the suggestion sways them); shown spans from the start, they add a true error no machine span
covers with probability ADD_MISSED (suggestions narrow the search). Time: marking 30 s + 45 s per mark;
primed 20 s + 15 s per machine span + 40 s per added error (ESA vs ESA^AI report 71 s vs 31 s per span).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/control_arm_campaign.py \
        [--items 24] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)

from bench.pgdb import allow_servers, ensure_postgres_database  # noqa: E402

FIND, FALSE_ALARM, CONFIRM_TRUE, CONFIRM_FALSE, ADD_MISSED = 0.6, 0.3, 0.9, 0.3, 0.35
MODELS = ("bench-ann-a:7b", "bench-ann-b:7b")
SUPERVISOR = "bench-sup:7b"


def rotowire_rows(count: int) -> list[dict] | None:
    root = Path(os.environ.get("SPANJUDGE_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")
    path = root.expanduser() / "rotowire" / "train.jsonl"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()][:count]


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = rotowire_rows(args.items)
    if rows is None:
        print("needs rotowire/train.jsonl in $SPANJUDGE_DATA or ../shared/data; it is not there: nothing was run.")
        return 0
    ensure_postgres_database("bench/control_arm_campaign.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from ninja.testing import TestClient

    from accounts.models import User
    from analytics.exports.labeled import labeled_card
    from annotator.models import Campaign
    from config.api import api
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, Source, SourceKind, TaskType
    from evaluation.models import EvaluatorRun
    from evaluation.runs.launch import run_create
    from jobs.kinds import job_execute
    from tests.ollama_sim import OllamaSim, SimConfig

    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    dataset = Dataset.objects.create(name=f"bench-control-arm-{nonce}", task=task, input_headers=["Data"],
                                     output_header="Summary")
    gold_source = Source.objects.create(label=f"gold-{nonce}", kind=SourceKind.IMPORT)
    truth: dict[int, list[tuple[int, int, str]]] = {}
    for i, row in enumerate(rows):
        item = Item.objects.create(dataset=dataset, position=i, external_id=f"{row['id']}-{nonce}",
                                   inputs={"Data": row["inputs"]["Data"]}, output=row["outputs"]["Summary"])
        gold = Annotation.objects.create(item=item, source=gold_source, kind=AnnotationKind.GOLD, aspect="")
        ErrorSpan.objects.bulk_create(
            ErrorSpan(annotation=gold, position=k, text=s["text"], start=s["start"], end=s["end"],
                      category=s.get("category") or "", explanation=s.get("explanation") or "")
            for k, s in enumerate(row["spans"])
        )
        truth[item.pk] = [(s["start"], s["end"], s.get("category") or "") for s in row["spans"]]

    config = SimConfig(models=[*MODELS, SUPERVISOR], parallel=4, max_loaded=1)
    with OllamaSim(config) as sim:
        allow_servers(sim.url)
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=list(MODELS), supervisor=SUPERVISOR,
                         ollama_url=sim.url, parallel=4)
        status = job_execute(EvaluatorRun, run.pk)
    run.refresh_from_db()
    print(f"ensemble run on the simulated Ollama: {status}, {len(rows)} RotoWire outputs")

    researcher = User.objects.create_user(username=f"res-{nonce}", password="x" * 12, role="researcher")
    experts = [User.objects.create_user(username=f"exp{k}-{nonce}", password="x" * 12, role="annotator")
               for k in range(4)]
    client = TestClient(api)
    made = client.post("/campaigns", user=researcher, json={
        "name": f"Control arm {nonce}", "dataset_id": dataset.pk, "run_ids": [run.pk],
        "annotators": [e.username for e in experts], "aspects": ["accuracy"], "annotators_per_item": 2,
        "seed": args.seed, "control_arm": 0.5,
    })
    assert made.status_code == 201, made.content
    campaign = Campaign.objects.get(pk=made.json()["id"])

    rng = random.Random(args.seed)
    for expert in experts:
        page = 1
        while True:
            listing = client.get(f"/assignments?campaign_id={campaign.pk}&page={page}", user=expert).json()
            for row in listing["items"]:
                work(client, expert, row["id"], truth, rng)
            if page * len(listing["items"] or [1]) >= listing["count"] or not listing["items"]:
                break
            page += 1

    out = client.get(f"/analytics/campaigns/{campaign.pk}/priming", user=researcher).json()
    card = labeled_card(campaign, fmt="jsonl")["control_arm"]
    print(f"campaign {campaign.pk}: {card['outputs_in_arm']} of {len(rows)} outputs in the control arm, "
          f"{card['unprimed_assignments']} unprimed assignments (all revealed: {card['revealed_assignments']})")
    for r in out:
        epo, sec = r["errors_per_output"], r["seconds_per_span"]
        print(f"evaluator {r['evaluator']}:")
        for name in ("recall", "precision_confirmed", "precision_found", "accepted_unfound"):
            print("  " + share(name, r[name]))
        print(f"  errors per output: primed {epo['primed']:.2f}, unprimed {epo['unprimed']:.2f}, difference "
              f"{epo['difference']:+.2f} [{epo['ci_low']:+.2f}, {epo['ci_high']:+.2f}] over {epo['n_outputs']} "
              "crossed outputs")
        print(f"  seconds per error span: primed {sec['primed']:.1f}, unprimed {sec['unprimed']:.1f} "
              "(ESA^AI vs ESA: 31 s vs 71 s)")
    print(card["reading"])
    return 0


def share(name: str, f: dict) -> str:
    if f["value"] is None:
        return f"{name} — (n={f['n']})"
    return f"{name} {100 * f['value']:.1f}% [{100 * f['ci_low']:.1f}, {100 * f['ci_high']:.1f}] n={f['n']}"


def work(client, expert, assignment_id: int, truth: dict[int, list[tuple[int, int, str]]],
         rng: random.Random) -> None:
    """One scripted expert on one assignment, through the API only (module docstring)."""
    from annotator.models import Assignment

    item_id = Assignment.objects.values_list("item_id", flat=True).get(pk=assignment_id)
    true = truth[item_id]
    detail = client.get(f"/assignments/{assignment_id}", user=expert).json()
    output = detail["item"]["output"]
    marked: list[tuple[int, int]] = []
    seconds = 0
    unprimed = detail["phase"] == "marking"
    if unprimed:
        assert detail["errors"] == [] and detail["n_total"] is None  # nothing of the machine's shows
        for start, end, category in true:
            if rng.random() < FIND:
                add(client, expert, assignment_id, start, end, category)
                marked.append((start, end))
        if rng.random() < FALSE_ALARM:
            words = [(m.start(), m.end()) for m in re.finditer(r"\w+", output)]
            start, end = rng.choice(words)
            if not any(overlaps((start, end), (a, b)) for a, b, _ in true):
                add(client, expert, assignment_id, start, end, "OTHER")
                marked.append((start, end))
        report_time(client, expert, assignment_id, 30 + 45 * len(marked))
        detail = client.post(f"/assignments/{assignment_id}/reveal", user=expert, json={"seconds": 0}).json()
        assert detail["phase"] == "judging"
    covered = []
    for error in detail["errors"]:
        place = (error["start"], error["end"]) if error["start"] is not None else None
        real = place is not None and any(overlaps(place, (a, b)) for a, b, _ in true)
        confirm = rng.random() < (CONFIRM_TRUE if real else CONFIRM_FALSE)
        if place is not None:
            covered.append(place)
        client.post(f"/assignments/{assignment_id}/judgments", user=expert, json={
            "span_id": error["span_id"], "span_verdict": "error" if confirm else "not_error",
            "explanation_verdict": "correct" if confirm else "not_error",
        })
        seconds += 15
    if not unprimed:  # primed from the start: add some of the true errors no machine span covers
        for start, end, category in true:
            if not any(overlaps((start, end), p) for p in covered) and rng.random() < ADD_MISSED:
                add(client, expert, assignment_id, start, end, category)
                seconds += 40
        seconds += 20
    report_time(client, expert, assignment_id, seconds)
    finished = client.post(f"/assignments/{assignment_id}/finish", user=expert, json={"seconds": 0})
    assert finished.status_code == 200, finished.content


def report_time(client, expert, assignment_id: int, seconds: int) -> None:
    """As the screen's timer does: in reports of at most five minutes each (the server caps one report)."""
    while seconds > 0:
        client.post(f"/assignments/{assignment_id}/time", user=expert, json={"seconds": min(seconds, 300)})
        seconds -= 300


def add(client, expert, assignment_id: int, start: int, end: int, category: str) -> None:
    answer = client.post(f"/assignments/{assignment_id}/added-spans", user=expert,
                         json={"start": start, "end": end, "category": category if category else ""})
    if answer.status_code != 201:
        answer = client.post(f"/assignments/{assignment_id}/added-spans", user=expert,
                             json={"start": start, "end": end})
    assert answer.status_code == 201, answer.content


if __name__ == "__main__":
    sys.exit(main())
