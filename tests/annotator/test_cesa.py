"""Contrastive ESA without a browser: an input's three outputs on one screen, positions rotated so every system is in
every position equally often (within one), ESA^AI's pre-fill for half of the judges' screens and never mixed within
one, each output marked and scored with ESA's own steps beside the others, and `pairwise_scores --campaign` equal to
a recomputation from `export_units`."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from itertools import combinations

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.models import Assignment, ComparisonUnit, UnitOutput
from corpus import protocols
from corpus.interop.pearmut import read_pearmut
from stats.pairwise import sign_test
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
SYSTEMS = ("ash", "birch", "cedar")
SCORE = {"ash": 80, "birch": 60, "cedar": 60}


def _study(judges):
    data = f.dataset("cesa data", input_headers=["Source"], output_header="Translation")
    run = f.run(data, "cesa run")
    for k in range(6):
        for system in SYSTEMS:
            item = f.item(data, f"seg{k}", f"The cat sat on mat {k} said {system}.", system=system,
                          inputs={"Source": f"Die Katze {k}."})
            made = f.annotation(item, run, model="m", score=3.0, score_label="Fair")
            f.span_at(made, 1, "cat", explanation="Wrong animal.", severity=4)
    return campaign_create(CampaignSpec(name="cesa study", dataset=data, runs=[run], aspects=["accuracy"],
                                        annotators=judges, annotators_per_item=2, protocol=protocols.CESA,
                                        control_arm=1.0, seed=6))


def test_a_contrastive_esa_study(client, make_user, tmp_path):
    judges = [make_user(f"cesa-{k}") for k in range(3)]
    campaign = _study(judges)
    units = list(ComparisonUnit.objects.filter(campaign=campaign))
    assert len(units) == 12 and all(u.outputs.count() == 3 for u in units)
    placed: dict[str, Counter] = defaultdict(Counter)
    for row in UnitOutput.objects.filter(unit__campaign=campaign).select_related("assignment__item"):
        placed[row.assignment.item.system][row.position] += 1
    assert all(max(c.values()) - min(c[p] for p in (1, 2, 3)) <= 1 for c in placed.values()), placed
    arms = Counter()
    for unit in units:
        in_arm = {o.assignment.in_control_arm for o in unit.outputs.select_related("assignment")}
        assert len(in_arm) == 1  # a screen is pre-filled, or plain, as a whole
        arms[in_arm.pop()] += 1
    assert arms[True] and arms[False]  # both arms are there (half of each output's judges)

    for judge in judges:
        client.force_login(judge)
        for unit in ComparisonUnit.objects.filter(campaign=campaign, annotator=judge).order_by("number"):
            for row in UnitOutput.objects.filter(unit=unit).select_related("assignment__item").order_by("position"):
                a = row.assignment
                page = client.get(reverse("item_screen", args=[a.pk])).content.decode()
                assert "contrastive: output" in page and page.count('class="card output-card compare-output"') == 2
                if a.item.system != "ash":
                    client.post(reverse("esa_span_add", args=[a.pk]), {"start": 4, "end": 7, "severity": "major"},
                                **HX)
                assert client.post(reverse("esa_spans_done", args=[a.pk]), **HX).status_code == 200
                assert client.post(reverse("esa_score", args=[a.pk]), {"score": SCORE[a.item.system]},
                                   **HX).status_code == 200
                assert client.post(reverse("assignment_finish", args=[a.pk]), **HX).status_code == 200
    assert not Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).exists()

    export = tmp_path / "units.csv"
    call_command("export_units", "--campaign", str(campaign.pk), "--output", str(export))
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert len(rows) == 36 and {r["system"]: float(r["score"]) for r in rows} == SCORE
    wins: dict[tuple[str, str], Counter] = defaultdict(Counter)
    by_unit = defaultdict(list)
    for row in rows:
        by_unit[row["unit"]].append(row)
    for mates in by_unit.values():
        for x, y in combinations(sorted(mates, key=lambda r: r["system"]), 2):
            sx, sy = float(x["score"]), float(y["score"])
            wins[(x["system"], y["system"])]["a" if sx > sy else "b" if sy > sx else "ties"] += 1
    out = io.StringIO()
    call_command("pairwise_scores", "--campaign", str(campaign.pk), "--resamples", "30", stdout=out)
    result = json.loads(out.getvalue())
    got = {(p["a"], p["b"]): (p["a_better"], p["b_better"], p["ties"], p["p_value"]) for p in result["pairs"]}
    assert got == {pair: (c["a"], c["b"], c["ties"], sign_test(c["a"], c["b"])) for pair, c in wins.items()}
    assert result["systems"][0]["system"] == "ash"

    log = tmp_path / "cesa.jsonl"
    call_command("export_campaign", campaign=campaign.pk, format="pearmut-contrastive", output=log)
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 12  # one line per screen, its three outputs the systems of one segment, in screen order
    for line in lines:
        assert len(line["item"]) == 1 and set(line["item"][0]["tgt"]) == set(SYSTEMS)
        assert {s: v["score"] for s, v in line["annotation"][0].items()} == SCORE
    read = read_pearmut(log.read_text(encoding="utf-8").splitlines(keepends=True))
    assert len(read.ratings) == 36
    shown = {(r.user_id, r.item_i): [] for r in read.ratings}
    for r in read.ratings:
        shown[(r.user_id, r.item_i)].append((r.m, r.system))
    units = {(u.annotator.username, u.number - 1): [o.assignment.item.system for o in u.outputs.select_related(
        "assignment__item").order_by("position")] for u in ComparisonUnit.objects.filter(campaign=campaign)
        .select_related("annotator")}
    # the screens come back whole (the line's systems are written in key order; positions are in export_units)
    assert {key: sorted(s for _, s in v) for key, v in shown.items()} == {k: sorted(v) for k, v in units.items()}

    # read into a dataset, each line's segment is a screen again: the pairs are the campaign's
    call_command("import_pearmut", str(log), "--dataset", "cesa log back", stdout=io.StringIO())
    back = io.StringIO()
    call_command("pairwise_scores", "--dataset", "cesa log back", "--source", "pearmut", "--resamples", "30",
                 stdout=back)
    imported = json.loads(back.getvalue())
    assert {(p["a"], p["b"]): (p["a_better"], p["b_better"], p["ties"], p["p_value"]) for p in imported["pairs"]} == got
    assert imported["position_bias"]["decided_units"] == result["position_bias"]["decided_units"]
