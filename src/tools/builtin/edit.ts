/**
 * `Edit`: replace exact text in a file.
 *
 * @module
 */
import { constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ToolResult } from '../../common/types.js';
import { defineTool } from '../tool.js';
import { resolveInWorkspace, workspacePath } from '../workspace.js';
import { writeFileInWorkspace } from './write.js';

/** Input of {@link Edit}. */
const editInputSchema = z.object({
  /** File to edit: absolute, or relative to the first workspace root. It must exist. */
  file_path: z.string().min(1),
  /** Exact text to find (not a pattern). Must occur once, unless `replace_all`. */
  old_string: z.string().min(1),
  /** Text to put in its place. */
  new_string: z.string(),
  /** Replace every occurrence instead of requiring exactly one. @default false */
  replace_all: z.boolean().optional(),
});

/** How many non-overlapping times `needle` occurs in `haystack`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    count++;
  }
  return count;
}

function editError(type: string, message: string): ToolResult {
  return { status: 'error', model: message, error: { type, message } };
}

/**
 * Replace `old_string` with `new_string` in a file inside the workspace. The text is
 * matched exactly (no patterns, no `$` substitutions). Returns
 * `Edited <path>: replaced N occurrence(s)`.
 *
 * Error results: `old_string` not found (`error.type` `'StringNotFound'`), found more than
 * once without `replace_all` (`'StringNotUnique'`), equal to `new_string` (`'NoChange'`),
 * or a path that is missing or leads outside the workspace roots (`WorkspaceError`).
 */
export const Edit = defineTool({
  name: 'Edit',
  description:
    'Replace exact text in a workspace file. `old_string` must match the file exactly, ' +
    'whitespace included, and occur exactly once unless `replace_all` is true.',
  kind: 'write',
  inputSchema: editInputSchema,
  affectedPaths: (input, context) => [workspacePath(context.workspaceRoots, input.file_path)],
  async execute(input, context) {
    const path = await resolveInWorkspace(context.workspaceRoots, input.file_path, 'read');
    if (input.old_string === input.new_string) {
      return editError('NoChange', 'old_string and new_string are the same; nothing to change');
    }
    const text = await readFile(path, {
      encoding: 'utf8',
      flag: constants.O_RDONLY | constants.O_NOFOLLOW,
    });
    const count = countOccurrences(text, input.old_string);
    if (count === 0) {
      return editError('StringNotFound', `old_string not found in ${path}`);
    }
    if (count > 1 && input.replace_all !== true) {
      return editError(
        'StringNotUnique',
        `old_string occurs ${count} times in ${path}; add surrounding text to make it unique, ` +
          'or set replace_all to replace every occurrence',
      );
    }
    let updated: string;
    if (input.replace_all === true) {
      updated = text.split(input.old_string).join(input.new_string);
    } else {
      const at = text.indexOf(input.old_string);
      updated = text.slice(0, at) + input.new_string + text.slice(at + input.old_string.length);
    }
    await writeFileInWorkspace(path, updated);
    const message = `Edited ${path}: replaced ${count} occurrence${count === 1 ? '' : 's'}`;
    return { status: 'success', model: message, display: { summary: message } };
  },
});
