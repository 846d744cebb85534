"""`export_annotations --campaign ID --format mqm-tsv`: an MQM campaign's finished ratings as Google's TSV, raters
pseudonymous, flagged annotators left out as asked, and a file that imports back to the campaign's scores."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from analytics.selectors.mqm import campaign_ratings, dataset_scores, rater_pseudonyms, score_rows
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from corpus.interop.mqm import COLUMNS, COMMENT
from corpus.models import Dataset, ErrorSpan
from corpus.protocols import mqm
from quality.models import Qualification
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db
HEADER = "\t".join((*COLUMNS, COMMENT)) + "\n"
MAJOR, MINOR = mqm.SEVERITY_CODES["major"], mqm.SEVERITY_CODES["minor"]


@pytest.fixture
def study(tmp_path, make_user):
    """Three annotators rate all six outputs. mia: Minor Fluency/Punctuation on sysA talk:3's final "." (after an
    emoji; a tab in her note), Major Style/Awkward on every sysB output. max: Minor Style/Awkward on every sysB
    output, and leaves sysA talk:3 unfinished. zed: Major Accuracy/Mistranslation on every sysA output; failing
    the qualification flags him.

    Everyone counted: sysA (0.1 + 3 x 5) / 8 rated pairs, sysB (3 x 5 + 3 x 1) / 9. zed left out: sysA 0.1 / 5,
    sysB 18 / 6."""
    mia, max_, zed = make_user("mia"), make_user("max"), make_user("zed")
    made = build_mqm_study(tmp_path, [mia, max_, zed], per_item=3, name="MQM export")
    for user in (mia, max_, zed):
        for a in made.assignments(user):
            system, place = a.item.system, a.item.external_id
            if user == mia and system == "sysA" and place == "talk:3":
                dot = a.item.output.index(".")
                added_span_create(assignment=a, user=user, start=dot, end=dot + 1, category="Fluency/Punctuation",
                                  severity=MINOR, note="too\tloud")
            if user in (mia, max_) and system == "sysB":
                added_span_create(assignment=a, user=user, start=0, end=3, category="Style/Awkward",
                                  severity=MAJOR if user == mia else MINOR)
            if user == zed and system == "sysA":
                added_span_create(assignment=a, user=user, start=0, end=4, category="Accuracy/Mistranslation",
                                  severity=MAJOR)
            if not (user == max_ and system == "sysA" and place == "talk:3"):
                assignment_finish(assignment=a, user=user)
    Qualification.objects.create(campaign=made.campaign, annotator=zed, score=0.2, passed=False)
    return made


def _export(study, *flags: str, path=None) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_annotations", "--campaign", str(study.campaign.pk), "--format", "mqm-tsv", *flags,
                 *(["-o", str(path)] if path else []), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _rows(text: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    assert lines[0] + "\n" == HEADER
    return [dict(zip((*COLUMNS, COMMENT), line.split("\t"), strict=True)) for line in lines[1:]]


def test_one_row_per_error_a_no_error_row_per_clean_item_and_only_finished_work(study):
    text, said = _export(study, "--include-flagged")
    rows = _rows(text)
    # 17 finished ratings: mia 6 (one error each on sysB and on sysA talk:3, clean twice), max 5, zed 6
    assert len(rows) == 17
    assert {r["rater"] for r in rows} == {"rater1", "rater2", "rater3"}
    assert not any(name in text for name in ("mia", "max", "zed"))  # pseudonyms only
    assert rater_pseudonyms(study.campaign) == {u.pk: f"rater{n}" for n, u in enumerate(study.annotators, 1)}
    by = {(r["system"], r["seg_id"], r["rater"]): r for r in rows}
    assert ("sysA", "3", "rater2") not in by  # max never finished it
    dot = by[("sysA", "3", "rater1")]
    assert (dot["target"], dot["category"], dot["severity"]) == ("Gute Nacht 😀<v>.</v>", "Fluency/Punctuation",
                                                                 "Minor")
    assert dot["comment"] == "too loud"  # a tab would split the row: it is written as a space
    clean = by[("sysA", "1", "rater1")]
    assert (clean["target"], clean["category"], clean["severity"]) == ("Hallo Welt.", "No-error", "No-error")
    assert by[("sysB", "2", "rater2")]["target"] == "<v>DIE</v> <B>KATZE</B> & DER HUND."
    assert (by[("sysB", "2", "rater2")]["doc"], by[("sysB", "2", "rater2")]["doc_id"]) == ("talk", "2")
    assert "counted in every figure: zed (chosen for these figures)" in said


def test_rater_names_writes_usernames(study):
    text, _ = _export(study, "--rater-names", "--include-flagged")
    assert {r["rater"] for r in _rows(text)} == {"mia", "max", "zed"}


def test_flagged_annotators_follow_the_campaign_setting_unless_a_flag_decides(study):
    counted, said = _export(study)
    assert {r["rater"] for r in _rows(counted)} == {"rater1", "rater2", "rater3"}
    assert "(the campaign's setting)" in said
    left_out, said = _export(study, "--exclude-flagged")
    assert {r["rater"] for r in _rows(left_out)} == {"rater1", "rater2"}  # the others keep their ids
    assert "left out of every figure: zed (chosen for these figures)" in said
    study.campaign.exclude_flagged = True
    study.campaign.save(update_fields=["exclude_flagged"])
    assert _export(study)[0] == left_out
    assert _export(study, "--include-flagged")[0] == counted


@pytest.mark.parametrize(("flags", "excluded"), [(("--include-flagged",), False), (("--exclude-flagged",), True)])
def test_the_tsv_imports_back_to_the_campaigns_scores(study, tmp_path, flags, excluded):
    path = tmp_path / "campaign.tsv"
    _export(study, *flags, path=path)
    call_command("import_mqm", str(path), dataset="round trip", source="camp", stdout=io.StringIO())
    campaign_rows = score_rows(campaign_ratings(study.campaign, exclude_flagged=excluded))
    expected = {"sysA": (0.1 / 5, 5), "sysB": (18 / 6, 6)} if excluded else \
        {"sysA": ((0.1 + 15) / 8, 8), "sysB": (18 / 9, 9)}
    for row in campaign_rows:  # ratings: rated (segment, rater) pairs; segments: the three source segments
        assert (row["score"], row["ratings"], row["segments"]) == (pytest.approx(expected[row["system"]][0]),
                                                                   expected[row["system"]][1], 3)
    imported = dataset_scores(Dataset.objects.get(name="round trip"), prefix="camp")["systems"]
    assert [r["system"] for r in imported] == [r["system"] for r in campaign_rows]
    for back, row in zip(imported, campaign_rows, strict=True):  # intervals and rank ranges too: the same segments
        assert (back["ratings"], back["segments"], back["rank_range"]) == (row["ratings"], row["segments"],
                                                                          row["rank_range"])
        assert [back[k] for k in ("score", "ci_low", "ci_high")] == pytest.approx([row[k] for k in
                                                                                   ("score", "ci_low", "ci_high")])
    dot = ErrorSpan.objects.get(annotation__item__dataset__name="round trip", category="Fluency/Punctuation")
    assert (dot.text, dot.start, dot.explanation) == (".", 12, "too loud")


def test_bad_requests_are_refused_naming_the_option(study, make_user):
    pk = str(study.campaign.pk)
    for args, message in (
        (["--campaign", pk, "--format", "jsonl"], "--campaign exports only --format mqm-tsv"),
        (["--campaign", pk, "--format", "mqm-tsv", "--source", "google"], "--source"),
        (["--campaign", "999999", "--format", "mqm-tsv"], "--campaign: no campaign"),
        (["--campaign", pk, "--format", "mqm-tsv", "--dataset", "other"], "--dataset"),
        (["--dataset", study.dataset.name, "--format", "mqm-tsv", "--rater-names"], "only with --campaign"),
        (["--dataset", study.dataset.name, "--format", "mqm-tsv", "--include-flagged"], "only with --campaign"),
        (["--format", "mqm-tsv"], "--dataset is needed"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("export_annotations", *args, stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError):
        call_command("export_annotations", "--campaign", pk, "--format", "mqm-tsv", "--exclude-flagged",
                     "--include-flagged", stdout=io.StringIO(), stderr=io.StringIO())


def test_a_campaign_of_another_protocol_is_refused(make_user):
    from tests.factories import build_campaign

    built = build_campaign([make_user("og")])
    with pytest.raises(CommandError, match="opennlgauge protocol"):
        call_command("export_annotations", "--campaign", str(built.campaign.pk), "--format", "mqm-tsv",
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_the_reports_mqm_section_leaves_out_whom_the_export_leaves_out(study):
    from analytics.report.build import report_files

    def sys_b(exclude: bool) -> str:
        markdown = report_files(study.campaign, "markdown", exclude_flagged=exclude)["report.md"].decode()
        section = markdown[markdown.index("MQM scores by system"):]
        return next(line for line in section.splitlines() if "sysB" in line)

    assert "| 2.000 |" in sys_b(False) and "| 9 |" in sys_b(False)
    assert "| 3.000 |" in sys_b(True) and "| 6 |" in sys_b(True)


def test_items_that_came_from_no_tsv_get_a_place_and_a_system_and_import_back(tmp_path, make_user):
    from annotator.models import Assignment
    from studies.setup import CampaignSpec, campaign_create
    from tests import factories as f

    judge = make_user("lea")
    data = f.dataset("plain MT", input_headers=["Source"], output_header="Translation")
    f.item(data, "s1", "Hallo\tWelt.", system="", inputs={"Source": "Hello world."})
    campaign = campaign_create(CampaignSpec(name="plain MQM", dataset=data, annotators=[judge], protocol="mqm"))
    (work,) = Assignment.objects.filter(campaign=campaign)
    added_span_create(assignment=work, user=judge, start=6, end=10, category="Accuracy/Mistranslation",
                      severity=MAJOR)
    assignment_finish(assignment=work, user=judge)
    out = io.StringIO()
    call_command("export_annotations", "--campaign", str(campaign.pk), "--format", "mqm-tsv", stdout=out,
                 stderr=io.StringIO())
    (row,) = _rows(out.getvalue())
    assert (row["system"], row["doc"], row["doc_id"], row["seg_id"], row["rater"]) == \
        ("(no system)", "doc", "0", "s1", "rater1")
    assert row["target"] == "Hallo <v>Welt</v>."  # the tab inside the text is written as a space
    path = tmp_path / "plain.tsv"
    path.write_text(out.getvalue(), encoding="utf-8")
    call_command("import_mqm", str(path), dataset="plain back", stdout=io.StringIO())
    (back,) = dataset_scores(Dataset.objects.get(name="plain back"))["systems"]
    assert (back["system"], back["score"], back["segments"]) == ("(no system)", 5.0, 1)
