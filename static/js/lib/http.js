// Form posts a page makes itself (where htmx does not fit: ordered saves, the timer's keepalive beacon).

import { csrfToken } from "./csrf.js";

/** POST a form to `url` as the page's own request (CSRF, HX-Request); resolve to {status, text, trigger,
 *  redirected} (an HX-Redirect answer opens its page, as htmx would).
 *  `keepalive` lets the request outlive the page (pagehide). */
export async function post(url, fields, { keepalive = false } = {}) {
  const response = await fetch(url, {
    method: "POST", credentials: "same-origin", body: new URLSearchParams(fields), keepalive,
    headers: { "X-CSRFToken": csrfToken(), "HX-Request": "true" },
  });
  let trigger = {};
  try { trigger = JSON.parse(response.headers.get("HX-Trigger") || "{}"); } catch (_) { trigger = {}; }
  // The server sends the page elsewhere as it does for htmx (a participant's time is up, or the study ended).
  const elsewhere = response.headers.get("HX-Redirect");
  if (elsewhere && !keepalive) window.location.assign(elsewhere);
  return { status: response.status, text: await response.text(), trigger, redirected: !!elsewhere };
}
