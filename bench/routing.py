"""Benchmark: routed judging on RotoWire against full judging, and the planner's interval width against the
width a full campaign gets.

RotoWire summaries with their gold factual-error spans are imported. A simulated ensemble of five annotator
models (invented, and said so: the run is marked simulated) proposes spans: model m flags each gold error with
probability RECALL[m] and each of DISTRACTORS stretches the gold does not mark (numbers and capitalised words)
with probability FALSE_ALARM[m]; the merged answer keeps every stretch at least one model flagged, and the
product computes each span's k of n (evaluation.services.confidence). Scripted experts follow the gold: a span
is an error when it overlaps a gold span, except that each verdict slips to the other answer with probability
SLIP (seeded per campaign). Active time: 20 s per output + 31 s per judged span (ESA^AI's figure per span).

1. Routed campaigns (CAMPAIGNS of them, each seed s: OUTPUTS of the summaries drawn, the experts' slips, and the
   audit draw): the design-weighted span accuracy (Span OK for all spans) with its 95% interval, beside the
   full-judging value (the same experts judging every span). Reported: the interval's coverage of that value
   (target 93-97%), the share of spans experts judge (target: at least 30% fewer than full judging) and the
   expert seconds saved. The estimate is made by the product's own functions (stats.routing.route with the
   product's seed, stats.sampling.stratified_estimate over the routes); DB_CHECKS of the campaigns also go
   through the whole product (campaign_create with routing, judgments, analytics.selectors.routing) and must
   give the same interval to the last digit.
2. The planner: a pilot campaign on PILOT outputs (full judging), `manage.py plan_study`'s ci_width for OUTPUTS
   outputs x 1 judge, against Table 4's 95% interval width of a full campaign on OUTPUTS other draws (target:
   within 20%).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/routing.py \
        [--campaigns 1000] [--min-k 3] [--audit-rate 0.2] [--seed 1] [--db-checks 5] [--planner-runs 40]
        [--also 0.05,0.1,0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)

from bench.pgdb import ensure_postgres_database  # noqa: E402

MODELS = ("sim-a", "sim-b", "sim-c", "sim-d", "sim-e")
RECALL = (0.8, 0.75, 0.7, 0.65, 0.6)
FALSE_ALARM = (0.3, 0.25, 0.25, 0.2, 0.15)
DISTRACTORS = 14  # candidate false alarms per summary
SLIP = 0.05
OUTPUTS = 40
PILOT = 20
DB_CHECKS = 5
PLANNER_RUNS = 40
SECONDS_PER_OUTPUT, SECONDS_PER_SPAN = 20.0, 31.0
COVERAGE_TARGET = (0.93, 0.97)


def rotowire_rows() -> list[dict] | None:
    root = Path(os.environ.get("SPANJUDGE_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")
    path = root.expanduser() / "rotowire" / "train.jsonl"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def build(rows: list[dict], rng: np.random.Generator):
    """The dataset, its gold, and the simulated ensemble's run with every span's k computed by the product."""
    from corpus.models import (
        Annotation,
        AnnotationKind,
        Dataset,
        ErrorSpan,
        Item,
        ParseStatus,
        Source,
        SourceKind,
        TaskType,
    )
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from evaluation.services.confidence import confidence_store
    from jobs.models import JobStatus

    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    dataset = Dataset.objects.create(name=f"bench-routing-{nonce}", task=task, input_headers=["Data"],
                                     output_header="Summary")
    gold_source = Source.objects.create(label=f"gold-{nonce}", kind=SourceKind.IMPORT)
    evaluator = Evaluator.objects.create(name=f"bench-routing-ensemble-{nonce}", kind=Evaluator.Kind.ENSEMBLE)
    run = EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, label=f"routing-ens-{nonce}",
                                      aspect=Aspect.objects.get(task=task, name="accuracy"), status=JobStatus.DONE,
                                      simulated=True, config={"annotators": list(MODELS)})
    truth: dict[int, list[tuple[int, int]]] = {}
    spans: list[ErrorSpan] = []
    for i, row in enumerate(rows):
        output = row["outputs"]["Summary"]
        item = Item.objects.create(dataset=dataset, position=i, external_id=f"{row['id']}-{nonce}",
                                   inputs={"Data": row["inputs"]["Data"]}, output=output)
        gold = Annotation.objects.create(item=item, source=gold_source, kind=AnnotationKind.GOLD, aspect="")
        spans += [ErrorSpan(annotation=gold, position=k, text=s["text"], start=s["start"], end=s["end"],
                            category=s.get("category") or "") for k, s in enumerate(row["spans"])]
        truth[item.pk] = [(s["start"], s["end"]) for s in row["spans"]]
        candidates = [(s["start"], s["end"], s.get("category") or "", True) for s in row["spans"]]
        words = [(m.start(), m.end()) for m in re.finditer(r"\b(?:\d+|[A-Z][a-z]+)\b", output)]
        free = [w for w in words if not any(overlaps(w, g) for g in truth[item.pk])]
        for j in rng.choice(len(free), size=min(DISTRACTORS, len(free)), replace=False):
            start, end = free[j]
            candidates.append((start, end, "NUMBER" if output[start].isdigit() else "NAME", False))
        flagged = [[bool(rng.random() < (RECALL[m] if real else FALSE_ALARM[m])) for m in range(len(MODELS))]
                   for *_, real in candidates]
        for m, model in enumerate(MODELS):
            own = Annotation.objects.create(item=item, source=run, kind=AnnotationKind.ANNOTATOR, model=model,
                                            aspect="accuracy", parse_status=ParseStatus.OK)
            spans += [ErrorSpan(annotation=own, position=p, text=output[s:e], start=s, end=e, category=c,
                                severity=int(rng.integers(1, 6)))
                      for p, (s, e, c, _) in enumerate(x for x, f in zip(candidates, flagged, strict=True) if f[m])]
        Annotation.objects.create(item=item, source=run, kind=AnnotationKind.SUPERVISOR, model="sim-sup",
                                  aspect="accuracy", parse_status=ParseStatus.OK)
        merged = Annotation.objects.create(item=item, source=run, kind=AnnotationKind.ENSEMBLE, model="sim-sup",
                                           aspect="accuracy", parse_status=ParseStatus.OK)
        kept = sorted((x for x, f in zip(candidates, flagged, strict=True) if any(f)), key=lambda x: x[0])
        spans += [ErrorSpan(annotation=merged, position=p, text=output[s:e], start=s, end=e, category=c,
                            explanation="simulated", severity=3) for p, (s, e, c, _) in enumerate(kept)]
    ErrorSpan.objects.bulk_create(spans, batch_size=2000)
    confidence_store(run_ids=[run.pk])
    return dataset, run, truth


def population(run) -> dict[int, list[tuple[int, int, tuple[int, int]]]]:
    """Item id -> (span id, k, offsets) of every merged span, as the product stored them."""
    from corpus.models import AnnotationKind, ErrorSpan

    out: dict[int, list[tuple[int, int, tuple[int, int]]]] = {}
    rows = ErrorSpan.objects.filter(annotation__source=run, annotation__kind=AnnotationKind.ENSEMBLE).values_list(
        "pk", "annotation__item_id", "start", "end", "confidence__k").order_by("pk")
    for pk, item_id, start, end, k in rows:
        out.setdefault(item_id, []).append((pk, k, (start, end)))
    return out


def verdicts_for(spans: list[tuple[int, int, tuple[int, int]]], item_truth: dict[int, list[tuple[int, int]]],
                 item_of: dict[int, int], rng: np.random.Generator) -> dict[int, bool]:
    """The scripted experts' span verdicts (Error or not) on these spans, with their slips."""
    out = {}
    for pk, _, place in spans:
        real = any(overlaps(place, g) for g in item_truth[item_of[pk]])
        out[pk] = real != bool(rng.random() < SLIP)
    return out


