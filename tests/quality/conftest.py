"""A small box-score campaign for the quality checks: outputs full of numbers and names the inputs support."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.test import Client

from accounts.models import Role, User
from accounts.services.tokens import token_create
from annotator.models import Campaign
from annotator.services.campaigns import campaign_open
from corpus.models import ErrorSpan, Item
from evaluation.models import EvaluatorRun
from quality.services import CheckSettings
from studies.setup import CampaignSpec, campaign_create
from tests.factories import annotation, dataset, item, run, span_at

TEAMS = [("Raptors", "Celtics"), ("Heat", "Knicks"), ("Bulls", "Lakers"), ("Suns", "Nets"), ("Jazz", "Hawks"),
         ("Magic", "Pistons"), ("Kings", "Spurs"), ("Bucks", "Hornets"), ("Pacers", "Wizards"), ("Clippers", "Nuggets")]
PLAYERS = ["Kyle Lowry", "Jimmy Butler", "Zach LaVine", "Devin Booker", "Donovan Mitchell", "Paolo Banchero",
           "Domantas Sabonis", "Khris Middleton", "Tyrese Haliburton", "Paul George"]


def box(i: int) -> tuple[dict[str, str], str, int, int]:
    """Inputs and an output whose only wrong fact is the loser's points (written 5 too high)."""
    home, away = TEAMS[i]
    player = PLAYERS[i]
    won, lost, points = 100 + i, 90 + i, 20 + i
    inputs = {"Data": f"{home} PTS {won} | {away} PTS {lost} | {player} ({home}) PTS {points} AST {i + 3}"}
    output = (f"The {home} beat the {away} {won}-{lost + 5} on Friday. {player} led the {home} with "
              f"{points} points and {i + 3} assists.")
    return inputs, output, lost + 5, won


@dataclass
class Study:
    campaign: Campaign
    items: list[Item]
    runs: list[EvaluatorRun]
    wrong: dict[int, ErrorSpan] = field(default_factory=dict)  # item id -> the machine span that is right
    false_alarm: dict[int, ErrorSpan] = field(default_factory=dict)  # item id -> a machine span that is wrong


def build_study(annotators, *, name: str = "box study", checks: CheckSettings | None = None, n_items: int = 10,
                per_item: int = 1, data=None, runs=None, items=None, opened: bool = True,
                control_arm: float = 0.0) -> Study:
    """Two runs on box scores: run A marks the wrong score (a real error), run B marks the player's assists (not
    an error). Reusing `data`, `runs` and `items` builds a second campaign on the same machine spans. A campaign
    with decoys starts as a draft; unless `opened` is False a researcher opens it, as after reviewing them."""
    if data is None:
        data = dataset(f"{name} data", input_headers=["Data"], output_header="Summary")
        items = []
        alpha, beta = run(data, f"{name}-alpha"), run(data, f"{name}-beta")
        runs = [alpha, beta]
        for i in range(n_items):
            inputs, output, lost, _ = box(i)
            made = item(data, f"g{i}", output, position=i + 1, inputs=inputs)
            items.append(made)
            _, away = TEAMS[i]
            span_at(annotation(made, alpha), 1, f"{100 + i}-{lost}", explanation="The score is wrong.", severity=4,
                    category="NUMBER")
            span_at(annotation(made, beta), 1, f"{i + 3} assists", explanation="Assists are not in the data.",
                    severity=2, category="NUMBER")
    study = Study(
        campaign=campaign_create(CampaignSpec(name=name, dataset=data, runs=runs, annotators=annotators,
                                              aspects=["accuracy"], annotators_per_item=per_item, seed=7,
                                              checks=checks or CheckSettings(), control_arm=control_arm)),
        items=items, runs=runs,
    )
    if opened and study.campaign.status == Campaign.Status.DRAFT:
        opener, _ = User.objects.get_or_create(username="decoy-reviewer", defaults={"role": Role.RESEARCHER})
        campaign_open(campaign=study.campaign, user=opener)
    for made in items:
        study.wrong[made.pk] = ErrorSpan.objects.get(annotation__item=made, annotation__source=runs[0])
        study.false_alarm[made.pk] = ErrorSpan.objects.get(annotation__item=made, annotation__source=runs[1])
    return study


class Api:
    def __init__(self, user) -> None:
        self.client = Client()
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}

    def __call__(self, method: str, path: str, body: dict | None = None):
        kwargs = dict(self.auth)
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        return getattr(self.client, method)(f"/api{path}", **kwargs)


@pytest.fixture
def judges(make_user):
    return make_user("stamper"), make_user("careful")
