/**
 * The structural diff `inspect` shows modified inputs and outputs with: changed keys of
 * objects (nested by dotted path), changed lines of texts, whole values otherwise.
 */
import { describe, expect, it } from 'vitest';
import { diffLines, diffValues } from '../../../src/history/diff.js';

describe('diffValues', () => {
  it('equal values (key order aside) have no diff', () => {
    expect(diffValues({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBeUndefined();
    expect(diffValues('same', 'same')).toBeUndefined();
    expect(diffValues(null, null)).toBeUndefined();
  });

  it('objects: only the changed keys, each added, removed or changed with before and after', () => {
    expect(
      diffValues(
        { file_path: 'notes.md', content: 'x', mode: 'w' },
        { file_path: 'NOTES.md', content: 'x', force: true },
      ),
    ).toEqual({
      kind: 'object',
      changes: [
        { key: 'file_path', change: 'changed', before: 'notes.md', after: 'NOTES.md' },
        { key: 'mode', change: 'removed', before: 'w' },
        { key: 'force', change: 'added', after: true },
      ],
    });
  });

  it('nested objects by dotted path; arrays compared whole', () => {
    expect(
      diffValues(
        { opts: { depth: 1, keep: 'k' }, list: [1, 2] },
        { opts: { depth: 2, keep: 'k' }, list: [1, 3] },
      ),
    ).toEqual({
      kind: 'object',
      changes: [
        { key: 'opts.depth', change: 'changed', before: 1, after: 2 },
        { key: 'list', change: 'changed', before: [1, 2], after: [1, 3] },
      ],
    });
  });

  it('a key whose texts have several lines also carries their changed lines', () => {
    const diff = diffValues({ content: 'a\nb\nc' }, { content: 'a\nB\nc' });
    expect(diff).toEqual({
      kind: 'object',
      changes: [
        {
          key: 'content',
          change: 'changed',
          before: 'a\nb\nc',
          after: 'a\nB\nc',
          lines: [
            { op: '-', line: 2, text: 'b' },
            { op: '+', line: 2, text: 'B' },
          ],
        },
      ],
    });
  });

  it('texts: the changed lines', () => {
    expect(diffValues('KEY=secret\nok', 'KEY=[REDACTED]\nok')).toEqual({
      kind: 'text',
      changes: [
        { op: '-', line: 1, text: 'KEY=secret' },
        { op: '+', line: 1, text: 'KEY=[REDACTED]' },
      ],
    });
  });

  it('values of different kinds: both whole', () => {
    expect(diffValues('text', { json: true })).toEqual({
      kind: 'value',
      before: 'text',
      after: { json: true },
    });
    expect(diffValues(undefined, 3)).toEqual({ kind: 'value', before: undefined, after: 3 });
  });
});

describe('diffLines', () => {
  it('aligns on the common lines: an inserted and a deleted line, numbered in their own text', () => {
    expect(diffLines('a\nb\nc\nd', 'a\nc\nx\nd')).toEqual([
      { op: '-', line: 2, text: 'b' },
      { op: '+', line: 3, text: 'x' },
    ]);
  });

  it('a text grown at its end: only the added lines', () => {
    expect(diffLines('one\ntwo', 'one\ntwo\nthree')).toEqual([{ op: '+', line: 3, text: 'three' }]);
  });

  it('very long texts that differ throughout are replaced whole, not aligned', () => {
    const before = Array.from({ length: 1500 }, (_, i) => `a${i}`).join('\n');
    const after = Array.from({ length: 1500 }, (_, i) => `b${i}`).join('\n');
    const changes = diffLines(before, after);
    expect(changes).toHaveLength(3000);
    expect(changes[0]).toEqual({ op: '-', line: 1, text: 'a0' });
    expect(changes[1500]).toEqual({ op: '+', line: 1, text: 'b0' });
  });
});
