"""What every worker does beside its jobs: a beat with its queues, and sweep hooks that cannot stop each other."""

from __future__ import annotations

import threading

from jobs import worker
from jobs.models import WorkerBeat


def test_a_failing_sweep_hook_is_logged_and_the_next_ones_still_run(db, monkeypatch, caplog):
    ran: list[str] = []

    def broken() -> None:
        raise OSError("the bucket is away")

    monkeypatch.setattr(worker, "_SWEEP_HOOKS", [broken, lambda: ran.append("second")])
    worker.sweep_stale_jobs()
    assert ran == ["second"]
    assert "sweep hook broken failed" in caplog.text


def test_a_worker_beats_at_once_and_again_with_its_queues(transactional_db):
    stop = threading.Event()
    thread = worker.start_beating("w@host", ["b", "a"], every=0.05, stop=stop)
    try:
        for _ in range(100):
            if WorkerBeat.objects.filter(hostname="w@host").exists():
                break
            stop.wait(0.05)
        first = WorkerBeat.objects.get(hostname="w@host")
        assert first.queues == ["b", "a"]
        for _ in range(100):
            if WorkerBeat.objects.get(hostname="w@host").beat_at > first.beat_at:
                break
            stop.wait(0.05)
        assert WorkerBeat.objects.get(hostname="w@host").beat_at > first.beat_at
        assert WorkerBeat.objects.count() == 1  # one row per worker, updated
    finally:
        stop.set()
        thread.join(5)
