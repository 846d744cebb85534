// spanjudge score screen: the page of any protocol whose items get one score (its declaration's score_range) and
// nothing else. The slider moves by arrows (one step), PageUp/PageDown (a page), Home/End (the bounds), typed
// digits, or the mouse; each change is saved after a short pause, in order, with the milliseconds since the
// previous action. u / Ctrl+Z undo the last score change, Shift+U / Ctrl+Y redo it; f finishes; n/p, g and ?
// as on the other screens. No inline script: the steps come as json_script ("sj-score-keys").
import { post } from "../lib/http.js";
import { isTyping, withModifier } from "../lib/keys.js";
import { onRestored, resyncScreen } from "./resync.js";

const work = document.getElementById("work");
if (work && work.dataset.scoreUrl) start();

function start() {
  const canEdit = work.dataset.canEdit === "true";
  const keys = JSON.parse(document.getElementById("sj-score-keys").textContent);
  let pendingScore = null;
  let scoreTimer = null;
  let digits = "";
  let digitsTimer = null;
  let inFlight = 0;
  let syncing = 0;
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
  const box = () => document.getElementById("item-score");
  const slider = () => document.getElementById("score-slider");
  const isOpen = () => box() && box().dataset.open === "true";
  function msSinceLast() {
    const now = performance.now();
    const ms = Math.round(now - lastAction);
    lastAction = now;
    return String(ms);
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
    bind();
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

  function send(url, fields) {
    if (!canEdit) return Promise.resolve(false);
    inFlight += 1;
    markBusy();
    const job = chain.then(() => post(url, fields)
      .then((answer) => {
        if (answer.status === 200) applyOob(answer.text);
        else if (answer.status !== 204 && !answer.trigger["sj:problem"]) say(answer.text.slice(0, 300) || "Not saved.", "problem");
        fire(answer.trigger);
        if (answer.status === 409) resync();
        return answer.status === 200;
      })
      .catch(() => { say("Not saved: the server cannot be reached. Try again.", "problem"); return false; })
      .finally(() => { inFlight -= 1; markBusy(); }));
    chain = job.then(() => undefined);
    return job;
  }
  function resync() {
    syncing += 1;
    markBusy();
    const job = chain.then(() => resyncScreen(work)).then(() => bind())
      .catch((err) => say("Could not re-read this item: " + (err.message || "the server cannot be reached.")
        + " Reload the page before going on.", "problem"))
      .finally(() => { syncing -= 1; markBusy(); });
    chain = job.then(() => undefined);
    return job;
  }
  onRestored(resync);

  function show(value) {
    const input = slider();
    const out = document.getElementById("score-value");
    if (input) { input.value = String(value); input.setAttribute("aria-valuetext", String(value)); }
    if (out) out.textContent = String(value);
    box().dataset.score = String(value);
  }
  function current() {
    if (pendingScore !== null) return pendingScore;
    const stored = box().dataset.score;
    return stored === "" ? null : parseInt(stored, 10);
  }
  function setScore(value) {
    if (!canEdit || !isOpen()) { say("This item's score can no longer change.", "problem"); return; }
    const v = Math.max(keys.min, Math.min(keys.max, Math.round(value)));
    pendingScore = v;
    show(v);
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
    const base = current() === null ? Math.round((keys.min + keys.max) / 2) : current();
    const moves = { ArrowLeft: -keys.step, ArrowDown: -keys.step, ArrowRight: keys.step, ArrowUp: keys.step,
                    PageDown: -keys.page, PageUp: keys.page };
    if (e.key in moves) { setScore(base + moves[e.key]); return true; }
    if (e.key === "Home") { setScore(keys.min); return true; }
    if (e.key === "End") { setScore(keys.max); return true; }
    if (/^[0-9]$/.test(e.key)) {
      clearTimeout(digitsTimer);
      digits = (digits + e.key).replace(/^0+(?=\d)/, "");
      if (parseInt(digits, 10) > keys.max) digits = e.key;
      setScore(parseInt(digits, 10));
      digitsTimer = setTimeout(() => { digits = ""; }, 1200);
      return true;
    }
    return false;
  }
  function bind() {
    const input = slider();
    if (input && !input.dataset.bound) {
      input.dataset.bound = "true";
      input.addEventListener("input", () => setScore(parseInt(input.value, 10)));
      // the page's own keys drive the slider, so a focused slider does not move twice
      input.addEventListener("keydown", (e) => { if (e.key.startsWith("Arrow") || e.key.startsWith("Page") || e.key === "Home" || e.key === "End") e.preventDefault(); });
    }
  }
  function step(url) { sendScore(); chain.then(() => send(url, { seconds: "0" })); }

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
  const PAGE_KEYS = {
    f: finish, n: () => go(work.dataset.nextUrl), p: () => go(work.dataset.prevUrl),
    u: () => step(work.dataset.undoUrl), U: () => step(work.dataset.redoUrl),
    g: openGuidelines, "?": () => openDialog("help-dialog"),
  };
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return;
    if (syncing) { e.preventDefault(); say("One moment: this item is being read again from the server."); return; }
    if (isTyping(e.target) && e.target.id !== "score-slider") {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? work.dataset.redoUrl : work.dataset.undoUrl); return; }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "y") { e.preventDefault(); step(work.dataset.redoUrl); return; }
    if (canEdit && isOpen() && !e.ctrlKey && !e.metaKey && !e.altKey && scoreKey(e)) { e.preventDefault(); return; }
    if (withModifier(e)) return;
    const action = PAGE_KEYS[e.key];
    if (action) { e.preventDefault(); action(); }
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
  bind();
}
