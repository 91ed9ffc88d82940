/**
 * `Write`: create or overwrite a file.
 *
 * @module
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineTool } from '../tool.js';
import { resolveInWorkspace, workspacePath } from '../workspace.js';

/** Input of {@link Write}. */
const writeInputSchema = z.object({
  /** File to write: absolute, or relative to the first workspace root. */
  file_path: z.string().min(1),
  /** The whole new content, written as UTF-8. */
  content: z.string(),
});

/**
 * Write `content` to `path` (already checked by the workspace guard), replacing what was
 * there. The last component is opened with `O_NOFOLLOW`, so a symlink swapped in after the
 * check is refused rather than written through.
 *
 * @returns The number of bytes written.
 */
export async function writeFileInWorkspace(path: string, content: string): Promise<number> {
  const bytes = Buffer.from(content, 'utf8');
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o666,
  );
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return bytes.length;
}

/**
 * Create or overwrite a file inside the workspace, creating missing parent folders (inside
 * the workspace too). Returns `Wrote N bytes to <path>`, N in UTF-8 bytes.
 *
 * Error results: a path that leads outside the workspace roots, through symlinks included
 * (`WorkspaceError`), or a path that names a folder.
 */
export const Write = defineTool({
  name: 'Write',
  description:
    'Create or overwrite a file in the workspace with the given content. Parent folders are ' +
    'created. Prefer Edit for changing part of an existing file.',
  kind: 'write',
  inputSchema: writeInputSchema,
  affectedPaths: (input, context) => [workspacePath(context.workspaceRoots, input.file_path)],
  async execute(input, context) {
    const path = await resolveInWorkspace(context.workspaceRoots, input.file_path, 'write');
    await mkdir(dirname(path), { recursive: true });
    const written = await writeFileInWorkspace(path, input.content);
    const message = `Wrote ${written} bytes to ${path}`;
    return { status: 'success', model: message, display: { summary: message } };
  },
});
