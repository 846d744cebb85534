"""Benchmark: a launch burst on a study link - N participants join within T seconds, judge, finish, get a code.

Method. A campaign recruited by a link (one machine error per item, `--per-item` judges per item, `--items-each`
items per participant, cap `--cap`, default N) is built in a database of its own, and the app is served as
the set-up under test runs it:

- `--setup production`: gunicorn as scripts/serve.sh starts it (config/gunicorn.py, gthread, `--workers`
  processes x 4 threads, DEBUG off) on PostgreSQL, Redis as the shared cache that counts joins per address;
  server time (X-Server-Ms from bench/timed_wsgi.py) is what the targets are about;
- `--setup default`: what scripts/run.sh serves with nothing configured - `manage.py runserver` (threaded)
  on SQLite with DEBUG on; runserver cannot report server time, so times there are the client's.

Each participant is a thread with a client bound to its own address (127.0.0.2, 127.0.0.3, ...), so the
per-address join limit counts as it would in the field. It arrives at a random moment within `--within`
seconds (0: all at once), opens the link (GET), presses Start (POST with the CSRF token), opens its queue,
then each item: the item page, for each machine error a span verdict and an explanation verdict at a typing
pace (1-3 s apart), Done; finally the end page with its code. Errors are every failed request and every HTTP
status but the answers a full study gives (409 on Start). At the end the database is asked whether every save
is there once (verdicts lost or duplicated), whether the cap and the overlap held, and whether every finished
participant got the pass code. The generator shares the machine with the server: the load average and the
generator's own CPU share are printed beside the figures.

The floor. Interleaved with them (`--floor-share`, a quarter by default), participants of a second link study
of the same shape join and save through the smallest honest implementation of each path (bench/floor.py: the
place claim alone; a save that checks the session and the assignment, writes the judgment and its audit row
and renders the card), served by the same server, so each path's p95 is printed beside the floor's and their
ratio. `--compare REF` runs the bench on the tree of a git ref and on this one, alternating (`--rounds` each,
fresh tables every run), and prints both trees' figures side by side.

    python bench/study_burst.py --setup production [-n 200] [--within 60]   (targets: 0 errors, 0 lost,
        p95 join <= 300 ms, p95 save <= 60 ms)
    python bench/study_burst.py --setup default [-n 30] [--within 0]         (target: 0 errors)
    python bench/study_burst.py --compare main~3 [--rounds 2] [-n 200] [--within 60]

DATABASE_URL (production; default postgres://postgres@127.0.0.1:5432/spanjudge_burst, rebuilt each run) and
BURST_REDIS_URL (default redis://127.0.0.1:6379/12) may be set; the default set-up uses a fresh SQLite file."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.trees import TREE as REPO  # noqa: E402 - this checkout, or the tree under comparison (--compare)
from bench.trees import alternate, server_env  # noqa: E402

sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TARGET_JOIN_MS, TARGET_SAVE_MS = 300.0, 60.0
PASS_CODE = "BURST-PASS"
SERVER_THREADS = 4
SAVE_URL = re.compile(r'data-save-url="(/work/\d+/errors/\d+/)"')
WORK_URL = re.compile(r'href="(/work/\d+/)"')
CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"')
CODE = re.compile(r'id="completion-code">([^<]+)<')


def configure(setup: str, var_dir: Path) -> None:
    """Point this process (and the server it starts) at the set-up's database and cache."""
    os.environ["SPANJUDGE_VAR_DIR"] = str(var_dir)
    if setup == "production":
        os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_burst")
        os.environ["CELERY_BROKER_URL"] = os.environ.get("BURST_REDIS_URL", "redis://127.0.0.1:6379/12")
        os.environ.setdefault("DJANGO_DEBUG", "false")
        os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)
        os.environ.setdefault("DATABASE_CONN_MAX_AGE", "600")
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{var_dir / 'burst.sqlite3'}"
        os.environ.pop("CELERY_BROKER_URL", None)
        os.environ["DJANGO_DEBUG"] = "true"


