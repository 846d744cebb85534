"""Side-by-side MQM without a browser: an input's two outputs on one screen, each marked with MQM's own steps (in
the output and in the source), the other output shown beside the one in focus; a screen counts once both outputs
are finished; `pairwise_scores --campaign` equals a recomputation from `export_units`, and the campaign's Google
side-by-side TSV, imported as a dataset, gives the same pairs and position bias."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.models import ComparisonUnit, UnitOutput
from corpus import protocols
from corpus.interop.mqm_sxs import read_sxs_tsv
from stats.pairwise import sign_test
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db

SOURCE = "Der Hund bellt laut am Freitag."
HX = {"HTTP_HX_REQUEST": "true"}


def _study(judges):
    data = f.dataset("sxs data", input_headers=["Source"], output_header="Translation")
    for k in range(4):
        for system in ("good", "weak"):
            f.item(data, f"seg{k}", f"The dog barks loudly on Friday {k} ({system}).", system=system,
                   inputs={"Source": SOURCE})
    return campaign_create(CampaignSpec(name="sxs study", dataset=data, aspects=[], annotators=judges,
                                        annotators_per_item=2, protocol=protocols.SXS_MQM, seed=11))


def _mark_and_finish(client, campaign, judge, number):
    """Mark each output of the judge's screens as the judge sees it: the weak output a Major accuracy error (and, on
    every other screen, an omission in the source), the good one a Minor fluency error on odd screens only."""
    tree = protocols.get(protocols.SXS_MQM).categories(campaign.protocol_options)
    accuracy, fluency = tree[0], next(c for c in tree if c.startswith("Fluency"))
    for unit in ComparisonUnit.objects.filter(campaign=campaign, annotator=judge).order_by("number"):
        for row in UnitOutput.objects.filter(unit=unit).select_related("assignment__item").order_by("position"):
            a = row.assignment
            url = reverse("mqm_error_add", args=[a.pk])
            if a.item.system == "weak":
                assert client.post(url, {"start": 4, "end": 7, "severity": "major", "category": accuracy},
                                   **HX).status_code == 200
                if unit.number % 2 == 0:
                    assert client.post(url, {"start": 9, "end": 14, "severity": "minor", "category": accuracy,
                                             "side": "source"}, **HX).status_code == 200
            elif unit.number % 2 == 1:
                assert client.post(url, {"start": 8, "end": 13, "severity": "minor", "category": fluency},
                                   **HX).status_code == 200
            assert client.post(reverse("assignment_finish", args=[a.pk]), **HX).status_code == 200
        number += 1
    return number


def test_a_sxs_mqm_study_scores_from_its_export_and_its_tsv(client, make_user, tmp_path):
    judges = [make_user("sxs-1"), make_user("sxs-2")]
    campaign = _study(judges)
    first = UnitOutput.objects.filter(unit__campaign=campaign, unit__annotator=judges[0]).select_related("unit") \
        .order_by("unit__number", "position").first()
    client.force_login(judges[0])
    page = client.get(reverse("item_screen", args=[first.assignment_id])).content.decode()
    assert 'data-switch-url="' in page and 'id="beside-2"' in page and "side by side: output 1 of 2" in page
    refused = client.post(reverse("unit_choice", args=[first.assignment_id]), {"choice": "1"}, **HX)
    assert refused.status_code == 409 and "asks no choice" in refused.content.decode()
    early = io.StringIO()
    with pytest.raises(Exception, match="finished"):
        call_command("pairwise_scores", "--campaign", str(campaign.pk), stdout=early)
    for judge in judges:
        client.force_login(judge)
        _mark_and_finish(client, campaign, judge, 0)
    # a source omission is on the weak side's output, marked in the source
    export = tmp_path / "units.csv"
    call_command("export_units", "--campaign", str(campaign.pk), "--output", str(export))
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert len(rows) == 16 and all(r["finished_at"] and r["score"] != "" for r in rows)
    assert {float(r["score"]) for r in rows if r["system"] == "weak"} == {5.0, 6.0}
    by_unit = defaultdict(list)
    for row in rows:
        by_unit[row["unit"]].append(row)
    wins: Counter = Counter()
    first_wins = decided = 0
    for mates in by_unit.values():
        good, weak = sorted(mates, key=lambda r: r["system"])
        g, w = float(good["score"]), float(weak["score"])
        wins["good" if g < w else "weak" if w < g else "tie"] += 1
        if g != w:
            decided += 1
            first_wins += (good if g < w else weak)["position"] == "1"
    out = io.StringIO()
    call_command("pairwise_scores", "--campaign", str(campaign.pk), "--resamples", "50", stdout=out)
    result = json.loads(out.getvalue())
    pair = result["pairs"][0]
    assert (pair["a"], pair["b"], pair["a_better"], pair["b_better"], pair["ties"]) == (
        "good", "weak", wins["good"], wins["weak"], wins["tie"])
    assert pair["p_value"] == sign_test(wins["good"], wins["weak"])
    assert (result["position_bias"]["first_wins"], result["position_bias"]["decided_units"]) == (first_wins, decided)

    tsv = tmp_path / "sxs.tsv"
    call_command("export_campaign", campaign=campaign.pk, format="mqm-sxs-tsv", output=tsv)
    read = read_sxs_tsv(tsv.read_text(encoding="utf-8").splitlines(keepends=True))
    assert len(read.ratings) == 16
    placed = {(r.rating.rater, r.rating.system, r.screen): r.position for r in read.ratings}
    assert set(placed.values()) == {1, 2}
    call_command("import_mqm", str(tsv), dataset="sxs back", side_by_side=True, stdout=io.StringIO())
    back = io.StringIO()
    call_command("pairwise_scores", dataset="sxs back", resamples=50, stdout=back)
    again = json.loads(back.getvalue())
    assert again["pairs"][0] | {"ci_low": 0, "ci_high": 0} == pair | {"ci_low": 0, "ci_high": 0}
    assert again["position_bias"] == result["position_bias"]
