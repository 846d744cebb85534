"""A job kind declared the way a new one is, in four files: models.py with its migration, jobs.py, its template."""