def build(n: int, items_each: int, per_item: int, cap: int, setup: str) -> tuple[int, str, str, dict[int, int]]:
    """Fresh tables and two link studies of one shape with room for everyone, one for the app and one for the
    floor (bench/floor.py); return (campaign id, link token, the floor's link token, item id -> its span id)."""
    if setup == "production":
        from bench.pgdb import ensure_postgres_database

        ensure_postgres_database("bench/study_burst.py")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, MatchKind, TaskType
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from jobs.models import JobStatus
    from studies.participants import LinkSettings
    from studies.setup import CampaignSpec, campaign_create

    task = TaskType.objects.get(slug="data-to-text")
    aspect = Aspect.objects.get(task=task, name="accuracy")
    dataset = Dataset.objects.create(name="burst", task=task, input_headers=["Data"], output_header="Text")
    n_items = -(-n * items_each // per_item) + items_each
    items = Item.objects.bulk_create(
        Item(dataset=dataset, position=i, external_id=f"b{i}", system="s", inputs={"Data": f"name[Cafe {i}]"},
             output=f"Cafe {i} is a cheap place by the river, loved by families.") for i in range(n_items))
    run = EvaluatorRun.objects.create(evaluator=Evaluator.objects.create(name="burst", kind=Evaluator.Kind.ENSEMBLE),
                                      dataset=dataset, aspect=aspect, label="burst", status=JobStatus.DONE)
    annotations = Annotation.objects.bulk_create(
        Annotation(item=item, aspect="accuracy", source=run, kind=AnnotationKind.ENSEMBLE) for item in items)
    spans = ErrorSpan.objects.bulk_create(
        ErrorSpan(annotation=a, position=1, start=len(f"Cafe {i} is a "), end=len(f"Cafe {i} is a cheap"),
                  match=MatchKind.EXACT, text="cheap", explanation="The data gives no price.", severity=2)
        for i, a in enumerate(annotations))
    made = [campaign_create(CampaignSpec(
        name=name, dataset=dataset, runs=[run], annotators=[], aspects=["accuracy"], annotators_per_item=per_item,
        seed=1, link=LinkSettings(items_per_participant=items_each, pass_code=PASS_CODE, cap=cap)))
        for name in ("burst", "burst floor")]
    span_of = {a.item_id: span.pk for a, span in zip(annotations, spans, strict=True)}
    return made[0].pk, made[0].study_link.token, made[1].study_link.token, span_of


# ---- the server --------------------------------------------------------------------------------------------


def start_server(setup: str, port: int, workers: int, log: Path) -> subprocess.Popen:
    """Start the server and wait for its first answer; a port someone else listens on is refused first, and a
    server that does not come up is stopped before the script gives up."""
    try:
        http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/")
    except OSError:
        pass
    else:
        raise SystemExit(f"port {port} is taken: pass --port")
    env = server_env(log.parent, PORT=str(port), HOST="127.0.0.1", WEB_CONCURRENCY=str(workers),
                     GUNICORN_THREADS=str(SERVER_THREADS), GUNICORN_ACCESS_LOG="", GUNICORN_MAX_REQUESTS="0")
    if setup == "production":
        command = [str(Path(sys.executable).with_name("gunicorn")), "floor_wsgi:application",
                   "-c", "config/gunicorn.py"]
    else:
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    server = subprocess.Popen(command, env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                              start_new_session=True)
    deadline = time.monotonic() + 300  # four workers importing Django on two busy cores take a while
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited:\n{log.read_text()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    raise SystemExit(f"the server did not answer within 300 s:\n{log.read_text()[-2000:]}")


def stop_server(server: subprocess.Popen) -> None:
    """Stop the server's whole process group; what has not stopped after a minute is killed."""
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


# ---- participants --------------------------------------------------------------------------------------------


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    times: dict[str, list[tuple[float, float]]] = field(
        default_factory=lambda: {"join": [], "save": [], "page": [], "floor join": [], "floor save": []})
    errors: list[str] = field(default_factory=list)
    saves: list[tuple[str, str]] = field(default_factory=list)  # (save url, field) answered 200
    joined: int = 0
    turned_away: int = 0
    codes: list[str] = field(default_factory=list)
    join_stamps: list[float] = field(default_factory=list)

    def time(self, kind: str, server_ms: float, client_ms: float) -> None:
        with self.lock:
            self.times[kind].append((server_ms, client_ms))

    def error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message)


class Participant:
    """One browser: its own address, its own cookies, a fresh connection per request (no keep-alive)."""

    def __init__(self, port: int, address: str) -> None:
        self.port, self.address = port, address
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, data: dict | None = None,
                headers: dict | None = None) -> tuple[int, str, dict[str, str], float, float]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        t0 = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60, source_address=(self.address, 0))
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            text = resp.read().decode()
            conn.close()
        except OSError as exc:  # refused, reset, timed out: an error the run must not have
            return 0, str(exc), {}, float("nan"), (time.perf_counter() - t0) * 1000
        for header in resp.msg.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel["max-age"] == "0" or not morsel.value:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        server_ms = float(resp.headers.get("X-Server-Ms", "nan"))
        return resp.status, text, dict(resp.headers), server_ms, (time.perf_counter() - t0) * 1000


