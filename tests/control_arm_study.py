"""A small crossed control-arm study with known marks, verdicts and times, for hand-computed priming figures.

Three outputs, one evaluator ("alpha"), two annotators per output and control_arm = 1: every output is
unprimed for one annotator and primed for the other (which one is the draw's choice; the script acts by role).
Words are four letters apart by single spaces, so offsets are easy to read: word k starts at 5k.

    output 1  "aaaa bbbb cccc dddd eeee"   machine: bbbb, dddd
              unprimed marks bbbb, eeee; after the reveal: bbbb error, dddd error
              primed: bbbb error, dddd not an error, adds eeee                 -> 2 errors
    output 2  "ffff gggg hhhh iiii"        machine: ffff, hhhh, one span without offsets
              unprimed mark gggg; after the reveal: ffff not an error, hhhh error, unplaced no span
              primed: ffff error, hhhh error, unplaced not an error, adds none -> 2 errors
    output 3  "jjjj kkkk llll"             machine: "jjjj kkkk"
              unprimed marks kkkk, llll, jjjj; after the reveal: error
              primed: error, adds kkkk and llll                                -> 3 errors

Seconds of active time (the item screen's heartbeat every 50 s of a clock the script moves): marking 100, 80,
120 (then 30 more after each reveal, which the unprimed arm must not count); primed 60, 40, 50.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from unittest import mock

from django.utils import timezone

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_add_time, assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.judgments import judgment_set
from corpus.models import ErrorSpan, Item
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

OUTPUTS = ("aaaa bbbb cccc dddd eeee", "ffff gggg hhhh iiii", "jjjj kkkk llll")


def word(k: int) -> tuple[int, int]:
    return 5 * k, 5 * k + 4


@dataclass
class Script:
    machine: list[tuple[tuple[int, int] | None, str]]  # (offsets or None, text)
    marks: list[tuple[int, int]]
    after_reveal: list[str]  # span verdict per machine span
    primed: list[str]
    primed_added: list[tuple[int, int]]
    marking_seconds: int
    primed_seconds: int


SCRIPTS = (
    Script([(word(1), "bbbb"), (word(3), "dddd")], [word(1), word(4)], ["error", "error"],
           ["error", "not_error"], [word(4)], 100, 60),
    Script([(word(0), "ffff"), (word(2), "hhhh"), (None, "serves French food")], [word(1)],
           ["not_error", "error", "no_span"], ["error", "error", "not_error"], [], 80, 40),
    Script([((0, 9), "jjjj kkkk")], [word(1), word(2), word(0)], ["error"], ["error"], [word(1), word(2)], 120, 50),
)


@dataclass
class Study:
    campaign: Campaign
    items: list[Item]
    annotators: list[User]
    spans: dict[int, list[ErrorSpan]] = field(default_factory=dict)  # item pk -> machine spans in script order


def build_study(annotators: list[User], *, name: str = "Control arm study", control_arm: float = 1.0,
                seed: int = 5) -> Study:
    data = f.dataset(f"{name} data", input_headers=["Data"], output_header="Text")
    alpha = f.run(data, "alpha")
    items, spans = [], {}
    for n, (output, script) in enumerate(zip(OUTPUTS, SCRIPTS, strict=True), start=1):
        it = f.item(data, f"o{n}", output, inputs={"Data": f"record {n}"})
        answer = f.annotation(it, alpha, score=2.0, score_label="Poor")
        spans[it.pk] = [f.span(answer, k, *(where or (None, None)), text=text, explanation=f"reason {k}", severity=3)
                        for k, (where, text) in enumerate(script.machine, start=1)]
        items.append(it)
    campaign = campaign_create(CampaignSpec(name=name, dataset=data, runs=[alpha], annotators=annotators,
                                            aspects=["accuracy"], annotators_per_item=2, seed=seed,
                                            control_arm=control_arm))
    return Study(campaign, items, annotators, spans)


def _judge(assignment: Assignment, user: User, spans: list[ErrorSpan], verdicts: list[str]) -> None:
    for span, verdict in zip(spans, verdicts, strict=True):
        explanation = "correct" if verdict == "error" else "not_error"
        judgment_set(assignment=assignment, span=span, user=user,
                     changes={"span_verdict": verdict, "explanation_verdict": explanation})


class Clock:
    """The server's clock, moved by the script: active time comes out exact."""

    def __init__(self) -> None:
        self.now = timezone.now()

    def __call__(self):
        return self.now


@contextmanager
def script_clock() -> Iterator[Clock]:
    clock = Clock()
    with mock.patch("django.utils.timezone.now", clock):
        yield clock


def spend(clock: Clock, assignment: Assignment, user: User, seconds: int) -> None:
    """`seconds` of work on the item: the page's heartbeat every 50 s (and at the end), as the screen sends it
    while the tab is in use."""
    while seconds > 0:
        step = min(seconds, 50)
        clock.now += timedelta(seconds=step)
        assignment_add_time(assignment=assignment, user=user, seconds=step)
        seconds -= step


def work_study(study: Study) -> None:
    """Every assignment worked through the services, as the script says for its role."""
    with script_clock() as clock:
        _work(study, clock)


def _work(study: Study, clock: Clock) -> None:
    for it, script in zip(study.items, SCRIPTS, strict=True):
        for a in Assignment.objects.filter(campaign=study.campaign, item=it).select_related("campaign", "item"):
            user = a.annotator
            if a.in_control_arm:
                for start, end in script.marks:
                    added_span_create(assignment=a, user=user, start=start, end=end)
                spend(clock, a, user, script.marking_seconds)
                a.refresh_from_db()
                assignment_reveal(assignment=a, user=user)
                spend(clock, a, user, 30)
                _judge(a, user, study.spans[it.pk], script.after_reveal)
            else:
                _judge(a, user, study.spans[it.pk], script.primed)
                for start, end in script.primed_added:
                    added_span_create(assignment=a, user=user, start=start, end=end)
                spend(clock, a, user, script.primed_seconds)
            a.refresh_from_db()
            assignment_finish(assignment=a, user=user)
