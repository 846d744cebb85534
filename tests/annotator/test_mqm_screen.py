"""The MQM protocol in a campaign: the item screen (document context, tree, keys), errors checked against the
campaign's tree and severities, undo, finishing, and the report's MQM section."""

from __future__ import annotations

import pytest

from analytics.report.build import report_files
from annotator.models import Assignment
from corpus.models import ErrorSpan
from corpus.protocols import mqm
from studies.setup import CampaignError, CampaignSpec, campaign_create
from tests.mqm_study import build_mqm_study


@pytest.fixture
def study(db, tmp_path, make_user):
    return build_mqm_study(tmp_path, [make_user("mia"), make_user("max")], per_item=2)


def _client(client, user):
    client.force_login(user)
    return client


def _second_segment(study, annotator) -> Assignment:
    return next(a for a in study.assignments(annotator) if a.item.external_id == "talk:2" and a.item.system == "sysA")


def test_an_mqm_campaign_rates_every_output_without_runs(study):
    assert study.campaign.protocol == "mqm"
    assert Assignment.objects.filter(campaign=study.campaign).count() == 12  # 6 outputs x 2 annotators


def test_the_screen_shows_the_document_in_order_the_tree_and_escapes_texts(study, client):
    assignment = _second_segment(study, study.annotators[0])
    html = _client(client, study.annotators[0]).get(f"/work/{assignment.pk}/").content.decode()
    document = html[html.index('id="mqm-document"'):html.index('id="mqm-source"')]
    # this system's three segments in order, the current one marked; the other system's are not there
    assert document.index("Hallo Welt.") < document.index("Die &lt;b&gt;Katze") < document.index("Gute Nacht")
    assert "HALLO" not in document and document.count('aria-current="true"') == 1
    current = document[document.index('id="doc-current"'):]
    assert current.index("Katze") < current.index("</li>")
    assert "<b>Katze</b>" not in html  # dataset text is escaped everywhere
    assert "Accuracy" in html and "Untranslated text" in html and "Non-translation" in html
    assert "error-card" not in html  # no machine-span verdicts in MQM


def _add(client, assignment, **fields):
    return client.post(f"/work/{assignment.pk}/mqm/", fields, HTTP_HX_REQUEST="true")


def test_errors_are_checked_against_the_tree_and_the_severities(study, client):
    annotator = study.annotators[0]
    assignment = _second_segment(study, annotator)
    c = _client(client, annotator)
    answer = _add(c, assignment, start=4, end=9, category="Accuracy/Mistranslation", severity="major", note="cat?")
    assert answer.status_code == 200 and "Accuracy/Mistranslation" in answer.content.decode()
    span = ErrorSpan.objects.get(annotation__source__added__annotator=annotator)
    assert (span.text, span.severity, span.explanation) == ("<b>Ka", mqm.SEVERITY_CODES["major"], "cat?")
    assert _add(c, assignment, start=0, end=3, category="Accuracy", severity="minor").status_code == 422  # a parent
    assert _add(c, assignment, start=0, end=3, category="Made up", severity="minor").status_code == 422
    assert _add(c, assignment, start=0, end=3, category="Other", severity="fatal").status_code == 422
    assert ErrorSpan.objects.filter(annotation__source__added__annotator=annotator).count() == 1
    # undo takes the error back and answers with the MQM screen's parts
    undone = c.post(f"/work/{assignment.pk}/undo/", HTTP_HX_REQUEST="true")
    assert undone.status_code == 200 and 'id="mqm-errors"' in undone.content.decode()
    assert not ErrorSpan.objects.filter(annotation__source__added__annotator=annotator).exists()


def test_a_campaign_tree_replaces_the_default(db, tmp_path, make_user, client):
    annotator = make_user("tia")
    study = build_mqm_study(tmp_path, [annotator], name="own tree",
                            protocol_options={"tree": [{"name": "Meaning", "children": ["Wrong"]}, "Other"]})
    assignment = study.assignments(annotator)[0]
    c = _client(client, annotator)
    assert _add(c, assignment, start=0, end=3, category="Meaning/Wrong", severity="minor").status_code == 200
    assert _add(c, assignment, start=0, end=3, category="Accuracy/Mistranslation", severity="minor").status_code == 422
    assert "Non-translation" not in c.get(f"/work/{assignment.pk}/").content.decode()


