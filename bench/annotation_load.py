"""Benchmark: server time of verdict saves and item pages with 20 concurrent simulated annotators on PostgreSQL.

Method. The script starts gunicorn as production does (`config/gunicorn.py`, the settings scripts/serve.sh
uses: gthread workers, one process per CPU (--workers) with 4 threads each, DJANGO_DEBUG=false) on the
project's WSGI application wrapped by `bench/timed_wsgi.py`, which measures *server time* - from the moment
gunicorn hands the request to Django until Django calls start_response, i.e. all middleware, session/auth,
the view, its queries and template rendering - and returns it in an `X-Server-Ms` header.
The parent process runs 20 client threads, each a
different annotator with its own session (logged in through the real login form), working through their own
assignments like a person would: open the item page, then for each machine error save a span verdict and an
explanation verdict (htmx POSTs with the CSRF token from the page), with a think time between actions (default
~1 s, uniform 0.5-1.5 s: several times faster than an expert reading an explanation; starts are spread over
the first two think times). Client-side latency is printed too, but the targets are about server time. Targets
(docs/measured.md): p95 save <= 30 ms, p95 item page <= 80 ms. Any HTTP error or failed request is counted (the run
must show 0), and at the end every save must be in the database: one judgment row per (assignment, span)
saved and one audit row per save.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_ui_bench python bench/annotation_load.py \
        [--annotators 20] [--items 200] [--duration 60] [--think 1.0]   (the issue's run: --duration 300)

The database is created when missing and its tables are rebuilt on each run (this database only).

The floor. A quarter more annotators (`--floor-share`) make the same saves at the same pace through the smallest
honest save (bench/floor.py: the session and the assignment checked, the judgment and its audit row written,
the card rendered), served by the same server, so the save's p95 is printed beside the floor's and their ratio
(target: within 1.5x). `--compare REF` runs the bench on the tree of a git ref and on this one, alternating
(`--rounds` each, fresh tables every run), and prints both trees' figures side by side."""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.trees import TREE as REPO  # noqa: E402 - this checkout, or the tree under comparison (--compare)
from bench.trees import alternate, server_env  # noqa: E402

sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.pgdb import ensure_postgres_database  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_ui_bench")
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)  # outside DEBUG a key is required
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "600")

TARGET_SAVE_MS = 30.0
TARGET_PAGE_MS = 80.0
PASSWORD = "bench-pass-2026"
SERVER_THREADS = 4


# ---- server (child process) --------------------------------------------------------------------------------


def start_gunicorn(port: int, workers: int, log: Path) -> subprocess.Popen:
    """Start gunicorn as scripts/serve.sh does (config/gunicorn.py: gthread workers), on the timed WSGI app."""
    env = server_env(log.parent / f"annotation_load_{port}", PORT=str(port), HOST="127.0.0.1",
                     WEB_CONCURRENCY=str(workers), GUNICORN_THREADS=str(SERVER_THREADS), GUNICORN_ACCESS_LOG="",
                     GUNICORN_MAX_REQUESTS="0")
    server = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")), "floor_wsgi:application",
                               "-c", "config/gunicorn.py"], env=env, cwd=REPO, stdout=log.open("wb"),
                              stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2) as resp:
                if resp.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not answer within 60 s")


# ---- data -----------------------------------------------------------------------------------------------



