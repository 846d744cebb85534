// The page's CSRF token, from the hx-headers that _base.html puts on <body> for htmx.

/** The token htmx sends with every request, for the requests a page makes itself. */
export function csrfToken() {
  return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
}
