"""Google's side-by-side MQM ratings of WMT23 en-de (Song et al. 2025): every row imported, the file written back
byte for byte, the MQM scores equal to a recomputation from the TSV, and the screens of ten segments as read by
hand. Needs ../shared/data/mqm (skips without it)."""

from __future__ import annotations

import io
import json
import tarfile
from collections import defaultdict

import pytest
from django.core.management import call_command

from corpus.models import Annotation, ErrorSpan, Unit
from tests.conftest import shared_file

RELEASE = "mqm/sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz"
GPT4 = "GPT4-5shot"
# Read by hand from the rows of one rater on each of ten segments, ordered by metadata.timestamp: consecutive
# outputs seconds apart, screens hours or days apart, the two outputs of a screen on sides 1 and 2 (or both clean
# at one timestamp, or sharing a source-side error's timestamp). Screens in time order.
HAND = {
    ("1", "rater3"): [{"ONLINE-G", "ONLINE-M"}, {"refA", f"{GPT4}_with_refA"}, {"NLLB_MBR_BLEU", "Lan-BridgeMT"},
                      {"ONLINE-A", "ONLINE-Y"}, {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}],
    ("9", "rater1"): [{"ONLINE-G", "ONLINE-M"}, {"NLLB_MBR_BLEU", "Lan-BridgeMT"}, {f"{GPT4}_with_refA", "refA"},
                      {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}, {"ONLINE-Y", "ONLINE-A"}],
    ("17", "rater4"): [{"NLLB_MBR_BLEU", "Lan-BridgeMT"}, {"ONLINE-A", "ONLINE-Y"}, {f"{GPT4}_with_refA", "refA"},
                       {"ONLINE-M", "ONLINE-G"}, {"ONLINE-W", f"{GPT4}_with_ONLINE-W"}],
    ("26", "rater9"): [{"ONLINE-G", "ONLINE-M"}, {"ONLINE-A", "ONLINE-Y"}, {"Lan-BridgeMT", "NLLB_MBR_BLEU"},
                       {f"{GPT4}_with_refA", "refA"}, {"ONLINE-W", f"{GPT4}_with_ONLINE-W"}],
    ("35", "rater7"): [{"ONLINE-G", "ONLINE-M"}, {"NLLB_MBR_BLEU", "Lan-BridgeMT"}, {f"{GPT4}_with_refA", "refA"},
                       {"ONLINE-Y", "ONLINE-A"}, {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}],
    ("48", "rater1"): [{"ONLINE-Y", "ONLINE-A"}, {f"{GPT4}_with_refA", "refA"}, {"ONLINE-G", "ONLINE-M"},
                       {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}, {"Lan-BridgeMT", "NLLB_MBR_BLEU"}],
    ("57", "rater2"): [{f"{GPT4}_with_refA", "refA"}, {"NLLB_MBR_BLEU", "Lan-BridgeMT"}, {"ONLINE-Y", "ONLINE-A"},
                       {"ONLINE-G", "ONLINE-M"}, {"ONLINE-W", f"{GPT4}_with_ONLINE-W"}],
    ("70", "rater3"): [{"Lan-BridgeMT", "NLLB_MBR_BLEU"}, {"ONLINE-G", "ONLINE-M"}, {f"{GPT4}_with_refA", "refA"},
                       {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}, {"ONLINE-Y", "ONLINE-A"}],
    ("88", "rater2"): [{"ONLINE-A", "ONLINE-Y"}, {f"{GPT4}_with_refA", "refA"}, {"ONLINE-G", "ONLINE-M"},
                       {f"{GPT4}_with_ONLINE-W", "ONLINE-W"}, {"NLLB_MBR_BLEU", "Lan-BridgeMT"}],
    ("104", "rater7"): [{"NLLB_MBR_BLEU", "Lan-BridgeMT"}, {f"{GPT4}_with_refA", "refA"}, {"ONLINE-M", "ONLINE-G"},
                        {"ONLINE-W", f"{GPT4}_with_ONLINE-W"}, {"ONLINE-Y", "ONLINE-A"}],
}


