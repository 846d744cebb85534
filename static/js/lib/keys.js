// Keyboard control shared by the screens: which key presses are the page's and which belong to a field.

/** True while the key goes to something the user types in (the screen's letter keys must not fire). */
export function isTyping(target) {
  const tag = (target.tagName || "").toLowerCase();
  return tag === "input" || tag === "textarea" || tag === "select" || !!target.isContentEditable;
}

/** True for a key pressed with Ctrl, Cmd or Alt: the browser's or the system's shortcut, not a screen key. */
export function withModifier(event) {
  return event.ctrlKey || event.metaKey || event.altKey;
}
