/**
 * The commands of a docs ```sh block and what they must name: `npm run <script>` a script of
 * the package.json where it runs, `durable-agent <command>` (also `npx durable-agent`,
 * `npx tsx src/cli/main.ts`, `npm run cli --`) a command of the CLI's command table with
 * options that command takes, `npx tsx <file>` a file that exists. Other programs
 * (`temporal`, `docker`, `git` ...) are not checked.
 *
 * Pure: the filesystem and the CLI's table come in as a {@link ShellWorld}.
 *
 * @module
 */
import { posix } from 'node:path';

/** What the checks look things up in. */
export interface ShellWorld {
  /** The scripts of `<dir>/package.json` (dir relative to the repository, '' for its root), or undefined when there is none. */
  scripts(dir: string): readonly string[] | undefined;
  /** Whether a file or folder exists, relative to the repository. */
  exists(path: string): boolean;
  /** The CLI's commands, each with the options it takes besides the global ones. */
  commands: Readonly<Record<string, readonly string[]>>;
  /** The options every command takes. */
  globalOptions: readonly string[];
}

/**
 * The commands of a shell block, each as its words. A block where some line starts with
 * `$ ` is a transcript: only those lines are commands. Handles quotes, `\` line ends,
 * `#` comments, `&&`, `||`, `;`, `|`, `&`, and takes each `$(...)` as a command too.
 */
export function shellCommands(code: string): string[][] {
  let text = code;
  const lines = text.split('\n');
  if (lines.some((line) => line.startsWith('$ '))) {
    text = lines
      .filter((line) => line.startsWith('$ '))
      .map((line) => line.slice(2))
      .join('\n');
  }
  text = text.replace(/\\\n/g, ' ');
  const inner = [...text.matchAll(/\$\(([^()]*)\)/g)].map((match) => match[1]!);
  return [text, ...inner].flatMap(splitCommands);
}

function splitCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      const end = close < 0 ? text.length : close;
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else if (c === '#' && word === undefined) {
      const eol = text.indexOf('\n', i);
      i = (eol < 0 ? text.length : eol) - 1;
    } else if (c === '\n' || c === ';' || c === '|' || c === '&') {
      endCommand();
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand();
  return commands;
}

/**
 * What is wrong with the commands of one block, one sentence each. `cd <dir>` moves where
 * later commands run (a folder outside the repository, such as a project the docs create,
 * stops the package.json and file checks).
 */
export function shellErrors(code: string, world: ShellWorld): string[] {
  const errors: string[] = [];
  let cwd: string | undefined = '';
  for (const command of shellCommands(code)) {
    const start = command.findIndex((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    if (start < 0) continue; // only variable assignments
    const words = command.slice(start);
    const [program, ...args] = words as [string, ...string[]];
    if (program === 'cd') {
      const target: string | undefined =
        args[0] === undefined || cwd === undefined ? undefined : posix.join(cwd, args[0]);
      cwd = target !== undefined && world.exists(target) ? target : undefined;
      continue;
    }
    const error = commandError(program, args, cwd, world);
    if (error) errors.push(`\`${words.join(' ')}\`: ${error}`);
  }
  return errors;
}

function commandError(
  program: string,
  args: readonly string[],
  cwd: string | undefined,
  world: ShellWorld,
): string | undefined {
  if (program === 'durable-agent') return cliError(args, world);
  if (program === 'npx' && args[0] === 'durable-agent') return cliError(args.slice(1), world);
  if ((program === 'npx' && args[0] === 'tsx') || program === 'tsx') {
    const rest = program === 'tsx' ? args : args.slice(1);
    const file = rest.find((arg) => !arg.startsWith('-'));
    if (file === undefined || cwd === undefined) return undefined;
    const path = posix.join(cwd, file);
    if (!world.exists(path)) return `no file ${path}`;
    if (path === 'src/cli/main.ts') return cliError(rest.slice(rest.indexOf(file) + 1), world);
    return undefined;
  }
  if (program === 'npm') return npmError(args, cwd, world);
  return undefined;
}

function npmError(
  args: readonly string[],
  cwd: string | undefined,
  world: ShellWorld,
): string | undefined {
  const [verb, ...rest] = args;
  let script: string | undefined;
  let after: readonly string[] = [];
  if (verb === 'run' || verb === 'run-script') {
    const at = rest.findIndex((arg) => !arg.startsWith('-'));
    if (at < 0) return undefined; // `npm run` alone lists the scripts
    script = rest[at];
    after = rest.slice(at + 1);
  } else if (verb === 'test' || verb === 't' || verb === 'start') {
    script = verb === 't' ? 'test' : verb;
  }
  if (script === undefined || cwd === undefined) return undefined;
  const scripts = world.scripts(cwd);
  if (scripts === undefined) return `no package.json in ${cwd || 'the repository root'}`;
  if (!scripts.includes(script)) {
    return `no script '${script}' in ${posix.join(cwd, 'package.json')}`;
  }
  if (cwd === '' && script === 'cli') {
    return cliError(after[0] === '--' ? after.slice(1) : after, world);
  }
  return undefined;
}

/** A command line of `durable-agent`: its command exists and takes each `--option` given. */
function cliError(args: readonly string[], world: ShellWorld): string | undefined {
  const words = args.map((arg) => arg.replace(/^\[+|\]+$/g, ''));
  const command = words.find((word) => !word.startsWith('-'));
  const options = words
    .filter((word) => word.startsWith('--'))
    .map((word) => word.slice(2).split('=')[0]!);
  if (command === undefined) {
    const unknown = options.filter((o) => !['help', 'version'].includes(o));
    return unknown.length > 0
      ? `durable-agent takes no --${unknown[0]} without a command`
      : undefined;
  }
  const own = world.commands[command];
  if (own === undefined) {
    return `durable-agent has no command '${command}' (${Object.keys(world.commands).join(', ')})`;
  }
  const wrong = options.filter((o) => !own.includes(o) && !world.globalOptions.includes(o));
  return wrong.length > 0
    ? `durable-agent ${command} does not take --${wrong.join(', --')}`
    : undefined;
}
