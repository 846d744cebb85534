// Re-reading the item screen from the server. After the browser shows the page from its back-forward cache, or
// after a change is refused because the item changed meanwhile (409), the screen may show a state the server no
// longer holds; its parts (named by #work's data-sync-parts, the same parts the server swaps out of band) are
// replaced with the stored ones before another key is taken.

/** Fetch the screen again and swap in its parts; resolves once they are in place (false when the server sent the
 *  browser elsewhere, e.g. to the end page of a study that ended, which it then opens). */
export async function resyncScreen(work) {
  const response = await fetch(window.location.href, {
    credentials: "same-origin", cache: "no-store", headers: { Accept: "text/html" },
  });
  if (response.redirected && new URL(response.url).pathname !== window.location.pathname) {
    window.location.assign(response.url);
    return false;
  }
  if (!response.ok) throw new Error("the server answered " + response.status);
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  (work.dataset.syncParts || "").split(" ").filter(Boolean).forEach((id) => {
    const part = fresh.getElementById(id);
    const old = document.getElementById(id);
    if (!part || !old) return;
    const el = document.adoptNode(part);
    old.replaceWith(el);
    if (window.htmx) htmx.process(el);
  });
  return true;
}

/** Call `resync` whenever the page is shown from the back-forward cache. */
export function onRestored(resync) {
  window.addEventListener("pageshow", (e) => { if (e.persisted) resync(); });
}
