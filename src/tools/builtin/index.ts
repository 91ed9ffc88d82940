/**
 * The built-in tools: `Read`, `Write`, `Edit`, `Bash`, `Glob`, `Grep` (contract §6).
 *
 * @module
 */
import type { ToolDefinition } from '../tool.js';
import { Bash } from './bash.js';
import { Edit } from './edit.js';
import { Glob } from './glob.js';
import { Grep } from './grep.js';
import { Read } from './read.js';
import { Write } from './write.js';

export { Bash, Edit, Glob, Grep, Read, Write };

/**
 * All six built-in tools, in the order `Read`, `Write`, `Edit`, `Bash`, `Glob`, `Grep`.
 * File tools stay inside `context.workspaceRoots`; kinds: `Read`, `Glob`, `Grep` are
 * `readonly`, `Write`, `Edit` are `write`, `Bash` is `execute`.
 *
 * @returns A new array each call (the tool objects themselves are shared and immutable).
 */
export function builtinTools(): ToolDefinition[] {
  return [Read, Write, Edit, Bash, Glob, Grep];
}
