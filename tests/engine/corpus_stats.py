"""Print the share of corpus locations aligned exact / normalized / fuzzy / none (for reports)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]

from engine_corpus import CASES  # noqa: E402
from test_engine_corpus import MATCH_KINDS, corpus_match_shares  # noqa: E402


def main() -> None:
    shares = corpus_match_shares()
    print(f"cases: {len(CASES)}, aligned spans: {int(shares['total_spans'])}")
    for kind in MATCH_KINDS:
        print(f"{kind:>10}: {shares[kind]:.1%}")


if __name__ == "__main__":
    main()
