"""The streaming reader of item files (a JSON list or JSONL): one decoded object at a time, with its place.

No Django here. Depth and size are bounded while reading, so a hostile file is refused before it is held whole.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from corpus import cleaning
from corpus.formats.errors import FormatError

_CHUNK = 1 << 20  # bytes read at a time by the JSON-list reader

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted; real item files need a handful of levels."""

MAX_OBJECT_MB = 512
"""Largest single object (one JSONL line, one element of a JSON list) read; refused while reading beyond it."""

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = cleaning.json_decoder("the object")  # refuses NaN/Infinity and integers too long to read
_TAIL = 64  # an error this close to the end of the buffer may be a token cut short
_DEEP = f"invalid JSON: nested deeper than {MAX_DEPTH} levels"


def _too_large(where: str) -> FormatError:
    return FormatError(where, f"the object is larger than {MAX_OBJECT_MB} MB")


def iter_objects(path: Path, *, name: str = "", errors: list[FormatError] | None = None) -> Iterator[tuple[str, Any]]:
    """Yield (place, decoded value) for each object of a JSON list or a JSONL file, streaming.

    The place names the line (JSONL) or the object's index and starting line (JSON list), so every
    later error message can point at it. `name` is how the file is called in messages about the whole
    file (an upload's own name, never the temporary path it was spooled to). Depth and size are bounded
    while reading: a deeply nested or huge object is refused before it is held in memory whole. With
    `errors`, a JSONL line that is not a readable object is appended there and reading goes on (a JSON list
    cannot be resynchronised after a syntax error, so it still stops at the first).
    """
    with path.open("rb") as handle:
        first = _first_significant_byte(handle)
        handle.seek(0)
        if first == b"":
            raise FormatError(name or "the file", "the file is empty")
        if first == b"[":
            yield from _ListReader(handle).objects()
        else:
            yield from _iter_jsonl(handle, errors)


def _first_significant_byte(handle: IO[bytes]) -> bytes:
    while True:
        chunk = handle.read(4096)
        if not chunk:
            return b""
        stripped = chunk.lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        if stripped:
            return stripped[:1]


def _decode_line(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)"
        raise FormatError(f"line {number}", reason) from None


def _iter_jsonl(handle: IO[bytes], errors: list[FormatError] | None = None) -> Iterator[tuple[str, Any]]:
    # Binary lines decoded one at a time: an encoding error is reported on the line it is on.
    limit = MAX_OBJECT_MB << 20
    number = 0
    for raw in iter(lambda: handle.readline(limit + 1), b""):
        number += 1
        if len(raw) > limit:
            raise _too_large(f"line {number}")
        try:
            read = _read_line(raw, number)
        except FormatError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        if read is not None:
            yield read


def _read_line(raw: bytes, number: int) -> tuple[str, Any] | None:
    """One JSONL line as (place, value); None for a blank line; FormatError naming the line otherwise."""
    text = _decode_line(raw, number).strip().lstrip("\ufeff")
    if not text:
        return None
    where = f"line {number}"
    try:
        value = cleaning.loads(text, "the object", texts=False)
    except cleaning.CleaningError as exc:
        raise FormatError(where, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise FormatError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise FormatError(where, f"invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    check_depth(value, where)
    return where, value


def check_depth(value: Any, where: str) -> None:
    """Refuse values nested deeper than MAX_DEPTH (they break recursive code further on)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FormatError(where, _DEEP)
        if isinstance(current, dict):
            stack.extend((v, depth + 1) for v in current.values() if isinstance(v, dict | list))
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current if isinstance(v, dict | list))


class _ListReader:
    """A top-level JSON array decoded one element at a time by the C decoder (one parser over the file).

    Text is decoded into a buffer _CHUNK bytes at a time and each element is decoded in place. An
    element that runs past the buffer is decoded again once more text is read, each read at least
    doubling what the buffer holds of it, so the work stays linear in the element's size. Bounds hold
    while reading: the C decoder recurses and stops at the recursion limit (a deeply nested element
    fails within a few kilobytes, whatever its length), and no element may grow past MAX_OBJECT_MB.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.line = 1  # line number at self.pos
        self.lines_read = 1  # line number at the end of the buffer (for encoding errors)
        self.eof = False
        self.first = True

    def _read(self, at_least: int = 0) -> bool:
        """Append more text to the buffer (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        raw = self.handle.read(max(_CHUNK, at_least))
        final = not raw
        if self.first:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
            self.first = False
        try:
            text = self.decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            line = self.lines_read + raw[: exc.start].count(b"\n")
            raise FormatError(f"line {line}", f"not UTF-8 text ({exc.reason})") from None
        self.lines_read += text.count("\n")
        self.buf += text
        self.eof = final
        if len(self.buf) > MAX_OBJECT_MB << 20:
            raise _too_large(f"line {self.line}")
        return True

    def _advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def _next_char(self) -> str:
        """The next significant character ('' at the end of the file), reading as needed."""
        while True:
            self._advance(_WS.match(self.buf, self.pos).end())
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._read():
                return ""

    def objects(self) -> Iterator[tuple[str, Any]]:
        self._next_char()
        self._advance(self.pos + 1)  # the '['
        index = 0
        following = ","
        if self._next_char() == "]":  # an empty list
            self._advance(self.pos + 1)
            following = "]"
        while following == ",":
            index += 1
            where = f"object #{index} (line {self.line})"
            yield where, self._element(where)
            following = self._next_char()
            if following not in (",", "]"):
                found = "the end of the file" if following == "" else repr(following)
                raise FormatError(f"object #{index + 1} (line {self.line})",
                                  f"invalid JSON: expected ',' or ']' after object #{index}, found {found}")
            self._advance(self.pos + 1)
            if following == ",":
                self._next_char()
        if self._next_char() != "":
            raise FormatError(f"line {self.line}", "invalid JSON: text after the closing ']'")

    def _element(self, where: str) -> Any:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise FormatError(where, _DEEP) from None
            except cleaning.CleaningError as exc:
                raise FormatError(where, str(exc)) from None
            except json.JSONDecodeError as exc:
                if self._cut(exc) and self._read(len(self.buf) - self.pos):
                    continue  # the element runs past the buffer: decode again with (at least twice) more of it
                line = self.line + self.buf.count("\n", self.pos, exc.pos)
                raise FormatError(f"{where.split(' (')[0]} (line {line})", f"invalid JSON: {exc.msg}") from None
            if end == len(self.buf) and self._read(len(self.buf) - self.pos):
                continue  # a number may go on in the next piece
            break
        check_depth(value, where)
        try:
            cleaning.check_tree(value, "the object", texts=False)
        except cleaning.CleaningError as exc:
            raise FormatError(where, str(exc)) from None
        self._advance(end)
        return value

    def _cut(self, exc: json.JSONDecodeError) -> bool:
        """Whether a decoding error may only mean that the buffer ends inside the element (a string runs
        on, or the error lies in the last few characters: a number, literal or escape cut short)."""
        return exc.msg.startswith("Unterminated string") or len(self.buf) - exc.pos <= _TAIL
