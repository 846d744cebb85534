"""Safe values for files users download: CSV cells a spreadsheet will not run, header-safe file names.

Every CSV the project writes goes through one of the two writers here (tests/test_csv_producers.py finds any other
csv.writer): `sheet_writer` for files people open in a spreadsheet (exports, analytics tables, command output),
`interchange_writer` for files another tool reads back byte for byte (factgenie's db.csv), which are not for
spreadsheets.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# A cell starting with one of these is read as a formula by Excel, LibreOffice and Google Sheets (tab and CR
# too: some strip them and then see the next character). OWASP's advice: prefix such a cell with a quote.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNSAFE_IN_NAME = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|;]+')


def csv_cell(value: object) -> object:
    """Return `value` ready for csv.writer: text that a spreadsheet would evaluate gets a leading apostrophe.

    Numbers stay numbers (a negative score is data, not a formula), written as numbers or as the plain decimal
    text of one ("-0.25", which a spreadsheet reads as a number); only other strings can carry a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_row(values: Iterable[object]) -> list[object]:
    return [csv_cell(v) for v in values]


class SheetWriter:
    """csv.writer for a file a spreadsheet opens: every text cell passes `csv_cell`, and a cell holding a CR or
    LF is always quoted (csv quotes only the characters of its line terminator: with "\n", a bare CR in a cell
    would end the row in a spreadsheet)."""

    def __init__(self, handle: Any, *, lineterminator: str = "\r\n", **options: Any) -> None:
        self._handle, self._end = handle, lineterminator
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\r\n", **options)

    def writerow(self, row: Iterable[object]) -> Any:
        self._writer.writerow(csv_row(row))
        line = self._buffer.getvalue()[:-2] + self._end
        self._buffer.seek(0)
        self._buffer.truncate(0)
        return self._handle.write(line)

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


class SheetDictWriter:
    """csv.DictWriter for a file a spreadsheet opens, on SheetWriter: a missing key is an empty cell, an extra
    one a ValueError (as csv.DictWriter does by default)."""

    def __init__(self, handle: Any, fieldnames: Sequence[str], **options: Any) -> None:
        self.fieldnames = list(fieldnames)
        self._writer = SheetWriter(handle, **options)

    def writeheader(self) -> Any:
        return self._writer.writerow(self.fieldnames)

    def writerow(self, row: Mapping[str, object]) -> Any:
        extra = [key for key in row if key not in self.fieldnames]
        if extra:
            raise ValueError(f"dict contains fields not in fieldnames: {extra}")
        return self._writer.writerow([row.get(key, "") for key in self.fieldnames])

    def writerows(self, rows: Iterable[Mapping[str, object]]) -> None:
        for row in rows:
            self.writerow(row)


def sheet_writer(handle: Any, **options: Any) -> SheetWriter:
    """The writer of every spreadsheet-bound CSV (options as csv.writer takes them)."""
    return SheetWriter(handle, **options)


def interchange_writer(handle: Any, **options: Any) -> Any:
    """A plain csv.writer for a file another tool reads back exactly as written (a cell changed for spreadsheets
    would change the data it reads); the export docs say such files are not for spreadsheets."""
    return csv.writer(handle, **options)


def download_filename(name: str, *, fallback: str = "download", max_length: int = 80) -> str:
    """Return `name` as a file name safe in a Content-Disposition header: no control characters (a CR/LF would
    break the header), quotes, slashes or shell-special characters; never empty."""
    cleaned = _UNSAFE_IN_NAME.sub("_", unicodedata.normalize("NFC", name)).strip(" ._")
    return cleaned[:max_length] or fallback
