"""Benchmark: real runs of the tiny model (SmolLM2-135M on llama-cpp-python) over the demo, answer format text vs json.

Starts the small model's server (`scripts/small_model.sh serve`), loads the demo into the bench's database, and
runs the evaluator run's job kind (the code a worker runs) with one model asking for 4 requests in flight, for
plain-text answers and then structured (json) ones: a pilot on 3 outputs (so the next run plans from a measured
pace of that format, as a server's last run does), then the 18 demo outputs. Prints, per run: requests in flight on
the server and why, the time the run expected at creation and once a third of its steps was done (elapsed plus
the page's ETA) beside the time it took (target: the corrected one within 25%), answers
by parse status (target: at least 90% parsed, in full or in part), and error locations found in the text
(target: at least half). The `tiny` preset uses the answer format that parses and locates more.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/small_model_runs.py [--aspect accuracy]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_bench")

from bench.pgdb import ensure_postgres_database  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEMO = "Demo: restaurants (data-to-text)"
PARSED_TARGET = 0.90
LOCATED_TARGET = 0.50
TIME_TARGET = 0.25


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    log = open(REPO / "var" / "bench-small-model.log", "w")  # noqa: SIM115 - open while the server runs
    server = subprocess.Popen(["bash", "scripts/small_model.sh", "serve", str(port), "2048"], cwd=REPO,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5)
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit("the small model's server did not start: see var/bench-small-model.log") from None
            time.sleep(1)
    raise SystemExit("the small model's server did not answer within 10 minutes")


def _watch(run_pk: int, total: int, started: float, corrected: list[float]) -> None:
    """The run page's expected end once a third of the steps is done (its elapsed time plus its ETA), as a
    researcher watching the page reads it, in the bench's clock."""
    from django.db import connection

    from evaluation.models import EvaluatorRun
    from evaluation.selectors import run_progress

    try:
        while time.monotonic() - started < 3600:
            run = EvaluatorRun.objects.filter(pk=run_pk).first()
            if run is not None and run.done >= max(1, total // 3):
                progress = run_progress(run)
                if progress["eta_seconds"] is not None:
                    corrected.append(time.monotonic() - started + progress["eta_seconds"])
                return
            time.sleep(0.5)
    finally:
        connection.close()


def one_run(dataset, server: str, aspect: str, answer_format: str, item_ids=None, dump: Path | None = None) -> dict:
    from corpus.models import Annotation, ErrorSpan
    from evaluation.models import EvaluatorRun
    from evaluation.runs.launch import run_create
    from jobs.kinds import job_execute

    run = run_create(dataset=dataset, aspect_name=aspect, mode="single", preset="tiny", ollama_url=server,
                     parallel=4, answer_format=answer_format, item_ids=item_ids)
    planned = run.placement["servers"][0]
    started = time.monotonic()
    corrected: list[float] = []
    watcher = threading.Thread(target=_watch, args=(run.pk, run.total, started, corrected), daemon=True)
    watcher.start()
    status = job_execute(EvaluatorRun, run.pk)
    took = time.monotonic() - started
    watcher.join(timeout=5)
    answers = Annotation.objects.filter(source=run, kind="annotator")
    parse = Counter(answers.values_list("parse_status", flat=True))
    if dump is not None:
        with dump.open("a") as out:
            for row in answers.values("item__external_id", "model", "parse_status", "parse_problems", "raw_answer"):
                out.write(json.dumps({"run": run.label, "format": answer_format, **row}, default=str) + "\n")
    spans = ErrorSpan.objects.filter(annotation__in=answers)
    return {"label": run.label, "format": answer_format, "status": status, "steps": run.total,
            "corrected": corrected[0] if corrected else None,
            "parallel": planned.get("parallel"), "source": planned.get("parallel_source", ""),
            "expected": planned["expected_seconds"], "took": took, "parse": parse, "answers": answers.count(),
            "spans": spans.count(), "located": spans.filter(start__isnull=False).count()}


def show(result: dict) -> None:
    n = result["answers"] or 1
    parsed = (result["parse"]["ok"] + result["parse"]["partial"]) / n
    located = result["located"] / result["spans"] if result["spans"] else 0.0
    off = abs(result["took"] - result["expected"]) / result["took"] if result["took"] else 0.0
    print(f"{result['label']} ({result['format']}, {result['steps']} steps, {result['status']}): "
          f"{result['parallel']} in flight ({result['source']})")
    print(f"  time: expected {result['expected']:.0f} s at creation, took {result['took']:.0f} s, off by {off:.0%}")
    if result["corrected"] is not None:
        late = abs(result["took"] - result["corrected"]) / result["took"]
        print(f"        expected {result['corrected']:.0f} s once a third was done (elapsed + ETA), off by {late:.0%} "
              f"(target <= {TIME_TARGET:.0%})")
    print(f"  answers: ok {result['parse']['ok']}, partial {result['parse']['partial']}, failed "
          f"{result['parse']['failed']}: parsed {parsed:.0%} (target >= {PARSED_TARGET:.0%})")
    print(f"  spans: {result['spans']}, located in the text {result['located']} = {located:.0%} "
          f"(target >= {LOCATED_TARGET:.0%})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aspect", default="accuracy")
    parser.add_argument("--formats", default="text,json", help="answer formats to run, in order (comma-separated)")
    parser.add_argument("--dump", type=Path, help="append every answer (raw, parse status, problems) to this JSONL")
    args = parser.parse_args()
    ensure_postgres_database("bench/small_model_runs.py")
    port = free_port()
    server = start_server(port)
    os.environ["SPANJUDGE_SMALL_MODEL_URL"] = f"openai+http://127.0.0.1:{port}"
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        from corpus.models import Dataset
        from evaluation.models import Aspect

        settings.SMALL_MODEL_URL = os.environ["SPANJUDGE_SMALL_MODEL_URL"]
        call_command("migrate", verbosity=0)
        call_command("flush", interactive=False, verbosity=0)  # no cached answer of an earlier bench
        call_command("load_demo", verbosity=0)
        dataset = Dataset.objects.get(name=DEMO)
        pilot = list(dataset.items.order_by("position").values_list("pk", flat=True)[:3])
        # Each format's pilot judges another aspect, so none of its prompts is one the measured runs send (no cache
        # hit); the measured run then plans from that format's pace, as a server's last run of it would give.
        other = Aspect.objects.filter(task=dataset.task).exclude(name=args.aspect).order_by("name").first()
        for fmt in args.formats.split(","):
            show(one_run(dataset, settings.SMALL_MODEL_URL, other.name, fmt, item_ids=pilot, dump=args.dump))
            show(one_run(dataset, settings.SMALL_MODEL_URL, args.aspect, fmt, dump=args.dump))
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
