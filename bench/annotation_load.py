"""Benchmark: server time of verdict saves and item pages with 20 concurrent simulated annotators on PostgreSQL.

Method. The script starts a real HTTP server in a child process: Django's WSGI application behind the stdlib
WSGI server of `runserver`, forked into one process per CPU (--workers) that share the listening socket, each
with a fixed pool of 4 threads (so database connections persist per thread) - the shape of gunicorn's threaded
workers. A thin WSGI wrapper measures *server time* - from the moment the server hands the request to Django
until Django calls start_response, i.e. all middleware, session/auth, the view, its queries and template
rendering - and returns it in an `X-Server-Ms` header. The parent process runs 20 client threads, each a
different annotator with its own session (logged in through the real login form), working through their own
assignments like a person would: open the item page, then for each machine error save a span verdict and an
explanation verdict (htmx POSTs with the CSRF token from the page), with a think time between actions (default
~1 s, uniform 0.5-1.5 s: several times faster than an expert reading an explanation; starts are spread over
the first two think times). Client-side latency is printed too, but the targets are about server time. Targets
(DESIGN.md): p95 save <= 30 ms, p95 item page <= 80 ms.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_ui_bench python bench/annotation_load.py \
        [--annotators 20] [--items 200] [--duration 60] [--think 1.0]

The database is created when missing and its tables are rebuilt on each run (this database only)."""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.pgdb import ensure_postgres_database  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_ui_bench")
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "600")

TARGET_SAVE_MS = 30.0
TARGET_PAGE_MS = 80.0
PASSWORD = "bench-pass-2026"
SERVER_THREADS = 4


# ---- server (child process) --------------------------------------------------------------------------------


def serve(port: int, workers: int) -> None:
    """Serve on `port` with `workers` forked processes sharing one listening socket, each with a pool of
    SERVER_THREADS threads - the shape of gunicorn's gthread workers, built from the stdlib."""
    import signal

    import django

    django.setup()
    from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer
    from django.core.wsgi import get_wsgi_application
    from django.db import connections

    app = get_wsgi_application()

    def timed(environ, start_response):
        t0 = time.perf_counter()

        def start(status, headers, exc_info=None):
            headers.append(("X-Server-Ms", f"{(time.perf_counter() - t0) * 1000:.3f}"))
            return start_response(status, headers, exc_info)

        return app(environ, start)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    class PoolServer(WSGIServer):
        """Handle each connection on a fixed pool of threads (persistent DB connections per thread)."""

        pool: ThreadPoolExecutor

        def process_request(self, request, client_address):
            self.pool.submit(self._handle, request, client_address)

        def _handle(self, request, client_address):
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    server = PoolServer(("127.0.0.1", port), Quiet, ipv6=False)
    server.set_app(timed)
    connections.close_all()  # no connection may cross a fork
    children = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            children = []
            break
        children.append(pid)

    def stop(signum: int, frame: object) -> None:
        for pid in children:
            os.kill(pid, signal.SIGTERM)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    server.pool = ThreadPoolExecutor(max_workers=SERVER_THREADS)
    if children or workers == 1:
        print("ready", flush=True)
    server.serve_forever()


# ---- data -----------------------------------------------------------------------------------------------



