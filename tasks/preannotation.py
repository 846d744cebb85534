"""Pre-annotation tasks (the OpeNLGauge ensemble job)."""
