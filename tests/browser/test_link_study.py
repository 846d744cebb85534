"""A Prolific-style study recruited only by a link, end to end, with every check on: decoys 0.3, planted 0.3,
control_arm 0.5, 2 judges per output, 8 participants joining at different times (two leave mid-way and their
work is released to the pool). Most participants join over HTTP and judge through the services; one does the
whole study in the browser by keyboard. Every participant sees decoys and a planted copy, half of the outputs
have one unprimed judge of two, the rubber-stamper gets the fail code, and the report exports in all formats."""

from __future__ import annotations

import io
import zipfile
from collections import Counter
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotator.models import Assignment
from annotator.selectors.spans import item_errors, span_handle
from quality.models import CheckSpan, PlantedOutput
from quality.services import planted_count
from studies.models import Participant
from tests.quality.conftest import Api
from tests.studies.box_study import Queue, box_scores, judge_item, queue_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_OUTPUTS, EACH = 14, 4
PASS, FAIL = "PASS-7Q", "FAIL-7Q"
CARET = """() => {
  const card = document.querySelector('#errors .error-card.is-focus');
  const mark = document.querySelector('#output-text mark.is-focus');
  return card && card.dataset.hasOffsets === 'true' && mark ? parseInt(mark.dataset.o, 10) : 0;
}"""
PAUSE_MS = 600  # a careful judge reads each card: the median time to a verdict stays above the 500 ms rule


def _join_http(token: str, pid: str) -> tuple[Client, Participant]:
    """Open the link with Prolific's three ids, then press Start (the form post the page carries)."""
    client = Client()
    ids = {"PROLIFIC_PID": pid, "STUDY_ID": "study-44", "SESSION_ID": f"session-{pid}"}
    query = "&".join(f"{k}={v}" for k, v in ids.items())
    assert client.get(f"/join/{token}/?{query}").status_code == 200
    assert client.post(f"/join/{token}/", ids).status_code == 302
    return client, Participant.objects.get(prolific_pid=pid)


def _code(client: Client, campaign_id: int) -> str:
    page = client.get(f"/campaigns/{campaign_id}/end/").content.decode()
    return page.split('id="completion-code">')[1].split("<")[0]


def _truth(assignment: Assignment) -> dict[int, tuple[str, str]]:
    """The keys a careful judge presses for each card (by its handle): Error/Correct for the wrong score (on an
    output or its planted copy), Not an error twice for the assists span and for decoys."""
    keys = {}
    for row in item_errors(assignment)[0]:
        check = getattr(row.span, "check_span", None)
        source = check.original if check is not None and check.original_id else row.span
        real = check is None or check.role == CheckSpan.Role.COPY
        wrong = real and source.explanation == "The score is wrong."
        keys[span_handle(assignment.pk, row.span.pk)] = ("1", "q") if wrong else ("2", "y")
    return keys


def _leave_half_way(campaign, participant: Participant) -> None:
    """Finish two outputs and one planted copy, as someone who then stops working."""
    queue = list(Assignment.objects.filter(campaign=campaign, annotator=participant.user).order_by("order")
                 .select_related("item"))
    outputs = [a for a in queue if a.item.derived_from_id is None][:2]
    copy = next(a for a in queue if a.item.derived_from_id is not None)
    for work in [*outputs, copy]:
        judge_item(work, stamp=False, ms=2500)


def _work_by_keyboard(page, live_server, campaign_id: int) -> int:
    """From the queue page: open the first item with Enter, then per item: Done marking (d) on a control-arm
    output, each card's verdicts after a pause (j to the next), the planted error selected with s, arrows and
    Shift+arrows and added with a, then f; until the end screen. Returns the items done."""
    page.locator("#resume").focus()
    page.keyboard.press("Enter")
    done = 0
    while True:
        page.wait_for_url(lambda url: "/work/" in url or "/end/" in url)
        if "/end/" in page.url:
            return done
        work = Assignment.objects.select_related("campaign", "item").get(pk=int(page.url.rstrip("/").split("/")[-1]))
        if page.locator("#done-marking").count():
            page.keyboard.press("d")
            page.locator("#errors .error-card").first.wait_for()
            work.refresh_from_db()
        keys = _truth(work)
        handles = page.locator("#errors .error-card").evaluate_all("els => els.map(e => Number(e.dataset.span))")
        assert sorted(handles) == sorted(keys)
        for index, handle in enumerate(handles):
            if index:
                page.keyboard.press("j")
            page.locator(f"#error-{handle}.is-focus").wait_for()
            page.wait_for_timeout(PAUSE_MS)
            span_key, explanation_key = keys[handle]
            page.keyboard.press(span_key)
            page.keyboard.press(explanation_key)
            page.locator(f"#error-{handle}.is-complete").wait_for()
        planted = PlantedOutput.objects.filter(item=work.item).first()
        if planted is not None:
            # s puts the caret where the focused card's mark starts (the text's start without one); arrows go on.
            at = page.evaluate(CARET)
            page.keyboard.press("s")
            for _ in range(abs(planted.start - at)):
                page.keyboard.press("ArrowRight" if planted.start > at else "ArrowLeft")
            for _ in range(planted.end - planted.start):
                page.keyboard.press("Shift+ArrowRight")
            assert page.evaluate("() => window.getSelection().toString()") == planted.after
            page.keyboard.press("a")
            page.locator("#add-dialog[open]").wait_for()
            page.keyboard.press("1")
            page.keyboard.press("Enter")
            page.locator("#added-list li", has_text=planted.after).wait_for()
        page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
        current = page.url
        page.keyboard.press("f")
        page.wait_for_url(lambda url, current=current: url != current)
        done += 1