def _weight(category: str, severity: str) -> float:
    """Freitag et al.'s weights, written out again for the recomputation."""
    if severity == "Major":
        return 25.0 if category.rstrip("!") == "Non-translation" else 5.0
    if severity == "Minor":
        return 0.1 if category == "Fluency/Punctuation" else 1.0
    return 0.0


@pytest.mark.django_db
def test_side_by_side_release_imports_every_row_round_trips_and_scores_as_its_tsv(tmp_path):
    with tarfile.open(shared_file(RELEASE)) as archive:
        member = next(m for m in archive.getmembers() if m.isfile())
        original = archive.extractfile(member).read()  # type: ignore[union-attr]
    path = tmp_path / "sxs_ende.tsv"
    path.write_bytes(original)
    call_command("import_mqm", str(path), dataset="sxs", side_by_side=True, stdout=io.StringIO())
    rows = [line.split("\t") for line in original.decode("utf-8").splitlines()[1:]]
    kept = sum(len(extra["mqm_sxs_rows"]) for extra in Annotation.objects.values_list("extra", flat=True))
    assert kept == len(rows) == 10970
    assert ErrorSpan.objects.count() == sum(r[8] in ("Major", "Minor") for r in rows)
    assert Unit.objects.count() == 104 * 3 * 5

    back = tmp_path / "back.tsv"
    call_command("export_annotations", dataset="sxs", format="mqm-tsv", output=back, stdout=io.StringIO())
    assert back.read_bytes() == original

    rated: dict[tuple[str, ...], float] = defaultdict(float)
    for r in rows:
        if r[8] != "HOTW-test":
            system = GPT4 if r[0].startswith(f"{GPT4}_with_") else r[0]
            rated[(system, r[1], r[3], r[4], r[0])] += _weight(r[7], r[8])
    totals: dict[str, list[float]] = defaultdict(list)
    for key, score in rated.items():
        totals[key[0]].append(score)
    out = io.StringIO()
    call_command("mqm_scores", dataset="sxs", stdout=out)
    scores = {row["system"]: (row["score"], row["ratings"]) for row in json.loads(out.getvalue())["systems"]}
    assert scores == {s: (pytest.approx(sum(v) / len(v), abs=1e-12), len(v)) for s, v in totals.items()}
    assert scores[GPT4][1] == 2 * 312  # shown in two pairs on each (segment, rater)

    for (segment, rater), screens in HAND.items():
        found = defaultdict(set)
        for number, system in Annotation.objects.filter(
                unit__source__label=f"mqm:{rater}", item__extra__mqm__seg_id=segment).values_list(
                "unit__number", "item__system"):
            found[number].add(system)
        assert [found[n] for n in sorted(found)] == screens, (segment, rater)


@pytest.mark.django_db
def test_side_by_side_release_pairs_are_the_five_shown_together(tmp_path):
    with tarfile.open(shared_file(RELEASE)) as archive:
        member = next(m for m in archive.getmembers() if m.isfile())
        (tmp_path / "sxs.tsv").write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
    call_command("import_mqm", str(tmp_path / "sxs.tsv"), dataset="sxs", stdout=io.StringIO())
    out = io.StringIO()
    call_command("pairwise_scores", dataset="sxs", resamples=100, stdout=out)
    result = json.loads(out.getvalue())
    together = {frozenset((p["a"], p["b"])): p["units"] for p in result["pairs"] if p["shown_together"]}
    assert together == {frozenset(pair): 312 for pair in [
        (GPT4, "refA"), (GPT4, "ONLINE-W"), ("ONLINE-A", "ONLINE-Y"), ("ONLINE-G", "ONLINE-M"),
        ("Lan-BridgeMT", "NLLB_MBR_BLEU")]}
    assert len(result["pairs"]) == 36 and len(result["systems"]) == 9
    checks = {c["rater"]: (c["found"], c["missed"]) for c in result["checks"]}
    assert sum(f for f, _ in checks.values()) == 220 and sum(m for _, m in checks.values()) == 25
    assert result["consistency"]["shown_together"] > result["consistency"]["others"]
