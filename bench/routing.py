"""Benchmark: routed judging on RotoWire against full judging, four designs at equal budgets and equal width,
and the planner's interval width against the width a full campaign gets.

RotoWire summaries with their gold factual-error spans are imported. Two simulated evaluators (invented, and
said so: their runs are marked simulated), each an ensemble of five annotator models and a supervisor, propose
spans; the constants below are fixed before any comparison is run:
- model m of evaluator e flags each gold error with probability EVALUATORS[e][0][m] and each of DISTRACTORS
  stretches the gold does not mark (numbers and capitalised words) with probability EVALUATORS[e][1][m];
- severity tied to the truth: the models that flag a gold error give its one severity with probability
  SEVERITY_MATCH (else 1-5 at random); on a false alarm each gives 1-5 at random;
- category tied to the truth: a gold error's gold category with probability CATEGORY_MATCH, else (and on every
  false alarm) one of CATEGORIES at random;
- the supervisor keeps every stretch at least one model flagged, with the highest severity and the most given
  category, and adds a gold error no model flagged with probability SUPERVISOR_ADDS (a distractor with
  SUPERVISOR_ADDS_FALSE): its decision is `added` there, `kept` elsewhere.
The product computes each span's k of n, supervisor decision and agreements (evaluation.services.confidence);
the predictor reads those, the evaluator, the span's length and its category. Scripted experts follow the gold:
a span is an error when it overlaps a gold span, except that each verdict slips to the other answer with
probability SLIP (seeded per campaign). Active time: 20 s per output + 31 s per judged span (ESA^AI's figure).

1. Routed campaigns on the first evaluator (CAMPAIGNS of them, each seed s: OUTPUTS of the summaries drawn, the
   experts' slips, and the audit draw): the design-weighted span accuracy (Span OK for all spans) with its 95%
   interval, beside the full-judging value (the same experts judging every span). Reported: the interval's
   coverage of that value (target 93-97%), the share of spans experts judge (target: at least 30% fewer than
   full judging) and the expert seconds saved. The estimate is made by the product's own functions
   (stats.routing.route with the product's seed, stats.sampling.stratified_estimate over the routes);
   DB_CHECKS of the campaigns also go through the whole product (campaign_create with routing, judgments,
   analytics.selectors.routing) and must give the same interval to the last digit.
2. Four designs on the same seeded campaigns (both evaluators, `--compare-campaigns`): full judging (the value
   to cover), today's threshold design, PPI++ on a uniform Poisson sample, and active sampling with PPI++ (a
   uniform first batch of FIRST_BATCH of the budget, then a batch with probabilities from the cross-fitted
   predictor's uncertainty, floor MIN_PROBABILITY; the two batch estimates combined), all by stats.ppi. At equal
   budgets (each evaluator's judgments in the threshold design at each `--compare-rates` rate): coverage, median
   width and bias, with the human-sample-only estimate beside PPI++. At equal width: the share of spans each
   design judges for a median 95% width of TARGET_WIDTH (interpolated on AUDIT_GRID / SHARE_GRID), with the
   coverage at the grid point that reaches it; then the predictor's calibration (ECE and reliability table).
3. The planner: a pilot campaign on PILOT outputs (full judging), `manage.py plan_study`'s ci_width for OUTPUTS
   outputs x 1 judge, against Table 4's 95% interval width of a full campaign on OUTPUTS other draws (target:
   within 20%).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/routing.py \
        [--campaigns 1000] [--min-k 3] [--audit-rate 0.2] [--seed 1] [--db-checks 5] [--planner-runs 40]
        [--also 0.05,0.1,0.5] [--compare-campaigns 500] [--compare-rates 0.2,0.5]
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
EVALUATORS = {  # evaluator -> (recall, false-alarm rate) of its five models; the second one is noisier
    "ens-a": (RECALL, FALSE_ALARM),
    "ens-b": ((0.7, 0.65, 0.6, 0.55, 0.5), (0.35, 0.3, 0.3, 0.25, 0.2)),
}
CATEGORIES = ("NUMBER", "NAME", "WORD", "CONTEXT", "NOT_CHECKABLE", "OTHER")  # RotoWire's gold categories
SEVERITY_MATCH = 0.7  # a model flagging a gold error gives its severity; otherwise (and on false alarms) 1-5 at random
CATEGORY_MATCH = 0.8  # a model that flags a gold error gives its gold category; otherwise one of CATEGORIES at random
SUPERVISOR_ADDS = 0.3  # a gold error no model flagged that the supervisor adds anyway (k = 0, "added")
SUPERVISOR_ADDS_FALSE = 0.02  # a distractor no model flagged that the supervisor adds
SLIP = 0.05
MIN_PROBABILITY = 0.05  # the active design's floor (routing.min_probability)
TARGET_WIDTH = 0.06  # the equal-width comparison's full 95% width (routing.target_ci_width)
MAX_BATCHES = 8  # the planned active design stops here if the width is not reached
AUDIT_GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7)  # threshold design's audit rates for equal width
SHARE_GRID = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)  # budgets (share of spans) of the PPI++ designs
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
    """The dataset, its gold, and the two simulated evaluators' runs with every span's confidence computed by the
    product (k of n, the supervisor's decision, severity and category agreement)."""
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, Source, SourceKind, TaskType

    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    dataset = Dataset.objects.create(name=f"bench-routing-{nonce}", task=task, input_headers=["Data"],
                                     output_header="Summary")
    gold_source = Source.objects.create(label=f"gold-{nonce}", kind=SourceKind.IMPORT)
    truth: dict[int, list[tuple[int, int]]] = {}
    items = []
    spans: list[ErrorSpan] = []
    for i, row in enumerate(rows):
        output = row["outputs"]["Summary"]
        item = Item.objects.create(dataset=dataset, position=i, external_id=f"{row['id']}-{nonce}",
                                   inputs={"Data": row["inputs"]["Data"]}, output=output)
        gold = Annotation.objects.create(item=item, source=gold_source, kind=AnnotationKind.GOLD, aspect="")
        spans += [ErrorSpan(annotation=gold, position=k, text=s["text"], start=s["start"], end=s["end"],
                            category=s.get("category") or "") for k, s in enumerate(row["spans"])]
        truth[item.pk] = [(s["start"], s["end"]) for s in row["spans"]]
        items.append((item, row))
    ErrorSpan.objects.bulk_create(spans, batch_size=2000)
    runs = [_simulated_run(dataset, items, truth, nonce, name, recall, false_alarm, rng)
            for name, (recall, false_alarm) in EVALUATORS.items()]
    return dataset, runs, truth


def _simulated_run(dataset, items, truth, nonce, name, recall, false_alarm, rng):
    """One evaluator: five annotator models and a supervisor on every summary (see the module docstring)."""
    from corpus.models import Annotation, AnnotationKind, ErrorSpan, ParseStatus
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from evaluation.services.confidence import confidence_store
    from jobs.models import JobStatus

    evaluator = Evaluator.objects.create(name=f"bench-routing-{name}-{nonce}", kind=Evaluator.Kind.ENSEMBLE)
    run = EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, label=f"routing-{name}-{nonce}",
                                      aspect=Aspect.objects.get(task=dataset.task, name="accuracy"),
                                      status=JobStatus.DONE, simulated=True, config={"annotators": list(MODELS)})
    spans: list[ErrorSpan] = []
    for item, row in items:
        output = item.output
        candidates = [(s["start"], s["end"], s.get("category") or "OTHER", True) for s in row["spans"]]
        words = [(m.start(), m.end()) for m in re.finditer(r"\b(?:\d+|[A-Z][a-z]+)\b", output)]
        free = [w for w in words if not any(overlaps(w, g) for g in truth[item.pk])]
        for j in rng.choice(len(free), size=min(DISTRACTORS, len(free)), replace=False):
            start, end = free[j]
            candidates.append((start, end, "NUMBER" if output[start].isdigit() else "NAME", False))
        marks = []  # per candidate: per model, None or its (severity, category)
        for _, _, category, real in candidates:
            severity = int(rng.integers(1, 6))
            own = []
            for m in range(len(MODELS)):
                if rng.random() >= (recall[m] if real else false_alarm[m]):
                    own.append(None)
                    continue
                sev = severity if real and rng.random() < SEVERITY_MATCH else int(rng.integers(1, 6))
                cat = category if real and rng.random() < CATEGORY_MATCH else str(rng.choice(CATEGORIES))
                own.append((sev, cat))
            marks.append(own)
        for m, model in enumerate(MODELS):
            answer = Annotation.objects.create(item=item, source=run, kind=AnnotationKind.ANNOTATOR, model=model,
                                               aspect="accuracy", parse_status=ParseStatus.OK)
            mine = [(c, own[m]) for c, own in zip(candidates, marks, strict=True) if own[m] is not None]
            spans += [ErrorSpan(annotation=answer, position=p, text=output[s:e], start=s, end=e, category=cat,
                                severity=sev) for p, ((s, e, _, _), (sev, cat)) in enumerate(mine)]
        Annotation.objects.create(item=item, source=run, kind=AnnotationKind.SUPERVISOR, model="sim-sup",
                                  aspect="accuracy", parse_status=ParseStatus.OK)
        merged = Annotation.objects.create(item=item, source=run, kind=AnnotationKind.ENSEMBLE, model="sim-sup",
                                           aspect="accuracy", parse_status=ParseStatus.OK)
        kept = []
        for (s, e, category, real), own in zip(candidates, marks, strict=True):
            given = [x for x in own if x is not None]
            if given:  # the supervisor keeps the highest severity and the most given category
                cats = [c for _, c in given]
                kept.append((s, e, max(cats, key=cats.count), max(v for v, _ in given)))
            elif rng.random() < (SUPERVISOR_ADDS if real else SUPERVISOR_ADDS_FALSE):
                kept.append((s, e, category, 3))
        spans += [ErrorSpan(annotation=merged, position=p, text=output[s:e], start=s, end=e, category=c,
                            explanation="simulated", severity=v) for p, (s, e, c, v) in enumerate(sorted(kept))]
    ErrorSpan.objects.bulk_create(spans, batch_size=2000)
    confidence_store(run_ids=[run.pk])
    return run


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