def test_a_link_only_prolific_study_runs_with_every_check_and_arm(page, live_server, researcher, settings):
    settings.RATELIMIT_USE_CACHE = "default"
    boxes = box_scores(N_OUTPUTS, "prolific")
    for made in boxes.runs:  # a pilot answered by the simulated server, as a stranger trying the product runs it
        made.simulated = True
        made.save(update_fields=["simulated"])
    api = Api(researcher)
    created = api("post", "/campaigns", {
        "name": "Prolific study", "dataset_id": boxes.data.pk, "run_ids": [r.pk for r in boxes.runs],
        "annotators": [], "aspects": ["accuracy"], "annotators_per_item": 2, "seed": 11, "control_arm": 0.5,
        "decoys": 0.3, "planted": 0.3, "link": {"enabled": True}, "items_per_participant": EACH,
        "pass_code": PASS, "fail_code": FAIL, "consent": "You judge short game reports.",
    })
    assert created.status_code == 201, created.content
    campaign_id = created.json()["id"]
    assert created.json()["status"] == "draft"  # decoys wait for review
    # 3 or 4 decoys each flag whoever accepts everything; 2 planted copies each cannot flag (0 of 2 is 0.66).
    assert created.json()["warnings"] == ["checks_power: no check can flag a participant who rejects everything"]
    made = api("get", f"/campaigns/{campaign_id}").json()["checks_made"]
    # 28 machine spans at 0.3: round(0.3 * 28 / 0.7) = 12 decoys; 7 participants fill 28 places, 2 copies each.
    assert made["decoys"] == {"asked": 12, "made": 12, "why": ""}
    assert made["planted"] == {"asked": 14, "made": 14, "why": ""}
    # The researcher reads the decoy audit before opening: these made-up box scores give every real span one of two
    # stock explanations, so the audit may block; they accept its finding knowingly.
    audit = api("get", f"/campaigns/{campaign_id}/decoys/audit").json()
    assert audit["decoys"] == 12 and audit["real"] == 28
    opened = api("post", f"/campaigns/{campaign_id}/open", {"accept_audit": audit["level"] == "block"})
    assert opened.status_code == 200, opened.content
    token = api("get", f"/campaigns/{campaign_id}/link").json()["url"].rstrip("/").split("/")[-1]

    clients: dict[str, Client] = {}
    people: dict[str, Participant] = {}
    at_join: dict[str, Queue] = {}

    def arrive(pid: str) -> None:
        clients[pid], people[pid] = _join_http(token, pid)
        at_join[pid] = queue_of(people[pid].link.campaign, people[pid].user_id)

    for pid in ("P1", "P2", "P3"):
        arrive(pid)
    campaign = people["P1"].link.campaign
    _leave_half_way(campaign, people["P3"])

    # P4 does the whole study in the browser, by keyboard: the link, Start, every item, the code.
    page.goto(f"{live_server.url}/join/{token}/?PROLIFIC_PID=P4&STUDY_ID=study-44&SESSION_ID=session-P4")
    page.locator("#start").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/campaigns/{campaign_id}/")
    people["P4"] = Participant.objects.get(prolific_pid="P4")
    at_join["P4"] = queue_of(campaign, people["P4"].user_id)
    assert _work_by_keyboard(page, live_server, campaign_id) == at_join["P4"].real + at_join["P4"].planted
    assert page.locator("#completion-code").inner_text() == PASS

    for pid in ("P5", "P6"):
        arrive(pid)
    _leave_half_way(campaign, people["P6"])
    # P3 and P6 leave: nothing of theirs reaches the server for half an hour (their last request is set back, as
    # if the time had passed); the next arrival returns their untouched work to the pool.
    Participant.objects.filter(prolific_pid__in=["P3", "P6"]).update(
        last_seen_at=timezone.now() - timedelta(minutes=31))
    for pid in ("P7", "P8"):
        arrive(pid)
    for pid in ("P3", "P6"):
        kept = Assignment.objects.filter(campaign=campaign, annotator=people[pid].user)
        assert kept.count() == kept.filter(status=Assignment.Status.DONE).count()  # the rest went back

    for pid in ("P1", "P2", "P5", "P7", "P8"):
        for work in Assignment.objects.filter(campaign=campaign, annotator=people[pid].user).order_by("order"):
            judge_item(work, stamp=pid == "P5", ms=120 if pid == "P5" else 2500)

    print("\nQueue of each participant when they joined, then what they finished:")
    for pid in sorted(people):
        print(f"  {pid} joined: {at_join[pid].line()}")
        print(f"  {pid} done:   {queue_of(campaign, people[pid].user_id, done_only=True).line()}")
    for pid, q in at_join.items():
        assert q.decoy_bearing >= 1 and q.planted >= 1, (pid, q)
        assert q.real == EACH and q.planted == planted_count(0.3, EACH), (pid, q)
        assert abs(q.decoys - 0.3 * 2 * q.real / 0.7) <= 1, (pid, q)  # 2 machine spans per output
        assert abs(q.marking - q.real / 4) <= 1, (pid, q)  # 7 unprimed places of 28

    # Every output ended with two finished judges; on half of them (7 of 14) one of the two was unprimed.
    done = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE, is_training=False,
                                     item__derived_from__isnull=True)
    assert sorted(Counter(done.values_list("item_id", flat=True)).values()) == [2] * N_OUTPUTS
    unprimed = Counter(done.filter(in_control_arm=True).values_list("item_id", flat=True))
    print(f"Outputs with one unprimed judge of two: {len(unprimed)} of {N_OUTPUTS}")
    assert len(unprimed) == N_OUTPUTS // 2 and set(unprimed.values()) == {1}

    codes = {pid: _code(clients[pid], campaign_id) for pid in ("P1", "P2", "P5", "P7", "P8")}
    assert codes == {"P1": PASS, "P2": PASS, "P5": FAIL, "P7": PASS, "P8": PASS}
    people["P4"].refresh_from_db()
    assert (people["P4"].outcome, people["P4"].code_given) == ("pass", PASS)

    # ---- The exported report, in every format (the existing report export) ---------------------------------
    accuracy = api("get", f"/analytics/campaigns/{campaign_id}/tables/accuracy").json()
    rows = {row["run"]: row for row in accuracy["rows"] if row.get("run") in {r.label for r in boxes.runs}}
    assert set(rows) == {r.label for r in boxes.runs}
    main = {"markdown": "report.md", "html": "report.html", "latex": "report.tex"}
    for fmt, name in main.items():
        response = api("get", f"/analytics/campaigns/{campaign_id}/report.zip?format={fmt}")
        assert response.status_code == 200 and response["Content-Type"] == "application/zip"
        archive = zipfile.ZipFile(io.BytesIO(response.content))
        text = archive.read(f"campaign-{campaign_id}-report/{name}").decode()
        assert "Prolific study" in text
        for label in rows:
            assert label.replace("_", r"\_") in text or label in text
        # the simulated banner opens every format; the quality section and a design paragraph counted from the data
        assert "SIMULATED:" in text, fmt
        assert "Quality checks" in text and "Checks in force" in text, fmt
        assert f"{N_OUTPUTS} outputs went to the judges: {N_OUTPUTS} outputs had 2 judges" in text, fmt
        assert "8 participants who joined by the study link (8 from Prolific)" in text, fmt
    archive = zipfile.ZipFile(io.BytesIO(api("get", f"/analytics/campaigns/{campaign_id}/report.zip?format=markdown")
                                         .content))
    markdown = archive.read(f"campaign-{campaign_id}-report/tables/accuracy.md").decode()
    for label, row in rows.items():
        line = next(line for line in markdown.splitlines() if f"| {label} (simulated) " in line)
        assert f"{row['span_ok_pct']:.1f}" in line, (line, row)
    # The quality section's numbers are the vigilance API's: decoys shown and rejected per participant.
    report = archive.read(f"campaign-{campaign_id}-report/report.md").decode()
    vigilance = {row["annotator"]: row for row in api("get", f"/campaigns/{campaign_id}/vigilance").json()}
    stamper = people["P5"].user.username
    assert vigilance[stamper]["flagged"] and vigilance[stamper]["decoys"]["rejected"] == 0
    quality = report[report.index("Vigilance per annotator"):].splitlines()
    for name, row in vigilance.items():
        line = next(line for line in quality if line.startswith(f"| {name} "))
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert cells[2:4] == [str(row["decoys"]["rejected"]), str(row["decoys"]["shown"])], (line, row)
        assert cells[7:9] == [str(row["planted"]["found"]), str(row["planted"]["shown"])], (line, row)
