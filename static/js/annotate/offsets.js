// DOM selections in the output text <-> code-point offsets into the output. Each piece of the output carries
// data-o, its offset in code points as the server counts them (CR LF already folded by the server). Every
// function takes the text's root as its last argument (the output by default; MQM's source is another).
import { cpLength, toCodePoints, toUtf16, codePoints } from "./codepoints.js";

export const outputText = () => document.getElementById("output-text");

function segOffset(seg) { return parseInt(seg.dataset.o, 10); }

/** A boundary point (node, offset in UTF-16 units) inside the root -> code-point offset, or null. */
export function toOffset(node, offset, root = outputText()) {
  if (!root || !root.contains(node)) return null;
  if (node.nodeType === Node.TEXT_NODE) {
    const seg = node.parentElement.closest("[data-o]");
    return segOffset(seg) + toCodePoints(node.data, offset);
  }
  if (node === root) {
    const segs = Array.from(root.children);
    if (offset >= segs.length) return parseInt(root.dataset.length, 10);
    return segOffset(segs[offset]);
  }
  const seg = node.closest("[data-o]");
  return segOffset(seg) + (offset > 0 ? cpLength(seg.textContent) : 0);
}

/** The current selection as code-point offsets {start, end}, or null when nothing in the output is selected. */
export function selectionOffsets(root = outputText()) {
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const start = toOffset(range.startContainer, range.startOffset, root);
  const end = toOffset(range.endContainer, range.endOffset, root);
  if (start === null || end === null || start >= end) return null;
  return { start, end };
}

/** Code-point offset -> a DOM boundary point [node, UTF-16 offset]. */
export function toPoint(offset, root = outputText()) {
  const segs = Array.from(root.children);
  for (const seg of segs) {
    const o = segOffset(seg);
    const text = seg.textContent;
    const len = cpLength(text);
    if (offset >= o && offset <= o + len && seg.firstChild) return [seg.firstChild, toUtf16(text, offset - o)];
  }
  const last = segs[segs.length - 1];
  return last && last.firstChild ? [last.firstChild, last.textContent.length] : [root, 0];
}

/** The output's text as code points (index i is the character at code-point offset i). */
export function outputChars(root = outputText()) {
  return codePoints(Array.from(root.children).map((s) => s.textContent).join(""));
}

export function selectOffsets(start, end, root = outputText()) {
  const [a, ao] = toPoint(start, root);
  const [b, bo] = toPoint(end, root);
  const range = document.createRange();
  range.setStart(a, ao);
  range.setEnd(b, bo);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

const SPACE = /\s/u;

/** Trim white space at both ends of a selection made by keys (Alt+arrows stop before a word's leading space);
 *  null when only space is left. */
export function trimSpaces(chars, start, end) {
  while (start < end && SPACE.test(chars[start])) start++;
  while (end > start && SPACE.test(chars[end - 1])) end--;
  return start < end ? { start, end } : null;
}

// Letters, numbers and combining marks (a decomposed "é" is e + U+0301) make words.
const WORD = /[\p{L}\p{M}\p{N}_'’-]/u;
const EDGE = /['’-]/;

/** Trim spaces and punctuation at both ends, then grow to whole words ("Olive Grov" -> "Olive Grove").
 *  `chars` is the output as code points; offsets are code points. Null when nothing word-like is selected. */
export function snapToWords(chars, start, end) {
  const word = (i) => WORD.test(chars[i]);
  while (start < end && !word(start)) start++;
  while (end > start && !word(end - 1)) end--;
  if (start >= end) return null;
  while (start > 0 && word(start - 1)) start--;
  while (end < chars.length && word(end)) end++;
  while (start < end && EDGE.test(chars[start])) start++;
  while (end > start && EDGE.test(chars[end - 1])) end--;
  return start < end ? { start, end } : null;
}
