"""Link studies under the comparing protocols: a participant takes whole inputs (every output of the input at one
place, its screens planned with the campaign), so positions stay counterbalanced over everyone who joins, a screen
is pre-filled or plain as a whole, `items_per_participant` counts inputs, released work goes back an input at a time
and comes back to the next participant with the same screens, and a participant who finishes gets their code."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotator.models import Assignment, ComparisonUnit, UnitOutput
from corpus import protocols
from quality.services import CheckSettings
from studies.models import Participant, PoolSlot
from studies.participants import LinkSettings
from studies.pool import assignments_release, link_has_room, newcomer_promise
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.annotator.study_links import Study, join_by_link, signed_in_participant

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
SYSTEMS = ("ash", "birch", "cedar")
PASS = "CMP-PASS"


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"


def _study(protocol: str, *, inputs: int = 6, systems=SYSTEMS, control_arm: float = 0.0, annotators=(),
           per_item: int = 2, share: int = 2, training: int = 0, **link) -> Study:
    data = f.dataset(f"{protocol} link data", input_headers=["Source"], output_header="Translation")
    run = f.run(data, f"{protocol} link run")
    items = []
    for k in range(inputs + training):
        for system in systems:
            item = f.item(data, f"seg{k}", f"The cat sat on mat {k}, said {system}.", system=system,
                          inputs={"Source": f"Die Katze {k}."})
            made = f.annotation(item, run, model="m", score=3.0, score_label="Fair")
            f.span_at(made, 1, "cat", explanation="Wrong animal.", severity=4)
            items.append(item)
    practice = [i.pk for i in items if int(i.external_id[3:]) >= inputs]
    campaign = campaign_create(CampaignSpec(
        name=f"{protocol} link study", dataset=data, runs=[run], aspects=["accuracy"], annotators=list(annotators),
        annotators_per_item=per_item, protocol=protocol, control_arm=control_arm, seed=11,
        checks=CheckSettings(qualification_items=practice) if practice else CheckSettings(),
        link=LinkSettings(items_per_participant=share, pass_code=PASS, **link)))
    return Study(campaign=campaign, items=items, positions={item.pk: n for n, item in enumerate(items, start=1)})


def _join(client, study: Study, n: int) -> Participant:
    client.logout()
    cache.clear()  # the join's rate limit is per address, and every test participant comes from one
    join_by_link(client, study, f"?PROLIFIC_PID=pid{n:04d}&STUDY_ID=s&SESSION_ID=sess{n}")
    return signed_in_participant(client)


def _screens(participant: Participant) -> list[list[Assignment]]:
    units = ComparisonUnit.objects.filter(annotator=participant.user).order_by("number")
    return [[o.assignment for o in UnitOutput.objects.filter(unit=u).select_related("assignment__item")
             .order_by("position")] for u in units]


def _balanced(campaign) -> dict[str, Counter]:
    placed: dict[str, Counter] = defaultdict(Counter)
    for row in UnitOutput.objects.filter(unit__campaign=campaign, assignment__is_training=False).select_related(
            "assignment__item"):
        placed[row.assignment.item.system][row.position] += 1
    return placed


def test_a_contrastive_esa_link_study_deals_whole_inputs_with_balanced_positions_and_one_arm_per_screen(client):
    study = _study(protocols.CESA, control_arm=1.0)
    campaign = study.campaign
    assert campaign.study_link.screens and len(campaign.study_link.screens) == 12  # 6 inputs x 2 places
    assert newcomer_promise(link=campaign.study_link).real == 6  # two inputs of three outputs
    people = [_join(client, study, n) for n in range(6)]
    for person in people:
        mine = list(Assignment.objects.filter(campaign=campaign, annotator=person.user).order_by("order")
                    .select_related("item"))
        segments = [a.item.external_id for a in mine]
        assert len(mine) == 6 and len(set(segments)) == 2  # items_per_participant counts inputs
        assert segments == sorted(segments, key=segments.index)  # an input's outputs sit together in the queue
        screens = _screens(person)
        assert [len(s) for s in screens] == [3, 3]
        assert [s[0].item.external_id for s in screens] == list(dict.fromkeys(segments))  # numbered in queue order
        assert [a.pk for s in screens for a in s] == [a.pk for a in mine]  # the queue follows the screen's order
        for screen in screens:
            assert len({a.in_control_arm for a in screen}) == 1  # pre-filled or plain as a whole
    assert not link_has_room(link=campaign.study_link)
    client.logout()
    full = client.get(f"/join/{campaign.study_link.token}/?PROLIFIC_PID=late")
    assert full.status_code == 409 and "This study is full" in full.content.decode()
    arms = defaultdict(set)
    for unit in ComparisonUnit.objects.filter(campaign=campaign):
        first = unit.outputs.select_related("assignment").first().assignment
        arms[unit.segment].add(first.in_control_arm)
    assert all(a == {True, False} for a in arms.values())  # each input: one judge pre-filled, the other plain
    placed = _balanced(campaign)
    assert all(max(c[p] for p in (1, 2, 3)) - min(c[p] for p in (1, 2, 3)) <= 1 for c in placed.values()), placed
    per_input = defaultdict(lambda: defaultdict(set))
    for row in UnitOutput.objects.filter(unit__campaign=campaign).select_related("assignment__item", "unit"):
        per_input[row.unit.segment][row.assignment.item.system].add(row.position)
    # an input's two judges see it in two rotations: every system in a different place for each
    assert all(len(places) == 2 for systems in per_input.values() for places in systems.values()), per_input
    planned = {(s["segment"], s["judge"]): s["items"] for s in campaign.study_link.screens}
    for slot in PoolSlot.objects.filter(link=campaign.study_link).select_related("assignment__item"):
        unit = ComparisonUnit.objects.get(outputs__assignment=slot.assignment)
        shown = [o.assignment.item_id for o in unit.outputs.select_related("assignment").order_by("position")]
        assert shown == planned[(unit.segment, slot.judge)]  # the screen as planned with the campaign

    person = _join(client, study, 0)  # back through the link, with the session's secret
    assert person == people[0]
    for screen in _screens(person):
        for a in screen:
            page = client.get(reverse("item_screen", args=[a.pk]))
            assert page.status_code == 200 and "contrastive: output" in page.content.decode()
            client.post(reverse("esa_span_add", args=[a.pk]), {"start": 4, "end": 7, "severity": "minor"}, **HX)
            assert client.post(reverse("esa_spans_done", args=[a.pk]), **HX).status_code == 200
            assert client.post(reverse("esa_score", args=[a.pk]), {"score": 70}, **HX).status_code == 200
            assert client.post(reverse("assignment_finish", args=[a.pk]), **HX).status_code == 200
    end = client.get(reverse("participant_end", args=[campaign.pk]), follow=True).content.decode()
    assert PASS in end
    assert not Assignment.objects.filter(annotator=person.user).exclude(status=Assignment.Status.DONE).exists()


def test_released_inputs_go_back_whole_and_return_with_the_same_screens(client):
    study = _study(protocols.CESA, inputs=4, share=2, per_item=1)
    link = study.campaign.study_link
    first = _join(client, study, 1)
    screens = _screens(first)
    worked, untouched = screens
    client.post(reverse("esa_span_add", args=[worked[1].pk]), {"start": 4, "end": 7, "severity": "major"}, **HX)
    second = _join(client, study, 2)
    assert len(_screens(second)) == 2  # the other two inputs
    Participant.objects.filter(pk=first.pk).update(last_seen_at=timezone.now() - timedelta(hours=2))
    assert assignments_release(link=link, now=timezone.now()) == 6
    kept = list(Assignment.objects.filter(annotator=first.user).values_list("pk", flat=True))
    assert sorted(kept) == sorted(a.pk for a in worked)  # work on one output keeps the whole screen
    assert ComparisonUnit.objects.filter(annotator=first.user).count() == 1  # the untouched screen is gone
    third = _join(client, study, 3)
    got = {s[0].item.external_id: [a.item_id for a in s] for s in _screens(third)}
    assert [a.item_id for a in untouched] == got[untouched[0].item.external_id]  # its positions as planned
    assert worked[0].item.external_id in got  # the worked input is free again too (kept work, unfinished)


def test_a_pairwise_link_study_gives_each_participant_both_screens_of_a_three_output_input(client):
    study = _study(protocols.PAIRWISE, inputs=4, share=1, per_item=2, training=1)
    campaign = study.campaign
    people = [_join(client, study, n) for n in range(8)]
    for person in people:
        screens = _screens(person)
        real = [s for s in screens if not s[0].is_training]
        practice = [s for s in screens if s[0].is_training]
        assert len(practice) == 2 and len(real) == 2 and all(len(s) == 2 for s in screens)
        assert screens[:2] == practice  # training first
        assert len({a.item.external_id for s in real for a in s}) == 1
    placed = _balanced(campaign)
    assert all(abs(c[1] - c[2]) <= 1 for c in placed.values()), placed
    person = _join(client, study, 0)
    assert person == people[0]
    for unit in ComparisonUnit.objects.filter(annotator=person.user).order_by("number"):
        assert client.post(reverse("unit_choice", args=[unit.outputs.first().assignment_id]),
                           {"unit": unit.pk, "choice": "1"}, **HX).status_code == 200
        assert client.post(reverse("unit_finish", args=[unit.outputs.first().assignment_id]),
                           {"unit": unit.pk}, **HX).status_code in (200, 204)
    assert not Assignment.objects.filter(annotator=person.user).exclude(status=Assignment.Status.DONE).exists()
    assert PASS in client.get(reverse("participant_end", args=[campaign.pk]), follow=True).content.decode()


def test_a_side_by_side_mqm_link_study_counts_inputs_and_warns_in_inputs(client):
    study = _study(protocols.SXS_MQM, inputs=3, systems=SYSTEMS[:2], share=5, per_item=1)
    campaign = study.campaign
    assert any("the pool has 3 inputs" in w for w in campaign.warnings), campaign.warnings
    person = _join(client, study, 1)
    assert [len(s) for s in _screens(person)] == [2, 2, 2]
    assert not link_has_room(link=campaign.study_link)
