"""Pearmut's contrastive task file, out and in: a `cesa` campaign written as the tasks Pearmut would hand out (one
per registered judge and per place of the link's pool, each screen a document with its outputs in position order,
ESA^AI's spans where the screen is pre-filled), read back by our reader, and imported as a dataset that a `cesa`
campaign judges; a bad file is refused naming the place."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotator.models import ComparisonUnit, UnitOutput
from corpus import protocols
from corpus.formats import FormatError
from corpus.interop.pearmut import read_pearmut_task
from corpus.models import Dataset, Item
from studies.models import PoolSlot
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db

SYSTEMS = ("ash", "birch", "cedar")


def _campaign(make_user):
    data = f.dataset("task out data", input_headers=["Source"], output_header="Translation")
    run = f.run(data, "task out run")
    for k in range(4):
        for system in SYSTEMS:
            item = f.item(data, f"seg{k}", f"The cat sat on mat {k}, said {system}.", system=system,
                          inputs={"Source": f"Die Katze {k}."})
            made = f.annotation(item, run, model="m", score=3.0, score_label="Fair")
            f.span_at(made, 1, "cat", explanation="Wrong animal.", severity=4)
    judge = make_user("task-judge")
    return campaign_create(CampaignSpec(
        name="task out", dataset=data, runs=[run], aspects=["accuracy"], annotators=[judge], annotators_per_item=3,
        protocol=protocols.CESA, control_arm=1.0, seed=3, link=LinkSettings(items_per_participant=2, pass_code="OK")))


def test_a_cesa_campaign_is_written_as_pearmut_tasks_and_imported_back(make_user, tmp_path):
    campaign = _campaign(make_user)
    path = tmp_path / "task.json"
    call_command("export_campaign", campaign=campaign.pk, format="pearmut-task", output=path)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["info"] == {"assignment": "task-based", "protocol": "cESA", "shuffle": False,
                              "show_model_names": False}
    data = record["data"]
    assert len(data) == 3  # the registered judge, then the pool's two places
    units = ComparisonUnit.objects.filter(campaign=campaign).order_by("number")
    judge_screens = [[o.assignment.item for o in UnitOutput.objects.filter(unit=u).select_related("assignment__item")
                      .order_by("position")] for u in units]
    assert [list(doc[0]["tgt"]) for doc in data[0]] == [[i.system for i in screen] for screen in judge_screens]
    assert [doc[0]["item_id"] for doc in data[0]] == [screen[0].external_id for screen in judge_screens]
    planned = campaign.study_link.screens
    arms = {(i, k): u for i, k, u in PoolSlot.objects.filter(link=campaign.study_link)
            .values_list("item_id", "judge", "unprimed")}
    systems = dict(Item.objects.filter(dataset=campaign.dataset).values_list("pk", "system"))
    for k, task in ((1, data[1]), (2, data[2])):
        mine = [s for s in planned if s["judge"] == k]
        assert [list(doc[0]["tgt"]) for doc in task] == [[systems[i] for i in s["items"]] for s in mine]
        for doc, screen in zip(task, mine, strict=True):
            prefilled = not arms[(screen["items"][0], k)]
            assert ("error_spans" in doc[0]) == prefilled  # pre-filled screens carry ESA^AI's spans
            if prefilled:
                for system, spans in doc[0]["error_spans"].items():
                    text = doc[0]["tgt"][system]
                    assert [text[s["start_i"]:s["end_i"] + 1] for s in spans] == ["cat"]
                    assert {s["severity"] for s in spans} <= {"minor", "major"}
    read = read_pearmut_task(path.read_text(encoding="utf-8"))
    assert read.tasks == 3 and read.documents == 12 and len(read.outputs) == 36
    assert all(o.source and o.source.startswith("Die Katze") for o in read.outputs)

    call_command("import_pearmut_task", str(path), "--dataset", "from pearmut")
    imported = Dataset.objects.get(name="from pearmut")
    assert imported.items.count() == 12 and set(imported.items.values_list("system", flat=True)) == set(SYSTEMS)
    call_command("import_pearmut_task", str(path), "--dataset", "from pearmut")  # again: the same items
    assert imported.items.count() == 12
    judges = [make_user(f"imported-{n}") for n in range(2)]
    again = campaign_create(CampaignSpec(name="judged here", dataset=imported, annotators=judges,
                                         annotators_per_item=1, protocol=protocols.CESA))
    units = ComparisonUnit.objects.filter(campaign=again)
    assert units.count() == 4 and all(u.outputs.count() == 3 for u in units)


def test_pearmut_task_files_of_either_layout_are_read_and_bad_ones_refused_by_place(tmp_path):
    by_user = {"info": {"protocol": "cESA"}, "campaign_id": "c", "data": {"anna": [[
        {"item_id": "s1", "src": "Hallo Welt.", "tgt": {"x": "Hello world.", "y": "Hi, world!"}},
        {"item_id": "s2", "src": "Gute Nacht.", "tgt": {"x": "Good night.", "y": "Good evening."},
         "error_spans": {"y": [{"start_i": 5, "end_i": 11, "severity": "major"}]}}]]}}
    read = read_pearmut_task(json.dumps(by_user))
    assert read.tasks == 1 and read.documents == 1 and [o.user_id for o in read.outputs] == ["anna"] * 4
    shifted = next(o for o in read.outputs if o.system == "y" and o.item_id == "s2")
    assert shifted.prefill and shifted.output[shifted.prefill[0].start:shifted.prefill[0].end] == "evening"
    with pytest.raises(FormatError, match=r"data 'task-0', document 0, item 1: an item is an object whose tgt"):
        read_pearmut_task(json.dumps({"data": [[[{"tgt": {"x": "a"}}, {"tgt": "not a map"}]]]}))
    with pytest.raises(FormatError, match="not JSON"):
        read_pearmut_task("{")
    clash = {"data": [[[{"item_id": "s1", "tgt": {"x": "one"}}]], [[{"item_id": "s1", "tgt": {"x": "two"}}]]]}
    path = tmp_path / "clash.json"
    path.write_text(json.dumps(clash), encoding="utf-8")
    with pytest.raises(CommandError, match="item 's1' of system 'x' has another text"):
        call_command("import_pearmut_task", str(path), "--dataset", "clash")
    assert not Dataset.objects.filter(name="clash").exists()


def test_a_pearmut_log_of_one_output_per_segment_has_no_pairwise_figures(tmp_path):
    lines = [{"user_id": "u1", "item_i": n, "item": [{"item_id": f"s{n}", "src": "Hallo.", "tgt": {"x": "Hello."}}],
              "annotation": [{"x": {"score": 70, "error_spans": []}}]} for n in range(2)]
    log = tmp_path / "single.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    call_command("import_pearmut", str(log), "--dataset", "single pearmut")
    with pytest.raises(CommandError, match="made one output at a time"):
        call_command("pairwise_scores", "--dataset", "single pearmut", "--source", "pearmut")
