"""Evaluator runs over a dataset: modes, launch, a database-free scheduler, and the coordinator and writes
that execute them as resumable, cached Celery jobs."""
