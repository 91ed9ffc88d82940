/**
 * A compact structural diff of two JSON values, for showing what a hook or a person changed:
 * for objects, the changed keys (nested objects by dotted path) with their value before and
 * after; for text, the changed lines (`-` before, `+` after); for anything else, the two
 * values. Pure; no dependency (the repository has no diff library at run time).
 *
 * @module
 */
import { isPlainObject, type JsonObject, type JsonValue } from '../common/json.js';

/** One changed line of a {@link TextDiff}: `-` only before, `+` only after. */
export interface LineChange {
  op: '-' | '+';
  /** 1-based line number: in the text before for `-`, in the text after for `+`. */
  line: number;
  text: string;
}

/** Two texts compared line by line: only the lines that changed. */
interface TextDiff {
  kind: 'text';
  changes: LineChange[];
}

/** One key of an {@link ObjectDiff} whose value changed. */
interface KeyChange {
  /** The key; nested keys as a dotted path (`options.mode`). */
  key: string;
  /** `added` (absent before), `removed` (absent after) or `changed`. */
  change: 'added' | 'removed' | 'changed';
  /** The value before (absent when `added`). */
  before?: JsonValue;
  /** The value after (absent when `removed`). */
  after?: JsonValue;
  /** Set when both values are texts of several lines: their lines that changed. */
  lines?: LineChange[];
}

/** Two objects compared key by key: only the keys that changed. */
interface ObjectDiff {
  kind: 'object';
  changes: KeyChange[];
}

/** Two values of different kinds (or arrays, numbers, ...): both, whole. */
interface ValueChange {
  kind: 'value';
  before: JsonValue | undefined;
  after: JsonValue | undefined;
}

/** What {@link diffValues} gives. */
export type ValueDiff = TextDiff | ObjectDiff | ValueChange;

/** Above this many line pairs the middle of two texts is not aligned, only replaced. */
const MAX_LCS_CELLS = 1_000_000;

/**
 * The differences between `before` and `after`, or `undefined` when they are equal (deeply,
 * key order ignored). Objects give an {@link ObjectDiff}, two strings a {@link TextDiff},
 * anything else a {@link ValueChange}.
 */
export function diffValues(
  before: JsonValue | undefined,
  after: JsonValue | undefined,
): ValueDiff | undefined {
  if (jsonEqual(before, after)) return undefined;
  if (isPlainObject(before) && isPlainObject(after)) {
    return { kind: 'object', changes: diffObjects(before as JsonObject, after as JsonObject, '') };
  }
  if (typeof before === 'string' && typeof after === 'string') {
    return { kind: 'text', changes: diffLines(before, after) };
  }
  return { kind: 'value', before, after };
}

function diffObjects(before: JsonObject, after: JsonObject, prefix: string): KeyChange[] {
  const changes: KeyChange[] = [];
  const keys = [...Object.keys(before), ...Object.keys(after).filter((k) => !(k in before))];
  for (const name of keys) {
    const key = `${prefix}${name}`;
    const had = Object.prototype.hasOwnProperty.call(before, name) && before[name] !== undefined;
    const has = Object.prototype.hasOwnProperty.call(after, name) && after[name] !== undefined;
    const b = before[name];
    const a = after[name];
    if (!has) {
      if (had) changes.push({ key, change: 'removed', before: b! });
      continue;
    }
    if (!had) {
      changes.push({ key, change: 'added', after: a! });
      continue;
    }
    if (jsonEqual(b, a)) continue;
    if (isPlainObject(b) && isPlainObject(a)) {
      changes.push(...diffObjects(b as JsonObject, a as JsonObject, `${key}.`));
      continue;
    }
    const change: KeyChange = { key, change: 'changed', before: b!, after: a! };
    if (typeof b === 'string' && typeof a === 'string' && (b.includes('\n') || a.includes('\n'))) {
      change.lines = diffLines(b, a);
    }
    changes.push(change);
  }
  return changes;
}

/**
 * The lines of `after` that are not in `before` (`+`) and those of `before` that are not in
 * `after` (`-`), in order: the common prefix and suffix are dropped, the middle aligned on
 * its longest common subsequence (or, past {@link MAX_LCS_CELLS}, replaced whole).
 */
export function diffLines(before: string, after: string): LineChange[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const removed = (i: number): LineChange => ({ op: '-', line: start + i + 1, text: midA[i]! });
  const added = (j: number): LineChange => ({ op: '+', line: start + j + 1, text: midB[j]! });
  if (midA.length * midB.length > MAX_LCS_CELLS) {
    return [...midA.map((_, i) => removed(i)), ...midB.map((_, j) => added(j))];
  }
  // lcs[i][j]: length of the longest common subsequence of midA[i..] and midB[j..].
  const rows = midA.length + 1;
  const cols = midB.length + 1;
  const lcs = new Uint32Array(rows * cols);
  for (let i = midA.length - 1; i >= 0; i--) {
    for (let j = midB.length - 1; j >= 0; j--) {
      lcs[i * cols + j] =
        midA[i] === midB[j]
          ? lcs[(i + 1) * cols + j + 1]! + 1
          : Math.max(lcs[(i + 1) * cols + j]!, lcs[i * cols + j + 1]!);
    }
  }
  const changes: LineChange[] = [];
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      i++;
      j++;
    } else if (
      j >= midB.length ||
      (i < midA.length && lcs[(i + 1) * cols + j]! >= lcs[i * cols + j + 1]!)
    ) {
      changes.push(removed(i++));
    } else {
      changes.push(added(j++));
    }
  }
  return changes;
}

/** Deep equality of JSON values; object key order ignored. */
function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((value, i) => jsonEqual(value, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}
