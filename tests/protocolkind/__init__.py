"""A protocol declared the way a new one is, in three files: its declaration, its annotator hooks, its screen."""
