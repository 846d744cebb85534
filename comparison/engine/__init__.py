"""Metric comparison without Django: baselines, GPTScore prompts, correlations, the preference checklist."""
