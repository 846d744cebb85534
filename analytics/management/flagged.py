"""The `--exclude-flagged` / `--include-flagged` pair of the commands that write a campaign's figures."""

from __future__ import annotations

from django.core.management.base import CommandParser


def add_flagged_arguments(parser: CommandParser, what: str) -> None:
    """Add the pair, read as options["exclude_flagged"]: True, False, or None when neither is given (the
    campaign's exclude_flagged setting decides)."""
    group = parser.add_mutually_exclusive_group()
    # both defaults are None: call_command takes each option's default, argparse the first one
    group.add_argument("--exclude-flagged", dest="exclude_flagged", action="store_true", default=None,
                       help=f"Leave the annotators the quality checks flag out of this {what}.")
    group.add_argument("--include-flagged", dest="exclude_flagged", action="store_false", default=None,
                       help=f"Count the flagged annotators in this {what}. Neither option: the campaign's "
                            "exclude_flagged setting decides.")
