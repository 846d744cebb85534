// Work telemetry: how long after an error card (or the output text) got focus each save was made. The page
// only measures; the server clamps, stores and judges (docs/guides/quality-checks.md).

const focusedAt = new Map(); // span handle (or "text") -> performance.now() when it last got focus
let current = null;

function mark(key) {
  if (key === current) return;
  current = key;
  focusedAt.set(key, performance.now());
}

/** Milliseconds since `key` got focus (a whole number), or "" when it never had focus. */
export function msSince(key) {
  const at = focusedAt.get(key);
  return at === undefined ? "" : String(Math.round(performance.now() - at));
}

function watch() {
  const errors = document.getElementById("work");
  if (!errors) return;
  // The card in focus carries .is-focus (main.js moves it); any card gaining it starts that card's clock.
  new MutationObserver((changes) => {
    for (const change of changes) {
      const card = change.target;
      if (card.classList && card.classList.contains("error-card") && card.classList.contains("is-focus")) {
        mark(card.dataset.span);
      }
    }
  }).observe(errors, { subtree: true, attributes: true, attributeFilter: ["class"] });
  document.querySelectorAll("#errors .error-card.is-focus").forEach((c) => mark(c.dataset.span));
  // Selecting in the output starts the clock of an added error.
  document.addEventListener("selectionchange", () => {
    const text = document.getElementById("output-text");
    const sel = window.getSelection();
    if (text && sel && sel.anchorNode && text.contains(sel.anchorNode) && current !== "text") mark("text");
  });
  // htmx posts (adding or editing an added error) carry the time since the text got focus.
  document.body.addEventListener("htmx:configRequest", (e) => {
    const form = e.detail.elt && e.detail.elt.closest && e.detail.elt.closest("#add-form, .edit-added form");
    if (form) e.detail.parameters.ms = msSince("text");
  });
}

watch();
