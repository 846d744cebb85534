// spanjudge ESA screen: error spans as Minor (w) or Major (e), selected with the mouse or by keys (s, then
// Shift+arrows); o marks content missing at the end; j/k focus a span, which w/e re-grade, r resizes and x
// deletes; d says the spans are done, and only then the 0-100 slider takes arrows, PageUp/PageDown, Home/End and
// digits. Every change is saved at once, in order, with the milliseconds since the previous action. No inline
// script: the severities and the slider's steps come as json_script.
import { post } from "../lib/http.js";
import { isTyping, withModifier } from "../lib/keys.js";
import { outputText, selectionOffsets, toPoint, outputChars, selectOffsets, snapToWords, trimSpaces } from "./offsets.js";
import { onRestored, resyncScreen } from "./resync.js";

const work = document.getElementById("work");
if (work) start();

function start() {
  const canEdit = work.dataset.canEdit === "true";
  const severities = JSON.parse(document.getElementById("sj-esa-severities").textContent);
  const steps = JSON.parse(document.getElementById("sj-esa-keys").textContent);
  const severityByKey = Object.fromEntries(severities.map((s) => [s.key, s.value]));
  let range = null;         // the selection {start, end} in code points, as the page counts them
  let missingPending = false;
  let focusedId = null;     // the span in focus (its id), kept across the swaps
  let selectMode = false;
  let resize = null;        // {id, start, end} while a span is being resized
  let pendingScore = null;  // a score typed but not yet sent
  let scoreTimer = null;
  let digits = "";          // digits typed for the score
  let digitsTimer = null;
  let inFlight = 0;
  let syncing = 0;          // re-reads of the screen under way (after Back or a 409): keys wait for them
  let chain = Promise.resolve();
  let lastAction = performance.now();

  const flash = document.getElementById("flash");
  let flashTimer = null;
  function say(message, kind) {
    flash.textContent = message; // textContent: messages may quote dataset text
    flash.className = "flash is-shown" + (kind ? " flash-" + kind : "");
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { flash.className = "flash"; }, kind === "problem" ? 8000 : 3000);
  }
  function markBusy() { work.dataset.busy = String(inFlight > 0 || syncing > 0 || pendingScore !== null); }
  markBusy();

  const scoreBox = () => document.getElementById("esa-score");
  const slider = () => document.getElementById("esa-slider");
  const spansDone = () => scoreBox().dataset.spansDone === "true";
  const spanItems = () => Array.from(document.querySelectorAll("#esa-spans li.esa-span"));
  const itemOf = (id) => spanItems().find((li) => li.dataset.spanId === String(id)) || null;
  function msSinceLast() {
    const now = performance.now();
    const ms = Math.round(now - lastAction);
    lastAction = now;
    return String(ms);
  }

  // ---- what the picker says and which span is in focus ----------------------------------------------------
  function show() {
    const step = document.getElementById("esa-step");
    if (step) {
      const selected = document.getElementById("esa-selected");
      selected.textContent = range ? outputChars().slice(range.start, range.end).join("") : missingPending ? "[missing]" : "—";
      if (spansDone()) step.textContent = "Spans done. Set the score: arrows, PageUp/PageDown, Home/End or digits; f finishes.";
      else if (resize) step.textContent = "Resizing: arrows move the end, Shift+arrows the start (Alt: by word); Enter saves, Esc cancels.";
      else if (missingPending) step.textContent = "Content missing: press w (Minor) or e (Major).";
      else if (range) step.textContent = "Press w (Minor) or e (Major) for the selection.";
      else if (focusedId) step.textContent = "Span in focus: w / e re-grade it, r resizes, x deletes; Esc leaves it.";
      else step.textContent = "Select an error span, then press w (Minor) or e (Major); o if content is missing; d when done.";
    }
    work.dataset.step = spansDone() ? "score" : resize ? "resize" : missingPending ? "missing" : range ? "severity"
      : focusedId ? "focus" : "select";
    const items = spanItems();
    if (focusedId && !itemOf(focusedId)) focusedId = null;
    items.forEach((li) => li.classList.toggle("is-focus", li.dataset.spanId === String(focusedId)));
    document.querySelectorAll("#output [data-added]").forEach((el) => {
      el.classList.toggle("is-focus", !!focusedId && el.dataset.added.split(" ").includes(String(focusedId)));
    });
    work.dataset.focus = focusedId ? String(focusedId) : "";
  }

  function clearSelection() {
    range = null; missingPending = false; selectMode = false;
    const root = outputText();
    if (root) root.classList.remove("esa-selecting");
    window.getSelection().removeAllRanges();
  }

  // ---- saving, in order --------------------------------------------------------------------------------------
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
    bindScore();
  }
  function fire(trigger) {
    Object.entries(trigger || {}).forEach(([name, detail]) =>
      document.body.dispatchEvent(new CustomEvent(name, { detail, bubbles: true })));
  }
  document.body.addEventListener("sj:notice", (e) => say(e.detail.message));
  document.body.addEventListener("sj:undone", (e) => say(e.detail.message));
  document.body.addEventListener("sj:problem", (e) => say(e.detail.message, "problem"));
  document.body.addEventListener("htmx:responseError", (e) => {
    say(((e.detail.xhr && e.detail.xhr.responseText) || "Not saved: the server refused.").slice(0, 300), "problem");
  });

  /** Send one change after the ones before it; resolves to true when the server took it. */
  function send(url, fields) {
    if (!canEdit) return Promise.resolve(false);
    inFlight += 1;
    markBusy();
    const job = chain.then(() => post(url, fields)
      .then((answer) => {
        if (answer.status === 200) applyOob(answer.text);
        else if (answer.status !== 204 && !answer.trigger["sj:problem"]) say(answer.text.slice(0, 300) || "Not saved.", "problem");
        fire(answer.trigger);
        if (answer.status === 409) resync(); // the item changed meanwhile: show it as stored before the next key
        return answer.status === 200;
      })
      .catch(() => { say("Not saved: the server cannot be reached. Try again.", "problem"); return false; })
      .finally(() => { inFlight -= 1; markBusy(); show(); }));
    chain = job.then(() => undefined);
    return job;
  }

  /** Read the item again from the server after the changes before it, and show it as stored. */
  function resync() {
    syncing += 1;
    markBusy();
    const job = chain.then(() => resyncScreen(work))
      .then(() => { clearSelection(); resize = null; bindScore(); })
      .catch((err) => say("Could not re-read this item: " + (err.message || "the server cannot be reached.")
        + " Reload the page before going on.", "problem"))
      .finally(() => { syncing -= 1; markBusy(); show(); });
    chain = job.then(() => undefined);
    return job;
  }
  onRestored(resync);

  function pickSeverity(value) {
    if (!canEdit || spansDone()) return;
    if (resize) return;
    if (missingPending) {
      missingPending = false;
      send(work.dataset.missingUrl, { severity: value, ms: msSinceLast() });
    } else if (range) {
      const fields = { start: range.start, end: range.end, severity: value, ms: msSinceLast() };
      clearSelection();
      send(work.dataset.addUrl, fields);
    } else if (focusedId) {
      const li = itemOf(focusedId);
      if (li && li.dataset.severity !== value) send(li.dataset.changeUrl, { severity: value, ms: msSinceLast() });
    } else {
      say("Select some text first (mouse, or s), or focus a span with j / k.", "problem");
    }
    show();
  }

  function markMissing() {
    if (!canEdit || spansDone()) return;
    const existing = spanItems().find((li) => li.dataset.missing === "true");
    if (existing) { focusedId = existing.dataset.spanId; range = null; show(); say("Missing content is marked: w / e re-grade it, x deletes it."); return; }
    clearSelection();
    focusedId = null;
    missingPending = true;
    show();
  }

  function deleteFocused() {
    if (!canEdit || spansDone() || !focusedId) return;
    const li = itemOf(focusedId);
    if (!li) return;
    const items = spanItems();
    const next = items[items.indexOf(li) + 1] || items[items.indexOf(li) - 1];
    focusedId = next ? next.dataset.spanId : null;
    send(li.dataset.deleteUrl, { ms: msSinceLast() });
  }

  function moveFocus(delta) {
    const items = spanItems();
    if (!items.length) return;
    clearSelection();
    const at = items.findIndex((li) => li.dataset.spanId === String(focusedId));
    const next = at < 0 ? (delta > 0 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, at + delta));
    focusedId = items[next].dataset.spanId;
    items[next].scrollIntoView({ block: "nearest" });
    show();
  }

  function step(url) {
    if (!canEdit || spansDone()) return;
    send(url, { seconds: "0" });
  }

  // ---- resizing the focused span by keys ---------------------------------------------------------------------
  function startResize() {
    if (!canEdit || spansDone() || !focusedId) return;
    const li = itemOf(focusedId);
    if (!li || li.dataset.missing === "true") { say("Missing content has no place in the text to resize.", "problem"); return; }
    resize = { id: li.dataset.spanId, start: parseInt(li.dataset.start, 10), end: parseInt(li.dataset.end, 10) };
    selectOffsets(resize.start, resize.end);
    show();
  }
  const WORD = /[\p{L}\p{M}\p{N}_]/u;
  function wordStep(chars, at, dir) {
    let i = at;
    if (dir > 0) { while (i < chars.length && !WORD.test(chars[i])) i++; while (i < chars.length && WORD.test(chars[i])) i++; }
    else { while (i > 0 && !WORD.test(chars[i - 1])) i--; while (i > 0 && WORD.test(chars[i - 1])) i--; }
    return i;
  }
  function resizeKey(e) {
    const chars = outputChars();
    const dir = e.key === "ArrowLeft" || e.key === "ArrowUp" ? -1 : 1;
    const side = e.shiftKey ? "start" : "end";
    const at = resize[side];
    const moved = e.altKey || e.ctrlKey ? wordStep(chars, at, dir) : at + dir;
    const next = { ...resize, [side]: Math.max(0, Math.min(chars.length, moved)) };
    if (next.start >= next.end) return;
    resize = next;
    selectOffsets(resize.start, resize.end);
    show();
  }
  function saveResize() {
    const li = itemOf(resize.id);
    const fields = { start: resize.start, end: resize.end, ms: msSinceLast() };
    resize = null;
    window.getSelection().removeAllRanges();
    if (li && (String(fields.start) !== li.dataset.start || String(fields.end) !== li.dataset.end)) send(li.dataset.changeUrl, fields);
    show();
  }

  // ---- selecting: the mouse (snapped to words) or the keyboard ---------------------------------------------
  document.addEventListener("mouseup", (e) => {
    if (!canEdit || selectMode || resize || spansDone() || document.querySelector("dialog[open]")) return;
    if (e.target.closest && e.target.closest("#esa-picker, #esa-spans, #esa-score")) return;
    const exact = e.altKey;
    setTimeout(() => {
      const r = selectionOffsets();
      if (!r) return;
      const snapped = exact ? r : snapToWords(outputChars(), r.start, r.end);
      if (!snapped) return;
      if (snapped.start !== r.start || snapped.end !== r.end) selectOffsets(snapped.start, snapped.end);
      range = snapped; missingPending = false; focusedId = null;
      show();
    }, 0);
  });

  function enterSelectMode() {
    if (spansDone()) return;
    const root = outputText();
    selectMode = true; missingPending = false; focusedId = null;
    root.classList.add("esa-selecting");
    const [node, off] = toPoint(range ? range.start : 0);
    const sel = window.getSelection();
    sel.removeAllRanges();
    const r = document.createRange();
    r.setStart(node, off);
    r.collapse(true);
    sel.addRange(r);
    root.focus({ preventScroll: true });
    say("Selecting: arrows move, Shift+arrows extend, Alt for words; Enter takes the selection, Esc stops.");
    show();
  }
  function moveSelection(e) {
    const sel = window.getSelection();
    const dir = e.key === "ArrowLeft" || e.key === "ArrowUp" ? "backward" : "forward";
    const unit = e.key === "ArrowUp" || e.key === "ArrowDown" ? "line" : e.altKey || e.ctrlKey ? "word" : "character";
    sel.modify(e.shiftKey ? "extend" : "move", dir, unit);
  }
  function takeSelection() {
    const r = selectionOffsets();
    selectMode = false;
    outputText().classList.remove("esa-selecting");
    const trimmed = r && trimSpaces(outputChars(), r.start, r.end); // keys stop before a word's space
    if (!trimmed) { say("Nothing selected: Shift+arrows extend the selection.", "problem"); return; }
    if (trimmed.start !== r.start || trimmed.end !== r.end) selectOffsets(trimmed.start, trimmed.end);
    range = trimmed;
    show();
  }

  // ---- the score ---------------------------------------------------------------------------------------------
  function showScore(value) {
    const out = document.getElementById("esa-score-value");
    const input = slider();
    if (input) { input.value = String(value); input.setAttribute("aria-valuetext", String(value)); }
    if (out) out.textContent = String(value);
    scoreBox().dataset.score = String(value);
  }
  function currentScore() {
    const stored = scoreBox().dataset.score;
    if (pendingScore !== null) return pendingScore;
    return stored === "" ? null : parseInt(stored, 10);
  }
  function setScore(value) {
    if (!canEdit || !spansDone()) { say("First the spans: press d when they are done, then the score.", "problem"); return; }
    const v = Math.max(0, Math.min(100, Math.round(value)));
    pendingScore = v;
    showScore(v);
    markBusy();
    clearTimeout(scoreTimer);
    scoreTimer = setTimeout(sendScore, 250);
  }
  function sendScore() {
    clearTimeout(scoreTimer);
    if (pendingScore === null) return chain;
    const fields = { score: String(pendingScore), ms: msSinceLast() };
    pendingScore = null;
    return send(work.dataset.scoreUrl, fields);
  }
  function scoreKey(e) {
    const base = currentScore() === null ? 50 : currentScore();
    const moves = { ArrowLeft: -steps.step, ArrowDown: -steps.step, ArrowRight: steps.step, ArrowUp: steps.step,
                    PageDown: -steps.page, PageUp: steps.page };
    if (e.key in moves) { setScore(base + moves[e.key]); return true; }
    if (e.key === "Home") { setScore(0); return true; }
    if (e.key === "End") { setScore(100); return true; }
    if (/^[0-9]$/.test(e.key)) {
      clearTimeout(digitsTimer);
      digits = (digits + e.key).replace(/^0+(?=\d)/, "");
      if (parseInt(digits, 10) > 100) digits = e.key;
      setScore(parseInt(digits, 10));
      digitsTimer = setTimeout(() => { digits = ""; }, 1200);
      return true;
    }
    return false;
  }
  function bindScore() {
    const input = slider();
    if (input && !input.dataset.bound) {
      input.dataset.bound = "true";
      input.addEventListener("input", () => setScore(parseInt(input.value, 10)));
      // the page's own keys drive the slider, so a focused slider does not move twice
      input.addEventListener("keydown", (e) => { if (e.key.startsWith("Arrow") || e.key.startsWith("Page") || e.key === "Home" || e.key === "End") e.preventDefault(); });
    }
    const done = document.getElementById("esa-done-button");
    if (done && !done.dataset.bound) { done.dataset.bound = "true"; done.addEventListener("click", spansAreDone); }
  }

  function spansAreDone() {
    if (!canEdit || spansDone()) return;
    if (resize || selectMode || range || missingPending) { say("Finish or cancel (Esc) the span in hand first.", "problem"); return; }
    focusedId = null;
    // the span phase: from the page's load to now (the milliseconds the study reports per arm)
    const fields = { ms: String(Math.round(performance.now())), seconds: String(takeSeconds()) };
    lastAction = performance.now();
    send(work.dataset.doneUrl, fields).then((ok) => {
      if (ok && slider()) slider().focus({ preventScroll: true });
    });
  }

  // ---- keys ----------------------------------------------------------------------------------------------------
  function openDialog(id) { const d = document.getElementById(id); if (d && !d.open) d.showModal(); }
  function openGuidelines() {
    const body = document.getElementById("guidelines-body");
    if (body && !body.dataset.loaded) htmx.ajax("GET", work.dataset.guidelinesUrl, { target: "#guidelines-body", swap: "outerHTML" });
    openDialog("guidelines-dialog");
  }
  function go(url) { if (url) { flushTime(true); window.location.href = url; } }
  function finish() {
    const button = document.getElementById("finish-button");
    if (!button) return;
    sendScore();
    chain.then(() => button.click());
  }

  const SPAN_KEYS = {
    s: () => canEdit && enterSelectMode(),
    j: () => moveFocus(1), k: () => moveFocus(-1),
    r: startResize, x: deleteFocused,
    [work.dataset.missingKey]: markMissing,
    d: spansAreDone,
    u: () => step(work.dataset.undoUrl), U: () => step(work.dataset.redoUrl),
  };
  Object.entries(severityByKey).forEach(([key, value]) => { SPAN_KEYS[key] = () => pickSeverity(value); });
  const PAGE_KEYS = {
    f: finish, n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    g: openGuidelines, "?": () => openDialog("help-dialog"),
    Escape: () => { clearSelection(); resize = null; focusedId = null; show(); },
  };
  // contrastive: the next output of the screen takes the focus (its own ESA screen, this one beside it)
  if (work.dataset.switchUrl) PAGE_KEYS.c = () => go(work.dataset.switchUrl);

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return;
    if (syncing) { e.preventDefault(); say("One moment: this item is being read again from the server."); return; }
    if (isTyping(e.target) && e.target.id !== "esa-slider") {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (resize) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); resizeKey(e); return; }
      if (e.key === "Enter") { e.preventDefault(); saveResize(); return; }
      if (e.key === "Escape") { e.preventDefault(); resize = null; window.getSelection().removeAllRanges(); show(); return; }
      return;
    }
    if (selectMode) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); moveSelection(e); return; }
      if (e.key === "Enter") { e.preventDefault(); takeSelection(); return; }
      if (e.key === "Escape") { e.preventDefault(); clearSelection(); show(); return; }
      if (severityByKey[e.key]) { e.preventDefault(); takeSelection(); pickSeverity(severityByKey[e.key]); return; }
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? work.dataset.redoUrl : work.dataset.undoUrl); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); step(work.dataset.redoUrl); return; }
    if (spansDone() && canEdit && !e.ctrlKey && !e.metaKey && scoreKey(e)) { e.preventDefault(); return; }
    if (withModifier(e)) return;
    const action = PAGE_KEYS[e.key] || (!spansDone() && SPAN_KEYS[e.key]);
    if (action) { e.preventDefault(); action(); }
  });

  // Mouse twins of the keys.
  document.addEventListener("click", (e) => {
    if (!e.target.closest) return;
    const sev = e.target.closest(".esa-severities button[data-severity]");
    if (sev) { pickSeverity(sev.dataset.severity); return; }
    if (e.target.closest("#esa-missing-button") || e.target.closest("#esa-missing-token")) { markMissing(); return; }
    const li = e.target.closest("#esa-spans li.esa-span");
    if (li) { clearSelection(); focusedId = li.dataset.spanId; show(); return; }
    const mark = e.target.closest("#output-text mark[data-added]");
    if (mark && window.getSelection().isCollapsed) { clearSelection(); focusedId = mark.dataset.added.split(" ")[0]; show(); }
  });
  const undoButton = document.getElementById("undo-button");
  if (undoButton) undoButton.addEventListener("click", () => step(work.dataset.undoUrl));
  const redoButton = document.getElementById("redo-button");
  if (redoButton) redoButton.addEventListener("click", () => step(work.dataset.redoUrl));
  const help = document.getElementById("help-button");
  if (help) help.addEventListener("click", () => openDialog("help-dialog"));
  const guidelinesLink = document.getElementById("guidelines-link");
  if (guidelinesLink) guidelinesLink.addEventListener("click", (e) => { e.preventDefault(); openGuidelines(); });

  // ---- working time (as on the other screens) ----------------------------------------------------------------
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
  document.body.addEventListener("htmx:configRequest", (e) => {
    if (e.detail.elt && e.detail.elt.hasAttribute && e.detail.elt.hasAttribute("data-send-seconds")) {
      e.detail.parameters.seconds = takeSeconds();
    }
  });
  setInterval(() => flushTime(false), 30000);
  window.addEventListener("pagehide", () => flushTime(true));

  bindScore();
  show();
}
