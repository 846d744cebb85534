"""The one `--wait` loop of the management commands that queue a job, with its `--timeout` option."""

from __future__ import annotations

import time
from argparse import ArgumentParser
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.management.base import CommandError

from jobs.kinds import job_execute
from jobs.lifecycle import job_queue
from jobs.models import Job

J = TypeVar("J", bound=Job)

TIMED_OUT = 3  # exit code of a --wait that gave up (the job itself keeps running)


def add_job_arguments(parser: ArgumentParser) -> None:
    """`--wait [--timeout SECONDS] | --sync`: how a command that makes a job follows it."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--wait", action="store_true", help="Wait for a worker to finish the job.")
    mode.add_argument("--sync", action="store_true", help="Run the job in this process (no worker needed).")
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help=f"With --wait: stop waiting after SECONDS and exit with code {TIMED_OUT}; the job keeps running.",
    )


def job_follow(
    job: J, options: Mapping[str, Any], *, queued: str, line: Callable[[J], str], write: Callable[[str], None],
) -> J | None:
    """Do what the command's flags say: --sync runs the job here, --wait queues it and waits for a worker,
    neither queues it and says where to follow it (`queued`). Return the job as it ended, or None."""
    if options["sync"]:
        job_execute(type(job), job.pk)
        job.refresh_from_db()
        return job
    job_queue(job)
    if not options["wait"]:
        write(queued)
        return None
    return wait_for_job(job, line=line, write=write, timeout=options["timeout"])


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