def build(n_annotators: int, n_items: int, n_floor: int = 0) -> dict[str, list[tuple[int, list[tuple[int, int]]]]]:
    """Fresh schema; a dataset of `n_items` items, two runs with 2 + 2 machine spans per item, a campaign
    with two annotators per item (`n_floor` of them save through the floor: floorNN). Return, per annotator,
    their assignments and each one's spans as (handle, id)."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)

    from accounts.models import Role, User
    from annotator.models import Assignment
    from annotator.selectors.spans import judged_spans, span_handle
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, MatchKind, TaskType
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from jobs.models import JobStatus
    from studies.setup import CampaignSpec, campaign_create

    task = TaskType.objects.get(slug="data-to-text")
    aspect = Aspect.objects.get(task=task, name="accuracy")
    dataset = Dataset.objects.create(name="bench", task=task, input_headers=["Data"], output_header="Text")
    rng = random.Random(1)
    words = ["the", "restaurant", "serves", "cheap", "english", "food", "near", "the", "river", "and", "is", "rated",
             "highly", "by", "families"]
    items = Item.objects.bulk_create(
        Item(dataset=dataset, position=i, external_id=f"b{i}", system="s",
             inputs={"Data": f"name[Place {i}] | food[English] | priceRange[cheap] | area[riverside]"},
             output=" ".join(rng.choice(words) for _ in range(60)))
        for i in range(n_items)
    )
    runs = []
    for label in ("bench-a", "bench-b"):
        evaluator = Evaluator.objects.create(name=label, kind=Evaluator.Kind.ENSEMBLE)
        runs.append(EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, aspect=aspect, label=label,
                                                status=JobStatus.DONE))
    annotations = Annotation.objects.bulk_create(
        Annotation(item=item, aspect="accuracy", source=run, kind=AnnotationKind.ENSEMBLE)
        for item in items for run in runs
    )
    spans = []
    for ann in annotations:
        for position in (1, 2):
            start = rng.randrange(0, 200)
            spans.append(ErrorSpan(annotation=ann, position=position, start=start, end=start + rng.randrange(5, 30),
                                   match=MatchKind.EXACT, text="x", explanation="The data says otherwise.",
                                   severity=rng.randint(1, 5)))
    ErrorSpan.objects.bulk_create(spans)
    users = [User(username=f"bench{i:02d}", role=Role.ANNOTATOR) for i in range(n_annotators)]
    users += [User(username=f"floor{i:02d}", role=Role.ANNOTATOR) for i in range(n_floor)]
    for user in users:
        user.set_password(PASSWORD)
    User.objects.bulk_create(users)
    users = list(User.objects.filter(role=Role.ANNOTATOR).order_by("username"))
    campaign = campaign_create(CampaignSpec(name="bench", dataset=dataset, runs=runs, annotators=users,
                                            aspects=["accuracy"], annotators_per_item=2, seed=1))
    plan: dict[str, list[tuple[int, list[int]]]] = {}
    for a in Assignment.objects.filter(campaign=campaign).select_related("campaign", "annotator").order_by("order"):
        # The page names spans by their per-assignment handles, never by database id.
        plan.setdefault(a.annotator.username, []).append(
            (a.pk, [(span_handle(a.pk, s.pk), s.pk) for s, _ in judged_spans(a)]))
    return plan


# ---- clients --------------------------------------------------------------------------------------------


class Annotator:
    def __init__(self, base: str, username: str) -> None:
        self.base = base
        self.username = username
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def _cookie(self, name: str) -> str:
        return next((c.value for c in self.jar if c.name == name), "")

    def request(
        self, path: str, data: dict | None = None, headers: dict | None = None
    ) -> tuple[int, str, float, float]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        t0 = time.perf_counter()
        try:
            with self.opener.open(req, timeout=30) as resp:
                text = resp.read().decode()
                status, server_ms = resp.status, float(resp.headers.get("X-Server-Ms", "nan"))
        except urllib.error.HTTPError as exc:
            text, status, server_ms = exc.read().decode(), exc.code, float(exc.headers.get("X-Server-Ms", "nan"))
        except OSError as exc:  # refused, reset, timed out: an error the run must not have
            text, status, server_ms = str(exc), 0, float("nan")
        return status, text, server_ms, (time.perf_counter() - t0) * 1000

    def login(self) -> None:
        self.request("/accounts/login/")
        status, _, _, _ = self.request(
            "/accounts/login/", {"username": self.username, "password": PASSWORD,
                                 "csrfmiddlewaretoken": self._cookie("csrftoken")},
            {"Referer": self.base + "/accounts/login/"},
        )
        if status != 200 or not self._cookie("sessionid"):
            raise RuntimeError(f"login failed for {self.username}: {status}")


def work(annotator: Annotator, plan: list[tuple[int, list[tuple[int, int]]]], stop_at: float, think: float,
         results: dict[str, list[tuple[float, float]]], lock: threading.Lock, rng: random.Random) -> None:
    """An annotator at work. A floor annotator (floorNN) makes the same saves at the same pace through the
    floor's save (bench/floor.py), with no item page."""
    token_re = re.compile(r'"X-CSRFToken": "([^"]+)"')
    floor = annotator.username.startswith("floor")
    # People do not all open their first item in the same millisecond: starts spread over two think times.
    time.sleep(rng.uniform(0, 2 * think))
    for assignment_pk, span_ids in plan:
        if time.monotonic() >= stop_at:
            return
        if floor:
            status, html, server_ms, client_ms = 200, f'"X-CSRFToken": "{annotator._cookie("csrftoken")}"', 0.0, 0.0
        else:
            status, html, server_ms, client_ms = annotator.request(f"/work/{assignment_pk}/")
        if status != 200:
            with lock:
                results["errors"].append((f"item page {assignment_pk}: HTTP {status}", 0.0))
            continue
        token = token_re.search(html).group(1)
        if not floor:
            with lock:
                results["page"].append((server_ms, client_ms))
        for number, (span_pk, span_id) in enumerate(span_ids, start=1):
            for field, value in (("span_verdict", rng.choice(["error", "not_error", "hallucination"])),
                                 ("explanation_verdict", rng.choice(["correct", "vague", "incorrect"]))):
                time.sleep(rng.uniform(0.5 * think, 1.5 * think))
                if time.monotonic() >= stop_at:
                    return
                url = (f"/bench-floor/save/{assignment_pk}/{span_id}/" if floor
                       else f"/work/{assignment_pk}/errors/{span_pk}/")
                status, _, server_ms, client_ms = annotator.request(
                    url, {"field": field, "value": value, "number": number},
                    {"X-CSRFToken": token, "HX-Request": "true", "Referer": annotator.base + "/"},
                )
                with lock:
                    if status != 200:
                        results["errors"].append((f"save {url}: HTTP {status}", 0.0))
                        continue
                    if floor:
                        results["floor save"].append((server_ms, client_ms))
                        continue
                    results["save"].append((server_ms, client_ms))
                    results["saved"].append(((assignment_pk, span_pk), 0.0))
        time.sleep(rng.uniform(0.5 * think, 1.5 * think))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def save_query_count() -> int:
    """Queries one verdict save runs (session and user lookups included), counted once in-process."""
    from django.db import connection
    from django.test import Client

    from annotator.models import Assignment
    from annotator.selectors.spans import judged_spans, span_handle

    assignment = Assignment.objects.select_related("campaign", "annotator").order_by("pk").first()
    span, _ = judged_spans(assignment)[0]
    client = Client()
    client.force_login(assignment.annotator)
    url = f"/work/{assignment.pk}/errors/{span_handle(assignment.pk, span.pk)}/"
    client.post(url, {"field": "span_verdict", "value": "error"})
    seen: list[str] = []

    def count(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.post(url, {"field": "span_verdict", "value": "not_error"})
    if response.status_code != 200:
        raise SystemExit(f"save check failed: HTTP {response.status_code}")
    client.post(f"/work/{assignment.pk}/undo/")
    client.post(f"/work/{assignment.pk}/undo/")
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between one annotator's actions")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="server processes")
    parser.add_argument("--floor-share", type=float, default=0.25,
                        help="annotators who save through the floor (bench/floor.py), per annotator")
    parser.add_argument("--compare", metavar="REF", help="also run the tree of this git ref, alternating runs")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: runs of each tree, alternating")
    parser.add_argument("--json", type=Path, help="write the run's figures here too")
    args = parser.parse_args()
    if args.compare:
        return alternate(Path(__file__).resolve(), sys.argv[1:], args.compare, args.rounds,
                         ["save p95", "save floor p95", "save ratio", "page p95", "queries per save", "errors"])

    ensure_postgres_database("bench/annotation_load.py")
    print(f"building: {args.items} items x 4 machine spans, {args.annotators} annotators, 2 per item ...", flush=True)
    n_floor = round(args.annotators * args.floor_share)
    plan = build(args.annotators, args.items, n_floor)
    n_queries = save_query_count()
    from django.db import connections

    from annotator.models import JudgmentEvent, SpanJudgment
    from annotator.selectors.spans import span_handle

    # The clients name spans by their per-assignment handles, so the pairs already judged are counted so too.
    real = SpanJudgment.objects.exclude(annotator__username__startswith="floor")
    events = JudgmentEvent.objects.exclude(judgment__annotator__username__startswith="floor")
    before = {"rows": real.count(), "events": events.count(),
              "pairs": {(a, span_handle(a, s)) for a, s in real.values_list("assignment_id", "span_id")}}
    connections.close_all()
    log = Path(tempfile.gettempdir()) / f"annotation_load_gunicorn_{args.port}.log"
    server = start_gunicorn(args.port, args.workers, log)
    try:
        base = f"http://127.0.0.1:{args.port}"
        clients = [Annotator(base, username) for username in sorted(plan)]
        for c in clients:
            c.login()
        results: dict[str, list] = {"save": [], "page": [], "errors": [], "saved": [], "floor save": []}
        lock = threading.Lock()
        # Warm up: server threads open their database connections and load templates once.
        for c in [c for c in clients if not c.username.startswith("floor")][: SERVER_THREADS * args.workers]:
            c.request(f"/work/{plan[c.username][0][0]}/")
        stop_at = time.monotonic() + args.duration
        started = time.monotonic()
        threads = [
            threading.Thread(target=work, args=(c, plan[c.username], stop_at, args.think, results, lock,
                                                random.Random(i)))
            for i, c in enumerate(clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)

    print(f"\n{args.annotators} concurrent annotators, think time ~{args.think:.2f} s, {elapsed:.0f} s of load, "
          f"{os.cpu_count()} CPUs, PostgreSQL; server: gunicorn, {args.workers} gthread workers x {SERVER_THREADS} "
          "threads, DEBUG off")
    print(f"queries per verdict save (incl. session + user): {n_queries}; {n_floor} of the "
          f"{args.annotators + n_floor} annotators save through the floor")
    figures: dict[str, object] = {"queries per save": n_queries, "errors": len(results["errors"])}
    if elapsed < args.duration - 5 * args.think:
        print(f"NOTE: the annotators ran out of work after {elapsed:.0f} s of the {args.duration:.0f} s asked; "
              "raise --items (about duration / 9 s x annotators / 2)")
    print(f"{'':14}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'target p95':>12}{'client p95':>12}  verdict")
    for kind, target in (("save", TARGET_SAVE_MS), ("floor save", None), ("page", TARGET_PAGE_MS)):
        server_ms = [s for s, _ in results[kind]]
        client_ms = [c for _, c in results[kind]]
        if not server_ms:
            continue
        p95 = pct(server_ms, 95)
        figures[{"save": "save p95", "floor save": "save floor p95", "page": "page p95"}[kind]] = p95
        label = {"save": "verdict save", "floor save": "floor save", "page": "item page"}[kind]
        print(f"{label:14}{len(server_ms):>7}{statistics.median(server_ms):>9.1f}{p95:>9.1f}"
              f"{pct(server_ms, 99):>9.1f}{('<= ' + str(int(target))) if target else '':>12}"
              f"{pct(client_ms, 95):>12.1f}  {'' if target is None else 'OK' if p95 <= target else 'MISSED'}")
    if "save floor p95" in figures:
        figures["save ratio"] = figures["save p95"] / figures["save floor p95"]
        print(f"save: p95 {figures['save p95']:.1f} ms against the floor's {figures['save floor p95']:.1f} ms: "
              f"{figures['save ratio']:.2f}x the floor (target <= 1.5x)")
    rate = (len(results["save"]) + len(results["page"])) / elapsed
    print(f"throughput: {rate:.1f} requests/s")
    saved = {key for key, _ in results["saved"]}
    new_rows = real.count() - before["rows"]
    new_events = events.count() - before["events"]
    expected_rows = len(saved - before["pairs"])
    first = f"; first: {results['errors'][0][0]}" if results["errors"] else ""
    print(f"errors: {len(results['errors'])} (target 0){first}")
    verdict = "every save is there" if (new_rows, new_events) == (expected_rows, len(results["save"])) else "MISMATCH"
    print(f"rows: {new_rows} new judgments for {expected_rows} new (assignment, span) pairs saved, {new_events} "
          f"audit rows for {len(results['save'])} saves -> {verdict}")
    if args.json:
        args.json.write_text(json.dumps(figures))


if __name__ == "__main__":
    main()
