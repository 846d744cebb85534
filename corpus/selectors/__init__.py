"""Reads of the corpus that cross relations: the annotations of a protocol's sources, shaped for its figures."""
