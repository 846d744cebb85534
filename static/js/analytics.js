// Analytics page: a link to a folded section (the contents, a #fragment) opens it before the browser scrolls there.
function openTarget() {
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (target instanceof HTMLDetailsElement) target.open = true;
}
window.addEventListener("hashchange", openTarget);
openTarget();
