// spanjudge annotation screen: keyboard-first judging, exact offsets from DOM selections, undo/redo of every
// action, mouse selections that snap to words, working time. No inline script: the page hands data over in
// json_script tags (the protocol's key map, the campaign's categories).
//
// Every key belongs to the card it was typed for: verdict keys fix their target when pressed and go through
// per-card ordered saves (saves.js). Only screen moves wait: while a save that completes the card in focus is
// on its way (auto-advance) or an undo/redo runs, later keys are held and replayed in order once the screen
// is where the expert expects it, so a fast key never lands on the finished neighbour. After Back (the page
// shown from the browser's cache) or a refused stale save (409) the screen re-reads the item from the server,
// and keys typed meanwhile wait for it too.
import { post } from "../lib/http.js";
import { isTyping, withModifier } from "../lib/keys.js";
import { Saves } from "./saves.js";
import { onRestored, resyncScreen } from "./resync.js";
import { doneMarking } from "./marking.js";
import { outputText, selectionOffsets, toPoint, outputChars, selectOffsets, snapToWords, trimSpaces } from "./offsets.js";

const work = document.getElementById("work");
if (work) start();

function start() {
  const canEdit = work.dataset.canEdit === "true";
  let autoAdvance = work.dataset.autoAdvance === "true";
  const wide = window.matchMedia("(min-width: 900px)");
  let currentSpan = null; // span id of the error card in focus (ids survive re-rendering; indexes may not)
  let selectMode = false;

  // 422 answers carry a message meant for the annotator: let htmx hand them to us without swapping.
  if (window.htmx) {
    htmx.config.responseHandling = [
      { code: "204", swap: false },
      { code: "[23]..", swap: true },
      { code: "422", swap: false, error: true },
      { code: "[45]..", swap: false, error: true },
    ];
  }

  // ---- messages -----------------------------------------------------------------------------------------
  const flash = document.getElementById("flash");
  let flashTimer = null;
  function say(message, kind) {
    flash.textContent = message; // textContent: server messages may quote dataset text
    flash.className = "flash is-shown" + (kind ? " flash-" + kind : "");
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { flash.className = "flash"; }, kind === "problem" ? 8000 : 3000);
  }

  // ---- error cards and focus ----------------------------------------------------------------------------
  function cards() { return Array.from(document.querySelectorAll("#errors .error-card")); }
  function cardOf(span) { return span ? document.getElementById("error-" + span) : null; }
  function currentCard() { return cardOf(currentSpan); }

  function currentIndex() {
    const i = cards().findIndex((c) => c.dataset.span === currentSpan);
    return i < 0 ? 0 : i;
  }

  function focusCard(index, scroll) {
    const list = cards();
    if (!list.length) return;
    const card = list[Math.max(0, Math.min(index, list.length - 1))];
    currentSpan = card.dataset.span;
    list.forEach((c) => c.classList.toggle("is-focus", c === card));
    highlightFocus(card.dataset.span);
    if (scroll !== false) {
      card.focus({ preventScroll: true });
      bringIntoView(card);
    }
  }

  // The card and its place in the text both come into view: on a wide screen each pane scrolls on its own;
  // on a phone (one column) the card wins, since the text and the card cannot both be on screen.
  function bringIntoView(card) {
    const mark = document.querySelector("#output-text mark.is-focus");
    if (wide.matches && mark && !inView(mark)) mark.scrollIntoView({ block: "center" });
    if (!inView(card)) card.scrollIntoView({ block: "nearest" });
  }

  function inView(el) {
    const r = el.getBoundingClientRect();
    const pane = el.closest(".pane");
    const p = pane && wide.matches ? pane.getBoundingClientRect() : { top: 0, bottom: window.innerHeight };
    const bar = document.querySelector(".work-bar");
    const top = Math.max(p.top, bar && !wide.matches ? bar.getBoundingClientRect().bottom : 0);
    return r.top >= top && r.bottom <= Math.min(p.bottom, window.innerHeight);
  }

  function highlightFocus(spanId) {
    let first = true;
    document.querySelectorAll("#output-text mark").forEach((m) => {
      const on = spanId && (m.dataset.spans || "").split(" ").includes(spanId);
      m.classList.toggle("is-focus", !!on);
      m.classList.toggle("is-focus-start", !!on && first);
      if (on && first) first = false;
    });
  }

  function refreshFocus() {
    const card = currentCard();
    if (!card) return;
    cards().forEach((c) => c.classList.toggle("is-focus", c === card));
    highlightFocus(card.dataset.span);
  }

  function focusSpan(spanId) {
    const i = cards().findIndex((c) => c.dataset.span === String(spanId));
    if (i >= 0) focusCard(i);
  }

  function updateProgress() {
    const list = cards();
    const done = list.filter((c) => c.classList.contains("is-complete")).length;
    const text = document.getElementById("progress-text");
    if (text) text.textContent = done + " of " + list.length + " errors have both verdicts";
    const finish = document.getElementById("finish-button");
    if (finish) {
      if (done === list.length) finish.removeAttribute("aria-disabled");
      else finish.setAttribute("aria-disabled", "true");
    }
  }

  function firstIncomplete() {
    const i = cards().findIndex((c) => !c.classList.contains("is-complete"));
    return i < 0 ? 0 : i;
  }

  // ---- what each card will hold once its queued saves are through ----------------------------------------
  const models = new Map();
  function modelOf(card) {
    const span = card.dataset.span;
    if (!models.has(span)) {
      const m = {
        span_verdict: card.dataset.spanVerdict || "", explanation_verdict: card.dataset.explanationVerdict || "",
        severity: parseInt(card.dataset.severity, 10) || 0,
      };
      card.querySelectorAll("button.flag").forEach((b) => { m[b.dataset.field] = b.getAttribute("aria-pressed") === "true"; });
      models.set(span, m);
    }
    return models.get(span);
  }
  const isComplete = (m) => !!(m.span_verdict && m.explanation_verdict);

  // ---- saves --------------------------------------------------------------------------------------------
  function setState(card, text, problem) {
    const state = card && card.querySelector(".save-state");
    if (!state) return;
    state.textContent = text;
    state.classList.toggle("is-problem", !!problem);
  }

  function swapCard(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    const fresh = tpl.content.firstElementChild;
    if (!fresh) return null;
    const old = document.getElementById(fresh.id);
    if (!old) return null;
    // A comment being typed in this card survives the swap (its own save comes when the expert is done).
    const typing = old.contains(document.activeElement) && document.activeElement.tagName === "TEXTAREA"
      ? document.activeElement : null;
    fresh.classList.toggle("is-focus", fresh.dataset.span === currentSpan);
    old.replaceWith(fresh);
    if (typing) {
      const area = fresh.querySelector("textarea");
      area.value = typing.value;
      area.focus({ preventScroll: true });
      area.setSelectionRange(typing.selectionStart, typing.selectionEnd);
    }
    return fresh;
  }

  const saves = new Saves({
    sent(job) { setState(cardOf(job.span), "saving…"); markBusy(); },
    acked(job, html) {
      swapCard(html);
      updateProgress();
      refreshFocus();
      queueMicrotask(markBusy);
    },
    failed(job, problem, dropped) {
      models.delete(job.span);
      if (problem.html) swapCard(problem.html); // 409: the card as stored
      markFailed(job, problem);
      // After a 409 the rest of the screen may have moved too (another tab, an undo): read it all again.
      if (problem.status === 409) queueMicrotask(() => resync().then(() => markFailed(job, problem)));
      updateProgress();
      say(problem.message + (dropped ? " (" + dropped + " later change(s) on this error were not sent)" : ""), "problem");
      queueMicrotask(markBusy);
    },
  });

  /** The card of a failed save says so, with a Retry button that sends the same change to the card as it is. */
  function markFailed(job, problem) {
    const card = cardOf(job.span);
    setState(card, "✗ not saved: " + problem.message, true);
    if (!card) return;
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "retry small";
    retry.textContent = "Retry";
    retry.addEventListener("click", () => {
      const fresh = cardOf(job.span);
      if (fresh && job.field === "occurrence") pickOccurrence(fresh, job.value);
      else if (fresh) send(fresh, job.field, job.value);
    });
    card.querySelector(".save-state").append(" ", retry);
  }

  /** Save `field` = `value` on `card`; returns the save's promise. */
  function send(card, field, value) {
    const m = modelOf(card);
    if (field === "corrected_severity") m.severity = value ? parseInt(value, 10) : parseInt(card.dataset.machineSeverity, 10) || 0;
    else if (field in m && typeof m[field] === "boolean") m[field] = value === "true";
    else m[field] = value;
    return saves.enqueue(card, field, value);
  }

  // ---- keys held while the screen moves ------------------------------------------------------------------
  let hold = null; // why keys wait: "advance" (a save that completes the card in focus) or "step" (undo/redo)
  let syncing = 0; // re-reads of the screen under way: keys wait for the stored state
  const held = [];
  function release(replay) {
    hold = null;
    if (!replay && held.length) {
      say(held.length + " key(s) typed after the failed save were not applied.", "problem");
      held.length = 0;
    }
    drain();
  }
  function drain() {
    while (!hold && !syncing && held.length) run(held.shift());
    markBusy();
  }

  // data-busy on #work says whether anything typed is still on its way (scripts and tests wait for "false").
  function markBusy() {
    work.dataset.busy = String(!!hold || syncing > 0 || held.length > 0 || !saves.idle());
  }

  /** Read the item again from the server (after every save is through) and show it; keys wait meanwhile. */
  function resync() {
    syncing += 1;
    markBusy();
    return saves.whenIdle()
      .then(() => resyncScreen(work))
      .then(() => { models.clear(); updateProgress(); refreshFocus(); })
      .catch((err) => say("Could not re-read this item: " + (err.message || "the server cannot be reached.")
        + " Reload the page before going on.", "problem"))
      .finally(() => { syncing -= 1; drain(); });
  }
  onRestored(resync);

  /** A verdict, flag or severity chip of the card in focus (the key's target is fixed here, now). */
  function pressChip(card, chip) {
    if (!card || !chip || !canEdit || chip.closest("fieldset[disabled]")) return;
    const field = chip.dataset.field;
    const m = modelOf(card);
    let value = chip.dataset.value;
    if (chip.classList.contains("flag")) value = m[field] ? "false" : "true";
    const before = isComplete(m);
    const span = card.dataset.span;
    const saving = send(card, field, value);
    const advance = autoAdvance && !before && isComplete(m) && span === currentSpan;
    if (!advance) return;
    hold = "advance";
    saving.then((result) => {
      if (result.ok && currentSpan === span) {
        const list = cards();
        const from = list.findIndex((c) => c.dataset.span === span);
        const next = list.findIndex((c, i) => i > from && !c.classList.contains("is-complete"));
        if (next >= 0) focusCard(next);
      }
      release(result.ok);
    });
  }

  /** An ambiguous card's pick: `value` is an occurrence index or "none"; saved at once like a verdict. The
   *  pick in flight is tracked in the card's model, so keys typed faster than the saves cycle from it. */
  function pickOccurrence(card, value) {
    if (!card || !canEdit || !card.dataset.occurrenceUrl) return;
    const m = modelOf(card);
    if (m.picked === undefined) m.picked = card.dataset.picked;
    m.picked = String(value);
    const n = parseInt(card.dataset.occurrences, 10);
    say(value === "none" ? "Picked: none of these; the location is not in the text."
      : "Picked occurrence " + (parseInt(value, 10) + 1) + " of " + n + ".");
    saves.enqueue(card, "occurrence", String(value), card.dataset.occurrenceUrl);
  }

  function cycleOccurrence() {
    const card = currentCard();
    if (!card || !card.dataset.occurrenceUrl) return;
    const m = modelOf(card);
    const now = m.picked === undefined ? card.dataset.picked : m.picked;
    const n = parseInt(card.dataset.occurrences, 10);
    const index = now === "none" || now === "" ? 0 : (parseInt(now, 10) + 1) % n;
    pickOccurrence(card, index);
  }

  function press(selector) {
    const card = currentCard();
    if (card) pressChip(card, card.querySelector(selector));
  }

  function changeSeverity(delta) {
    const card = currentCard();
    if (!card || !canEdit) return;
    const now = modelOf(card).severity || 3;
    if (delta === 0) { pressChip(card, card.querySelector('button.sev[data-severity="0"]')); return; }
    const next = Math.max(1, Math.min(5, now + delta));
    pressChip(card, card.querySelector('button.sev[data-severity="' + next + '"]'));
  }

  // Undo and redo change whatever the last action changed: they wait for every save, and keys wait for them.
  function step(url) {
    if (!canEdit) return;
    hold = "step";
    saves.whenIdle()
      .then(() => post(url, { seconds: "0" }))
      .then((answer) => {
        if (answer.status === 200) applyOob(answer.text);
        else if (answer.status !== 204) throw new Error(answer.text.slice(0, 300) || "undo failed");
        models.clear();
        updateProgress();
        refreshFocus();
        fire(answer.trigger);
        release(true);
      })
      .catch((err) => { say("Not done: " + (err.message || "the server cannot be reached."), "problem"); release(false); });
  }

  function applyOob(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    Array.from(tpl.content.children).forEach((el) => {
      const old = el.id && document.getElementById(el.id);
      if (!old) return;
      el.removeAttribute("hx-swap-oob");
      old.replaceWith(el);
      if (window.htmx) htmx.process(el);
    });
  }

  function fire(trigger) {
    Object.entries(trigger || {}).forEach(([name, detail]) =>
      document.body.dispatchEvent(new CustomEvent(name, { detail, bubbles: true })));
  }

  // ---- keyboard selection mode ----------------------------------------------------------------------------
  function enterSelectMode() {
    const root = outputText();
    if (!root) return;
    selectMode = true;
    root.classList.add("is-selecting");
    const card = currentCard();
    let at = 0;
    if (card && card.dataset.hasOffsets === "true") {
      const mark = root.querySelector("mark.is-focus");
      if (mark) at = parseInt(mark.dataset.o, 10);
    }
    const [node, off] = toPoint(at);
    const sel = window.getSelection();
    sel.removeAllRanges();
    const range = document.createRange();
    range.setStart(node, off);
    range.collapse(true);
    sel.addRange(range);
    root.focus({ preventScroll: true });
    say("Selecting: arrows move, Shift+arrows extend, Alt for words; a or Enter adds, Esc stops.");
  }

  function leaveSelectMode() {
    selectMode = false;
    const root = outputText();
    if (root) root.classList.remove("is-selecting");
  }

  function moveSelection(e) {
    const sel = window.getSelection();
    const dir = e.key === "ArrowLeft" || e.key === "ArrowUp" ? "backward" : "forward";
    const unit = e.key === "ArrowUp" || e.key === "ArrowDown" ? "line" : e.altKey || e.ctrlKey ? "word" : "character";
    sel.modify(e.shiftKey ? "extend" : "move", dir, unit);
  }

  // ---- mouse selections: snap to whole words, offer "Add error" beside them -------------------------------
  const addFloat = document.getElementById("add-at-selection");
  let floatRange = null;
  function hideFloat() { if (addFloat) addFloat.hidden = true; floatRange = null; }
  function showFloat(range) {
    if (!addFloat) return;
    const rect = window.getSelection().getRangeAt(0).getBoundingClientRect();
    floatRange = range;
    addFloat.hidden = false;
    const width = addFloat.offsetWidth || 130;
    addFloat.style.left = Math.max(4, Math.min(rect.left, window.innerWidth - width - 8)) + "px";
    const below = rect.bottom + 6;
    addFloat.style.top = (below + 40 < window.innerHeight ? below : Math.max(4, rect.top - 40)) + "px";
  }

  document.addEventListener("mouseup", (e) => {
    if (!canEdit || selectMode || (addFloat && addFloat.contains(e.target))) return;
    if (document.querySelector("dialog[open]")) return;
    const exact = e.altKey; // Alt keeps the selection exactly as dragged
    setTimeout(() => {
      const range = selectionOffsets();
      if (!range) { hideFloat(); return; }
      const snapped = exact ? range : snapToWords(outputChars(), range.start, range.end);
      if (!snapped) { hideFloat(); return; }
      if (snapped.start !== range.start || snapped.end !== range.end) selectOffsets(snapped.start, snapped.end);
      showFloat(snapped);
    }, 0);
  });
  if (addFloat) {
    addFloat.addEventListener("mousedown", (e) => e.preventDefault()); // keep the selection
    addFloat.addEventListener("click", () => openAddDialog());
  }
  document.querySelectorAll(".pane").forEach((p) => p.addEventListener("scroll", hideFloat, { passive: true }));

  // ---- adding a missed error ----------------------------------------------------------------------------
  const addDialog = document.getElementById("add-dialog");
  function openAddDialog() {
    if (!addDialog) return;
    const selected = selectionOffsets(); // keys stop before a word's space: the error is the words
    const range = (selected && trimSpaces(outputChars(), selected.start, selected.end)) || floatRange;
    hideFloat();
    if (!range) {
      say("Select some text in the output first (mouse, or press s and use Shift+arrows).", "problem");
      return;
    }
    document.getElementById("add-form").reset(); // a cancelled dialog leaves nothing behind
    document.getElementById("add-start").value = range.start;
    document.getElementById("add-end").value = range.end;
    document.getElementById("add-preview").textContent = outputChars().slice(range.start, range.end).join("");
    document.getElementById("add-range").textContent = "[" + range.start + "–" + range.end + "]";
    document.getElementById("add-problem").textContent = "";
    leaveSelectMode();
    addDialog.showModal();
    const first = document.getElementById("add-category");
    if (first) first.focus();
  }

  // In the add dialog a category's key picks it and Enter adds the error (outside the note field).
  if (addDialog) {
    addDialog.addEventListener("keydown", (e) => {
      const tag = (e.target.tagName || "").toLowerCase();
      if (tag === "textarea" || (tag === "input" && e.target.type === "text") || tag === "select") return;
      const radio = addDialog.querySelector('input[type="radio"][data-key="' + CSS.escape(e.key) + '"]');
      if (radio) { e.preventDefault(); radio.checked = true; radio.focus(); return; }
      if (e.key === "Enter") { e.preventDefault(); document.getElementById("add-form").requestSubmit(); }
    });
    addDialog.addEventListener("close", () => document.getElementById("add-form").reset());
  }

  // ---- screen keys --------------------------------------------------------------------------------------
  function openDialog(id) {
    const d = document.getElementById(id);
    if (d && !d.open) d.showModal();
  }

  function openGuidelines() {
    const body = document.getElementById("guidelines-body");
    if (body && !body.dataset.loaded) {
      htmx.ajax("GET", work.dataset.guidelinesUrl, { target: "#guidelines-body", swap: "outerHTML" });
    }
    openDialog("guidelines-dialog");
  }

  function go(url) { if (url) { flushTime(true); window.location.href = url; } }

  function finish() {
    const button = document.getElementById("finish-button");
    if (!button) return;
    hold = "step";
    saves.whenIdle().then(() => { button.click(); release(true); });
  }

  const KEYS = {
    "-": () => changeSeverity(-1), "=": () => changeSeverity(1), "+": () => changeSeverity(1),
    "0": () => changeSeverity(0),
    j: () => focusCard(currentIndex() + 1), ArrowDown: () => focusCard(currentIndex() + 1),
    k: () => focusCard(currentIndex() - 1), ArrowUp: () => focusCard(currentIndex() - 1),
    m: () => { const card = currentCard(); if (card && canEdit) card.querySelector("textarea").focus(); },
    u: () => step(work.dataset.undoUrl), U: () => step(work.dataset.redoUrl),
    s: enterSelectMode,
    a: openAddDialog,
    o: cycleOccurrence, O: () => pickOccurrence(currentCard(), "none"),
    f: finish, d: doneMarking,
    n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    g: openGuidelines,
    "?": () => openDialog("help-dialog"),
  };
  // The verdict and flag keys come from the study protocol (corpus/protocols/opennlgauge.py), which the page hands over
  // as JSON: each presses the chip of the error in focus that carries the same data-key.
  const keyMap = document.getElementById("sj-keys");
  Object.keys(keyMap ? JSON.parse(keyMap.textContent) : {}).forEach((key) => {
    if (Object.hasOwn(KEYS, key)) { console.warn("spanjudge: protocol key " + key + " is a screen key"); return; }
    KEYS[key] = () => press('[data-key="' + CSS.escape(key) + '"]');
  });

  function run(key) { const action = KEYS[key]; if (action) action(); }
  function dispatch(key) { if (hold || syncing) held.push(key); else run(key); markBusy(); }

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return; // dialogs handle their own keys (Esc closes)
    if (isTyping(e.target)) {
      const tag = e.target.tagName.toLowerCase();
      if (e.key === "Escape") { e.target.blur(); const c = currentCard(); if (c) c.focus({ preventScroll: true }); }
      else if (e.key === "Enter" && !e.shiftKey && tag === "textarea" && e.target.closest(".error-card")) {
        e.preventDefault();
        saveComment(e.target);
      }
      return;
    }
    if (selectMode) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); moveSelection(e); return; }
      if (e.key === "Escape") { e.preventDefault(); leaveSelectMode(); window.getSelection().removeAllRanges(); return; }
      if (e.key === "Enter" || e.key === "a") { e.preventDefault(); openAddDialog(); return; }
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); dispatch(e.shiftKey ? "U" : "u"); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); dispatch("U"); return; }
    if (withModifier(e)) return;
    if (KEYS[e.key]) { e.preventDefault(); dispatch(e.key); }
  });

  function saveComment(area) {
    const card = area.closest(".error-card");
    if (!card || !canEdit) return;
    if ((modelOf(card).comment ?? area.defaultValue) === area.value) return;
    send(card, "comment", area.value);
  }
  document.addEventListener("change", (e) => {
    if (e.target.matches && e.target.matches("#errors .error-card textarea")) saveComment(e.target);
  });

  // Clicking a chip saves like its key; clicking a card (or a mark in the output) moves the focus there.
  document.addEventListener("click", (e) => {
    const chip = e.target.closest && e.target.closest("#errors .error-card button[data-field]");
    const card = e.target.closest && e.target.closest("#errors .error-card");
    if (card && card.dataset.span !== currentSpan && !hold) focusCard(cards().indexOf(card), false);
    if (chip && card) { if (!hold && !syncing) pressChip(card, chip); else say("Wait a moment: the last change is being saved.");
      return; }
    const place = e.target.closest && e.target.closest("#errors .error-card button[data-occurrence]");
    if (place && card) { if (!hold && !syncing) pickOccurrence(card, place.dataset.occurrence); return; }
    if (card) return;
    const mark = e.target.closest && e.target.closest("#output-text mark[data-spans]");
    if (mark && mark.dataset.spans && window.getSelection().isCollapsed) focusSpan(mark.dataset.spans.split(" ")[0]);
  });

  // ---- htmx hooks (finish, add/edit/delete added errors, guidelines) -------------------------------------
  document.body.addEventListener("htmx:confirm", (e) => {
    // Finish by mouse also waits for the saves before it.
    if (e.detail.elt && e.detail.elt.id === "finish-button" && !saves.idle()) {
      e.preventDefault();
      saves.whenIdle().then(() => e.detail.issueRequest(true));
    }
  });
  document.body.addEventListener("htmx:configRequest", (e) => {
    if (e.detail.elt && e.detail.elt.hasAttribute && e.detail.elt.hasAttribute("data-send-seconds")) {
      e.detail.parameters.seconds = takeSeconds();
    }
  });
  document.body.addEventListener("htmx:afterSettle", () => { updateProgress(); refreshFocus(); });
  document.body.addEventListener("htmx:responseError", (e) => {
    const message = (e.detail.xhr && e.detail.xhr.responseText) || "Not saved: the server refused.";
    const inDialog = e.detail.elt.closest && e.detail.elt.closest("#add-dialog");
    if (inDialog) document.getElementById("add-problem").textContent = message.slice(0, 300);
    say(message.slice(0, 300), "problem");
  });
  document.body.addEventListener("htmx:sendError", () => say("Not saved: the server cannot be reached. Try again.", "problem"));
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const form = e.detail.elt;
    if (form && form.id === "add-form" && e.detail.successful) {
      addDialog.close();
      window.getSelection().removeAllRanges();
    }
    if (form && form.closest && form.closest(".edit-added") && e.detail.successful) {
      form.closest("details").open = false;
    }
  });
  document.body.addEventListener("sj:notice", (e) => say(e.detail.message));
  document.body.addEventListener("sj:undone", (e) => {
    if (e.detail.span) focusSpan(e.detail.span);
    say(e.detail.message, e.detail.reopened ? "problem" : undefined);
  });
  const undoButton = document.getElementById("undo-button");
  if (undoButton) undoButton.addEventListener("click", () => dispatch("u"));
  const redoButton = document.getElementById("redo-button");
  if (redoButton) redoButton.addEventListener("click", () => dispatch("U"));
  const autoBox = document.getElementById("auto-advance");
  if (autoBox) {
    autoBox.addEventListener("change", () => {
      autoAdvance = autoBox.checked;
      // Hand the keys back to the cards (a focused checkbox would swallow them).
      autoBox.blur();
      const card = currentCard();
      if (card) card.focus({ preventScroll: true });
    });
  }
  const cancel = document.getElementById("add-cancel");
  if (cancel) cancel.addEventListener("click", () => addDialog.close());
  const help = document.getElementById("help-button");
  if (help) help.addEventListener("click", () => openDialog("help-dialog"));
  const guidelinesLink = document.getElementById("guidelines-link");
  if (guidelinesLink) guidelinesLink.addEventListener("click", (e) => { e.preventDefault(); openGuidelines(); });

  // ---- working time ---------------------------------------------------------------------------------------
  // Seconds count only while the tab is visible and the annotator was active in the last two minutes.
  let pending = 0;
  let lastActive = Date.now();
  ["keydown", "mousedown", "mousemove", "scroll"].forEach((t) =>
    document.addEventListener(t, () => { lastActive = Date.now(); }, { passive: true }));
  setInterval(() => {
    if (document.visibilityState === "visible" && Date.now() - lastActive < 120000) pending += 1;
  }, 1000);
  function takeSeconds() { const s = pending; pending = 0; return s; }
  function flushTime(leaving) {
    if (!canEdit || pending <= 0) return;
    post(work.dataset.timeUrl, { seconds: String(takeSeconds()) }, { keepalive: !!leaving }).catch(() => {});
  }
  setInterval(() => flushTime(false), 30000);
  window.addEventListener("pagehide", () => flushTime(true));

  // Resume where the annotator stopped: the first error still missing a verdict.
  // On a phone the inputs start folded, so the text is the first thing below the bar.
  if (!wide.matches) document.querySelectorAll(".work-inputs details[open]").forEach((d) => { d.open = false; });
  updateProgress();
  focusCard(firstIncomplete(), wide.matches); // on a phone the page opens at the top
  // Keys are heard from here on: scripts and tests wait for data-ready before they type.
  work.dataset.ready = "true";
  markBusy();
}
