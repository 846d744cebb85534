"""Template tags of the annotation app."""
