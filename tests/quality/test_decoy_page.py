"""The decoys' answer-key page and the campaign page's checks table (researchers only)."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from quality.models import CheckSpan
from quality.services import CheckSettings
from tests.quality.conftest import build_study


def test_researcher_edits_drops_and_imports_decoys_and_annotators_cannot(client, researcher, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    assert study.campaign.status == "draft"  # the review happens before the campaign opens
    url = f"/campaigns/{study.campaign.pk}/decoys/"
    client.force_login(judges[0])
    assert client.get(url).status_code == 403
    client.force_login(researcher)
    page = client.get(url).content.decode()
    decoys = list(CheckSpan.objects.filter(campaign=study.campaign, role=CheckSpan.Role.DECOY))
    assert f'id="decoy-{decoys[0].pk}"' in page
    client.post(url, {"decoy": decoys[0].pk, "explanation": "<b>made up</b>", "label": "Evaluator B",
                      "key_explanation": "incorrect"})
    decoys[0].refresh_from_db()
    assert (decoys[0].span.explanation, decoys[0].campaign_run.label, decoys[0].key_explanation_verdict) == (
        "<b>made up</b>", "Evaluator B", "incorrect")
    assert "&lt;b&gt;made up&lt;/b&gt;" in client.get(url).content.decode()  # escaped
    client.post(f"{url}{decoys[1].pk}/drop/")
    assert not CheckSpan.objects.filter(pk=decoys[1].pk).exists()

    item = study.items[0]
    start = item.output.index("Friday")
    good = {"item_id": item.external_id, "start": start, "end": start + 6, "label": "Evaluator A",
            "explanation": "The game was not on Friday."}
    taken = {**good, "start": item.output.index("100-"), "end": item.output.index("100-") + 3}
    before = CheckSpan.objects.count()
    upload = SimpleUploadedFile("d.jsonl", (json.dumps(good) + "\n" + json.dumps(taken)).encode())
    answer = client.post(f"{url}import/", {"file": upload}, follow=True).content.decode()
    assert "line 2" in answer and "overlaps" in answer and CheckSpan.objects.count() == before  # all or nothing
    upload = SimpleUploadedFile("d.jsonl", json.dumps(good).encode())
    client.post(f"{url}import/", {"file": upload})
    assert CheckSpan.objects.count() == before + 1

    overview = client.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    assert 'id="quality-checks"' in overview and "Potato" in overview
