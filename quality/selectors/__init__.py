"""Reads of the quality checks: who is flagged and why (vigilance), the stretches outputs already carry (spans)."""