def signal_population(runs, truth) -> dict:
    """Every merged span of both evaluators as arrays: item, evaluator, k, whether it overlaps gold, and the
    predictor's features built from the confidence rows the product stored."""
    from corpus.models import AnnotationKind, ErrorSpan
    from stats.ppi import SpanSignals, design_matrix

    index = {run.pk: e for e, run in enumerate(runs)}
    rows = list(ErrorSpan.objects.filter(annotation__source__in=runs, annotation__kind=AnnotationKind.ENSEMBLE)
                .values_list("pk", "annotation__item_id", "annotation__source_id", "start", "end", "category",
                             "confidence__k", "confidence__n", "confidence__supervisor",
                             "confidence__severity_agreement", "confidence__category_agreement").order_by("pk"))
    signals = [SpanSignals(k, n, sup, sev, cat_a, str(index[run]), end - start, category)
               for _, _, run, start, end, category, k, n, sup, sev, cat_a in rows]
    return {"pk": np.array([r[0] for r in rows]), "item": np.array([r[1] for r in rows]),
            "evaluator": np.array([index[r[2]] for r in rows]), "run_id": np.array([r[2] for r in rows]),
            "k": np.array([r[6] for r in rows]),
            "real": np.array([any(overlaps((r[3], r[4]), g) for g in truth[r[1]]) for r in rows]),
            "x": design_matrix(signals)}


