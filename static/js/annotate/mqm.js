// spanjudge MQM screen: select a span (mouse, or s and Shift+arrows; in the source, for an omission, the mouse or
// o), a digit for its category (a second digit for a subcategory), a key for its severity; t marks the whole
// segment as a Non-translation. Every error is saved at once; u / Shift+U undo and redo. No inline script: the
// tree and the severities come as json_script.
import { post } from "../lib/http.js";
import { isTyping, withModifier } from "../lib/keys.js";
import { outputText, selectionOffsets, toPoint, outputChars, selectOffsets, snapToWords, trimSpaces } from "./offsets.js";
import { onRestored, resyncScreen } from "./resync.js";

const work = document.getElementById("work");
if (work) start();

function start() {
  const canEdit = work.dataset.canEdit === "true";
  const tree = JSON.parse(document.getElementById("sj-mqm-tree").textContent);
  const severities = JSON.parse(document.getElementById("sj-mqm-severities").textContent);
  let range = null;      // {start, end, side} in code points of the side's text, as the server counts them
  let top = null;        // the top-level category picked, waiting for its subcategory
  let category = null;   // the full category picked, waiting for a severity
  let selectMode = false;
  let selectSide = "output"; // the text the keys select in
  let busy = false;
  const sourceText = () => document.getElementById("source-text");
  const rootOf = (side) => (side === "source" ? sourceText() : outputText());

  const flash = document.getElementById("flash");
  let flashTimer = null;
  function say(message, kind) {
    flash.textContent = message; // textContent: messages may quote dataset text
    flash.className = "flash is-shown" + (kind ? " flash-" + kind : "");
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { flash.className = "flash"; }, kind === "problem" ? 8000 : 3000);
  }
  function markBusy() { work.dataset.busy = String(busy); }
  markBusy();

  // ---- the picker: what is selected and which step comes next ---------------------------------------------
  function show() {
    const step = document.getElementById("mqm-step");
    const selected = document.getElementById("mqm-selected");
    if (!step) return;
    selected.textContent = range ? outputChars(rootOf(range.side)).slice(range.start, range.end).join("")
      + (range.side === "source" ? " (in the source)" : "") : "—";
    if (!range) step.textContent = "Select the erroneous text, then press a category's digit.";
    else if (category) step.textContent = "Category " + category + ": press a severity key.";
    else if (top) step.textContent = top.name + ": press the digit of its subcategory.";
    else step.textContent = "Press a category's digit.";
    document.querySelectorAll("#mqm-tree > li").forEach((li) => {
      li.classList.toggle("is-chosen", !!top && li.dataset.key === top.key);
    });
    document.querySelectorAll(".mqm-severities button").forEach((b) => { b.disabled = !category; });
    work.dataset.step = !range ? "select" : category ? "severity" : top ? "subcategory" : "category";
  }

  function reset() { range = null; top = null; category = null; leaveSelectMode(); show(); }

  function pickDigit(key) {
    if (!range) { say("Select some text in the translation first (mouse, or press s).", "problem"); return; }
    if (top) {
      const child = top.children.find((c) => c.key === key);
      if (child) { category = child.full; show(); }
      return;
    }
    const chosen = tree.find((c) => c.key === key);
    if (!chosen) return;
    if (chosen.children.length) { top = chosen; category = null; } else { category = chosen.name; }
    show();
  }

  function save(fields) {
    if (!canEdit || busy) return;
    busy = true;
    markBusy();
    post(work.dataset.addUrl, fields)
      .then((answer) => {
        if (answer.status === 200) { applyOob(answer.text); window.getSelection().removeAllRanges(); reset(); }
        else say(answer.text.slice(0, 300) || "Not saved.", "problem");
        fire(answer.trigger);
        return answer.status === 409;
      })
      .catch(() => { say("Not saved: the server cannot be reached. Try again.", "problem"); return false; })
      .then((stale) => (stale ? resyncScreen(work).then(reset) : undefined)) // the item changed meanwhile
      .catch(() => say("Could not re-read this item: reload the page before going on.", "problem"))
      .finally(() => { busy = false; markBusy(); });
  }

  function pickSeverity(value) {
    if (!range || !category) return;
    const note = document.getElementById("mqm-note");
    save({ start: range.start, end: range.end, side: range.side, category, severity: value,
      note: note ? note.value : "" });
    if (note) note.value = "";
  }

  function nonTranslation() {
    const name = work.dataset.nonTranslation;
    if (!name) return;
    const length = parseInt(outputText().dataset.length, 10);
    save({ start: 0, end: length, side: "output", category: name, severity: "major", note: "" });
  }

  // ---- out-of-band swaps and messages ------------------------------------------------------------------------
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
  document.body.addEventListener("sj:notice", (e) => say(e.detail.message));
  document.body.addEventListener("sj:undone", (e) => say(e.detail.message));
  document.body.addEventListener("htmx:responseError", (e) => {
    say(((e.detail.xhr && e.detail.xhr.responseText) || "Not saved: the server refused.").slice(0, 300), "problem");
  });

  /** After Back (the page shown from the browser's cache), read the item again before the next key. */
  onRestored(() => {
    busy = true;
    markBusy();
    resyncScreen(work).then(reset)
      .catch(() => say("Could not re-read this item: reload the page before going on.", "problem"))
      .finally(() => { busy = false; markBusy(); });
  });

  function step(url) {
    if (!canEdit || busy) return;
    busy = true;
    markBusy();
    post(url, { seconds: "0" })
      .then((answer) => { if (answer.status === 200) applyOob(answer.text); fire(answer.trigger); })
      .catch(() => say("Not done: the server cannot be reached.", "problem"))
      .finally(() => { busy = false; markBusy(); });
  }

  // ---- selecting: the mouse (snapped to words) or the keyboard ------------------------------------------------
  document.addEventListener("mouseup", (e) => {
    if (!canEdit || selectMode || document.querySelector("dialog[open]")) return;
    if (e.target.closest && e.target.closest("#mqm-picker")) return;
    const exact = e.altKey;
    setTimeout(() => {
      const side = selectionOffsets(outputText()) ? "output" : sourceText() && selectionOffsets(sourceText()) ? "source" : null;
      if (!side) return;
      const root = rootOf(side);
      const r = selectionOffsets(root);
      const snapped = exact ? r : snapToWords(outputChars(root), r.start, r.end);
      if (!snapped) return;
      if (snapped.start !== r.start || snapped.end !== r.end) selectOffsets(snapped.start, snapped.end, root);
      range = { ...snapped, side }; top = null; category = null;
      show();
    }, 0);
  });

  function enterSelectMode(side) {
    const root = rootOf(side);
    if (!root) return;
    leaveSelectMode();
    selectMode = true;
    selectSide = side;
    root.classList.add("is-selecting");
    const [node, off] = toPoint(range && range.side === side ? range.start : 0, root);
    const sel = window.getSelection();
    sel.removeAllRanges();
    const r = document.createRange();
    r.setStart(node, off);
    r.collapse(true);
    sel.addRange(r);
    root.focus({ preventScroll: true });
    say((side === "source" ? "Selecting in the source (an omission): " : "Selecting: ")
      + "arrows move, Shift+arrows extend, Alt for words; Enter takes the selection, Esc stops.");
  }
  function leaveSelectMode() {
    selectMode = false;
    [outputText(), sourceText()].forEach((root) => { if (root) root.classList.remove("is-selecting"); });
  }
  function moveSelection(e) {
    const sel = window.getSelection();
    const dir = e.key === "ArrowLeft" || e.key === "ArrowUp" ? "backward" : "forward";
    const unit = e.key === "ArrowUp" || e.key === "ArrowDown" ? "line" : e.altKey || e.ctrlKey ? "word" : "character";
    sel.modify(e.shiftKey ? "extend" : "move", dir, unit);
  }
  function takeSelection() {
    const root = rootOf(selectSide);
    const r = selectionOffsets(root);
    leaveSelectMode();
    // a word-wise extension stops before the next word's space: the error is the words, not the space
    const trimmed = r && trimSpaces(outputChars(root), r.start, r.end);
    if (!trimmed) { say("Nothing selected: Shift+arrows extend the selection.", "problem"); return; }
    if (trimmed.start !== r.start || trimmed.end !== r.end) selectOffsets(trimmed.start, trimmed.end, root);
    range = { ...trimmed, side: selectSide }; top = null; category = null;
    show();
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
    if (button && !busy) button.click();
  }

  const KEYS = {
    s: () => canEdit && enterSelectMode("output"),
    o: () => canEdit && enterSelectMode("source"),
    u: () => step(work.dataset.undoUrl), U: () => step(work.dataset.redoUrl),
    f: finish, n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    g: openGuidelines, "?": () => openDialog("help-dialog"),
    Escape: () => { window.getSelection().removeAllRanges(); reset(); },
  };
  // side by side: the other output of the screen takes the focus (its own MQM screen, this one beside it)
  if (work.dataset.switchUrl) KEYS.x = () => go(work.dataset.switchUrl);
  severities.forEach((s) => { KEYS[s.key] = () => pickSeverity(s.value); });
  if (work.dataset.nonTranslation) KEYS[work.dataset.nonTranslationKey] = nonTranslation;
  for (let d = 1; d <= 9; d++) KEYS[String(d)] = () => pickDigit(String(d));

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return;
    if (isTyping(e.target)) {
      if (e.key === "Escape") e.target.blur();
      else if (e.key === "Enter" && e.target.id === "mqm-note") { e.preventDefault(); e.target.blur(); }
      return;
    }
    if (selectMode) {
      if (e.key.startsWith("Arrow")) { e.preventDefault(); moveSelection(e); return; }
      if (e.key === "Enter") { e.preventDefault(); takeSelection(); return; }
      if (e.key === "Escape") { e.preventDefault(); leaveSelectMode(); window.getSelection().removeAllRanges(); return; }
      if (/^[1-9]$/.test(e.key)) { e.preventDefault(); takeSelection(); pickDigit(e.key); return; }
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? work.dataset.redoUrl : work.dataset.undoUrl); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); step(work.dataset.redoUrl); return; }
    if (withModifier(e)) return;
    if (KEYS[e.key]) { e.preventDefault(); KEYS[e.key](); }
  });

  // Mouse twins of the keys.
  document.addEventListener("click", (e) => {
    const li = e.target.closest && e.target.closest("#mqm-tree li");
    if (li && li.dataset.full) { if (range) { category = li.dataset.full; show(); } return; }
    if (li && li.dataset.key) { pickDigit(li.dataset.key); return; }
    const sev = e.target.closest && e.target.closest(".mqm-severities button[data-severity]");
    if (sev) pickSeverity(sev.dataset.severity);
  });
  const nt = document.getElementById("mqm-non-translation");
  if (nt) nt.addEventListener("click", nonTranslation);
  const undoButton = document.getElementById("undo-button");
  if (undoButton) undoButton.addEventListener("click", () => step(work.dataset.undoUrl));
  const redoButton = document.getElementById("redo-button");
  if (redoButton) redoButton.addEventListener("click", () => step(work.dataset.redoUrl));
  const help = document.getElementById("help-button");
  if (help) help.addEventListener("click", () => openDialog("help-dialog"));
  const guidelinesLink = document.getElementById("guidelines-link");
  if (guidelinesLink) guidelinesLink.addEventListener("click", (e) => { e.preventDefault(); openGuidelines(); });

  // ---- working time (as on the OpeNLGauge screen) ---------------------------------------------------------------
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

  const current = document.getElementById("doc-current");
  if (current) current.scrollIntoView({ block: "center" });
  show();
}
