"""The error an item or annotation file is refused with: the place (line/object) and the field, in words."""

from __future__ import annotations

from errors import Field, UserError

FILE = "file"  # the field of a refusal about a file's content: the upload (the PATH of a command)


class FormatError(UserError):
    """A problem in an item file, with the place (line/object) and field it concerns.

    Its `field` is the file itself unless the problem is with an option given beside it (`field="dataset"`)."""

    def __init__(self, where: str, message: str, *, field: Field = FILE) -> None:
        super().__init__(f"{where}: {message}", field=field)
        self.where = where
        self.message = message


MAX_LISTED_ERRORS = 50  # an import lists this many bad objects, then says how many more there are


class FormatErrors(FormatError):
    """Several bad objects of one file, each named by its place: the first MAX_LISTED_ERRORS, then a count."""

    def __init__(self, errors: list[FormatError]) -> None:
        listed = [str(e) for e in errors[:MAX_LISTED_ERRORS]]
        more = len(errors) - len(listed)
        lines = "\n".join(listed) + (f"\n... and {more} more" if more else "")
        super().__init__(f"{len(errors)} bad objects", f"fix them and import again:\n{lines}")
        self.errors = errors


def named(error: FormatError, name: str) -> str:
    """The message of `error` about the file called `name`, with the name once (never twice, never a temp path)."""
    text = str(error)
    return text if text.startswith(f"{name}:") else f"{name}: {text}"