def _threshold(pop, rows, y, rate, *, min_k, seed):
    """Today's design on each evaluator: (estimate, judged) per evaluator, by the product's functions."""
    from stats.routing import CONFIDENT, UNCERTAIN, route
    from stats.sampling import Stratum, stratified_estimate

    out = []
    for e in range(len(EVALUATORS)):
        mine = rows[pop["evaluator"][rows] == e]
        verdicts = dict(zip(pop["pk"][mine].tolist(), y[pop["evaluator"][rows] == e].tolist(), strict=True))
        routes = route(list(zip(pop["pk"][mine].tolist(), pop["k"][mine].tolist(), strict=True)), min_k=min_k,
                       audit_rate=rate, seed=seed + int(pop["run_id"][mine][0]))
        strata = [Stratum(name, routes.population[name], len(judged), sum(verdicts[k] for k in judged))
                  for name, judged in ((CONFIDENT, routes.audit), (UNCERTAIN, routes.expert))
                  if routes.population.get(name)]
        est = stratified_estimate(sorted(strata, key=lambda s: s.name), seed=seed)
        perfect = bool(routes.audit) and all(verdicts[k] for k in routes.audit)  # the audit's variance is 0
        out.append(((est.point, est.low, est.high), len(routes.expert) + len(routes.audit), perfect))
    return out