def routed_estimate(units: list[tuple[int, int]], verdicts: dict[int, bool], *, min_k: int, audit_rate: float,
                    seed: int, run_id: int):
    """The product's estimate for one routed campaign: its routes and the stratified estimator over them."""
    from stats.routing import CONFIDENT, UNCERTAIN, route
    from stats.sampling import Stratum, stratified_estimate

    routes = route(units, min_k=min_k, audit_rate=audit_rate, seed=seed + run_id)
    strata = []
    for name, judged in ((CONFIDENT, routes.audit), (UNCERTAIN, routes.expert)):
        if routes.population.get(name):
            strata.append(Stratum(name, routes.population[name], len(judged), sum(verdicts[k] for k in judged)))
    return routes, stratified_estimate(sorted(strata, key=lambda s: s.name), seed=seed)


def db_campaign(dataset, run, item_ids, verdicts, *, seed, routing=None, name=""):
    """A campaign through the product: created, every shown span judged by the script, every output finished."""
    from accounts.models import User
    from annotator.models import Assignment, SpanJudgment
    from annotator.selectors.spans import judged_spans
    from studies.setup import CampaignSpec, campaign_create

    expert, _ = User.objects.get_or_create(username=f"bench-routing-{dataset.pk}", defaults={"role": "annotator"})
    campaign = campaign_create(CampaignSpec(name=name or f"bench routing {dataset.pk} {seed} {uuid.uuid4().hex[:6]}",
                                            dataset=dataset, runs=[run], annotators=[expert], aspects=["accuracy"],
                                            seed=seed, item_ids=item_ids, routing=routing))
    rows = []
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign"):
        shown = judged_spans(assignment)
        for span, _ in shown:
            ok = verdicts[span.pk]
            rows.append(SpanJudgment(span=span, assignment=assignment, annotator=expert,
                                     span_verdict="error" if ok else "not_error",
                                     explanation_verdict="correct" if ok else "not_error"))
        Assignment.objects.filter(pk=assignment.pk).update(
            status="done", phase="done", active_seconds=SECONDS_PER_OUTPUT + SECONDS_PER_SPAN * len(shown))
    SpanJudgment.objects.bulk_create(rows, batch_size=2000)
    return campaign


