"""Google's MQM ratings of the WMT21 TED talks (en-de): the import reproduces the published system scores and
round-trips. Needs ../shared/data/mqm (skips without it)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.conftest import shared_file

# The "TED talks / English to German" table of google/wmt-mqm-human-evaluation's README (two decimals); the
# file calls the human reference `ref`, the table `ref.A`.
PUBLISHED = {
    "ref": 0.91, "Facebook-AI": 1.06, "Online-W": 1.12, "VolcTrans-AT": 1.24, "metricsystem3": 1.44,
    "VolcTrans-GLAT": 1.49, "HuaweiTSC": 1.50, "metricsystem1": 1.63, "metricsystem2": 1.69, "metricsystem5": 1.72,
    "UEdin": 1.77, "metricsystem4": 1.78, "eTranslation": 1.96, "Nemo": 2.14,
}
# eTranslation's mean over its 529 rated segments is 1.9688, which rounds to 1.97; the repository's own segment
# scores (ted/ende/mqm_ted_ende.avg_seg_scores.tsv: mean -1.71865 over 606 rows, the 77 unrated at 0) give the
# same 1.71865 * 606 / 529 = 1.9688, so the table's 1.96 is not what its data computes (a truncation there?).
# The other 13 agree to the table's precision.
OFF_BY_ONE_IN_THE_LAST_DIGIT = {"eTranslation"}


@pytest.mark.django_db(transaction=True)
def test_ted_ende_reproduces_the_published_scores_and_round_trips(tmp_path):
    path = shared_file("mqm/mqm_ted_ende.tsv")
    call_command("import_mqm", str(path), dataset="ted", stdout=io.StringIO())
    out = io.StringIO()
    call_command("mqm_scores", dataset="ted", stdout=out)
    systems = {row["system"]: row for row in json.loads(out.getvalue())["systems"]}
    assert set(systems) == set(PUBLISHED)
    for name, published in PUBLISHED.items():
        score = systems[name]["score"]
        if name in OFF_BY_ONE_IN_THE_LAST_DIGIT:
            assert round(score, 2) == pytest.approx(published + 0.01) and round(score, 4) == 1.9688
        else:
            assert round(score, 2) == pytest.approx(published), name
        assert systems[name]["segments"] == 529
    order = [row["system"] for row in json.loads(out.getvalue())["systems"]]
    assert order == sorted(PUBLISHED, key=PUBLISHED.get)
    exported = tmp_path / "back.tsv"
    call_command("export_annotations", dataset="ted", format="mqm-tsv", output=exported, stdout=io.StringIO())
    written = sorted(line.strip() for line in exported.read_text(encoding="utf-8").splitlines())
    original = sorted(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    assert written == original
