"""Writes and workflows of the DHP app: perturbing, surveys, runs."""
