"""Link studies under the comparing protocols: a participant takes whole inputs (every output of the input at one
place, its screens planned with the campaign), so positions stay counterbalanced over everyone who joins, a screen
is pre-filled or plain as a whole, `items_per_participant` counts inputs, released work goes back an input at a time
and comes back to the next participant with the same screens, and a participant who finishes gets their code."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotator.models import Assignment, ComparisonUnit, UnitOutput
from corpus import protocols
from quality.models import PlantedOutput
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
           per_item: int = 2, share: int = 2, training: int = 0, planted: float = 0.0, **link) -> Study:
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
        checks=CheckSettings(qualification_items=tuple(practice), planted=planted),
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


def test_a_side_by_side_mqm_link_study_counts_inputs_and_warns_in_inputs(client, researcher):
    study = _study(protocols.SXS_MQM, inputs=3, systems=SYSTEMS[:2], share=5, per_item=1)
    campaign = study.campaign
    assert any("the pool has 3 inputs" in w for w in campaign.warnings), campaign.warnings
    client.force_login(researcher)
    page = client.get(reverse("campaign_participants", args=[campaign.pk])).content.decode()
    assert "5 inputs each" in page
    person = _join(client, study, 1)
    assert [len(s) for s in _screens(person)] == [2, 2, 2]
    assert not link_has_room(link=campaign.study_link)


def _work(client, person: Participant, *, mark_planted: bool) -> None:
    """Every output of the participant's screens through ESA's steps; the planted error marked or missed."""
    planted = {p.item_id: p for p in PlantedOutput.objects.filter(annotator=person.user)}
    for screen in _screens(person):
        for a in screen:
            copy = planted.get(a.item_id)
            start, end = (copy.start, copy.end) if copy is not None and mark_planted else (0, 3)
            assert client.post(reverse("esa_span_add", args=[a.pk]), {"start": start, "end": end,
                                                                     "severity": "major"}, **HX).status_code == 200
            assert client.post(reverse("esa_spans_done", args=[a.pk]), **HX).status_code == 200
            assert client.post(reverse("esa_score", args=[a.pk]), {"score": 50}, **HX).status_code == 200
            assert client.post(reverse("assignment_finish", args=[a.pk]), **HX).status_code == 200


def test_planted_screens_check_a_contrastive_esa_link_studys_participants(client, tmp_path):
    """A planted copy comes on a screen of its own: the copy and its input's other outputs copied verbatim, so it
    looks like any screen of that input. A participant who marks the planted error gets the pass code, one who
    misses it the fail code, and the planted screens are in no export or figure."""
    study = _study(protocols.CESA, inputs=10, per_item=1, share=5, planted=0.34, fail_code="CMP-FAIL")
    campaign = study.campaign
    assert PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=True).count() == 6  # 3 for each of 2
    careful = _join(client, study, 1)
    screens = _screens(careful)
    assert [len(s) for s in screens] == [3] * 8
    planted = [s for s in screens if s[0].item.derived_from_id is not None]
    assert len(planted) == 3 and all(a.item.derived_from_id for s in planted for a in s)  # copies and companions
    real_inputs = {a.item.external_id for s in screens if s not in planted for a in s}
    for screen in planted:
        copy = PlantedOutput.objects.get(annotator=careful.user, item_id__in=[a.item_id for a in screen])
        assert {a.item.derived_from.external_id for a in screen} == {copy.original.external_id}  # one input
        assert {a.item.system for a in screen} == set(SYSTEMS)  # one of each system, as a real screen of it
        assert copy.original.external_id not in real_inputs  # never a copy of an input they judge
    _work(client, careful, mark_planted=True)
    assert "CMP-PASS" in client.get(reverse("participant_end", args=[campaign.pk]), follow=True).content.decode()

    careless = _join(client, study, 2)
    _work(client, careless, mark_planted=False)
    assert "CMP-FAIL" in client.get(reverse("participant_end", args=[campaign.pk]), follow=True).content.decode()

    export = tmp_path / "units.csv"
    call_command("export_units", "--campaign", str(campaign.pk), "--output", str(export))
    rows = export.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == 30  # two participants x five real screens x three outputs: the planted screens left out


def test_a_side_by_side_mqm_campaign_plants_a_screen_for_each_registered_judge(make_user):
    judges = [make_user(f"sxs-planted-{n}") for n in range(2)]
    data = f.dataset("sxs planted", input_headers=["Source"], output_header="Translation")
    for k in range(8):
        for system in SYSTEMS[:2]:
            f.item(data, f"seg{k}", f"The cat sat on mat {k}, said {system}.", system=system,
                   inputs={"Source": f"Die Katze {k}."})
    campaign = campaign_create(CampaignSpec(name="sxs planted", dataset=data, annotators=judges,
                                            annotators_per_item=1, protocol=protocols.SXS_MQM,
                                            checks=CheckSettings(planted=0.2)))
    for judge in judges:
        units = list(ComparisonUnit.objects.filter(campaign=campaign, annotator=judge))
        planted = [u for u in units if u.outputs.filter(assignment__item__derived_from__isnull=False).exists()]
        assert len(units) == 5 and len(planted) == 1  # 4 inputs of their own, one planted screen
        items = [o.assignment.item for o in planted[0].outputs.select_related("assignment__item")]
        assert len(items) == 2 and all(i.derived_from_id for i in items)
        copy = PlantedOutput.objects.get(campaign=campaign, annotator=judge)
        assert copy.item_id in {i.pk for i in items}
        mine = {a.item.external_id for a in Assignment.objects.filter(campaign=campaign, annotator=judge,
                                                                       item__derived_from__isnull=True)}
        assert copy.original.external_id not in mine


def test_a_pairwise_link_studys_planted_screens_show_the_copy_beside_its_original(client):
    """Under pairwise a planted screen is the copy beside its original (both copies of an input the participant
    does not judge): preferring the original finds it, preferring the copy or a tie misses it."""
    study = _study(protocols.PAIRWISE, inputs=12, systems=SYSTEMS[:2], per_item=1, share=5, planted=0.34,
                   fail_code="CMP-FAIL")
    campaign = study.campaign
    outcomes = {}
    for n, prefer_original in ((1, True), (2, False)):
        person = _join(client, study, n)
        planted = {p.item_id: p for p in PlantedOutput.objects.filter(annotator=person.user)}
        assert len(planted) == 3
        for unit in ComparisonUnit.objects.filter(annotator=person.user).order_by("number"):
            rows = list(UnitOutput.objects.filter(unit=unit).select_related("assignment__item").order_by("position"))
            copy = next((r for r in rows if r.assignment.item_id in planted), None)
            if copy is not None:
                original = next(r for r in rows if r is not copy)
                assert original.assignment.item.output == planted[copy.assignment.item_id].original.output
                choice = original.position if prefer_original else copy.position
            else:
                choice = 1
            pk = rows[0].assignment_id
            assert client.post(reverse("unit_choice", args=[pk]), {"unit": unit.pk, "choice": str(choice)},
                               **HX).status_code == 200
            assert client.post(reverse("unit_finish", args=[pk]), {"unit": unit.pk}, **HX).status_code in (200, 204)
        outcomes[n] = client.get(reverse("participant_end", args=[campaign.pk]), follow=True).content.decode()
    assert "CMP-PASS" in outcomes[1] and "CMP-FAIL" in outcomes[2]


def test_an_input_half_finished_by_someone_who_left_is_handed_out_whole_again(client):
    study = _study(protocols.CESA, inputs=2, share=2, per_item=1)
    link = study.campaign.study_link
    leaver = _join(client, study, 1)
    half, untouched = _screens(leaver)
    done = half[0]
    client.post(reverse("esa_span_add", args=[done.pk]), {"start": 4, "end": 7, "severity": "minor"}, **HX)
    assert client.post(reverse("esa_spans_done", args=[done.pk]), **HX).status_code == 200
    assert client.post(reverse("esa_score", args=[done.pk]), {"score": 40}, **HX).status_code == 200
    assert client.post(reverse("assignment_finish", args=[done.pk]), **HX).status_code == 200
    Participant.objects.filter(pk=leaver.pk).update(last_seen_at=timezone.now() - timedelta(hours=2))
    assignments_release(link=link, now=timezone.now())
    kept = Assignment.objects.filter(annotator=leaver.user)
    assert sorted(kept.values_list("pk", flat=True)) == sorted(a.pk for a in half)  # the screen stays with them
    assert link_has_room(link=link)
    newcomer = _join(client, study, 2)
    got = {s[0].item.external_id: [a.item_id for a in s] for s in _screens(newcomer)}
    assert got == {half[0].item.external_id: [a.item_id for a in half],
                   untouched[0].item.external_id: [a.item_id for a in untouched]}  # both inputs, whole, as planned
    done.refresh_from_db()
    assert done.status == Assignment.Status.DONE  # the leaver's finished output keeps its judgment
    assert PoolSlot.objects.filter(link=link, assignment__annotator=newcomer.user).count() == 6
