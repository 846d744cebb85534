// spanjudge annotation screen: keyboard-first judging, exact offsets from DOM selections, undo/redo of every
// action, mouse selections that snap to words, working time. No inline script: the page hands data over in
// json_script tags (the protocol's key map, the campaign's categories).
(function () {
  "use strict";

  const work = document.getElementById("work");
  if (!work) return;
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
  // One card per error even while htmx is swapping a card (old and new may briefly both be in the page).
  function cards() {
    return Array.from(document.querySelectorAll("#errors .error-card")).filter((c) => document.getElementById(c.id) === c);
  }

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
    const marks = document.querySelectorAll("#output-text mark");
    let first = true;
    marks.forEach((m) => {
      const on = spanId && (m.dataset.spans || "").split(" ").includes(spanId);
      m.classList.toggle("is-focus", !!on);
      m.classList.toggle("is-focus-start", !!on && first);
      if (on && first) first = false;
    });
  }

  // Re-apply the focus marks after a swap; never move the focus (a card mid-swap may be briefly missing).
  function refreshFocus(takeFocus) {
    const card = currentCard();
    if (!card) return;
    cards().forEach((c) => c.classList.toggle("is-focus", c === card));
    highlightFocus(card.dataset.span);
    if (takeFocus) card.focus({ preventScroll: true });
  }

  function currentCard() { return currentSpan ? document.getElementById("error-" + currentSpan) : null; }

  function focusSpan(spanId) {
    const list = cards();
    const i = list.findIndex((c) => c.dataset.span === String(spanId));
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
    const list = cards();
    const i = list.findIndex((c) => !c.classList.contains("is-complete"));
    return i < 0 ? 0 : i;
  }

  // ---- selection <-> offsets ------------------------------------------------------------------------------
  const outputText = () => document.getElementById("output-text");

  // A boundary point (node, offset) inside #output-text -> character offset into the output's plain text.
  function toOffset(node, offset) {
    const root = outputText();
    if (!root || !root.contains(node)) return null;
    if (node.nodeType === Node.TEXT_NODE) {
      const seg = node.parentElement.closest("[data-o]");
      return parseInt(seg.dataset.o, 10) + offset;
    }
    const segs = node === root ? Array.from(root.children) : [node.closest("[data-o]")];
    if (node === root) {
      if (offset >= segs.length) return parseInt(root.dataset.length, 10);
      return parseInt(segs[offset].dataset.o, 10);
    }
    const seg = segs[0];
    return parseInt(seg.dataset.o, 10) + (offset > 0 ? seg.textContent.length : 0);
  }

  function selectionOffsets() {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const start = toOffset(range.startContainer, range.startOffset);
    const end = toOffset(range.endContainer, range.endOffset);
    if (start === null || end === null || start >= end) return null;
    return { start, end };
  }

  // Character offset -> a DOM boundary point (used to place the keyboard caret).
  function toPoint(offset) {
    const segs = Array.from(outputText().children);
    for (const seg of segs) {
      const o = parseInt(seg.dataset.o, 10);
      const len = seg.textContent.length;
      if (offset >= o && offset <= o + len && seg.firstChild) return [seg.firstChild, offset - o];
    }
    const last = segs[segs.length - 1];
    return last && last.firstChild ? [last.firstChild, last.textContent.length] : [outputText(), 0];
  }

  function outputString() {
    return Array.from(outputText().children).map((s) => s.textContent).join("");
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
  const WORD = /[\p{L}\p{N}_'’-]/u;
  const EDGE = /['’-]/;

  // Trim spaces and punctuation at both ends, then grow to whole words ("Olive Grov" -> "Olive Grove",
  // "restaurant," -> "restaurant"). Null when nothing word-like is selected.
  function snapToWords(text, start, end) {
    while (start < end && !WORD.test(text[start])) start++;
    while (end > start && !WORD.test(text[end - 1])) end--;
    if (start >= end) return null;
    while (start > 0 && WORD.test(text[start - 1])) start--;
    while (end < text.length && WORD.test(text[end])) end++;
    while (start < end && EDGE.test(text[start])) start++;
    while (end > start && EDGE.test(text[end - 1])) end--;
    return start < end ? { start, end } : null;
  }

  function selectOffsets(start, end) {
    const [a, ao] = toPoint(start);
    const [b, bo] = toPoint(end);
    const range = document.createRange();
    range.setStart(a, ao);
    range.setEnd(b, bo);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

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
      const snapped = exact ? range : snapToWords(outputString(), range.start, range.end);
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
  function openAddDialog() {
    const dialog = document.getElementById("add-dialog");
    if (!dialog) return;
    const range = selectionOffsets() || floatRange;
    hideFloat();
    if (!range) {
      say("Select some text in the output first (mouse, or press s and use Shift+arrows).", "problem");
      return;
    }
    const text = outputString().slice(range.start, range.end);
    document.getElementById("add-start").value = range.start;
    document.getElementById("add-end").value = range.end;
    document.getElementById("add-preview").textContent = text;
    document.getElementById("add-range").textContent = "[" + range.start + "–" + range.end + "]";
    document.getElementById("add-problem").textContent = "";
    leaveSelectMode();
    dialog.showModal();
    const first = document.getElementById("add-category");
    if (first) first.focus();
  }

  // In the add dialog a category's key picks it and Enter adds the error (outside the note field).
  const addDialog = document.getElementById("add-dialog");
  if (addDialog) {
    addDialog.addEventListener("keydown", (e) => {
      const tag = (e.target.tagName || "").toLowerCase();
      if (tag === "textarea" || (tag === "input" && e.target.type === "text") || tag === "select") return;
      const radio = addDialog.querySelector('input[type="radio"][data-key="' + CSS.escape(e.key) + '"]');
      if (radio) { e.preventDefault(); radio.checked = true; radio.focus(); return; }
      if (e.key === "Enter") { e.preventDefault(); document.getElementById("add-form").requestSubmit(); }
    });
  }

  // ---- actions ------------------------------------------------------------------------------------------
  // Keys pressed while a save is on its way wait for it, so each acts on the freshly rendered card.
  let inflight = 0;
  const waiting = [];
  function whenIdle(action) {
    waiting.push(action); // always through the queue, so a key never overtakes one pressed before it
    drain();
  }
  function drain() { while (inflight === 0 && waiting.length) waiting.shift()(); }

  // Send the chip's request directly rather than clicking it: a card swapped in a moment ago may not be
  // wired up by htmx yet, and a key must never be lost.
  function press(selector) {
    const card = currentCard();
    if (!card || !canEdit) return;
    const button = card.querySelector(selector);
    if (!button || button.disabled || button.closest("fieldset[disabled]")) return;
    const values = JSON.parse(button.getAttribute("hx-vals") || "{}");
    const cardVals = JSON.parse(card.getAttribute("hx-vals") || "{}");
    values.number = card.dataset.number;
    values.style = cardVals.style || "0";
    // Count the request from now, not from htmx's beforeRequest, so the next queued key cannot slip in between.
    inflight += 1;
    htmx.ajax("POST", button.getAttribute("hx-post"), { source: card, target: "#" + card.id, swap: "outerHTML", values })
      .finally(() => { inflight = Math.max(0, inflight - 1); setTimeout(drain, 30); });
  }

  function changeSeverity(delta) {
    const card = currentCard();
    if (!card) return;
    const now = parseInt(card.dataset.severity, 10) || 3;
    const next = delta === 0 ? 0 : Math.max(1, Math.min(5, now + delta));
    press('button.sev[data-severity="' + next + '"]');
  }

  function undo() {
    if (!canEdit) return;
    htmx.ajax("POST", work.dataset.undoUrl, { swap: "none", source: work });
  }
  function redo() {
    if (!canEdit) return;
    htmx.ajax("POST", work.dataset.redoUrl, { swap: "none", source: work });
  }

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

  const KEYS = {
    "-": () => changeSeverity(-1), "=": () => changeSeverity(1), "+": () => changeSeverity(1),
    "0": () => changeSeverity(0),
    j: () => focusCard(currentIndex() + 1), ArrowDown: () => focusCard(currentIndex() + 1),
    k: () => focusCard(currentIndex() - 1), ArrowUp: () => focusCard(currentIndex() - 1),
    m: () => { const card = currentCard(); if (card && canEdit) card.querySelector("textarea").focus(); },
    u: undo, U: redo,
    s: enterSelectMode,
    a: openAddDialog,
    f: () => { const b = document.getElementById("finish-button"); if (b) b.click(); },
    n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    g: openGuidelines,
    "?": () => openDialog("help-dialog"),
  };
  // The verdict and flag keys come from the study protocol (corpus/protocol.py), which the page hands over
  // as JSON: each presses the chip of the error in focus that carries the same data-key.
  const keyMap = document.getElementById("sj-keys");
  Object.keys(keyMap ? JSON.parse(keyMap.textContent) : {}).forEach((key) => {
    if (Object.hasOwn(KEYS, key)) { console.warn("spanjudge: protocol key " + key + " is a screen key"); return; }
    KEYS[key] = () => press('[data-key="' + CSS.escape(key) + '"]');
  });

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return; // dialogs handle their own keys (Esc closes)
    const tag = (e.target.tagName || "").toLowerCase();
    const typing = tag === "input" || tag === "textarea" || tag === "select" || e.target.isContentEditable;
    if (typing) {
      if (e.key === "Escape") { e.target.blur(); const c = currentCard(); if (c) c.focus({ preventScroll: true }); }
      else if (e.key === "Enter" && !e.shiftKey && tag === "textarea" && e.target.closest(".error-card")) {
        e.preventDefault();
        e.target.dispatchEvent(new Event("change", { bubbles: true }));
      }
      return;
    }
    if (selectMode) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); moveSelection(e); return; }
      if (e.key === "Escape") { e.preventDefault(); leaveSelectMode(); window.getSelection().removeAllRanges(); return; }
      if (e.key === "Enter" || e.key === "a") { e.preventDefault(); openAddDialog(); return; }
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); whenIdle(e.shiftKey ? redo : undo); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); whenIdle(redo); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const action = KEYS[e.key];
    if (action) { e.preventDefault(); whenIdle(action); }
  });

  // Clicking a card (or a mark in the output) moves the focus there too.
  document.addEventListener("click", (e) => {
    const card = e.target.closest && e.target.closest("#errors .error-card");
    if (card) { if (card.dataset.span !== currentSpan) focusCard(cards().indexOf(card), false); return; }
    const mark = e.target.closest && e.target.closest("#output-text mark[data-spans]");
    if (mark && mark.dataset.spans && window.getSelection().isCollapsed) focusSpan(mark.dataset.spans.split(" ")[0]);
  });

  // ---- htmx hooks -----------------------------------------------------------------------------------------
  document.body.addEventListener("htmx:configRequest", (e) => {
    if (e.detail.elt && e.detail.elt.hasAttribute && e.detail.elt.hasAttribute("data-send-seconds")) {
      e.detail.parameters.seconds = takeSeconds();
    }
  });
  let advanceFrom = null; // the card whose save may complete it (auto-advance moves on from it)
  document.body.addEventListener("htmx:beforeRequest", (e) => {
    inflight += 1;
    const card = e.detail.elt.closest && e.detail.elt.closest(".error-card");
    if (card && !card.classList.contains("is-complete")) advanceFrom = card.dataset.span;
    if (card) { const s = card.querySelector(".save-state"); if (s) s.textContent = "saving…"; }
  });
  document.body.addEventListener("htmx:afterSettle", () => {
    updateProgress();
    refreshFocus(document.activeElement === document.body || !document.activeElement);
    const card = currentCard();
    if (autoAdvance && advanceFrom && card && card.dataset.span === advanceFrom && card.classList.contains("is-complete")) {
      advanceFrom = null;
      const list = cards();
      const from = list.indexOf(card);
      const next = list.findIndex((c, i) => i > from && !c.classList.contains("is-complete"));
      if (next >= 0) focusCard(next);
    }
    setTimeout(drain, 0); // queued keys run once the new card is in place and wired up
  });
  document.body.addEventListener("htmx:responseError", (e) => {
    const message = (e.detail.xhr && e.detail.xhr.responseText) || "Not saved: the server refused.";
    const inDialog = e.detail.elt.closest && e.detail.elt.closest("#add-dialog");
    if (inDialog) document.getElementById("add-problem").textContent = message.slice(0, 300);
    const card = e.detail.elt.closest && e.detail.elt.closest(".error-card");
    if (card) { const s = card.querySelector(".save-state"); if (s) s.textContent = "✗ not saved"; }
    say(message.slice(0, 300), "problem");
  });
  document.body.addEventListener("htmx:sendError", () => say("Not saved: the server cannot be reached. Try again.", "problem"));
  document.body.addEventListener("htmx:afterRequest", (e) => {
    inflight = Math.max(0, inflight - 1);
    // Answers without a swap (errors, 204, OOB-only) settle nothing: let queued keys go after a moment.
    setTimeout(drain, 150);
    const form = e.detail.elt;
    if (form && form.id === "add-form" && e.detail.successful) {
      document.getElementById("add-dialog").close();
      form.reset();
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
  if (undoButton) undoButton.addEventListener("click", () => whenIdle(undo));
  const redoButton = document.getElementById("redo-button");
  if (redoButton) redoButton.addEventListener("click", () => whenIdle(redo));
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
  if (cancel) cancel.addEventListener("click", () => document.getElementById("add-dialog").close());
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
    const body = new URLSearchParams({ seconds: String(takeSeconds()) });
    const token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    fetch(work.dataset.timeUrl, {
      method: "POST", body, keepalive: !!leaving, credentials: "same-origin",
      headers: { "X-CSRFToken": token || "" },
    }).catch(() => {});
  }
  setInterval(() => flushTime(false), 30000);
  window.addEventListener("pagehide", () => flushTime(true));

  // Resume where the annotator stopped: the first error still missing a verdict.
  // On a phone the inputs start folded, so the text is the first thing below the bar.
  if (!wide.matches) document.querySelectorAll(".work-inputs details[open]").forEach((d) => { d.open = false; });
  updateProgress();
  focusCard(firstIncomplete(), wide.matches); // on a phone the page opens at the top
})();
