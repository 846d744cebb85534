"""Corpus layer: task types, datasets, items, annotation sources, annotations and error spans.

Everything above (evaluation, annotator, analytics) reads and writes these; nothing here knows them.
"""
