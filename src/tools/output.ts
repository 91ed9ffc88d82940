/**
 * Output caps: how much of a tool's text the model gets.
 *
 * @module
 */
import { utf8PrefixLength } from '../common/text.js';

/** What {@link capOutput} returns. */
interface CappedOutput {
  /** The text, cut with a marker when it was too long. */
  text: string;
  /** Whether it was cut. */
  truncated: boolean;
  /** Size of the original text, UTF-8 bytes. */
  totalBytes: number;
}

/**
 * The line appended to cut text; with `ref`, it names where the full output is kept
 * (`session.readPayload(ref)` reads it).
 */
export function truncationMarker(
  totalBytes: number,
  shownBytes: number,
  ref?: string,
  keptBytes = totalBytes,
): string {
  const where =
    ref === undefined
      ? ''
      : keptBytes < totalBytes
        ? `; first ${keptBytes} bytes kept: ${ref}`
        : `; full output: ${ref}`;
  return `\n[... output truncated: ${totalBytes} bytes total, first ${shownBytes} shown${where} ...]`;
}

/**
 * Cap `text` at `maxBytes` UTF-8 bytes. Text that fits comes back unchanged; longer text is
 * cut at a character boundary and a marker such as
 * `\n[... output truncated: 123456 bytes total, first 65400 shown ...]` is appended, the
 * marker included in the budget (unless `maxBytes` is smaller than the marker itself).
 *
 * @param text Any text.
 * @param maxBytes Budget in UTF-8 bytes; `Infinity` (or any non-finite value) means no cap.
 * @param ref Where the full text is kept, named in the marker.
 */
export function capOutput(text: string, maxBytes: number, ref?: string): CappedOutput {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  if (!Number.isFinite(maxBytes) || totalBytes <= maxBytes) {
    return { text, truncated: false, totalBytes };
  }
  const bytes = Buffer.from(text, 'utf8');
  // The shown count has at most as many digits as maxBytes, so this marker is the longest.
  const markerBytes = Buffer.byteLength(truncationMarker(totalBytes, Math.max(0, maxBytes), ref));
  const shown = utf8PrefixLength(bytes, maxBytes - markerBytes);
  return {
    text: bytes.subarray(0, shown).toString('utf8') + truncationMarker(totalBytes, shown, ref),
    truncated: true,
    totalBytes,
  };
}
