"""Read-side queries of the annotation app that cross relations or aggregate, by concern."""
