"""Every phrasing of "there are no errors" we have met, as an explicit answer rather than a parse failure."""

from __future__ import annotations

import re

_WHAT = r"(?:errors?|issues?|mistakes?|problems?|inaccurac(?:y|ies)|hallucinations?|flaws?)"
_GAP = r"(?:[\w-]+\s+){0,3}?"
NO_ERRORS_PHRASE = re.compile(
    r"\b(?:contains?|containing|has|have|had|with|found|identified|detected|spotted|there\s+(?:are|were|is))"
    rf"\s+(?:0|no|zero|not\s+any)\s+{_GAP}{_WHAT}\b"
    rf"|\bno\s+{_GAP}{_WHAT}\s+(?:(?:were|was|are|is|could\s+be|can\s+be)\s+)?"
    r"(?:found|identified|detected|present|spotted|noted|observed)\b"
    r"|\b(?:error|mistake)[-\s]free\b|\bfree\s+(?:of|from)\s+(?:any\s+)?" + _WHAT + r"\b"
    r"|\b(?:didn't|did\s+not|could\s+not|couldn't|cannot|can't|do\s+not|don't)\s+(?:find|identify|detect|spot|see)"
    rf"\s+any\s+{_GAP}{_WHAT}\b"
    rf"|^\s*(?:no\s+{_GAP}{_WHAT}|none)\s*[.!]?\s*$"
    rf"|^\s*{_WHAT}\s*(?:found|identified)?\s*[:=\-]\s*(?:none|no|0|\[\s*\]|n/?a)\s*[.!]?\s*$"
    rf"|\b0\s+{_WHAT}\b",
    re.IGNORECASE | re.MULTILINE,
)


def declares_no_errors(text: str) -> bool:
    """Return whether the text says, in any phrasing we know, that there are no errors."""
    return NO_ERRORS_PHRASE.search(text) is not None