def sweep(campaigns: int, base_seed: int, items, by_item, truth, item_of, run, *, min_k: int, audit_rate: float,
          db=None) -> dict:
    """`campaigns` seeded routed campaigns: coverage, expert share, bias, widths, time saved; with `db` (the
    dataset, how many), the first ones also go through the whole product, which must agree."""
    from analytics.selectors.routing import routing_report
    from annotator.services.routing import RoutingSpec

    hits, shares, errors, widths, saved, checks = [], [], [], [], [], []
    for c in range(campaigns):
        seed = base_seed * 100_000 + c
        rng = np.random.default_rng(seed)
        chosen = sorted(rng.choice(items, size=OUTPUTS, replace=False).tolist())
        spans = [s for i in chosen for s in by_item[i]]
        verdicts = verdicts_for(spans, truth, item_of, rng)
        full = sum(verdicts.values()) / len(spans)
        routes, est = routed_estimate([(pk, k) for pk, k, _ in spans], verdicts, min_k=min_k,
                                      audit_rate=audit_rate, seed=seed, run_id=run.pk)
        hits.append(est.low <= full <= est.high)
        judged = len(routes.expert) + len(routes.audit)
        shares.append(judged / len(spans))
        errors.append(est.point - full)
        widths.append(est.high - est.low)
        assigned = len({item_of[pk] for pk in [*routes.expert, *routes.audit]})  # outputs with a span for experts
        seconds_per_span = (SECONDS_PER_OUTPUT * assigned + SECONDS_PER_SPAN * judged) / judged
        saved.append(len(routes.auto) * seconds_per_span)
        if db is not None and c < db[1]:
            campaign = db_campaign(db[0], run, chosen, verdicts, seed=seed,
                                   routing=RoutingSpec(min_k, audit_rate, seed=seed))
            report = routing_report(campaign)
            product = report.evaluators[0].estimate.span_ok.estimate
            checks.append((product.point, product.low, product.high) == (est.point, est.low, est.high)
                          and abs(report.expert_seconds_saved - saved[-1]) < 1e-6)
    return {"coverage": float(np.mean(hits)), "share": float(np.mean(shares)), "bias": float(np.mean(errors)),
            "bias_se": float(np.std(errors) / np.sqrt(len(errors))), "width": float(np.median(widths)),
            "saved": float(np.median(saved)), "checks": checks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--min-k", type=int, default=3)
    parser.add_argument("--audit-rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db-checks", type=int, default=DB_CHECKS, help="Campaigns also run through the product.")
    parser.add_argument("--planner-runs", type=int, default=PLANNER_RUNS)
    parser.add_argument("--also", default="0.05,0.1,0.5",
                        help="Other audit rates to report (their campaigns through the estimator only).")
    args = parser.parse_args()
    rows = rotowire_rows()
    if rows is None:
        print("needs rotowire/train.jsonl in $SPANJUDGE_DATA or ../shared/data; it is not there: nothing was run.")
        return 0
    ensure_postgres_database("bench/routing.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from analytics.selectors import Scope, accuracy_report
    from annotator.selectors.pilot import campaign_plan

    started = time.perf_counter()
    dataset, run, truth = build(rows, np.random.default_rng(args.seed))
    by_item = population(run)
    item_of = {pk: item_id for item_id, spans in by_item.items() for pk, _, _ in spans}
    ks = np.array([k for spans in by_item.values() for _, k, _ in spans])
    real = np.array([any(overlaps(p, g) for g in truth[item_of[pk]]) for spans in by_item.values()
                     for pk, _, p in spans])
    print(f"RotoWire: {len(rows)} summaries, {sum(len(t) for t in truth.values())} gold errors; simulated ensemble "
          f"of {len(MODELS)} models: {len(ks)} merged spans, built in {time.perf_counter() - started:.1f} s")
    for k in range(1, len(MODELS) + 1):
        at = ks == k
        print(f"  k={k}: {at.sum():5d} spans, {real[at].mean() if at.any() else float('nan'):6.1%} overlap gold")
    items = sorted(by_item)

    # 1. routed campaigns through the product's estimator
    started = time.perf_counter()
    main_rate = sweep(args.campaigns, args.seed, items, by_item, truth, item_of, run, min_k=args.min_k,
                      audit_rate=args.audit_rate, db=(dataset, args.db_checks))
    coverage, share, checks = main_rate["coverage"], main_rate["share"], main_rate["checks"]
    in_target = COVERAGE_TARGET[0] <= coverage <= COVERAGE_TARGET[1]
    print(f"\n{args.campaigns} routed campaigns of {OUTPUTS} outputs (min_k {args.min_k} of {len(MODELS)}, audit rate "
          f"{args.audit_rate}), {time.perf_counter() - started:.1f} s:")
    print(f"  coverage of the full-judging span accuracy by the 95% interval: {coverage:.1%}  target "
          f"{COVERAGE_TARGET[0]:.0%}-{COVERAGE_TARGET[1]:.0%} {'ok' if in_target else 'OUT'} "
          f"(Monte Carlo se {np.sqrt(coverage * (1 - coverage) / args.campaigns):.1%})")
    print(f"  spans experts judge: {share:.1%} of full judging ({1 - share:.1%} fewer)  target >= 30% fewer "
          f"{'ok' if share <= 0.7 else 'OUT'}")
    print(f"  estimate minus full value: mean {main_rate['bias']:+.4f} (MC se {main_rate['bias_se']:.4f}); "
          f"interval width median {main_rate['width']:.3f}")
    print(f"  expert time saved per campaign: median {main_rate['saved']:.0f} s ({main_rate['saved'] / 3600:.2f} h) "
          f"at {SECONDS_PER_SPAN:.0f} s per span + {SECONDS_PER_OUTPUT:.0f} s per output")
    print(f"  the whole product agrees with this estimate on {sum(checks)} of {len(checks)} campaigns run through it")
    rates = [float(r) for r in args.also.split(",") if r.strip()]
    if rates:
        print("  what the audit rate buys (same campaigns, estimator only):")
    for rate in rates:
        other = sweep(args.campaigns, args.seed, items, by_item, truth, item_of, run, min_k=args.min_k,
                      audit_rate=rate)
        print(f"    audit rate {rate:4.2f}: experts judge {other['share']:.1%}, coverage {other['coverage']:.1%}, "
              f"interval width median {other['width']:.3f}, saved {other['saved'] / 3600:.2f} h")

    # 2. the planner: a pilot of PILOT outputs predicts the width a campaign of OUTPUTS outputs gets
    ratios = []
    started = time.perf_counter()
    for p in range(args.planner_runs):
        rng = np.random.default_rng(args.seed * 7919 + p)
        shuffled = rng.permutation(items).tolist()
        pilot_items = sorted(shuffled[:PILOT])
        rest = shuffled[PILOT:] if len(shuffled) >= PILOT + OUTPUTS else shuffled  # other outputs when there are
        full_items = sorted(rest[:OUTPUTS])
        verdicts = verdicts_for([s for i in items for s in by_item[i]], truth, item_of, rng)
        pilot = db_campaign(dataset, run, pilot_items, verdicts, seed=p)
        plan = campaign_plan(pilot, outputs=OUTPUTS, judges=1, seed=p)
        predicted = plan.ci_width[run.label]
        full = db_campaign(dataset, run, full_items, verdicts, seed=p)
        ci = accuracy_report(Scope(campaign_id=full.pk), seed=p).by_run[run.pk].span_ok_ci
        ratios.append(predicted / (ci.high - ci.low))
    ratios_a = np.array(ratios)
    within = float(np.mean(np.abs(ratios_a - 1) <= 0.2))
    print(f"\nplanner, {args.planner_runs} pilots of {PILOT} outputs predicting {OUTPUTS} outputs x 1 judge "
          f"({time.perf_counter() - started:.1f} s): predicted / actual 95% width median {np.median(ratios_a):.2f} "
          f"(mean {ratios_a.mean():.2f}); within 20%: {within:.0%} of pilots; median within 20% "
          f"{'ok' if abs(np.median(ratios_a) - 1) <= 0.2 else 'OUT'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
