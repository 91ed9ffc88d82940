/**
 * Cutting text to a bound without splitting a character. Every cut the SDK makes (the
 * context budget, hook payload texts, failure texts, tool output caps, the model's text)
 * goes through these, so the model and the hooks never receive half a character: a lone
 * surrogate, which some providers refuse with a 400, or a broken UTF-8 sequence.
 * Workflow-safe: no Node APIs.
 *
 * Bounds in characters count UTF-16 code units, as `String.prototype.length` does (an emoji
 * such as 😀 or 𝄞 counts 2). A cut that would fall between the two halves of such a
 * character keeps the whole character out, so the result may be one unit shorter than the
 * bound; it is never longer. Input that already holds a lone surrogate is not repaired: the
 * result is a plain prefix (or suffix) of the input.
 *
 * @module
 */

/** Whether `code` is the first half of a surrogate pair (U+D800 to U+DBFF). */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Whether `code` is the second half of a surrogate pair (U+DC00 to U+DFFF). */
function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The longest prefix of `text` at most `maxUnits` UTF-16 code units long that does not end
 * inside a surrogate pair.
 *
 * @param text Any text.
 * @param maxUnits The bound, UTF-16 code units; fractions are rounded down, a negative bound
 *   gives `''`, and `Infinity` (or NaN) keeps the whole text.
 * @returns a prefix of `text`: `text` itself when it fits, else `maxUnits` or
 *   `maxUnits - 1` units long.
 */
export function cutPrefix(text: string, maxUnits: number): string {
  if (!(maxUnits < text.length)) return text;
  let end = Math.max(0, Math.floor(maxUnits));
  if (
    end > 0 &&
    isHighSurrogate(text.charCodeAt(end - 1)) &&
    isLowSurrogate(text.charCodeAt(end))
  ) {
    end--;
  }
  return text.slice(0, end);
}

/**
 * The longest suffix of `text` at most `maxUnits` UTF-16 code units long that does not start
 * inside a surrogate pair (the tail of a log, say).
 *
 * @param text Any text.
 * @param maxUnits The bound, UTF-16 code units; fractions are rounded down, a negative bound
 *   gives `''`, and `Infinity` (or NaN) keeps the whole text.
 * @returns a suffix of `text`: `text` itself when it fits, else `maxUnits` or
 *   `maxUnits - 1` units long.
 */
export function cutSuffix(text: string, maxUnits: number): string {
  if (!(maxUnits < text.length)) return text;
  let start = text.length - Math.max(0, Math.floor(maxUnits));
  if (
    start < text.length &&
    isLowSurrogate(text.charCodeAt(start)) &&
    isHighSurrogate(text.charCodeAt(start - 1))
  ) {
    start++;
  }
  return text.slice(start);
}

/**
 * The length of the longest prefix of the UTF-8 `bytes` no longer than `limit` that does not
 * end inside a character, in bytes: a cut there decodes to whole characters only.
 *
 * A cut inside a sequence that is not valid UTF-8 (binary output) stays at `limit`: there is
 * no character to keep whole, and decoding turns the bytes into U+FFFD either way.
 *
 * @param bytes UTF-8 text (a tool's output, a file's line).
 * @param limit The bound, bytes; fractions are rounded down, a negative bound gives 0, and a
 *   bound at or past the end keeps every byte.
 */
export function utf8PrefixLength(bytes: Uint8Array, limit: number): number {
  if (!(limit < bytes.length)) return bytes.length;
  const end = Math.max(0, Math.floor(limit));
  // A continuation byte (10xxxxxx) at the cut means a character may straddle it: find where
  // that character starts (a UTF-8 character is at most 4 bytes) and cut before it.
  for (let start = end; start >= 0 && start > end - 4; start--) {
    const byte = bytes[start] as number;
    if ((byte & 0xc0) !== 0x80) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return start + length > end ? start : end;
    }
  }
  // Continuation bytes that start no character: not UTF-8.
  return end;
}

/** `text` on one line: every run of whitespace (newlines included) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