def test_bad_protocol_settings_are_refused_naming_the_field(db, tmp_path, make_user):
    study = build_mqm_study(tmp_path, [make_user("ola")], name="base")
    for protocol, options, message in (("esa-later", None, "unknown protocol"),
                                       ("mqm", {"tree": "flat"}, "protocol_options.tree"),
                                       ("mqm", {"colours": 1}, "unknown option"),
                                       ("mqm", {"weights": {"*": {"major": -1}}}, "from 0"),
                                       ("opennlgauge", {"tree": ["A"]}, "takes none")):
        with pytest.raises(CampaignError, match=message):
            campaign_create(CampaignSpec(name=f"bad {protocol}", dataset=study.dataset, annotators=study.annotators,
                                         protocol=protocol, protocol_options=options))


def test_finished_ratings_make_the_reports_mqm_section(study, client):
    mia, max_ = study.annotators
    for annotator in (mia, max_):
        c = _client(client, annotator)
        for assignment in study.assignments(annotator):
            if assignment.item.system == "sysB":
                # 5 per segment by mia, 1 by max: sysB scores (3 * 5 + 3 * 1) / 6 = 3
                severity = "major" if annotator == mia else "minor"
                assert _add(c, assignment, start=0, end=2, category="Style/Awkward",
                            severity=severity).status_code == 200
            assert c.post(f"/work/{assignment.pk}/finish/", {"seconds": "1"}).status_code == 302
    markdown = report_files(study.campaign, "markdown")["report.md"].decode()
    section = markdown[markdown.index("MQM scores by system"):]
    assert section.index("sysA") < section.index("sysB")  # lower is better
    sys_b = next(line for line in section.splitlines() if "sysB" in line)
    assert "| 3.000 |" in sys_b and "| 6 |" in sys_b  # six rated (segment, rater) pairs
    assert "Style" in markdown[markdown.index("errors by top-level category"):]


def test_machine_spans_prefill_an_item_once_with_their_categories(db, tmp_path, make_user, client):
    from corpus.models import Dataset
    from tests import factories as make

    annotator = make_user("pia")
    base = build_mqm_study(tmp_path, [make_user("other")], name="with runs")
    dataset = Dataset.objects.get(pk=base.dataset.pk)
    item = dataset.items.get(external_id="talk:1", system="sysA")  # "Hallo Welt."
    machine = make.run(dataset, "mt-ensemble")
    answer = make.annotation(item, machine)
    make.span_at(answer, 1, "Welt", category="accuracy/mistranslation", severity=5, explanation="wrong")
    make.span_at(answer, 2, "Hallo", category="made-up category", severity=2)
    make.span(answer, 3, text="not in the text", category="Other", severity=3)
    campaign = campaign_create(CampaignSpec(name="prefilled", dataset=dataset, runs=[machine], aspects=["accuracy"],
                                            annotators=[annotator], protocol="mqm"))
    assignment = Assignment.objects.get(campaign=campaign, item=item)
    c = _client(client, annotator)
    html = c.get(f"/work/{assignment.pk}/").content.decode()
    assert "error-card" not in html  # the machine spans are not judged in MQM
    spans = {s.text: s for s in ErrorSpan.objects.filter(annotation__source__added__campaign=campaign)}
    assert set(spans) == {"Welt", "Hallo"}  # the unlocated one cannot be marked
    assert (spans["Welt"].category, spans["Welt"].severity) == ("Accuracy/Mistranslation", mqm.SEVERITY_CODES["major"])
    assert (spans["Hallo"].category, spans["Hallo"].severity) == ("Other", mqm.SEVERITY_CODES["minor"])
    # deleting one and opening the item again does not bring it back
    c.post(f"/mqm/{spans['Hallo'].pk}/delete/", HTTP_HX_REQUEST="true")
    c.get(f"/work/{assignment.pk}/")
    assert ErrorSpan.objects.filter(annotation__source__added__campaign=campaign).count() == 1