def _ppi(pop, rows, y, budgets, *, active, seed, rng, calibration=None):
    """PPI++ on each evaluator with an expected `budgets[e]` judgments: one uniform draw, or (active) a uniform
    first batch, then a batch drawn by the predicted uncertainty with the floor; the figures are the product's
    (stats.ppi.active_estimate over the batches)."""
    from stats.ppi import (
        FIRST_BATCH,
        DrawBatch,
        active_estimate,
        cross_fit,
        inclusion_probabilities,
        model_decision,
        poisson_draw,
    )

    ev = pop["evaluator"][rows]
    x = pop["x"][rows]
    first = np.zeros(len(rows))
    for e, budget in enumerate(budgets):
        first[ev == e] = min(1.0, (FIRST_BATCH if active else 1.0) * budget / (ev == e).sum())
    drawn = poisson_draw(first, rng)
    labels = {int(i): bool(y[i]) for i in np.flatnonzero(drawn)}
    f = cross_fit(x, labels, seed=seed)
    if f is None:
        f = np.full(len(rows), 0.5)
    if calibration is not None:
        calibration.append((f[drawn], y[drawn]))
    decision = model_decision(f)  # the label a span no expert judged gets
    out = []
    for e, budget in enumerate(budgets):
        mine = ev == e
        batches = [DrawBatch(first[mine], drawn[mine], f[mine])]
        now = drawn
        if active:
            rest = mine & ~drawn
            second = np.ones(len(rows))
            second[rest] = inclusion_probabilities(f[rest], size=int(rest.sum()),
                                                   budget=(1 - FIRST_BATCH) * budget, floor=MIN_PROBABILITY)
            now = drawn | (poisson_draw(second, rng) & rest)
            batches.append(DrawBatch(second[mine], now[mine], f[mine]))
        accuracy, labels = active_estimate(batches, labeled=np.ones(int(mine.sum()), dtype=bool), outcome=y[mine],
                                           decision=decision[mine])
        realized = float(((decision != y) & ~now & mine).sum() / mine.sum())
        out.append((accuracy, int(now[mine].sum()), labels, realized))
    return out


def compare(campaigns: int, base_seed: int, items, pop, *, min_k: int, rates: tuple[float, ...]) -> dict:
    """The four designs on the same seeded campaigns (the sweep's outputs and a fresh draw of the experts'
    slips): at the threshold design's budget for each rate, and on the grids for the equal-width comparison.
    Each record is (covered, width, judged share, estimate minus full value) per campaign and evaluator."""
    from collections import defaultdict

    records: dict = defaultdict(list)
    calibration: list = []
    item_rows = {i: np.flatnonzero(pop["item"] == i) for i in items}
    for c in range(campaigns):
        seed = base_seed * 100_000 + c
        rng = np.random.default_rng(seed)
        chosen = sorted(rng.choice(items, size=OUTPUTS, replace=False).tolist())
        rows = np.concatenate([item_rows[i] for i in chosen])
        y = pop["real"][rows] != (rng.random(len(rows)) < SLIP)
        ev = pop["evaluator"][rows]
        sizes = [int((ev == e).sum()) for e in range(len(EVALUATORS))]
        full = [float(y[ev == e].mean()) for e in range(len(EVALUATORS))]
        design_rng = np.random.default_rng(seed + 7)

        def note(key, e, low, high, point, judged, full=full, sizes=sizes):
            if point is None:  # nothing drawn where something had to be: no interval, counted as a miss
                low, high, point = 0.0, 1.0, full[e] + 1
            records[key].append((low <= full[e] <= high, high - low, judged / sizes[e], point - full[e]))

        for rate in sorted(set(rates) | set(AUDIT_GRID)):
            thresholds = _threshold(pop, rows, y, rate, min_k=min_k, seed=seed)
            for e, ((point, low, high), judged, perfect) in enumerate(thresholds):
                note(("threshold", rate), e, low, high, point, judged)
                records[("perfect audit", rate)].append(perfect)
            if rate not in rates:
                continue
            budgets = [judged for _, judged, _ in thresholds]
            for active in (False, True):
                found = _ppi(pop, rows, y, budgets, active=active, seed=seed, rng=design_rng,
                             calibration=calibration if not active and rate == rates[0] else None)
                for e, (est, judged, labels, realized) in enumerate(found):
                    name = "active+ppi++" if active else "ppi++ uniform"
                    note((name, rate), e, est.estimate.low, est.estimate.high, est.estimate.point, judged)
                    lab = labels.estimate
                    records[("labeled error", name, rate)].append(
                        (lab.low is not None and lab.low <= realized <= lab.high, realized,
                         np.nan if lab.point is None else lab.point))
                    if not active:
                        note(("human only", rate), e, est.classical.low, est.classical.high, est.classical.point,
                             judged)
        for share in SHARE_GRID:
            for active in (False, True):
                found = _ppi(pop, rows, y, [share * n for n in sizes], active=active, seed=seed, rng=design_rng)
                for e, (est, judged, _, _) in enumerate(found):
                    note(("active+ppi++" if active else "ppi++ uniform", f"share {share}"), e, est.estimate.low,
                         est.estimate.high, est.estimate.point, judged)
        for e, (est, judged, batches) in enumerate(_planned(pop, rows, y, seed=seed, rng=design_rng)):
            note(("active+ppi++ planned", TARGET_WIDTH), e, est.estimate.low, est.estimate.high, est.estimate.point,
                 judged)
            records[("planned batches", TARGET_WIDTH)].append(batches)
    return {"records": records, "calibration": calibration}


