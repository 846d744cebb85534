"""Fast typing never misplaces a verdict: random key sequences at 0-300 ms between keys, with auto-advance on
and off, with 0 and 150 ms of added latency on every answer, over items of 1-10 errors; the stored verdicts
must equal what a reference model of the screen says was typed, span by span (undo/redo interleaved too).

Async Playwright, so that a route handler can hold each answer back while keys keep coming."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest

from annotator.models import Assignment, SpanJudgment
from corpus.protocols import opennlgauge as protocol
from studies.setup import CampaignSpec, campaign_create
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.factories import PASSWORD, annotation, dataset, item, run, span, user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = (1, 2, 3, 5, 7, 10)
DELAYS_MS = (0, 0, 20, 60, 100, 150, 300)
SPAN_KEYS = {t.key: t.value for t in protocol.SPAN_VERDICTS}
EXPLANATION_KEYS = {t.key: t.value for t in protocol.EXPLANATION_VERDICTS}
FLAG = protocol.FLAGS[0]


@dataclass
class Card:
    span_verdict: str = ""
    explanation_verdict: str = ""
    flag: bool = False

    def complete(self) -> bool:
        return bool(self.span_verdict and self.explanation_verdict)


@dataclass
class Screen:
    """What the expert expects: the reference model the stored rows are compared with."""

    n: int
    auto: bool
    cards: list[Card] = field(default_factory=list)
    focus: int = 0
    actions: list[dict] = field(default_factory=list)
    clock: int = 0

    def __post_init__(self) -> None:
        self.cards = [Card() for _ in range(self.n)]

    def _set(self, index: int, name: str, value: object, *, record: bool) -> None:
        old = getattr(self.cards[index], name)
        setattr(self.cards[index], name, value)
        self.clock += 1
        if record and old != value:
            self.actions.append({"card": index, "field": name, "old": old, "new": value, "undone": False,
                                 "at": self.clock, "undone_at": None})

    def key(self, k: str) -> None:
        if k == "j":
            self.focus = min(self.focus + 1, self.n - 1)
        elif k == "k":
            self.focus = max(self.focus - 1, 0)
        elif k == "u":
            live = [a for a in self.actions if not a["undone"]]
            if live:
                a = live[-1]
                self._set(a["card"], a["field"], a["old"], record=False)
                a["undone"], a["undone_at"] = True, self.clock
                self.focus = a["card"]
        elif k == "U":
            undone = sorted((a for a in self.actions if a["undone"]), key=lambda a: a["undone_at"])
            if undone:
                a = undone[-1]
                if not any(not b["undone"] and b["at"] > a["undone_at"] for b in self.actions):
                    self._set(a["card"], a["field"], a["new"], record=False)
                    a["undone"], a["undone_at"] = False, None
                    self.focus = a["card"]
        else:
            card = self.cards[self.focus]
            before = card.complete()
            if k in SPAN_KEYS:
                self._set(self.focus, "span_verdict", SPAN_KEYS[k], record=True)
            elif k in EXPLANATION_KEYS:
                self._set(self.focus, "explanation_verdict", EXPLANATION_KEYS[k], record=True)
            elif k == FLAG.key:
                self._set(self.focus, "flag", not card.flag, record=True)
            if self.auto and not before and card.complete():
                nxt = next((i for i in range(self.focus + 1, self.n) if not self.cards[i].complete()), None)
                if nxt is not None:
                    self.focus = nxt


def _sequence(rng: random.Random, n: int, auto: bool, undo: bool) -> list[str]:
    keys: list[str] = []
    for _ in range(3 * n + 2):
        roll = rng.random()
        if undo and roll < 0.12:
            keys.append(rng.choice("uuU"))
        elif not auto and roll < 0.3:
            keys.append(rng.choice("jjjk"))
        elif roll < 0.36:
            keys.append(FLAG.key)
        elif roll < 0.68:
            keys.append(rng.choice(list(SPAN_KEYS)))
        else:
            keys.append(rng.choice(list(EXPLANATION_KEYS)))
    return keys


def _build(tag: str, annotator) -> list[tuple[Assignment, list[int]]]:
    """One item per size, each with that many machine errors (one ensemble run), all in one campaign."""
    data = dataset(f"typed {tag}", input_headers=["Data"], output_header="Text")
    evaluator = run(data, f"typed-run-{tag}")
    items = []
    for position, n in enumerate(SIZES, start=1):
        words = [f"word{i}" for i in range(n)]
        made = item(data, f"t{position}", " ".join(words) + ".", position=position)
        merged = annotation(made, evaluator)
        offset = 0
        for i, word in enumerate(words):
            span(merged, i, offset, offset + len(word), text=word, explanation=f"problem {i}", severity=3)
            offset += len(word) + 1
        items.append(made)
    campaign_create(CampaignSpec(name=f"typed {tag}", dataset=data, runs=[evaluator], annotators=[annotator],
                    aspects=["accuracy"], annotators_per_item=1, seed=1))
    out = []
    for made in items:
        a = Assignment.objects.get(item=made, annotator=annotator)
        spans = list(made.annotations.get().spans.order_by("start").values_list("pk", flat=True))
        out.append((a, spans))
    return out


async def _type_all(base: str, username: str, plans, latency_ms: int, seed: int) -> int:
    from playwright.async_api import async_playwright

    rng = random.Random(seed)
    n_keys = 0
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = await browser.new_context(viewport={"width": 1400, "height": 1000})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)

        async def slow(route):
            if route.request.method != "POST":
                await route.continue_()
                return
            response = await route.fetch()
            await asyncio.sleep(latency_ms / 1000)  # the answer comes late: the keys do not wait for it
            await route.fulfill(response=response)

        if latency_ms:
            await page.route("**/work/**", slow)
        await page.goto(f"{base}/accounts/login/")
        await page.fill("#id_username", username)
        await page.fill("#id_password", PASSWORD)
        await page.press("#id_password", "Enter")
        await page.wait_for_url(f"{base}/")
        for assignment_pk, keys in plans:
            await page.goto(f"{base}/work/{assignment_pk}/")
            await page.wait_for_selector("#work[data-busy], #errors .error-card.is-focus")
            for k in keys:
                await page.keyboard.press("Shift+U" if k == "U" else k)
                n_keys += 1
                await asyncio.sleep(rng.choice(DELAYS_MS) / 1000)
            await page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
            await asyncio.sleep(0.2)
            await page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
            problems = await page.locator(".save-state.is-problem").count()
            assert problems == 0, f"a save failed on assignment {assignment_pk}"
        await browser.close()
    # No Content-Security-Policy refusals (an inline style or script) or script errors while the cards swap.
    assert console_errors == []
    return n_keys


@pytest.mark.parametrize("undo", [False, True], ids=["verdicts", "with-undo"])
@pytest.mark.parametrize("latency_ms", [0, 150])
@pytest.mark.parametrize("auto", [True, False], ids=["auto-advance", "no-auto-advance"])
def test_typed_sequences_store_every_verdict_on_its_span(live_server, auto, latency_ms, undo):
    tag = f"{'a' if auto else 'm'}{latency_ms}{'u' if undo else ''}"
    expert = user(f"fast-{tag}")
    expert.auto_advance = auto
    expert.save(update_fields=["auto_advance"])
    built = _build(tag, expert)
    rng = random.Random(f"{tag}-keys")
    plans, screens = [], []
    for assignment, spans in built:
        keys = _sequence(rng, len(spans), auto, undo)
        screen = Screen(n=len(spans), auto=auto)
        for k in keys:
            screen.key(k)
        plans.append((assignment.pk, keys))
        screens.append((assignment, spans, screen))

    n_keys = asyncio.run(_type_all(live_server.url, expert.username, plans, latency_ms, seed=len(tag)))

    mismatches = []
    for assignment, spans, screen in screens:
        stored = {j.span_id: j for j in SpanJudgment.objects.filter(assignment=assignment)}
        for number, (span_pk, want) in enumerate(zip(spans, screen.cards, strict=True), start=1):
            got = stored.get(span_pk)
            have = Card(got.span_verdict, got.explanation_verdict, getattr(got, FLAG.value)) if got else Card()
            if have != want:
                mismatches.append((len(spans), number, want, have))
    print(f"[typed sequences] {tag}: {len(plans)} sequences, {n_keys} keys, {sum(len(s) for _, s in built)} spans, "
          f"{len(mismatches)} mismatches")
    assert mismatches == []
