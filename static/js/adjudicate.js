// The reviewers' adjudication screen: move between disagreements and decide them by keyboard (or click).
// A native ES module (CSP: no inline script). htmx posts each decision, undo and redo (hx-post in the
// template) and swaps in the card the server renders (every text escaped there); this file moves the focus,
// maps the keys to the chips and buttons, and says what happened.

import { isTyping, withModifier } from "./lib/keys.js";

const keys = JSON.parse(document.getElementById("adj-keys").textContent);
const list = document.getElementById("disputes");
const status = document.getElementById("adj-status");

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

/** What a successful request did, in words (null for a read, such as a card's history); `card` is the card
 *  it was sent from (undo and redo have none). */
function done(elt, card) {
  if (elt.id === "adj-undo") return "Undone.";
  if (elt.id === "adj-redo") return "Redone.";
  const field = elt.classList.contains("adj-note") ? "note" : elt.dataset.field;
  if (!field) return null;
  return `Saved ${field.replace("_", " ")} on ${card ? card.querySelector("header strong").textContent : "this span"}.`;
}

// A click (or a key that clicks) moves the focus to the card it was on.
list.addEventListener("click", (event) => {
  const card = event.target.closest("article.dispute");
  if (card) current = cards().indexOf(card);
});

// An undo or redo changed a card this page does not show (it joined the queue after the page was loaded).
document.body.addEventListener("htmx:targetError", () => say("Done, on a card this page does not show: reload it."));

// The server renders a card alone; its number in the queue is the one this page gave it.
list.addEventListener("htmx:afterSwap", (event) => {
  const fresh = event.target;
  const old = event.detail.target;
  if (!(fresh instanceof HTMLElement) || !fresh.matches("article.dispute") || !old) return;
  fresh.dataset.number = old.dataset.number;
  fresh.querySelector("header strong").textContent = old.querySelector("header strong").textContent;
  focusCard(cards().indexOf(fresh));
});

// A chip or note swapped out with its card reports from the list (htmx then names the list in detail.elt);
// the element that sent the request is in the request's config.
document.body.addEventListener("htmx:afterRequest", (event) => {
  const sender = event.detail.requestConfig.elt;
  if (!event.detail.successful) return;
  const text = done(sender, sender.closest("article.dispute"));
  if (text) say(text);
});

document.body.addEventListener("htmx:responseError", (event) => {
  say(event.detail.xhr.responseText || `The server refused (${event.detail.xhr.status}).`);
});
document.body.addEventListener("htmx:sendError", () => say("Not saved: the server cannot be reached. Try again."));

document.addEventListener("keydown", (event) => {
  if (withModifier(event)) return;
  if (isTyping(event.target)) {
    if (event.target.classList.contains("adj-note") && event.key === "Escape") {
      event.preventDefault();
      event.target.blur(); // the change event posts the note (htmx)
      focusCard(current);
    }
    return;
  }
  const card = cards()[current];
  if (event.key === "j") return focusCard(current + 1);
  if (event.key === "k") return focusCard(current - 1);
  if (event.key === "u") return document.getElementById("adj-undo").click();
  if (event.key === "U") return document.getElementById("adj-redo").click();
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
  chip.click();
});

focusCard(0);
