// spanjudge side-by-side screen (a comparison unit): 1 / 2 say which output is better, t a tie, r writes why (Esc
// leaves the box, the reason is saved when it does or after a pause), x moves the focus to the other output, s
// selects a stretch of the output in focus (arrows, Shift+arrows; or the mouse) and m marks it as a span that backs
// the choice; each change is saved in order with the milliseconds since the previous action. u / Ctrl+Z undo,
// Shift+U / Ctrl+Y redo, f finishes the screen and opens the next one; n/p, g and ? as on the other screens.
import { post } from "../lib/http.js";
import { isTyping, withModifier } from "../lib/keys.js";
import { outputChars, selectOffsets, selectionOffsets, snapToWords, toPoint, trimSpaces } from "./offsets.js";
import { onRestored, resyncScreen } from "./resync.js";

const work = document.getElementById("work");
if (work && work.dataset.choiceUrl) start();

function start() {
  const canEdit = work.dataset.canEdit === "true";
  const unit = work.dataset.unit;
  let inFlight = 0;
  let syncing = 0;
  let chain = Promise.resolve();
  let lastAction = performance.now();
  let reasonTimer = null;
  let focusedPosition = "1"; // the output in focus survives the swaps of the outputs' part
  let selectMode = false;

  const flash = document.getElementById("flash");
  let flashTimer = null;
  function say(message, kind) {
    flash.textContent = message; // textContent: messages may quote dataset text
    flash.className = "flash is-shown" + (kind ? " flash-" + kind : "");
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { flash.className = "flash"; }, kind === "problem" ? 8000 : 3000);
  }
  function markBusy() { work.dataset.busy = String(inFlight > 0 || syncing > 0 || reasonTimer !== null); }
  markBusy();
  const box = () => document.getElementById("unit-choice");
  const reasonBox = () => document.getElementById("unit-reason");
  const isOpen = () => box() && box().dataset.open === "true";
  function msSinceLast() {
    const now = performance.now();
    const ms = Math.round(now - lastAction);
    lastAction = now;
    return String(ms);
  }
  function applyOob(html) {
    const focused = document.activeElement && document.activeElement.id;
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    Array.from(tpl.content.children).forEach((el) => {
      const old = el.id && document.getElementById(el.id);
      if (!old) return;
      el.removeAttribute("hx-swap-oob");
      if (el.id === "unit-choice" && focused === "unit-reason" && reasonTimer !== null) {
        el.querySelector("#unit-reason").value = reasonBox().value; // what is still being typed stays
      }
      old.replaceWith(el);
    });
    bind();
    if (focused === "unit-reason" && reasonBox()) reasonBox().focus();
  }
  function fire(trigger) {
    Object.entries(trigger || {}).forEach(([name, detail]) =>
      document.body.dispatchEvent(new CustomEvent(name, { detail, bubbles: true })));
  }
  document.body.addEventListener("sj:notice", (e) => say(e.detail.message));
  document.body.addEventListener("sj:undone", (e) => say(e.detail.message));
  document.body.addEventListener("sj:problem", (e) => say(e.detail.message, "problem"));

  function send(url, fields) {
    if (!canEdit) return Promise.resolve(false);
    inFlight += 1;
    markBusy();
    const job = chain.then(() => post(url, { unit, ...fields })
      .then((answer) => {
        if (answer.status === 200) applyOob(answer.text);
        else if (answer.status !== 204 && !answer.trigger["sj:problem"]) say(answer.text.slice(0, 300) || "Not saved.", "problem");
        fire(answer.trigger);
        if (answer.status === 409) resync();
        return answer;
      })
      .catch(() => { say("Not saved: the server cannot be reached. Try again.", "problem"); return null; })
      .finally(() => { inFlight -= 1; markBusy(); }));
    chain = job.then(() => undefined);
    return job;
  }
  function resync() {
    syncing += 1;
    markBusy();
    const job = chain.then(() => resyncScreen(work)).then(() => bind())
      .catch((err) => say("Could not re-read this screen: " + (err.message || "the server cannot be reached.")
        + " Reload the page before going on.", "problem"))
      .finally(() => { syncing -= 1; markBusy(); });
    chain = job.then(() => undefined);
    return job;
  }
  onRestored(resync);

  function choose(value) {
    if (!canEdit || !isOpen()) { say("This screen's choice can no longer change.", "problem"); return; }
    sendReason();
    send(work.dataset.choiceUrl, { choice: value, ms: msSinceLast() });
  }
  function sendReason() {
    if (reasonTimer === null) return chain;
    clearTimeout(reasonTimer);
    reasonTimer = null;
    markBusy();
    return send(work.dataset.choiceUrl, { reason: reasonBox().value, ms: msSinceLast() });
  }
  function bind() {
    document.querySelectorAll(".compare-output").forEach((o) =>
      o.classList.toggle("is-focused", o.dataset.position === focusedPosition));
    document.querySelectorAll(".pair-span-remove").forEach((button) => {
      if (button.dataset.bound) return;
      button.dataset.bound = "true";
      button.addEventListener("click", () => send(work.dataset.spanRemoveUrl, { span: button.dataset.span, ms: msSinceLast() }));
    });
    const reason = reasonBox();
    if (reason && !reason.dataset.bound) {
      reason.dataset.bound = "true";
      reason.addEventListener("input", () => {
        clearTimeout(reasonTimer);
        reasonTimer = setTimeout(sendReason, 800);
        markBusy();
      });
      reason.addEventListener("blur", () => sendReason());
    }
    document.querySelectorAll("#unit-choice button[data-choice]").forEach((button) => {
      if (button.dataset.bound) return;
      button.dataset.bound = "true";
      button.addEventListener("click", () => choose(button.dataset.choice));
    });
  }
  function focusOn(section) {
    focusedPosition = section.dataset.position;
    document.querySelectorAll(".compare-output").forEach((o) => o.classList.toggle("is-focused", o === section));
  }
  function focusNext() {
    stopSelecting();
    const outputs = Array.from(document.querySelectorAll(".compare-output"));
    const at = outputs.findIndex((o) => o.classList.contains("is-focused"));
    const next = outputs[(at + 1) % outputs.length];
    focusOn(next);
    next.focus();
  }

  // ---- spans: a stretch of the output in focus, selected by keys or the mouse, marked with m ------------------
  const focusedText = () => document.querySelector(`#output-${focusedPosition} .pair-text`);
  function stopSelecting() {
    selectMode = false;
    document.querySelectorAll(".pair-text").forEach((t) => t.classList.remove("pair-selecting"));
  }
  function enterSelectMode() {
    if (!canEdit || !isOpen()) { say("This screen's spans can no longer change.", "problem"); return; }
    const root = focusedText();
    if (!root) return;
    selectMode = true;
    root.classList.add("pair-selecting");
    const [node, off] = toPoint(0, root);
    const range = document.createRange();
    range.setStart(node, off);
    range.collapse(true);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    root.focus({ preventScroll: true });
    say("Selecting: arrows move, Shift+arrows extend, Alt for words; m marks the selection, Esc stops.");
  }
  function moveSelection(e) {
    const dir = e.key === "ArrowLeft" || e.key === "ArrowUp" ? "backward" : "forward";
    const unit = e.key === "ArrowUp" || e.key === "ArrowDown" ? "line" : e.altKey || e.ctrlKey ? "word" : "character";
    window.getSelection().modify(e.shiftKey ? "extend" : "move", dir, unit);
  }
  function markSelection() {
    if (!canEdit || !isOpen()) { say("This screen's spans can no longer change.", "problem"); return; }
    const root = focusedText();
    const picked = root && selectionOffsets(root);
    const trimmed = picked && trimSpaces(outputChars(root), picked.start, picked.end); // keys stop before a space
    stopSelecting();
    if (!trimmed) { say("Nothing selected in the output in focus: s selects, Shift+arrows extend.", "problem"); return; }
    window.getSelection().removeAllRanges();
    send(work.dataset.spanUrl, { position: focusedPosition, start: String(trimmed.start), end: String(trimmed.end),
                                 ms: msSinceLast() });
  }
  document.addEventListener("mouseup", (e) => {
    const root = e.target.closest && e.target.closest(".pair-text");
    if (!canEdit || !root || selectMode) return;
    focusOn(root.closest(".compare-output"));
    const exact = e.altKey;
    setTimeout(() => {
      const picked = selectionOffsets(root);
      if (!picked) return;
      const snapped = exact ? picked : snapToWords(outputChars(root), picked.start, picked.end);
      if (!snapped) return;
      if (snapped.start !== picked.start || snapped.end !== picked.end) selectOffsets(snapped.start, snapped.end, root);
      say("m marks the selection as a span of this output.");
    }, 0);
  });
  function step(url) { sendReason(); send(url, { seconds: "0" }); }
  function finish() {
    if (!canEdit) return;
    sendReason();
    send(work.dataset.finishUrl, { seconds: String(takeSeconds()) });
  }
  function openDialog(id) { const d = document.getElementById(id); if (d && !d.open) d.showModal(); }
  function openGuidelines() {
    const body = document.getElementById("guidelines-body");
    if (body && !body.dataset.loaded) htmx.ajax("GET", work.dataset.guidelinesUrl, { target: "#guidelines-body", swap: "outerHTML" });
    openDialog("guidelines-dialog");
  }
  function go(url) { if (url) { flushTime(true); window.location.href = url; } }
  const PAGE_KEYS = {
    1: () => choose("1"), 2: () => choose("2"), t: () => choose("tie"), x: focusNext,
    s: enterSelectMode, m: markSelection,
    r: () => { const reason = reasonBox(); if (reason && !reason.readOnly) reason.focus(); },
    f: finish, n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    u: () => step(work.dataset.undoUrl), U: () => step(work.dataset.redoUrl),
    g: openGuidelines, "?": () => openDialog("help-dialog"),
  };
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return;
    if (syncing) { e.preventDefault(); say("One moment: this screen is being read again from the server."); return; }
    if (isTyping(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (selectMode) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); moveSelection(e); return; }
      if (e.key === "Escape") { e.preventDefault(); stopSelecting(); window.getSelection().removeAllRanges(); say("Stopped selecting."); return; }
      if (e.key === "Enter" || e.key === "m") { e.preventDefault(); markSelection(); return; }
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? work.dataset.redoUrl : work.dataset.undoUrl); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); step(work.dataset.redoUrl); return; }
    if (withModifier(e)) return;
    const action = PAGE_KEYS[e.key];
    if (action) { e.preventDefault(); action(); }
  });
  const finishButton = document.getElementById("finish-button");
  if (finishButton) finishButton.addEventListener("click", finish);
  const undoButton = document.getElementById("undo-button");
  if (undoButton) undoButton.addEventListener("click", () => step(work.dataset.undoUrl));
  const redoButton = document.getElementById("redo-button");
  if (redoButton) redoButton.addEventListener("click", () => step(work.dataset.redoUrl));
  const help = document.getElementById("help-button");
  if (help) help.addEventListener("click", () => openDialog("help-dialog"));
  const guidelinesLink = document.getElementById("guidelines-link");
  if (guidelinesLink) guidelinesLink.addEventListener("click", (e) => { e.preventDefault(); openGuidelines(); });

  // ---- working time (as on the other screens), counted on the screen's first output ---------------------------
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
  bind();
}
