"""Every action of every item screen, found from the URL conf by its mark, answers a participant on their own
item as it answers a registered annotator on theirs, and a participant on someone else's item 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import Assignment, Campaign
from annotator.selectors.spans import added_spans, judged_spans, span_handle
from annotator.services.added_spans import added_span_create
from annotator.services.esa import esa_open
from annotator.views.marks import MarkedUrl, Own, marked_urls
from corpus import protocols
from corpus.models import ErrorSpan
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.annotator.study_links import Study, join_by_link, signed_in_participant

pytestmark = pytest.mark.django_db

PROTOCOLS = sorted(protocols.PROTOCOLS)


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"


def _study(protocol: str, registered) -> Campaign:
    """Two items with one machine span each, one registered judge per item and one place per item for the link;
    under a comparing protocol the two are outputs of one input (two systems), which the link hands out together."""
    data = f.dataset(f"Walk {protocol}", input_headers=["Source"], output_header="Output")
    run = f.run(data, f"Walk {protocol} run")
    comparing = protocols.get(protocol).comparing
    for n in (1, 2):
        item = f.item(data, "w" if comparing else f"w{n}", f"Output {n} says the cafe is cheap.", position=n,
                      inputs={"Source": "src" if comparing else f"src {n}"}, system=f"s{n}")
        made = f.annotation(item, run, model="m", score=2.0, score_label="Poor")
        f.span_at(made, 1, "cheap", explanation="The price range is high.", severity=4)
    return campaign_create(CampaignSpec(
        name=f"Walk {protocol}", dataset=data, runs=[run], annotators=[registered], aspects=["accuracy"],
        annotators_per_item=2, seed=5, protocol=protocol,
        link=LinkSettings(items_per_participant=2, pass_code="WALK-PASS")))


WORDS = ((0, 6), (9, 13), (14, 17), (18, 22))  # "Output", "says", "the", "cafe": more than the walk deletes


def _add_errors(assignment: Assignment) -> None:
    """Errors the assignment's annotator added, valid under the campaign's protocol, off the undo stack."""
    declared = protocols.get(assignment.campaign.protocol)
    if not declared.marks_errors:  # DA scores only
        return
    categories = declared.categories(assignment.campaign.protocol_options)
    for start, end in WORDS:
        added_span_create(assignment=assignment, user=assignment.annotator, start=start, end=end,
                          category=categories[0] if categories else "",
                          severity=declared.severities[-1] if declared.severities else None, record=False)


def _added(assignment: Assignment) -> ErrorSpan:
    """The newest error the annotator added there (a delete earlier in the walk took one away)."""
    return added_spans(assignment)[-1]


def _url(url: MarkedUrl, assignment: Assignment) -> str:
    if url.own == Own.SETTING:
        return reverse(url.name)
    if url.own == Own.ADDED_SPAN:
        return reverse(url.name, kwargs={"span_pk": _added(assignment).pk})
    kwargs = {"pk": assignment.pk}
    if "<int:span_pk>" in url.route:  # a span judged on the assignment
        machine = judged_spans(assignment, with_checks=False)[0][0]
        kwargs["span_pk"] = span_handle(assignment.pk, machine.pk)
    return reverse(url.name, kwargs=kwargs)


def _send(client: Client, path: str, method: str) -> int:
    return (client.get(path) if method == "GET" else client.post(path, HTTP_HX_REQUEST="true")).status_code


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_participant_reaches_every_marked_action_as_a_registered_annotator_does(protocol, make_user):
    registered = make_user(f"reg-{protocol}")
    campaign = _study(protocol, registered)
    participant_client = Client()
    join_by_link(participant_client, Study(campaign=campaign, items=[]))
    participant = signed_in_participant(participant_client)
    mine = Assignment.objects.select_related("campaign", "item").filter(campaign=campaign, annotator=participant.user)
    theirs = Assignment.objects.select_related("campaign", "item").filter(campaign=campaign, annotator=registered)
    pairs = [(a, theirs.get(item_id=a.item_id)) for a in mine.order_by("order")]
    assert pairs, "the participant holds items the registered annotator also judges"
    own, other = pairs[0]
    for assignment in (own, other):
        if protocols.get(protocol).steps_of == protocols.ESA or protocol == protocols.ESA:
            esa_open(assignment=assignment, user=assignment.annotator)
        _add_errors(assignment)
    registered_client = Client()
    registered_client.force_login(registered)

    urls = list(marked_urls())
    # The item screen of every protocol and each protocol's own actions are among the marks.
    names = {u.name for u in urls}
    assert {"item_screen", "judgment_save", "occurrence_save", "mqm_error_add", "mqm_error_remove", "esa_span_add",
            "esa_missing_add", "esa_spans_done", "esa_score", "esa_span_change", "esa_span_remove",
            "item_score", "unit_choice", "unit_finish"} <= names
    seen = []
    for url in urls:
        if url.own == Own.ADDED_SPAN and not protocols.get(protocol).marks_errors:
            continue  # nobody marks an error of their own under it
        path_mine, path_theirs = _url(url, own), _url(url, other)
        method = "POST" if registered_client.get(path_theirs).status_code == 405 else "GET"
        as_participant = _send(participant_client, path_mine, method)
        as_registered = _send(registered_client, path_theirs, method)
        seen.append((url.name, method, as_participant, as_registered))
        assert as_participant == as_registered, (url.name, method, as_participant, as_registered)
        assert as_participant < 500, (url.name, method, as_participant)
        if url.own != Own.SETTING:  # a setting is nobody else's
            assert _send(participant_client, path_theirs, method) == 404, url.name
    # The walk reached the views, not a wall: most actions answered something other than 404.
    assert sum(s[2] != 404 for s in seen) > len(seen) // 2, seen
