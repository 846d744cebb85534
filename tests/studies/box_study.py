"""Builders for studies with every check on: box-score outputs (numbers and names the input supports, so decoys
and planted errors can be made), two runs, and a participant's queue counted by kind."""

from __future__ import annotations

from dataclasses import dataclass

from annotator.engine.phases import Phase
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import item_errors
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.judgments import judgment_set
from corpus.models import Dataset, Item
from evaluation.models import EvaluatorRun
from quality.models import CheckSpan, PlantedOutput
from tests.factories import annotation, dataset, item, run, span_at

CITIES = ["Raptors", "Celtics", "Heat", "Knicks", "Bulls", "Lakers", "Suns", "Nets", "Jazz", "Hawks", "Magic",
          "Pistons", "Kings", "Spurs", "Bucks", "Hornets", "Pacers", "Wizards", "Clippers", "Nuggets", "Rockets",
          "Warriors", "Blazers", "Thunder", "Grizzlies", "Pelicans", "Cavaliers", "Mavericks", "Timberwolves", "Sixers"]
PLAYERS = ["Kyle Lowry", "Jimmy Butler", "Zach LaVine", "Devin Booker", "Donovan Mitchell", "Paolo Banchero",
           "Domantas Sabonis", "Khris Middleton", "Tyrese Haliburton", "Paul George", "Jalen Green", "Stephen Curry",
           "Damian Lillard", "Chet Holmgren", "Ja Morant"]


@dataclass
class Boxes:
    data: Dataset
    runs: list[EvaluatorRun]
    items: list[Item]


def box_scores(n: int, name: str = "boxes") -> Boxes:
    """n outputs, each with two machine spans: run A marks the wrong score (a real error), run B the assists
    (not in the input); the rest are numbers and names the input supports."""
    data = dataset(f"{name} data", input_headers=["Data"], output_header="Summary")
    alpha, beta = run(data, f"{name}-alpha"), run(data, f"{name}-beta")
    items = []
    for i in range(n):
        home, away = CITIES[(2 * i) % len(CITIES)], CITIES[(2 * i + 1) % len(CITIES)]
        player = PLAYERS[i % len(PLAYERS)]
        won, lost, points = 100 + i, 90 + i, 20 + i
        inputs = {"Data": f"{home} PTS {won} | {away} PTS {lost} | {player} ({home}) PTS {points} AST {i + 3}"}
        output = (f"The {home} beat the {away} {won}-{lost + 5} on Friday. {player} led the {home} with "
                  f"{points} points and {i + 3} assists.")
        made = item(data, f"b{i}", output, position=i + 1, inputs=inputs)
        span_at(annotation(made, alpha), 1, f"{won}-{lost + 5}", explanation="The score is wrong.", severity=4,
                category="NUMBER")
        span_at(annotation(made, beta), 1, f"{i + 3} assists", explanation="Assists are not in the data.",
                severity=2, category="NUMBER")
        items.append(made)
    return Boxes(data=data, runs=[alpha, beta], items=items)


@dataclass(frozen=True)
class Queue:
    """A judge's queue by kind: real outputs, those with a decoy on them, decoys shown, planted copies, outputs
    marked unprimed first (the control arm), control and training items."""

    real: int
    decoy_bearing: int
    decoys: int
    planted: int
    marking: int
    control: int
    training: int

    def line(self) -> str:
        return (f"{self.real} real ({self.decoy_bearing} decoy-bearing, {self.decoys} decoys), {self.planted} "
                f"planted, {self.marking} marking (unprimed), {self.control} control, {self.training} training")


def queue_of(campaign: Campaign, user_id: int, *, done_only: bool = False) -> Queue:
    rows = Assignment.objects.filter(campaign=campaign, annotator_id=user_id)
    if done_only:
        rows = rows.filter(status=Assignment.Status.DONE)
    held = list(rows.values_list("item_id", "is_training", "is_control", "in_control_arm", "item__derived_from_id"))
    decoys: dict[int, int] = {}
    for item_id in CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY).values_list(
            "span__annotation__item_id", flat=True):
        decoys[item_id] = decoys.get(item_id, 0) + 1
    real = [(i, arm) for i, training, control, arm, derived in held if not training and not control and not derived]
    planted = set(PlantedOutput.objects.filter(campaign=campaign, annotator_id=user_id).values_list("item_id",
                                                                                                    flat=True))
    return Queue(
        real=len(real), decoy_bearing=sum(i in decoys for i, _ in real), decoys=sum(decoys.get(i, 0) for i, _ in real),
        planted=sum(i in planted for i, *_ in held), marking=sum(arm for _, arm in real),
        control=sum(c for _, _, c, _, _ in held), training=sum(t for _, t, *_ in held),
    )


def judge_item(assignment: Assignment, *, stamp: bool, ms: int) -> int:
    """Judge one item as its annotator and finish it; return the spans judged. A stamper presses Error on every
    card; a careful judge follows the truth (run A's score span is the error; the assists span and decoys are
    not) and adds the planted error. A control-arm output is revealed first (Done marking)."""
    work = Assignment.objects.select_related("campaign", "item", "annotator").get(pk=assignment.pk)
    user = work.annotator
    if work.phase == Phase.MARKING:
        work = assignment_reveal(assignment=work, user=user)
    rows, _ = item_errors(work)
    for row in rows:
        check = getattr(row.span, "check_span", None)
        span = check.original if check is not None and check.original_id else row.span
        real = check is None or check.role == CheckSpan.Role.COPY
        error = stamp or (real and span.explanation == "The score is wrong.")
        judgment_set(assignment=work, span=row.span, user=user, ms=ms,
                     changes={"span_verdict": "error" if error else "not_error",
                              "explanation_verdict": "correct" if error else "not_error"})
    planted = PlantedOutput.objects.filter(campaign=work.campaign, item=work.item).first()
    if planted is not None and not stamp:
        added_span_create(assignment=work, user=user, start=planted.start, end=planted.end, ms=ms)
    assignment_finish(assignment=work, user=user)
    return len(rows)


def answer_everything(assignment: Assignment, *, verdict: str, ms: int) -> int:
    """Give every card of the item one span verdict (Error with Correct, or Not an error twice), add nothing and
    finish it: the accept-all and reject-all participants the checks' power speaks of. Returns the cards."""
    work = Assignment.objects.select_related("campaign", "item", "annotator").get(pk=assignment.pk)
    if work.phase == Phase.MARKING:
        work = assignment_reveal(assignment=work, user=work.annotator)
    rows, _ = item_errors(work)
    explanation = "correct" if verdict == "error" else "not_error"
    for row in rows:
        judgment_set(assignment=work, span=row.span, user=work.annotator, ms=ms,
                     changes={"span_verdict": verdict, "explanation_verdict": explanation})
    assignment_finish(assignment=work, user=work.annotator)
    return len(rows)
