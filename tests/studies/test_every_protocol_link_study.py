"""Every protocol run as a link study with registered annotators and participants together and every check it
supports on: the saves land through the screens' and the API's endpoints, the codes follow the checks, planted
copies and decoys are in no real figure, and the analytics page, the API, the report and the data card show that
protocol's figures and only them."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.urls import reverse

from accounts.models import User
from analytics.report.build import report_files
from annotator.engine.phases import Phase
from annotator.models import Assignment, Campaign, EsaScore, ItemScore, SpanJudgment
from annotator.selectors.spans import added_spans, item_errors
from annotator.services.campaigns import campaign_open
from corpus import protocols
from corpus.models import Item
from quality.engine.figures import PLANTED
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import annotator_flags
from quality.services import CheckSettings
from studies.models import Participant
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.annotator.study_links import Study, join_by_link, signed_in_participant
from tests.quality.conftest import Api
from tests.studies.box_study import CITIES, PLAYERS

pytestmark = pytest.mark.django_db

# A comparing protocol's link study deals whole inputs, its planted copies come as screens of their own and it
# takes no decoys: it is walked in tests/studies/test_comparing_link_study.py (and the participant walk), on inputs
# with several outputs.
PROTOCOLS = sorted(name for name, declared in protocols.PROTOCOLS.items() if not declared.comparing)
PASS, FAIL = "ALL-PASS", "ALL-FAIL"
WRONG = "The score is wrong."
# Words each protocol's page and report use for its own figures; the others' must not appear there. Pre-fill
# primes too (MQM's and ESA's reports say "primed"), so OpeNLGauge's priming is known by its own sentences.
OWN_WORDS = {
    protocols.OPENNLGAUGE: ("Span OK", "Exp. correct"),
    protocols.MQM: ("MQM scores",),
    protocols.ESA: ("ESA scores",),
    protocols.DA: ("DA scores",),
}
VERDICT_WORDS = ("Span OK", "Exp. correct", "Priming: the control arm", "was put to the judges",
                 "saw the machine's spans from the start")


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"


@dataclass
class Run:
    campaign: Campaign
    registered: User
    researcher: User


def _study(protocol: str, make_user) -> Run:
    """Six box-score outputs of two systems, two runs' spans on each (run A the wrong score, run B the assists);
    one registered annotator takes one place of each output and the link the other (two participants of three
    items); planted copies for everyone, decoys and the control arm where the protocol has them."""
    declared = protocols.get(protocol)
    data = f.dataset(f"every {protocol} data", input_headers=["Data"], output_header="Summary")
    alpha, beta = f.run(data, f"every {protocol} alpha"), f.run(data, f"every {protocol} beta")
    for i in range(6):
        home, away, player = CITIES[2 * i], CITIES[2 * i + 1], PLAYERS[i]
        won, lost, points = 100 + i, 90 + i, 20 + i
        inputs = {"Data": f"{home} PTS {won} | {away} PTS {lost} | {player} ({home}) PTS {points} AST {i + 3}"}
        output = (f"The {home} beat the {away} {won}-{lost + 5} on Friday. {player} led the {home} with "
                  f"{points} points and {i + 3} assists.")
        made = f.item(data, f"b{i}", output, position=i + 1, inputs=inputs, system=f"sys{i % 2}")
        f.span_at(f.annotation(made, alpha, score=2.0, score_label="Poor"), 1, f"{won}-{lost + 5}",
                  explanation=WRONG, severity=4, category="Accuracy")
        f.span_at(f.annotation(made, beta, score=3.0, score_label="Fair"), 1, f"{i + 3} assists",
                  explanation="Assists are not in the data.", severity=2, category="Accuracy")
    registered, researcher = make_user(f"reg-{protocol}"), make_user(f"res-{protocol}", role="researcher")
    campaign = campaign_create(CampaignSpec(
        name=f"every {protocol}", dataset=data, runs=[alpha, beta], annotators=[registered], aspects=["accuracy"],
        annotators_per_item=2, seed=5, protocol=protocol, control_arm=0.5 if declared.control_arm else 0.0,
        checks=CheckSettings(decoys=0.3 if declared.judges_machine_spans else 0.0, planted=0.3, vigilance_min=0.9,
                             planted_near_duplicates=True),
        link=LinkSettings(items_per_participant=3, pass_code=PASS, fail_code=FAIL,
                          completion_url="https://app.prolific.com/submissions/complete?cc={code}")))
    if campaign.status == Campaign.Status.DRAFT:  # decoys to review first
        campaign_open(campaign=campaign, user=researcher)
    return Run(campaign=campaign, registered=registered, researcher=researcher)


def _planted(assignment: Assignment) -> PlantedOutput | None:
    return PlantedOutput.objects.filter(campaign=assignment.campaign, item=assignment.item).first()


def _verdict(row, careful: bool) -> str:
    """A careful judge follows the truth (run A's score span is the error; the assists and decoys are not)."""
    check = getattr(row.span, "check_span", None)
    span = check.original if check is not None and check.original_id else row.span
    real = check is None or check.role == CheckSpan.Role.COPY
    return "error" if careful and real and span.explanation == WRONG else "not_error"


class Screen:
    """A participant at the item screens: the same POSTs the pages send (htmx)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def post(self, name: str, data: dict | None = None, **kwargs) -> None:
        answer = self.client.post(reverse(name, kwargs=kwargs), data or {}, HTTP_HX_REQUEST="true")
        assert answer.status_code in (200, 204), (name, answer.status_code, answer.content[:300])

    def work(self, protocol: str, assignment: Assignment, careful: bool) -> None:
        pk = assignment.pk
        assert self.client.get(reverse("item_screen", args=[pk])).status_code == 200  # the first open pre-fills
        work = Assignment.objects.select_related("campaign", "item", "annotator").get(pk=pk)
        planted = _planted(work)
        if protocol == protocols.OPENNLGAUGE:
            if work.phase == Phase.MARKING:
                self.post("assignment_reveal", pk=pk)
                work.refresh_from_db()
            for row in item_errors(work)[0]:
                verdict = _verdict(row, careful)
                for field, value in (("span_verdict", verdict),
                                     ("explanation_verdict", "correct" if verdict == "error" else "not_error")):
                    self.post("judgment_save", {"field": field, "value": value}, pk=pk, span_pk=row.handle)
            if planted is not None and careful:
                self.post("added_span_add", {"start": planted.start, "end": planted.end}, pk=pk)
        elif protocol == protocols.MQM:
            if not careful:  # marks nothing: the pre-filled errors go
                for span in added_spans(work):
                    self.post("mqm_error_remove", span_pk=span.pk)
            elif planted is not None:
                for span in added_spans(work):  # the planted error is marked as its own error
                    if span.start < planted.end and planted.start < span.end:
                        self.post("mqm_error_remove", span_pk=span.pk)
                category = protocols.get(protocol).categories(work.campaign.protocol_options)[0]
                self.post("mqm_error_add", {"start": planted.start, "end": planted.end, "category": category,
                                            "severity": "major"}, pk=pk)
        elif protocol == protocols.DA:  # a careful judge scores the degraded copy (BAD item) below the rest
            self.post("item_score", {"score": ("20" if planted is not None else "80") if careful else "100"}, pk=pk)
        else:
            if not careful:
                for span in added_spans(work):
                    self.post("esa_span_remove", span_pk=span.pk)
            elif planted is not None:
                for span in added_spans(work):
                    if span.start is not None and span.start < planted.end and planted.start < span.end:
                        self.post("esa_span_remove", span_pk=span.pk)
                self.post("esa_span_add", {"start": planted.start, "end": planted.end, "severity": "major"}, pk=pk)
            self.post("esa_spans_done", pk=pk)
            self.post("esa_score", {"score": "70" if careful else "100"}, pk=pk)
        answer = self.client.post(reverse("assignment_finish", args=[pk]), HTTP_HX_REQUEST="true")
        assert answer.status_code == 200, answer.content[:300]


def _api_work(api: Api, protocol: str, assignment: Assignment) -> None:
    """A registered annotator through the REST API: open, the protocol's steps, finish."""
    pk = assignment.pk

    def call(method: str, path: str, body: dict | None = None, expected: tuple[int, ...] = (200, 201, 204)):
        answer = api(method, path, body)
        assert answer.status_code in expected, (path, answer.status_code, answer.content[:300])
        return answer

    call("post", f"/assignments/{pk}/open")
    work = Assignment.objects.select_related("campaign", "item", "annotator").get(pk=pk)
    planted = _planted(work)
    if protocol == protocols.OPENNLGAUGE:
        if work.phase == Phase.MARKING:
            call("post", f"/assignments/{pk}/reveal", {})
            work.refresh_from_db()
        for row in item_errors(work)[0]:
            verdict = _verdict(row, careful=True)
            call("post", f"/assignments/{pk}/judgments", {
                "span_id": row.handle, "span_verdict": verdict,
                "explanation_verdict": "correct" if verdict == "error" else "not_error"})
        if planted is not None:
            call("post", f"/assignments/{pk}/added-spans", {"start": planted.start, "end": planted.end})
    elif protocol == protocols.MQM:
        if planted is not None:
            for span in added_spans(work):
                if span.start < planted.end and planted.start < span.end:
                    call("delete", f"/mqm-errors/{span.pk}")
            category = protocols.get(protocol).categories(work.campaign.protocol_options)[0]
            call("post", f"/assignments/{pk}/mqm-errors", {"start": planted.start, "end": planted.end,
                                                          "category": category, "severity": "major"})
    elif protocol == protocols.DA:
        call("put", f"/assignments/{pk}/score", {"score": 30 if planted is not None else 80})
    else:
        if planted is not None:
            for span in added_spans(work):
                if span.start is not None and span.start < planted.end and planted.start < span.end:
                    call("delete", f"/esa-spans/{span.pk}")
            call("post", f"/assignments/{pk}/esa-spans", {"start": planted.start, "end": planted.end,
                                                         "severity": "major"})
        call("post", f"/assignments/{pk}/esa-done", {})
        call("put", f"/assignments/{pk}/esa-score", {"score": 60})
    call("post", f"/assignments/{pk}/finish", {})


def _figures(protocol: str, api: Api, campaign: Campaign) -> dict:
    """The protocol's figures as the API answers them; the progress table counts work done (planted copies are
    items their holder worked on), and DA's BAD items are the check's own figures, not the systems', so they are
    left out."""
    cache.clear()
    path = {protocols.OPENNLGAUGE: f"/analytics/campaigns/{campaign.pk}?reference=human",  # the judges' errors too
            protocols.MQM: f"/analytics/campaigns/{campaign.pk}/mqm",
            protocols.ESA: f"/analytics/campaigns/{campaign.pk}/esa",
            protocols.DA: f"/analytics/campaigns/{campaign.pk}/figures/da_scores"}[protocol]
    answer = api("get", path)
    assert answer.status_code == 200, answer.content[:300]
    body = answer.json()
    body.pop("generated_at", None)
    body.pop("bad", None)
    if "tables" in body:
        body["tables"] = [t for t in body["tables"] if t.get("key") != "progress"]
    return body


def _without_checks(protocol: str, api: Api, campaign: Campaign) -> dict:
    """The figures once the planted copies' work and the decoys' verdicts are gone (rolled back after)."""
    with transaction.atomic():
        SpanJudgment.objects.filter(assignment__campaign=campaign,
                                    span__check_span__role=CheckSpan.Role.DECOY).delete()
        Assignment.objects.filter(campaign=campaign, item__derived_from__isnull=False).delete()
        figures = _figures(protocol, api, campaign)
        transaction.set_rollback(True)
    cache.clear()
    return figures


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_runs_as_a_link_study_with_every_check_on(protocol, make_user):
    run = _study(protocol, make_user)
    campaign = run.campaign
    declared = protocols.get(protocol)
    assert campaign.status == Campaign.Status.OPEN

    # Two participants join by the link: the first works carefully, the second marks nothing a check can find.
    screens, people = [], []
    for n in range(2):
        client = Client()
        join_by_link(client, Study(campaign=campaign, items=[]),
                     query=f"?PROLIFIC_PID=pid{n}{protocol}&STUDY_ID=s1&SESSION_ID=sess{n}")
        screens.append(Screen(client))
        people.append(signed_in_participant(client))
    for screen, person, careful in zip(screens, people, (True, False), strict=True):
        mine = Assignment.objects.filter(campaign=campaign, annotator=person.user).order_by("order")
        assert PlantedOutput.objects.filter(campaign=campaign, annotator=person.user).exists()
        for assignment in mine:
            screen.work(protocol, assignment, careful)
    api = Api(run.registered)
    theirs = Assignment.objects.filter(campaign=campaign, annotator=run.registered).order_by("order")
    assert PlantedOutput.objects.filter(campaign=campaign, annotator=run.registered).exists()
    for assignment in theirs:
        _api_work(api, protocol, assignment)

    # Every save landed: every assignment is done, with the stored rows its protocol writes.
    everyone = Assignment.objects.filter(campaign=campaign)
    assert everyone.exclude(status=Assignment.Status.DONE).count() == 0
    if declared.judges_machine_spans:
        for a in everyone.select_related("campaign", "item"):
            rows = item_errors(a)[0]
            assert rows and all(r.judgment is not None and r.judgment.span_verdict for r in rows), a.pk
        assert CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY).exists()
    for a in everyone.filter(annotator__in=[people[0].user, run.registered]).select_related("campaign", "item"):
        if _planted(a) is not None and declared.marks_errors:
            planted = _planted(a)
            assert any(s.start == planted.start and s.end == planted.end for s in added_spans(a)), a.pk
    if not declared.judges_machine_spans and declared.marks_errors:  # the careless one's deletes landed
        failer = everyone.filter(annotator=people[1].user).select_related("campaign", "item")
        assert all(not added_spans(a) for a in failer)
        kept = everyone.filter(annotator__in=[people[0].user, run.registered]).select_related("campaign", "item")
        assert sum(len(added_spans(a)) for a in kept) >= kept.filter(in_control_arm=False).count()
    if protocol == protocols.ESA:
        assert EsaScore.objects.filter(assignment__campaign=campaign, score__isnull=False).count() == everyone.count()
    if declared.score_range is not None:
        assert ItemScore.objects.filter(assignment__campaign=campaign, score__isnull=False).count() == everyone.count()
    if declared.control_arm:
        assert everyone.filter(in_control_arm=True).exists()

    # The codes follow the checks: the careful participant passes, the one who missed the planted errors fails.
    codes = []
    for screen, person in zip(screens, people, strict=True):
        page = screen.client.get(reverse("participant_end", args=[campaign.pk]))
        assert page.status_code == 200
        codes.append(Participant.objects.get(pk=person.pk).code_given)
        assert codes[-1] in page.content.decode()
    assert codes == [PASS, FAIL]
    assert annotator_flags(campaign, people[0].user) == []
    assert PLANTED in annotator_flags(campaign, people[1].user)

    # Planted copies and decoys are in no real figure: the figures equal those with their work taken away.
    researcher = Api(run.researcher)
    copies = everyone.filter(item__derived_from__isnull=False, status=Assignment.Status.DONE)
    assert copies.filter(annotator=people[0].user).exists() and copies.filter(annotator=run.registered).exists()
    if declared.judges_machine_spans:
        assert SpanJudgment.objects.filter(assignment__campaign=campaign,
                                           span__check_span__role=CheckSpan.Role.DECOY).exists()
    assert _figures(protocol, researcher, campaign) == _without_checks(protocol, researcher, campaign)
    if not declared.judges_machine_spans:  # the system scores count the real outputs' ratings only
        systems = _figures(protocol, researcher, campaign)["systems"]
        real = Item.objects.filter(dataset=campaign.dataset, derived_from__isnull=True)
        assert {s["system"] for s in systems} == {"sys0", "sys1"}
        assert sum(s["segments"] for s in systems) == real.count()
        assert sum(s["ratings"] for s in systems) == everyone.filter(item__in=real).count()
    # The API answers this protocol's figures and refuses the others' (422).
    for name, path in (("mqm", "mqm"), ("esa", "esa")):
        answer = researcher("get", f"/analytics/campaigns/{campaign.pk}/{path}")
        assert answer.status_code == (200 if name == protocol else 422), (name, answer.status_code)

    # The analytics page, the report and the data card speak this protocol's figures and no other's.
    others = {w for name, words in OWN_WORDS.items() if name != protocol for w in words}
    if not declared.judges_machine_spans:
        others |= set(VERDICT_WORDS)
    web = Client()
    web.force_login(run.researcher)
    page = web.get(reverse("analytics_campaign", args=[campaign.pk]))
    assert page.status_code == 200
    texts = {"page": page.content.decode()}
    for fmt in ("markdown", "html", "latex"):  # LaTeX source only: compiling the PDF is not this test's
        files = report_files(campaign, fmt)  # the main file and its tables (LaTeX's \input them)
        texts[fmt] = "\n".join(v.decode() for k, v in sorted(files.items()) if not k.startswith("figures/"))
    answer = web.get(reverse("labeled_card", args=[campaign.pk]))
    assert answer.status_code == 200
    card = answer.json()
    card_text = json.dumps(card)
    assert card["campaign"]["protocol"] == protocol
    if declared.judges_machine_spans:  # the verdicts' counts and agreement, no figures of another protocol
        assert "figures" not in card and "machine_spans" in card["counts"]
        assert "alpha_span" in card["agreement_before_adjudication"]
    else:  # the protocol's own tables, with the same scores as the API's (one function computes both)
        assert {key.split("_")[0] for key in card["figures"]} == {protocol}
        api_scores = {s["system"]: s["score"] for s in _figures(protocol, researcher, campaign)["systems"]}
        assert {r["system"]: r["score"] for r in card["figures"][f"{protocol}_scores"]} == api_scores
        assert "machine_spans" not in card["counts"]
    for where, text in texts.items():
        for word in OWN_WORDS[protocol]:
            assert word in text, (where, word)
        for word in others:
            assert word not in text, (where, word)
    for word in others:
        assert word not in card_text, ("card", word)