def _planned(pop, rows, y, *, seed, rng):
    """The product's active design run to routing.target_ci_width TARGET_WIDTH with the engine calls of
    annotator.services.routing: a uniform first batch of first_batch_budget, then top-ups of next_batch_budget
    from the predictor fitted on every label so far (seeded seed + batch, as the product seeds it), until each
    evaluator's interval reaches the width or MAX_BATCHES batches are drawn; (estimate, judged, batches) per
    evaluator. The stopping rule reads the data, so its coverage is measured, not assumed."""
    from stats.ppi import (
        DrawBatch,
        active_estimate,
        batch_shares,
        cross_fit,
        first_batch_budget,
        inclusion_probabilities,
        next_batch_budget,
        poisson_draw,
    )

    ev = pop["evaluator"][rows]
    x = pop["x"][rows]
    evaluators = range(len(EVALUATORS))
    first = np.zeros(len(rows))
    for e in evaluators:
        size = int((ev == e).sum())
        first[ev == e] = inclusion_probabilities(None, size=size, floor=MIN_PROBABILITY,
                                                 budget=first_batch_budget(size, target_ci_width=TARGET_WIDTH))
    drawn = poisson_draw(first, rng)
    fitted = cross_fit(x, {int(i): bool(y[i]) for i in np.flatnonzero(drawn)}, seed=seed)
    f = fitted if fitted is not None else np.full(len(rows), 0.5)
    batches = {e: [DrawBatch(first[ev == e], drawn[ev == e], f[ev == e])] for e in evaluators}
    everything = {e: np.ones(int((ev == e).sum()), dtype=bool) for e in evaluators}
    open_ = set(evaluators)
    for batch in range(1, MAX_BATCHES):
        fitted = cross_fit(x, {int(i): bool(y[i]) for i in np.flatnonzero(drawn)}, seed=seed + batch)
        f = fitted if fitted is not None else np.full(len(rows), 0.5)
        now = drawn.copy()
        for e in sorted(open_):
            mine = ev == e
            rest = mine & ~drawn
            budget, _ = next_batch_budget(f[rest], population=int(mine.sum()), drawn=int(drawn[mine].sum()),
                                          estimates=batch_shares(batches[e], labeled=everything[e], outcome=y[mine]),
                                          floor=MIN_PROBABILITY, target_ci_width=TARGET_WIDTH)
            if budget <= 0:
                open_.discard(e)
                continue
            probability = np.ones(len(rows))
            probability[rest] = inclusion_probabilities(f[rest], size=int(rest.sum()), budget=budget,
                                                        floor=MIN_PROBABILITY)
            now[rest] = poisson_draw(probability[rest], rng)
            batches[e].append(DrawBatch(probability[mine], now[mine], f[mine]))
        drawn = now
        if not open_:
            break
    out = []
    for e in evaluators:
        mine = ev == e
        share, _ = active_estimate(batches[e], labeled=everything[e], outcome=y[mine], decision=everything[e])
        out.append((share, int(drawn[mine].sum()), len(batches[e])))
    return out


def summary(rows: list) -> dict:
    a = np.array(rows, dtype=float)
    return {"coverage": a[:, 0].mean(), "width": float(np.median(a[:, 1])), "share": a[:, 2].mean(),
            "bias": a[:, 3].mean(), "n": len(a)}