def take_part(p: Participant, n: int, token: str, campaign: int, start_at: float, results: Results,
              rng: random.Random) -> None:
    time.sleep(max(0.0, start_at - time.monotonic()))
    link = f"/join/{token}/"
    ids = {"PROLIFIC_PID": f"pid{n:05d}", "STUDY_ID": "burst", "SESSION_ID": f"s{n:05d}x{rng.getrandbits(64):016x}"}
    status, _, _, server_ms, client_ms = p.request("GET", link + "?" + urllib.parse.urlencode(ids))
    if status != 200:
        return results.error(f"{p.address} join page: HTTP {status}")
    results.time("page", server_ms, client_ms)
    status, _, headers, server_ms, client_ms = p.request(
        "POST", link, {**ids, "csrfmiddlewaretoken": p.cookies.get("csrftoken", "")},
        {"Referer": f"http://127.0.0.1:{p.port}{link}"})
    if status == 409:
        with results.lock:
            results.turned_away += 1
        return None
    if status != 302:
        return results.error(f"{p.address} start: HTTP {status}")
    results.time("join", server_ms, client_ms)
    with results.lock:
        results.joined += 1
        results.join_stamps.append(time.monotonic())
    status, html, _, _, _ = p.request("GET", f"/campaigns/{campaign}/")
    if status != 200:
        return results.error(f"{p.address} queue: HTTP {status}")
    for work in dict.fromkeys(WORK_URL.findall(html)):
        if not judge(p, work, results, rng):
            return None
    status, html, _, _, _ = p.request("GET", f"/campaigns/{campaign}/end/")
    code = CODE.search(html) if status == 200 else None
    if code is None:
        return results.error(f"{p.address} end page: HTTP {status}, no code")
    with results.lock:
        results.codes.append(code.group(1))
    return None


