"""DHP discernment benchmark: perturbations, scoring runs, statistics and expert-weight surveys."""
