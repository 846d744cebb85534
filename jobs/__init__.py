"""The one lifecycle every long-running job shares (evaluator runs, DHP runs, comparisons, exports)."""