def needed(points: list[tuple[float, dict]]) -> tuple[float | None, dict | None]:
    """The share of spans judged at which the median width reaches TARGET_WIDTH (linear between grid points),
    and the summary at the first grid point that reaches it."""
    points = sorted(points, key=lambda p: p[1]["share"])
    for (_, before), (_, after) in zip(points, points[1:], strict=False):
        if before["width"] <= TARGET_WIDTH:
            return before["share"], before
        if after["width"] <= TARGET_WIDTH:
            t = (before["width"] - TARGET_WIDTH) / (before["width"] - after["width"])
            return before["share"] + t * (after["share"] - before["share"]), after
    return (points[0][1]["share"], points[0][1]) if points and points[0][1]["width"] <= TARGET_WIDTH else (None, None)


def ece(calibration: list) -> tuple[float, list]:
    """Expected calibration error of the cross-fitted predictions on the judged spans, and the 10-bin table."""
    f = np.concatenate([p for p, _ in calibration])
    y = np.concatenate([v for _, v in calibration]).astype(float)
    bins = np.minimum((f * 10).astype(int), 9)
    table = [(b / 10, int((bins == b).sum()), float(f[bins == b].mean()), float(y[bins == b].mean()))
             for b in range(10) if (bins == b).any()]
    return float(sum(n * abs(p - o) for _, n, p, o in table) / len(f)), table


