"""Safe values for files users download: CSV cells a spreadsheet will not run, header-safe file names."""

from __future__ import annotations

import re
import unicodedata

# A cell starting with one of these is read as a formula by Excel, LibreOffice and Google Sheets (tab and CR
# too: some strip them and then see the next character). OWASP's advice: prefix such a cell with a quote.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_UNSAFE_IN_NAME = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|;]+')


def csv_cell(value: object) -> object:
    """Return `value` ready for csv.writer: text that a spreadsheet would evaluate gets a leading apostrophe.

    Numbers stay numbers (a negative score is data, not a formula); only strings can carry a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_row(values: list[object]) -> list[object]:
    return [csv_cell(v) for v in values]


def download_filename(name: str, *, fallback: str = "download", max_length: int = 80) -> str:
    """Return `name` as a file name safe in a Content-Disposition header: no control characters (a CR/LF would
    break the header), quotes, slashes or shell-special characters; never empty."""
    cleaned = _UNSAFE_IN_NAME.sub("_", unicodedata.normalize("NFC", name)).strip(" ._")
    return cleaned[:max_length] or fallback
