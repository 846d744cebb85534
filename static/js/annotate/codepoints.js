// The one place where the page converts between the browser's unit (UTF-16 code units) and the server's
// (Unicode code points). Everything the page sends or receives as an offset is in code points.

/** Number of code points in `text` (an emoji outside the BMP is one, not two). */
export function cpLength(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Code-point offset of UTF-16 offset `index` in `text`. */
export function toCodePoints(text, index) {
  return cpLength(text.slice(0, index));
}

/** UTF-16 offset of code-point offset `cp` in `text` (clamped to the text's end). */
export function toUtf16(text, cp) {
  let i = 0;
  for (let n = 0; n < cp && i < text.length; n++) {
    const c = text.codePointAt(i);
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}

/** The code points of `text` as an array of strings (index = code-point offset). */
export function codePoints(text) {
  return Array.from(text);
}
