// spanjudge item screen, control arm: Done marking (key d, or the button) ends the marking phase. The button
// posts with htmx (main.js adds its working seconds) and the server reloads the page, which then shows the
// machine errors. Nothing in this module knows anything about them.

/** Press Done marking once; a second press while the first is on its way does nothing. */
export function doneMarking() {
  const button = document.getElementById("done-marking");
  if (!button || button.dataset.sent === "true") return;
  button.dataset.sent = "true";
  button.click();
}

document.body.addEventListener("htmx:afterRequest", (e) => {
  const button = document.getElementById("done-marking");
  if (button && e.detail.elt === button && !e.detail.successful) button.dataset.sent = "false";
});
