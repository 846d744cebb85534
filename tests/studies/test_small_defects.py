"""Small defects of a study's pages and docs, each fixed and seen by a test."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from accounts.models import User
from corpus.models import Annotation
from quality.services import CheckSettings
from tests.annotator.study_links import join_by_link, link_study
from tests.factories import build_campaign
from tests.quality.conftest import build_study

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def judges(make_user):
    return make_user("stamper"), make_user("careful")


def _documentation_section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("## Documentation")
    return text[start:text.index("\n## ", start + 1)]


@pytest.mark.parametrize("exclude", [False, True])
def test_the_checks_line_says_whether_flagged_annotators_count_in_plain_words(client, researcher, judges, exclude):
    study = build_study(list(judges), checks=CheckSettings(exclude_flagged=exclude))
    client.force_login(researcher)
    page = client.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    line = " ".join(re.sub(r"<[^>]+>", "", page[page.index('id="quality-checks"'):]).split())
    assert "kept in of" not in line
    assert f"flagged annotators are {'left out of' if exclude else 'kept in'} the figures" in line


def test_the_draft_decoys_page_does_not_send_the_researcher_to_itself(client, researcher, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    decoys = f"/campaigns/{study.campaign.pk}/decoys/"
    client.force_login(researcher)
    page = client.get(decoys).content.decode()
    draft = page[page.index('id="campaign-draft"'):page.index("</section>", page.index('id="campaign-draft"'))]
    assert "answer-key page" not in draft and decoys not in draft and "drop its decoys below" in draft
    overview = client.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    assert f'href="{decoys}" id="answer-key-link">the answer-key page' in overview


def test_a_participants_top_bar_offers_no_docs_link_that_would_answer_404(client, make_user):
    study = link_study()
    assert join_by_link(client, study).status_code == 302
    queue = client.get(f"/campaigns/{study.campaign.pk}/")
    assert queue.status_code == 200
    bar = queue.content.decode().split("</header>")[0]
    assert 'href="/docs/"' not in bar
    assert client.get("/docs/").status_code == 404  # what the link led to: everything else is closed to them
    client.logout()
    client.force_login(make_user("registered"))
    assert 'href="/docs/"' in client.get("/").content.decode().split("</header>")[0]


def test_the_readme_lists_every_guide():
    listed = set(re.findall(r"\(docs/guides/([\w-]+\.md)\)", _documentation_section()))
    guides = {p.name for p in (REPO / "docs" / "guides").glob("*.md")}
    assert guides - listed == set()


def test_the_readme_says_which_line_names_the_run():
    readme = (REPO / "README.md").read_text()
    assert "Its first line names the run" not in readme
    assert "The line of its output that begins `Run ensemble-N (id N)` names the run" in readme


def test_the_calibration_the_readme_promises_is_a_table_of_that_name(client, researcher, annotator_user):
    assert "severity calibration" in (REPO / "README.md").read_text()
    built = build_campaign([annotator_user])
    client.force_login(researcher)
    table = client.get(f"/api/analytics/campaigns/{built.campaign.pk}/tables/calibration").json()
    assert table["key"] == "calibration"  # the API's key is unchanged
    assert table["title"] == "Severity calibration: machine against human-corrected"
    page = client.get(f"/analytics/campaigns/{built.campaign.pk}/").content.decode()
    assert "Severity calibration: machine against human-corrected" in page


def test_the_demo_samples_are_marked_where_the_guide_says(client):
    call_command("load_demo", stdout=io.StringIO())
    sample = Annotation.objects.filter(is_sample=True).select_related("item").first()
    assert sample is not None
    client.force_login(User.objects.get(username="researcher"))
    page = client.get(f"/datasets/{sample.item.dataset_id}/items/{sample.item_id}/").content.decode()
    assert "sample written by the team, not model output" in page
    guide = " ".join((REPO / "docs" / "getting-started" / "demo.md").read_text().split())
    assert "marked as samples on screen" not in guide
    assert "researchers see them marked as samples on the run's page and on each item's page" in guide