def build(n_annotators: int, n_items: int) -> dict[str, list[tuple[int, list[int]]]]:
    """Fresh schema; a dataset of `n_items` items, two runs with 2 + 2 machine spans per item, a campaign
    with two annotators per item. Return, per annotator, their assignments and each one's span ids."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)

    from accounts.models import Role, User
    from annotator.models import Assignment
    from annotator.selectors import judged_spans
    from annotator.services.campaigns import campaign_create
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, MatchKind, TaskType
    from evaluation.models import Aspect, Evaluator, EvaluatorRun, RunStatus

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
                                                status=RunStatus.DONE))
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
    for user in users:
        user.set_password(PASSWORD)
    User.objects.bulk_create(users)
    users = list(User.objects.filter(username__startswith="bench").order_by("username"))
    campaign = campaign_create(name="bench", dataset=dataset, runs=runs, annotators=users, aspects=["accuracy"],
                               annotators_per_item=2, seed=1)
    plan: dict[str, list[tuple[int, list[int]]]] = {}
    for a in Assignment.objects.filter(campaign=campaign).select_related("campaign", "annotator").order_by("order"):
        plan.setdefault(a.annotator.username, []).append((a.pk, [s.pk for s, _ in judged_spans(a)]))
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


def work(annotator: Annotator, plan: list[tuple[int, list[int]]], stop_at: float, think: float,
         results: dict[str, list[tuple[float, float]]], lock: threading.Lock, rng: random.Random) -> None:
    token_re = re.compile(r'"X-CSRFToken": "([^"]+)"')
    # People do not all open their first item in the same millisecond: starts spread over two think times.
    time.sleep(rng.uniform(0, 2 * think))
    for assignment_pk, span_ids in plan:
        if time.monotonic() >= stop_at:
            return
        status, html, server_ms, client_ms = annotator.request(f"/work/{assignment_pk}/")
        if status != 200:
            raise RuntimeError(f"item page {assignment_pk}: HTTP {status}")
        token = token_re.search(html).group(1)
        with lock:
            results["page"].append((server_ms, client_ms))
        for number, span_pk in enumerate(span_ids, start=1):
            for field, value in (("span_verdict", rng.choice(["error", "not_error", "hallucination"])),
                                 ("explanation_verdict", rng.choice(["correct", "vague", "incorrect"]))):
                time.sleep(rng.uniform(0.5 * think, 1.5 * think))
                if time.monotonic() >= stop_at:
                    return
                status, _, server_ms, client_ms = annotator.request(
                    f"/work/{assignment_pk}/errors/{span_pk}/",
                    {"field": field, "value": value, "number": number},
                    {"X-CSRFToken": token, "HX-Request": "true", "Referer": annotator.base + "/"},
                )
                if status != 200:
                    raise RuntimeError(f"save {assignment_pk}/{span_pk}: HTTP {status}")
                with lock:
                    results["save"].append((server_ms, client_ms))
        time.sleep(rng.uniform(0.5 * think, 1.5 * think))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def save_query_count() -> int:
    """Queries one verdict save runs (session and user lookups included), counted once in-process."""
    from django.db import connection
    from django.test import Client

    from annotator.models import Assignment
    from annotator.selectors import judged_spans

    assignment = Assignment.objects.select_related("campaign", "annotator").order_by("pk").first()
    span, _ = judged_spans(assignment)[0]
    client = Client()
    client.force_login(assignment.annotator)
    url = f"/work/{assignment.pk}/errors/{span.pk}/"
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
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.workers)
        return

    ensure_postgres_database("bench/annotation_load.py")
    print(f"building: {args.items} items x 4 machine spans, {args.annotators} annotators, 2 per item ...", flush=True)
    plan = build(args.annotators, args.items)
    n_queries = save_query_count()
    env = dict(os.environ)
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--port", str(args.port),
                               "--workers", str(args.workers)], env=env,
                              stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        if server.stdout.readline().strip() != "ready":
            raise SystemExit("server did not start")
        base = f"http://127.0.0.1:{args.port}"
        clients = [Annotator(base, username) for username in sorted(plan)]
        for c in clients:
            c.login()
        results: dict[str, list[tuple[float, float]]] = {"save": [], "page": []}
        lock = threading.Lock()
        # Warm up: server threads open their database connections and load templates once.
        for c in clients[: SERVER_THREADS * args.workers]:
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
        server.terminate()
        server.wait(10)

    print(f"\n{args.annotators} concurrent annotators, think time ~{args.think:.2f} s, {elapsed:.0f} s of load, "
          f"{os.cpu_count()} CPUs, PostgreSQL; server: {args.workers} processes x {SERVER_THREADS} threads")
    print(f"queries per verdict save (incl. session + user): {n_queries}")
    print(f"{'':14}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'target p95':>12}{'client p95':>12}  verdict")
    for kind, target in (("save", TARGET_SAVE_MS), ("page", TARGET_PAGE_MS)):
        server_ms = [s for s, _ in results[kind]]
        client_ms = [c for _, c in results[kind]]
        p95 = pct(server_ms, 95)
        label = "verdict save" if kind == "save" else "item page"
        print(f"{label:14}{len(server_ms):>7}{statistics.median(server_ms):>9.1f}{p95:>9.1f}"
              f"{pct(server_ms, 99):>9.1f}{'<= ' + str(int(target)):>12}{pct(client_ms, 95):>12.1f}  "
              f"{'OK' if p95 <= target else 'MISSED'}")
    rate = (len(results["save"]) + len(results["page"])) / elapsed
    print(f"throughput: {rate:.1f} requests/s")


if __name__ == "__main__":
    main()
