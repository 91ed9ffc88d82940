/**
 * `Read`: a text file, or a range of its lines.
 *
 * @module
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { utf8PrefixLength } from '../../common/text.js';
import { defineTool } from '../tool.js';
import { resolveInWorkspace, workspacePath } from '../workspace.js';

/** Bytes read from disk at a time. */
const CHUNK_BYTES = 64 * 1024;

/** Room kept under the output cap for the note that says where the text was cut, bytes. */
const NOTE_RESERVE_BYTES = 200;

/** A file whose first this-many bytes hold a NUL byte is taken for binary. */
export const BINARY_SNIFF_BYTES = 8000;

/** Input of {@link Read}. */
const readInputSchema = z.object({
  /** File to read: absolute, or relative to the first workspace root. */
  file_path: z.string().min(1),
  /** First line to return, 1-based (0 is read as 1). @default 1 */
  offset: z.number().int().min(0).optional(),
  /** How many lines to return at most. @default all */
  limit: z.number().int().min(1).optional(),
});

/** One line of a file as raw bytes, terminator included; `overflow` when cut at `keepBytes`. */
interface RawLine {
  bytes: Buffer;
  overflow: boolean;
}

/**
 * The file's lines, in order. A line longer than `keepBytes` is yielded as soon as that
 * much of it is read, with `overflow` set, so a huge one-line file is never held whole.
 */
async function* readLines(
  handle: FileHandle,
  keepBytes: number,
  first: Buffer,
): AsyncGenerator<RawLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let chunk: Buffer = first;
  const buffer = Buffer.alloc(CHUNK_BYTES);
  while (chunk.length > 0) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      if (!skipping) {
        parts.push(chunk.subarray(start, end));
        size += end - start;
      }
      if (!skipping && size > keepBytes) {
        yield { bytes: Buffer.concat(parts, size), overflow: true };
        skipping = true;
      }
      if (newline !== -1) {
        if (!skipping) yield { bytes: Buffer.concat(parts, size), overflow: false };
        parts = [];
        size = 0;
        skipping = false;
      }
      start = end;
    }
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
    chunk = Buffer.from(buffer.subarray(0, bytesRead));
  }
  if (size > 0 && !skipping) yield { bytes: Buffer.concat(parts, size), overflow: false };
}

/**
 * Read a text file inside the workspace. Returns its text as is (no line numbers), or the
 * lines `offset` to `offset + limit - 1`. Text past `maxOutputBytes` is cut at a line end
 * with a note saying which lines were shown and the `offset` to read on from.
 *
 * Error results: a path outside the workspace roots or missing (`WorkspaceError`), a
 * directory, or a binary file (a NUL byte in its first 8000 bytes).
 */
export const Read = defineTool({
  name: 'Read',
  description:
    'Read a text file from the workspace. Optionally give `offset` (1-based first line) and ' +
    '`limit` (number of lines) to read part of a large file. Returns the text as is.',
  kind: 'readonly',
  inputSchema: readInputSchema,
  affectedPaths: (input, context) => [workspacePath(context.workspaceRoots, input.file_path)],
  async execute(input, context) {
    const path = await resolveInWorkspace(context.workspaceRoots, input.file_path, 'read');
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if ((await handle.stat()).isDirectory()) {
        return {
          status: 'error',
          model: `${path} is a directory, not a file; use Glob to list it`,
          error: { type: 'IsADirectory', message: `${path} is a directory` },
        };
      }
      const sniff = Buffer.alloc(BINARY_SNIFF_BYTES);
      const { bytesRead } = await handle.read(sniff, 0, BINARY_SNIFF_BYTES, null);
      const first = sniff.subarray(0, bytesRead);
      if (first.includes(0)) {
        return {
          status: 'error',
          model: `${path} looks like a binary file; Read returns text only`,
          error: { type: 'BinaryFile', message: `${path} is binary` },
        };
      }
      const firstLine = Math.max(1, input.offset ?? 1);
      const lastLine = input.limit === undefined ? Infinity : firstLine + input.limit - 1;
      const budget = Number.isFinite(context.maxOutputBytes)
        ? Math.max(0, context.maxOutputBytes - NOTE_RESERVE_BYTES)
        : Infinity;
      const shown: Buffer[] = [];
      let shownBytes = 0;
      let lineNumber = 0;
      let cut: 'none' | 'lines' | 'inside-line' = 'none';
      for await (const line of readLines(handle, Math.min(budget, 2 ** 30), first)) {
        lineNumber++;
        if (lineNumber < firstLine) continue;
        if (lineNumber > lastLine) break;
        if (line.overflow || shownBytes + line.bytes.length > budget) {
          if (shown.length === 0) {
            // Not even one line fits: show what does of it, on a character boundary.
            const keep = utf8PrefixLength(line.bytes, budget);
            shown.push(line.bytes.subarray(0, keep));
            shownBytes = keep;
            cut = 'inside-line';
          } else {
            cut = 'lines';
          }
          break;
        }
        shown.push(line.bytes);
        shownBytes += line.bytes.length;
      }
      const lines = cut === 'inside-line' ? 1 : shown.length;
      let text = Buffer.concat(shown, shownBytes).toString('utf8');
      if (cut === 'lines') {
        const next = firstLine + lines;
        const separator = text.endsWith('\n') ? '' : '\n';
        text +=
          `${separator}[... output truncated: lines ${firstLine}-${next - 1} shown ` +
          `(${shownBytes} bytes); read on with offset=${next} ...]`;
      } else if (cut === 'inside-line') {
        text +=
          `\n[... output truncated: line ${firstLine} is longer than the output cap; ` +
          `its first ${shownBytes} bytes shown ...]`;
      } else if (lines === 0 && firstLine > 1 && lineNumber < firstLine) {
        text = `[offset ${firstLine} is past the end of the file, which has ${lineNumber} lines]`;
      }
      return {
        status: 'success',
        model: text,
        display: { summary: `Read ${path} (${lines} lines)` },
      };
    } finally {
      await handle.close();
    }
  },
});
