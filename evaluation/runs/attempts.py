"""What each LLM call of a step was (first try, warmer retry, longer budget, repair) and the number the ledger
stores for it (`RunCall.attempt`, the exports' `attempt`).

The stored numbers are a contract with every ledger and export already written, so the kind is read from them
here, once: 0 the first try, 1-9 a warmer retry of an answer that did not parse, 10 + k try k asked again
with a longer answer budget, 100 + n a repair of the call numbered n. No Django here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

LONGER_BASE = 10  # try k asked again with a longer budget is stored as 10 + k
REPAIR_BASE = 100  # a repair of the call numbered n is stored as 100 + n
MAX_TRIES = LONGER_BASE  # tries of an answer (first + retries) whose numbers stay below the longer ones


class AttemptKind(StrEnum):
    """Why a step made a call."""

    FIRST = "first"  # the step's prompt with the run's own options
    RETRY = "retry"  # the same prompt again, warmer, because the answer did not parse
    LONGER = "longer"  # a cut answer asked again with twice the answer budget
    REPAIR = "repair"  # the answer sent back once to be restated in our format


@dataclass(frozen=True)
class AttemptNumber:
    """A stored attempt number read back: its kind and the try (0 = first) it belongs to."""

    kind: AttemptKind
    attempt_try: int


def try_number(attempt_try: int) -> int:
    """The stored number of try `attempt_try` (0 = the first, then the warmer retries)."""
    if not 0 <= attempt_try < MAX_TRIES:
        raise ValueError(f"an answer has at most {MAX_TRIES} tries; try {attempt_try} has no number")
    return attempt_try


def longer_number(of: int) -> int:
    """The stored number of try `of` asked again with a longer answer budget."""
    return LONGER_BASE + try_number(of)


def repair_number(of: int) -> int:
    """The stored number of the repair of the call numbered `of` (a try, or a try asked longer)."""
    return REPAIR_BASE + of


def read_number(number: int) -> AttemptNumber:
    """The kind and try of a stored attempt number; ValueError for a number no call is stored under."""
    if number >= REPAIR_BASE:
        repaired = read_number(number - REPAIR_BASE)
        if repaired.kind is AttemptKind.REPAIR:
            raise ValueError(f"attempt {number} would repair a repair")
        return AttemptNumber(AttemptKind.REPAIR, repaired.attempt_try)
    if number >= LONGER_BASE:
        return AttemptNumber(AttemptKind.LONGER, try_number(number - LONGER_BASE))
    return AttemptNumber(AttemptKind.FIRST if number == 0 else AttemptKind.RETRY, try_number(number))
