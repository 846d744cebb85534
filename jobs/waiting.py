"""The one `--wait` loop of the management commands that queue a job, with its `--timeout` option."""

from __future__ import annotations

import time
from argparse import ArgumentParser
from collections.abc import Callable
from typing import TypeVar

from django.core.management.base import CommandError

from jobs.models import Job

J = TypeVar("J", bound=Job)

TIMED_OUT = 3  # exit code of a --wait that gave up (the job itself keeps running)


def add_timeout_argument(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help=f"With --wait: stop waiting after SECONDS and exit with code {TIMED_OUT}; the job keeps running.",
    )


def wait_for_job(
    job: J, *, line: Callable[[J], str], write: Callable[[str], None], timeout: float | None = None,
    every: float = 1.0,
) -> J:
    """Follow `job` until it has finished, writing `line(job)` whenever it changes; return the finished job.

    Raise CommandError (exit code TIMED_OUT) once `timeout` seconds have passed; a paused job is waited for
    too, since an admin may resume it."""
    if timeout is not None and timeout <= 0:
        raise CommandError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    deadline = None if timeout is None else time.monotonic() + timeout
    last = None
    while True:
        job.refresh_from_db()
        shown = line(job)
        if shown != last:
            write(shown)
            last = shown
        if job.is_finished():
            return job
        if deadline is not None and time.monotonic() >= deadline:
            raise CommandError(
                f"still {job.status} after {timeout:g} s; the job keeps running (id {job.pk})", returncode=TIMED_OUT
            )
        time.sleep(every if deadline is None else max(0.0, min(every, deadline - time.monotonic())))
