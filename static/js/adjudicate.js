// The reviewers' adjudication screen: move between disagreements and decide them by keyboard (or click).
// A native ES module (CSP: no inline script). The server answers each change with the card re-rendered
// (every text escaped there); this file only swaps it in.

const keys = JSON.parse(document.getElementById("adj-keys").textContent);
const list = document.getElementById("disputes");
const status = document.getElementById("adj-status");
const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";

let current = 0;

const cards = () => Array.from(list.querySelectorAll("article.dispute"));

function focusCard(index) {
  const all = cards();
  if (!all.length) return;
  current = Math.max(0, Math.min(index, all.length - 1));
  all.forEach((card, i) => card.classList.toggle("is-focus", i === current));
  all[current].focus({ preventScroll: true });
  all[current].scrollIntoView({ block: "nearest" });
}

function say(text) {
  status.textContent = text;
}

function swap(html) {
  if (!html) return null;
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const fresh = template.content.firstElementChild;
  const old = document.getElementById(fresh.id);
  if (!old) return null;
  // The server renders one card alone; its number in the queue is the one this page gave it.
  fresh.dataset.number = old.dataset.number;
  fresh.querySelector("header strong").textContent = old.querySelector("header strong").textContent;
  old.replaceWith(fresh);
  fresh.classList.add("is-focus");
  return fresh;
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "X-CSRFToken": csrf, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
    credentials: "same-origin",
  });
  const text = await response.text();
  if (!response.ok) {
    say(text || `The server refused (${response.status}).`);
    return null;
  }
  return text;
}

async function save(card, field, value) {
  const html = await post(card.dataset.saveUrl, { field, value });
  if (html === null) return;
  const fresh = swap(html);
  say(`Saved ${field.replace("_", " ")} on ${fresh ? fresh.querySelector("header strong").textContent : "this span"}.`);
  if (fresh) fresh.focus({ preventScroll: true });
}

async function step(url, done) {
  const html = await post(url, {});
  if (html === null) return;
  const fresh = swap(html);
  if (fresh) {
    current = cards().indexOf(fresh);
    focusCard(current);
  }
  say(done);
}

list.addEventListener("click", (event) => {
  const chip = event.target.closest("button[data-field]");
  if (!chip) return;
  const card = chip.closest("article.dispute");
  current = cards().indexOf(card);
  save(card, chip.dataset.field, chip.getAttribute("aria-pressed") === "true" ? "" : chip.dataset.value);
});

list.addEventListener("change", (event) => {
  if (!event.target.classList.contains("adj-note")) return;
  save(event.target.closest("article.dispute"), "note", event.target.value);
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const inNote = event.target.classList && event.target.classList.contains("adj-note");
  if (inNote) {
    if (event.key === "Escape") {
      event.preventDefault();
      event.target.blur(); // the change event saves the note
      focusCard(current);
    }
    return;
  }
  if (event.target.closest && event.target.closest("input, textarea, select")) return;
  const card = cards()[current];
  if (event.key === "j") return focusCard(current + 1);
  if (event.key === "k") return focusCard(current - 1);
  if (event.key === "u") return step(list.dataset.undoUrl, "Undone.");
  if (event.key === "U") return step(list.dataset.redoUrl, "Redone.");
  if (!card) return;
  if (event.key === "m") {
    event.preventDefault();
    card.querySelector(".adj-note").focus();
    return;
  }
  const target = keys[event.key];
  if (!target) return;
  const chip = card.querySelector(`button[data-field="${target.field}"][data-value="${target.value}"]`);
  if (!chip) {
    say("That verdict does not apply to this span.");
    return;
  }
  event.preventDefault();
  save(card, target.field, chip.getAttribute("aria-pressed") === "true" ? "" : target.value);
});

focusCard(0);
