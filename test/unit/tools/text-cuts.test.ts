/**
 * The built-in tools' own cuts, with astral characters (two UTF-16 units, four UTF-8 bytes)
 * at every offset around the cut: what the model gets never holds a lone surrogate or a
 * broken UTF-8 sequence, keeps its bound, and is the head of the real text.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bash } from '../../../src/tools/builtin/bash.js';
import { GREP_MAX_LINE_CHARS, Grep } from '../../../src/tools/builtin/grep.js';
import { Read } from '../../../src/tools/builtin/read.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { makeContext, makeSandbox, type Sandbox } from './fixtures.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function expectWholeCharacters(text: string): void {
  expect(LONE_SURROGATE.test(text)).toBe(false);
  expect((text as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  expect(text).not.toContain('\uFFFD');
}

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
});
afterAll(async () => {
  await box.cleanup();
});

describe('tool cuts', () => {
  it('Grep cuts a long matching line to GREP_MAX_LINE_CHARS, never inside a character', async () => {
    for (const char of ['😀', '𝄞']) {
      for (let at = GREP_MAX_LINE_CHARS - 4; at <= GREP_MAX_LINE_CHARS + 2; at++) {
        const line = 'needle'.padEnd(at, 'a') + char + 'b'.repeat(100);
        await writeFile(join(box.root, 'long.txt'), `${line}\n`);
        const result = await runTool(
          Grep,
          { pattern: 'needle', path: 'long.txt' },
          makeContext([box.root]),
        );
        expect(result.status).toBe('success');
        expectWholeCharacters(result.model);
        const shown = /long\.txt:1:(.*)\.\.\.$/m.exec(result.model)?.[1];
        expect(shown, result.model).toBeDefined();
        expect(line.startsWith(shown!)).toBe(true);
        expect(shown!.length).toBeLessThanOrEqual(GREP_MAX_LINE_CHARS);
      }
    }
  });

  it("Bash's summary cuts a long command to 77 characters, never inside a character", async () => {
    for (let at = 73; at <= 79; at++) {
      const command = `true ${'#'.repeat(at - 5)}😀${'#'.repeat(20)}`;
      const result = await runTool(Bash, { command }, makeContext([box.root]));
      const summary = result.display?.summary ?? '';
      expectWholeCharacters(summary);
      const head = /^\$ (.*)\.\.\. \(/.exec(summary)?.[1];
      expect(head, summary).toBeDefined();
      expect(command.startsWith(head!)).toBe(true);
      expect(head!.length).toBeLessThanOrEqual(77);
    }
  });

  it("Bash's output cap and its saved full output end on whole characters", async () => {
    const maxOutputBytes = 400;
    const maxFullOutputBytes = 600;
    // Shifting the emoji run by 0 to 3 bytes puts each of its bytes at both cuts.
    for (let shift = 0; shift < 4; shift++) {
      const output = 'x'.repeat(shift) + '😀'.repeat(400);
      await writeFile(join(box.root, 'out.txt'), output);
      const saved: Buffer[] = [];
      const result = await runTool(
        Bash,
        { command: 'cat out.txt' },
        makeContext([box.root], {
          maxOutputBytes,
          maxFullOutputBytes,
          saveFullOutput: async (data) => {
            saved.push(Buffer.from(data));
            return 'sha256:test';
          },
        }),
      );
      expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(maxOutputBytes);
      expectWholeCharacters(result.model);
      expect(output.startsWith(result.model.split('\n[... output truncated:')[0]!)).toBe(true);
      expect(saved).toHaveLength(1);
      expect(saved[0]!.length).toBeLessThanOrEqual(maxFullOutputBytes);
      const kept = saved[0]!.toString('utf8');
      expectWholeCharacters(kept);
      expect(output.startsWith(kept)).toBe(true);
      expect(result.model).toContain(`first ${saved[0]!.length} bytes kept`);
    }
  });

  it("Read's cut inside a line too long for the cap ends on a whole character", async () => {
    const maxOutputBytes = 1000;
    for (let shift = 0; shift < 4; shift++) {
      const line = 'y'.repeat(shift) + '𝄞'.repeat(600);
      await writeFile(join(box.root, 'line.txt'), `${line}\n`);
      const result = await runTool(
        Read,
        { file_path: 'line.txt' },
        makeContext([box.root], { maxOutputBytes }),
      );
      expect(result.status).toBe('success');
      expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(maxOutputBytes);
      expectWholeCharacters(result.model);
      const head = result.model.split('\n[... output truncated:')[0]!;
      expect(line.startsWith(head)).toBe(true);
    }
  });
});
