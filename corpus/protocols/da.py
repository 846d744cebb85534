"""The Direct Assessment protocol's vocabulary: the 0-100 scale and its anchors, the campaign options (show the
reference; the languages). Appraise's scores CSV is corpus.interop.appraise.

DA (Graham et al. 2013; WMT's human evaluation 2016-2022; Appraise and Pearmut offer it): the annotator reads
the source (and, where the campaign says so, a reference) and moves a slider from 0 to 100 for how well the output
expresses its meaning; nothing else. Raw scores are compared per annotator as z-scores, because people use the
scale differently. Appraise plants BAD items: a degraded copy of an output that a careful annotator scores below
the original. Django-free, like the other protocols: the declaration, the screen, the figures and the docs
derive from here. The anchors' wording is ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.protocols.errors import ProtocolError

SCORE_MIN, SCORE_MAX = 0, 100
QUESTION = "How accurately does the output express the meaning of the source?"
QUESTION_REFERENCE = "How accurately does the output express the meaning of the reference?"
ANCHORS: tuple[tuple[int, str], ...] = ((0, "nothing of the meaning"), (50, "about half of it"),
                                        (100, "all of it, and perfectly readable"))
OPTIONS = ("reference", "source_language", "target_language")



def clean_options(value: Any) -> dict[str, Any]:
    """{"reference": true|false (show the item's reference beside the source), "source_language",
    "target_language": codes written to Appraise's CSV (e.g. "eng", "deu")}; all optional."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ProtocolError("protocol_options: an object, e.g. {\"reference\": true}", field="protocol_options")
    unknown = sorted(set(value) - set(OPTIONS))
    if unknown:
        raise ProtocolError(f"protocol_options: unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})",
                            field="protocol_options")
    cleaned: dict[str, Any] = {}
    if "reference" in value:
        if not isinstance(value["reference"], bool):
            raise ProtocolError("protocol_options.reference: true or false", field="protocol_options.reference")
        if value["reference"]:
            cleaned["reference"] = True
    for name in ("source_language", "target_language"):
        code = value.get(name)
        if code in (None, ""):
            continue
        if not isinstance(code, str) or not code.replace("-", "").replace("_", "").isalnum() or len(code) > 16:
            raise ProtocolError(f"protocol_options.{name}: a language code such as eng or de-DE",
                                field=f"protocol_options.{name}")
        cleaned[name] = code
    return cleaned


def shows_reference(options: Mapping[str, Any] | None) -> bool:
    return bool((options or {}).get("reference"))


SCORE_STEP, SCORE_PAGE = 1, 10
KEYS: dict[str, str] = {
    "ArrowLeft/ArrowRight": f"score -{SCORE_STEP} / +{SCORE_STEP} (ArrowDown/ArrowUp too)",
    "PageDown/PageUp": f"score -{SCORE_PAGE} / +{SCORE_PAGE}",
    "Home/End": f"score {SCORE_MIN} / {SCORE_MAX}",
    "digits": "type the score (7 then 5 for 75)",
}  # the slider's keys; besides the screen's own: u undoes the last score change, f finishes, n/p move


def keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(KEYS)
