/**
 * The fenced code blocks of the README and the docs, read as the docs' block convention has
 * them (test/unit/repo/docs-blocks.test.ts states it): the info string's first word is the
 * language, the words after it are flags (```ts run: language `ts`, flags `['run']`).
 *
 * `extractBlocks` is pure (markdown in, blocks out) and follows CommonMark's fence rules: a
 * fence is three or more backticks or tildes; it closes at a line of the same character, at
 * least as long, with nothing after it; a backtick fence's info string holds no backtick.
 * Unlike CommonMark, a fence counts at any indentation (list items nest them), and its
 * indentation is taken off its content lines. `docPages` lists the pages to check.
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

/** One fenced code block of a markdown page. */
export interface DocBlock {
  /** The page, relative to the repository root, with `/` separators. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word ('' when there is none). */
  language: string;
  /** The info string's other words, e.g. `['run']`. */
  flags: string[];
  /** The lines between the fences, the fence's indentation removed, joined with `\n`. */
  code: string;
  /** False when the page ended before a closing fence. */
  closed: boolean;
}

const OPENING = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced code block of `markdown`, in order. `file` is copied into each block. */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, rest] = open as unknown as [string, string, string, string];
    if (fence[0] === '`' && rest.includes('`')) continue; // inline code, not a fence
    const words = rest.trim().split(/\s+/).filter(Boolean);
    const closing = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !closing.test(lines[j]!)) {
      body.push(stripIndent(lines[j]!, indent.length));
      j++;
    }
    blocks.push({
      file,
      line: i + 1,
      language: words[0] ?? '',
      flags: words.slice(1),
      code: body.join('\n'),
      closed: j < lines.length,
    });
    i = j;
  }
  return blocks;
}

/**
 * The `file=<name>.ts` flag of a ```ts block: the block is that file of its page's project, so
 * the page's other blocks import it (`./agent.js`) and its shell blocks run it
 * (`npx tsx worker.ts`).
 */
const FILE_FLAG = /^file=[\w-]+\.ts$/;

/** The file a ```ts block names with its `file=` flag, or undefined. */
export function blockFile(block: DocBlock): string | undefined {
  const flag = block.flags.find((f) => FILE_FLAG.test(f));
  return flag?.slice('file='.length);
}

/** The languages a block may have, each with the flags it takes (and ts, `file=<name>.ts`). */
export const LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  ts: ['run'],
  sh: [],
  text: ['output'],
  json: [],
  jsonc: [],
  yaml: [],
};

/** The spellings refused with the one to use instead (one spelling, so none skips a check). */
const RESPELL: Readonly<Record<string, string>> = {
  typescript: 'ts',
  tsx: 'ts',
  mts: 'ts',
  js: 'ts',
  javascript: 'ts',
  mjs: 'ts',
  bash: 'sh',
  shell: 'sh',
  console: 'sh',
  zsh: 'sh',
  'shell-session': 'sh',
  yml: 'yaml',
  txt: 'text',
};

/** What breaks the convention in `block` (its language, flags, closing fence), or undefined. */
export function conventionError(block: DocBlock): string | undefined {
  if (!block.closed) return 'the page ends before this block closes';
  const { language, flags } = block;
  if (language === '') {
    return `a block needs a language: ${Object.keys(LANGUAGES).join(', ')} (or ts run)`;
  }
  const respelled = RESPELL[language.toLowerCase()];
  if (respelled) return `write \`\`\`${respelled}, not \`\`\`${language}`;
  const allowed = LANGUAGES[language];
  if (!allowed) {
    return `unknown language '${language}': use ${Object.keys(LANGUAGES).join(', ')}`;
  }
  const wrong = flags.filter(
    (flag) => !allowed.includes(flag) && !(language === 'ts' && FILE_FLAG.test(flag)),
  );
  if (wrong.length > 0) {
    return `\`\`\`${language} takes ${allowed.length ? `only ${allowed.join(', ')}` : 'no flags'}, not ${wrong.join(' ')}`;
  }
  return undefined;
}

/**
 * The ```text output block that shows what a ```ts run block prints: the next block of its
 * page, when that is one. Its lines are the run's standard output, in order (each trimmed of
 * trailing space; blank lines kept).
 */
export function expectedOutput(blocks: DocBlock[], run: DocBlock): DocBlock | undefined {
  const next = blocks[blocks.indexOf(run) + 1];
  return next?.file === run.file && next.language === 'text' && next.flags.includes('output')
    ? next
    : undefined;
}

/** A ```text output block that does not follow a ```ts run block, as `page:line` messages. */
export function strayOutputs(blocks: DocBlock[]): string[] {
  return blocks.flatMap((block, i) => {
    if (block.language !== 'text' || !block.flags.includes('output')) return [];
    const before = blocks[i - 1];
    const follows =
      before?.file === block.file && before.language === 'ts' && before.flags.includes('run');
    return follows
      ? []
      : [`${block.file}:${block.line}: \`\`\`text output must follow a \`\`\`ts run block`];
  });
}

/** `line` without up to `width` leading spaces. */
function stripIndent(line: string, width: number): string {
  let n = 0;
  while (n < width && line[n] === ' ') n++;
  return line.slice(n);
}

/**
 * The pages whose blocks are checked: README.md and every `.md` under docs/, relative to
 * `repo`, sorted. With `only` (a comma-separated list of such paths, as the
 * `DOC_BLOCKS_ONLY` variable holds) just those of them.
 */
export function docPages(repo: string, only = process.env.DOC_BLOCKS_ONLY): string[] {
  const pages = ['README.md', ...markdownUnder(repo, 'docs')].sort();
  if (!only) return pages;
  const wanted = new Set(
    only
      .split(',')
      .map((path) => path.trim())
      .filter(Boolean),
  );
  const unknown = [...wanted].filter((path) => !pages.includes(path));
  if (unknown.length > 0) {
    throw new Error(`DOC_BLOCKS_ONLY names pages that are not checked: ${unknown.join(', ')}`);
  }
  return pages.filter((page) => wanted.has(page));
}

/** A markdown page: its path relative to the repository and its text. */
export interface Page {
  file: string;
  text: string;
}

/** The checked pages (see {@link docPages}) with their text. */
export function readDocPages(repo: string): Page[] {
  return docPages(repo).map((file) => ({ file, text: readFileSync(join(repo, file), 'utf8') }));
}

/** Every fenced block of the checked pages, page by page, in order. */
export function docBlocks(repo: string): DocBlock[] {
  return readDocPages(repo).flatMap(({ file, text }) => extractBlocks(text, file));
}

function markdownUnder(repo: string, folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(repo, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...markdownUnder(repo, path));
    else if (entry.name.endsWith('.md')) found.push(path.split(sep).join('/'));
  }
  return found;
}
