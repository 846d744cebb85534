"""Builders for the participant-link tests: a campaign recruited by a link, joining, judging an item."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator.models import Assignment, Campaign
from annotator.selectors.spans import item_errors
from annotator.services.assignments import assignment_finish
from annotator.services.judgments import judgment_set
from corpus.models import Item
from studies.models import Participant
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

PASS, FAIL = "PASS-C0DE", "SCREENED-0UT"


@dataclass
class Study:
    campaign: Campaign
    items: list[Item]
    positions: dict[int, int] = field(default_factory=dict)  # item pk -> 1-based item number

    def numbers(self, participant: Participant) -> set[int]:
        """The item numbers (1..n) a participant holds, training items aside."""
        held = Assignment.objects.filter(campaign=self.campaign, annotator=participant.user, is_training=False)
        return {self.positions[i] for i in held.values_list("item_id", flat=True)}


def link_study(*, n_items: int = 4, per_item: int = 2, items_per_participant: int = 2, name: str = "Link study",
               **link: object) -> Study:
    """A campaign with no registered annotator, recruited by a link: `n_items` items, each with one machine
    error of one run, in item order 1..n."""
    data = f.dataset(f"{name} data", input_headers=["Data"], output_header="Text")
    judge = f.run(data, f"{name} run")
    items = []
    for n in range(1, n_items + 1):
        item = f.item(data, f"i{n}", f"Output number {n} says the cafe is cheap.", position=n,
                      inputs={"Data": f"name[Cafe {n}] | priceRange[high]"})
        made = f.annotation(item, judge, model="m", score=2.0, score_label="Poor")
        f.span_at(made, 1, "cheap", explanation="The price range is high.", severity=3)
        items.append(item)
    settings = {"items_per_participant": items_per_participant, "pass_code": PASS, "fail_code": FAIL,
                "completion_url": "https://app.prolific.com/submissions/complete?cc={code}", **link}
    campaign = campaign_create(CampaignSpec(name=name, dataset=data, runs=[judge], annotators=[], aspects=["accuracy"],
                               annotators_per_item=per_item, seed=7, link=LinkSettings(**settings)))
    return Study(campaign=campaign, items=items, positions={item.pk: n for n, item in enumerate(items, start=1)})


def join_by_link(client, study: Study, query: str = "?PROLIFIC_PID=5f8e0c1d2b3a&STUDY_ID=study1&SESSION_ID=sess1",
                 **extra):
    """Open the study link with `query`, then press Start with the hidden fields the page carries."""
    url = f"/join/{study.campaign.study_link.token}/"
    page = client.get(url + query, **extra)
    assert page.status_code == 200, page.content
    hidden = dict(item.split("=") for item in query.lstrip("?").split("&")) if query else {}
    return client.post(url, hidden, **extra)


def signed_in_participant(client) -> Participant:
    return Participant.objects.get(user_id=int(client.session["_auth_user_id"]))


def finish_item(assignment: Assignment) -> Assignment:
    """Judge every machine error of the item (Error / Correct) and finish it, as its annotator."""
    assignment = Assignment.objects.select_related("campaign", "item").get(pk=assignment.pk)
    user = assignment.annotator
    rows, _ = item_errors(assignment)
    for row in rows:
        judgment_set(assignment=assignment, span=row.span, user=user,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})
    return assignment_finish(assignment=assignment, user=user)


def finish_all(participant: Participant) -> None:
    for a in Assignment.objects.filter(annotator=participant.user).exclude(status=Assignment.Status.DONE):
        finish_item(a)