def take_part_floor(p: Participant, n: int, token: str, floor_token: str, span_of: dict[int, int], start_at: float,
                    results: Results, rng: random.Random) -> None:
    """A participant of the floor's study: the real link's page for the CSRF cookie, the floor's join, then
    the same two verdicts per item at the same pace through the floor's save."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    status, _, _, _, _ = p.request("GET", f"/join/{token}/?PROLIFIC_PID=floor{n:05d}")
    if status != 200:
        return results.error(f"{p.address} floor: join page HTTP {status}")
    headers = {"X-CSRFToken": p.cookies.get("csrftoken", ""), "Referer": f"http://127.0.0.1:{p.port}/"}
    status, text, _, server_ms, client_ms = p.request("POST", f"/bench-floor/join/{floor_token}/", {}, headers)
    if status == 409:
        return None
    if status != 201:
        return results.error(f"{p.address} floor join: HTTP {status}")
    results.time("floor join", server_ms, client_ms)
    headers["X-CSRFToken"] = p.cookies.get("csrftoken", "")
    for pair in text.split():
        assignment, item = (int(x) for x in pair.split(":"))
        for name, value in (("span_verdict", "error"), ("explanation_verdict", "correct")):
            time.sleep(rng.uniform(1.0, 3.0))
            status, _, _, server_ms, client_ms = p.request(
                "POST", f"/bench-floor/save/{assignment}/{span_of[item]}/", {"field": name, "value": value}, headers)
            if status != 200:
                return results.error(f"{p.address} floor save: HTTP {status}")
            results.time("floor save", server_ms, client_ms)
    return None


def judge(p: Participant, work: str, results: Results, rng: random.Random) -> bool:
    """One item: its page, two verdicts per machine error at a typing pace, Done. False after an error."""
    status, html, _, server_ms, client_ms = p.request("GET", work)
    if status != 200:
        results.error(f"{p.address} {work}: HTTP {status}")
        return False
    results.time("page", server_ms, client_ms)
    htmx = {"X-CSRFToken": CSRF.search(html).group(1), "HX-Request": "true",
            "Referer": f"http://127.0.0.1:{p.port}{work}"}
    for number, save in enumerate(dict.fromkeys(SAVE_URL.findall(html)), start=1):
        for name, value in (("span_verdict", "error"), ("explanation_verdict", "correct")):
            time.sleep(rng.uniform(1.0, 3.0))
            status, _, _, server_ms, client_ms = p.request("POST", save, {"field": name, "value": value,
                                                                          "number": number}, htmx)
            if status != 200:
                results.error(f"{p.address} save {save} {name}: HTTP {status}")
                return False
            results.time("save", server_ms, client_ms)
            with results.lock:
                results.saves.append((save, name))
    time.sleep(rng.uniform(1.0, 3.0))
    status, _, headers, _, _ = p.request("POST", f"{work}finish/", {"seconds": 5}, htmx)
    if status != 200 or "HX-Redirect" not in headers:
        results.error(f"{p.address} finish {work}: HTTP {status}")
        return False
    return True


# ---- report --------------------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(v for v in values if v == v)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def check_database(results: Results, cap: int, per_item: int, campaign: int) -> dict[str, object]:
    """What the database holds after the run for the app's study (not the floor's), against what the clients
    were told was saved."""
    from django.db import connections
    from django.db.models import Count, Q

    from annotator.models import Assignment, JudgmentEvent, SpanJudgment
    from studies.models import Participant as Joined

    connections.close_all()
    pairs = {save for save, _ in results.saves}
    both = sum(1 for save in pairs if (save, "span_verdict") in results.saves
               and (save, "explanation_verdict") in results.saves)
    judgments = SpanJudgment.objects.filter(assignment__campaign_id=campaign)
    complete = judgments.filter(span_verdict="error", explanation_verdict="correct").count()
    rows, events = judgments.count(), JudgmentEvent.objects.filter(judgment__assignment__campaign_id=campaign).count()
    joined = Joined.objects.filter(link__campaign_id=campaign)
    counted = (Assignment.objects.filter(is_training=False, campaign_id=campaign)
               .filter(Q(status=Assignment.Status.DONE) | Q(handout__released_at__isnull=True))
               .values("item_id").annotate(n=Count("pk")).values_list("n", flat=True))
    return {
        "lost": max(0, len(pairs) - rows) + max(0, both - complete) + max(0, len(results.saves) - events),
        "duplicated": max(0, rows - len(pairs)) + max(0, events - len(results.saves)),
        "participants": joined.count(), "cap_held": joined.count() <= cap,
        "max_per_item": max(counted, default=0), "overlap_held": max(counted, default=0) <= per_item,
        "codes_in_db": joined.filter(code_given=PASS_CODE).count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=["production", "default"], default="production")
    parser.add_argument("-n", "--participants", type=int, default=None, help="200 (production) or 30 (default)")
    parser.add_argument("--within", type=float, default=None, help="seconds over which they arrive: 60 or 0")
    parser.add_argument("--items-each", type=int, default=3)
    parser.add_argument("--per-item", type=int, default=2, help="judges per item (the campaign's overlap)")
    parser.add_argument("--cap", type=int, default=None, help="the link's cap (default: N)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn processes (production)")
    parser.add_argument("--port", type=int, default=8743)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--floor-share", type=float, default=0.25,
                        help="floor participants per app participant, interleaved with them (bench/floor.py)")
    parser.add_argument("--compare", metavar="REF", help="also run the tree of this git ref, alternating runs")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: runs of each tree, alternating")
    parser.add_argument("--json", type=Path, help="write the run's figures here too")
    args = parser.parse_args()
    if args.compare:
        return alternate(Path(__file__).resolve(), sys.argv[1:], args.compare, args.rounds,
                         ["join p95", "join floor p95", "join ratio", "save p95", "save floor p95", "save ratio",
                          "errors", "lost", "load_max"])
    production = args.setup == "production"
    n = args.participants or (200 if production else 30)
    within = args.within if args.within is not None else (60.0 if production else 0.0)
    cap = args.cap or n
    if n > 250:
        raise SystemExit("at most 250 participants: one loopback address each, 127.0.0.2 and up")
    var_dir = Path(tempfile.mkdtemp(prefix="study_burst_"))
    configure(args.setup, var_dir)
    print(f"building: a link study for {n} participants, {args.items_each} items each, {args.per_item} per item, "
          f"cap {cap} ...", flush=True)
    campaign, token, floor_token, span_of = build(n, args.items_each, args.per_item, cap, args.setup)
    from django.db import connections

    connections.close_all()
    log = var_dir / "server.log"
    server = start_server(args.setup, args.port, args.workers, log)
    results = Results()
    loads: list[float] = []
    load_start = os.getloadavg()[0]
    try:
        rng = random.Random(args.seed)
        t0 = time.monotonic() + 0.5
        arrivals = sorted(t0 + rng.uniform(0, within) for _ in range(n))
        threads = [threading.Thread(target=take_part, args=(Participant(args.port, f"127.0.0.{i + 2}"), i, token,
                                                            campaign, arrivals[i], results, random.Random(i)))
                   for i in range(n)]
        floors = min(n, round(n * args.floor_share))
        threads += [threading.Thread(target=take_part_floor, args=(
            Participant(args.port, f"127.0.1.{i + 2}"), i, token, floor_token, span_of, arrivals[i * n // floors],
            results, random.Random(1000 + i))) for i in range(floors)]
        cpu0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            loads.append(os.getloadavg()[0])
            time.sleep(1.0)
        cpu1, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - wall0
    finally:
        stop_server(server)
    figures = report(args, n, within, cap, results, check_database(results, cap, args.per_item, campaign), log,
                     (load_start, max(loads, default=0.0), os.getloadavg()[0]),
                     (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / wall, wall)
    if args.json:
        args.json.write_text(json.dumps(figures))
    return None


def report(args, n: int, within: float, cap: int, results: Results, db: dict, log: Path,
           loads: tuple[float, float, float], cpu_cores: float, wall: float) -> None:
    production = args.setup == "production"
    cores = os.cpu_count() or 1
    server = (f"gunicorn {args.workers} gthread workers x {SERVER_THREADS} threads, PostgreSQL, DEBUG off"
              if production else "manage.py runserver (threaded), SQLite, DEBUG on (scripts/run.sh's default)")
    print(f"\n{n} participants arriving within {within:.0f} s, each from its own 127.0.0.x; {server}; "
          f"{cores} CPUs, {wall:.0f} s wall")
    print(f"load average (1 min): {loads[0]:.2f} before, {loads[1]:.2f} at most, {loads[2]:.2f} after; "
          f"the generator used {cpu_cores:.3f} cores ({100 * cpu_cores / cores:.0f}% of the machine)")
    stamps = sorted(results.join_stamps)
    span = (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0
    print(f"joined {results.joined}, turned away (full) {results.turned_away}, codes {len(results.codes)}; "
          f"joins/s {results.joined / span if span else float(results.joined):.1f} (over {span:.1f} s)")
    kind_of_time = "server" if production else "client"
    figures: dict[str, object] = {"errors": len(results.errors), "lost": db["lost"], "load_max": loads[1]}
    print(f"{'':12}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'target p95':>12}{'client p95':>12}"
          f"  ({kind_of_time} time)")
    for kind, target in (("join", TARGET_JOIN_MS), ("floor join", None), ("save", TARGET_SAVE_MS),
                         ("floor save", None), ("page", None)):
        ms = [s if production else c for s, c in results.times[kind]]
        client = [c for _, c in results.times[kind]]
        if not ms:
            continue
        p95 = pct(ms, 95)
        figures[f"{kind.replace('floor ', '')} floor p95" if kind.startswith("floor") else f"{kind} p95"] = p95
        verdict = "" if target is None or not production else ("OK" if p95 <= target else "MISSED")
        print(f"{kind:12}{len(ms):>6}{statistics.median(ms):>9.1f}{p95:>9.1f}{pct(ms, 99):>9.1f}"
              f"{('<= ' + str(int(target))) if target else '':>12}{pct(client, 95):>12.1f}  {verdict}")
    for kind in ("join", "save"):
        if f"{kind} floor p95" in figures and f"{kind} p95" in figures:
            figures[f"{kind} ratio"] = figures[f"{kind} p95"] / figures[f"{kind} floor p95"]
            print(f"{kind}: p95 {figures[f'{kind} p95']:.1f} ms against the floor's {figures[f'{kind} floor p95']:.1f} "
                  f"ms: {figures[f'{kind} ratio']:.2f}x the floor")
    first = f"; first: {results.errors[0]}" if results.errors else ""
    print(f"errors: {len(results.errors)} (target 0){first}")
    if results.errors:
        print(f"server log tail ({log}):\n{log.read_text()[-1500:]}")
    print(f"verdicts: {len(results.saves)} saves answered 200; lost {db['lost']}, duplicated {db['duplicated']} "
          "(target 0, 0)")
    print(f"cap {cap}: {db['participants']} participants -> {'held' if db['cap_held'] else 'BROKEN'}; overlap "
          f"{args.per_item}: at most {db['max_per_item']} per item -> {'held' if db['overlap_held'] else 'BROKEN'}; "
          f"pass codes in the database {db['codes_in_db']}, shown {results.codes.count(PASS_CODE)}")
    return figures


if __name__ == "__main__":
    main()