def report_comparison(out: dict, *, rates: tuple[float, ...], campaigns: int, seconds: float) -> None:
    records = out["records"]
    lo, hi = COVERAGE_TARGET
    print(f"\nfour designs on the same {campaigns} campaigns x {len(EVALUATORS)} evaluators ({seconds:.0f} s); "
          f"target coverage {lo:.0%}-{hi:.0%}")
    print("  full judging: every span judged (100%), the value the others must cover")
    for rate in rates:
        print(f"  equal budget: the threshold design's judgments at audit rate {rate}")
        for name in ("threshold", "ppi++ uniform", "human only", "active+ppi++"):
            got = summary(records[(name, rate)])
            ok = "ok" if lo <= got["coverage"] <= hi else "OUT"
            print(f"    {name:14s} judged {got['share']:6.1%}  coverage {got['coverage']:6.1%} {ok:3s} "
                  f"width median {got['width']:.3f}  bias {got['bias']:+.4f}")
    for rate in rates:
        for name in ("ppi++ uniform", "active+ppi++"):
            got = np.array(records[("labeled error", name, rate)], dtype=float)
            ok = "ok" if lo <= got[:, 0].mean() <= hi else "OUT"
            print(f"  labeled set's error rate ({name}, the budget of audit rate {rate}; model labels where no "
                  f"expert judged): realized mean {got[:, 1].mean():.3f}, estimated {np.nanmean(got[:, 2]):.3f}, "
                  f"coverage {got[:, 0].mean():.1%} {ok}")
    print(f"  equal width: judgments needed for a median full 95% width of {TARGET_WIDTH}")
    results = {}
    for name, grid in (("threshold", [(r, summary(records[("threshold", r)])) for r in AUDIT_GRID]),
                       ("ppi++ uniform", [(s, summary(records[("ppi++ uniform", f"share {s}")])) for s in SHARE_GRID]),
                       ("active+ppi++", [(s, summary(records[("active+ppi++", f"share {s}")])) for s in SHARE_GRID])):
        share, at = needed(grid)
        results[name] = share
        if share is None or at is None:
            print(f"    {name:14s} not reached on its grid")
            continue
        ok = "ok" if lo <= at["coverage"] <= hi else "OUT"
        print(f"    {name:14s} judges {share:6.1%} of spans ({1 - share:.1%} fewer than full judging); coverage "
              f"{at['coverage']:.1%} {ok} at the grid point that reaches it (judged {at['share']:.1%}, width "
              f"{at['width']:.3f})")
    planned = records[("active+ppi++ planned", TARGET_WIDTH)]
    got = summary(planned)
    batches = np.array(records[("planned batches", TARGET_WIDTH)])
    reached = np.mean([width <= TARGET_WIDTH + 1e-9 for _, width, _, _ in planned])
    ok = "ok" if lo <= got["coverage"] <= hi else "OUT"
    print(f"    active+ppi++ planned by the product's top-ups to routing.target_ci_width {TARGET_WIDTH}: judges "
          f"{got['share']:6.1%} of spans, coverage {got['coverage']:.1%} {ok}, width median {got['width']:.3f} "
          f"(width reached in {reached:.0%}), batches mean {batches.mean():.1f} (max {batches.max()})")
    results["planned"] = got["share"]
    print("  the threshold design on its grid (where its small-rate shortfall comes from):")
    for rate in AUDIT_GRID:
        got = summary(records[("threshold", rate)])
        perfect = np.array(records[("perfect audit", rate)])
        hits = np.array([r[0] for r in records[("threshold", rate)]])
        print(f"    audit rate {rate:4.2f}: judged {got['share']:6.1%}, coverage {got['coverage']:6.1%}, width median "
              f"{got['width']:.3f}; audits confirming every audited span (no variance) {perfect.mean():6.1%} (coverage "
              f"{hits[perfect].mean() if perfect.any() else float('nan'):6.1%} there, "
              f"{hits[~perfect].mean() if (~perfect).any() else float('nan'):6.1%} elsewhere)")
    if results.get("threshold") and results.get("active+ppi++"):
        ratio = results["active+ppi++"] / results["threshold"]
        print(f"    active+ppi++ / threshold judgments: {ratio:.2f}  target <= 1.00 "
              f"{'ok' if ratio <= 1 else 'OUT'}; stretch <= 0.60 {'ok' if ratio <= 0.6 else 'not met'}")
        ratio = results["planned"] / results["threshold"]
        print(f"    active+ppi++ planned / threshold judgments: {ratio:.2f}  target <= 1.00 "
              f"{'ok' if ratio <= 1 else 'OUT'}; stretch <= 0.60 {'ok' if ratio <= 0.6 else 'not met'}")
    error, table = ece(out["calibration"])
    print(f"  predictor calibration (cross-fitted, on the uniform samples at audit rate {rates[0]}'s budget): "
          f"ECE {error:.3f}")
    for low, n, predicted, observed in table:
        print(f"    predicted {low:.1f}-{low + 0.1:.1f}: {n:6d} spans, mean prediction {predicted:.3f}, "
              f"experts' share {observed:.3f}")


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
    parser.add_argument("--compare-campaigns", type=int, default=500,
                        help="Campaigns for the four designs' comparison (0 leaves it out).")
    parser.add_argument("--compare-rates", default="0.2,0.5", help="Audit rates whose budgets the designs share.")
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
    dataset, runs, truth = build(rows, np.random.default_rng(args.seed))
    run = runs[0]  # the threshold design's checks through the product, as before, on the first evaluator
    by_item = population(run)
    item_of = {pk: item_id for item_id, spans in by_item.items() for pk, _, _ in spans}
    ks = np.array([k for spans in by_item.values() for _, k, _ in spans])
    real = np.array([any(overlaps(p, g) for g in truth[item_of[pk]]) for spans in by_item.values()
                     for pk, _, p in spans])
    print(f"RotoWire: {len(rows)} summaries, {sum(len(t) for t in truth.values())} gold errors; simulated ensemble "
          f"of {len(MODELS)} models, the first of {len(EVALUATORS)} evaluators: {len(ks)} merged spans, built in "
          f"{time.perf_counter() - started:.1f} s")
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

    compare_rates = tuple(float(r) for r in args.compare_rates.split(",") if r.strip())
    if args.compare_campaigns and compare_rates:
        started = time.perf_counter()
        pop = signal_population(runs, truth)
        out = compare(args.compare_campaigns, args.seed, items, pop, min_k=args.min_k, rates=compare_rates)
        report_comparison(out, rates=compare_rates, campaigns=args.compare_campaigns,
                          seconds=time.perf_counter() - started)

    # 3. the planner: a pilot of PILOT outputs predicts the width a campaign of OUTPUTS outputs gets
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
    if not ratios:
        return 0
    ratios_a = np.array(ratios)
    within = float(np.mean(np.abs(ratios_a - 1) <= 0.2))
    print(f"\nplanner, {args.planner_runs} pilots of {PILOT} outputs predicting {OUTPUTS} outputs x 1 judge "
          f"({time.perf_counter() - started:.1f} s): predicted / actual 95% width median {np.median(ratios_a):.2f} "
          f"(mean {ratios_a.mean():.2f}); within 20%: {within:.0%} of pilots; median within 20% "
          f"{'ok' if abs(np.median(ratios_a) - 1) <= 0.2 else 'OUT'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
