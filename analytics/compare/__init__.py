"""Comparison of any two annotation sources: the metrics (Django-free) and the selectors that feed them."""
