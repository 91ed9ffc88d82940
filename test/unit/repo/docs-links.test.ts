/**
 * The README and the docs link to files and headings that exist: every relative link resolves
 * to a file of the repository, and every `#anchor` to a heading (GitHub's slugs) of its target.
 * The files they link to ship in the package too (package.json `files`), so the links also
 * work in an installed copy.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const docs = join(repo, 'docs');
const pages = [
  join(repo, 'README.md'),
  ...readdirSync(docs)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(docs, name)),
];

/** Markdown without fenced code blocks and inline code, where links are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links `[text](target)` and reference definitions `[x]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(\s*(?:<([^>\n]*)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g)) {
    targets.push((match[1] ?? match[2])!);
  }
  for (const match of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) {
    targets.push(match[1]!);
  }
  return targets;
}

/** GitHub's anchors of a page's headings (`-1`, `-2` for repeats), and explicit `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = match[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
      .replace(/`([^`]*)`/g, '$1')
      .replace(/<[^>]+>/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const seen = counts.get(base) ?? 0;
    counts.set(base, seen + 1);
    anchors.add(seen === 0 ? base : `${base}-${seen}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

describe('links of README.md and docs/*.md', () => {
  it('finds the pages and their links', () => {
    expect(pages.map((page) => relative(repo, page))).toEqual(
      expect.arrayContaining(['README.md', 'docs/hooks.md', 'docs/testing-hooks.md']),
    );
    expect(linkTargets(readFileSync(join(repo, 'README.md'), 'utf8'))).toContain('docs/hooks.md');
  });

  it.each(pages.map((page) => [relative(repo, page), page]))(
    '%s: every relative link resolves to a file, and every #anchor to a heading of it',
    (_name, page) => {
      const broken: string[] = [];
      for (const target of linkTargets(readFileSync(page, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        if (!file.startsWith(repo) || !existsSync(file)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(file).isDirectory() || !file.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that has no headings`);
        } else if (!anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) {
          broken.push(`${target}: ${relative(repo, file)} has no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    },
  );
});

/** The files package.json `files` ships (plus what npm always includes). */
function shipsInPackage(file: string): boolean {
  const { files = [] } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    files?: string[];
  };
  const path = relative(repo, file).split('\\').join('/');
  if (/^(README|LICENSE|LICENCE)(\.[^/]*)?$/i.test(path) || path === 'package.json') return true;
  return files.some((entry) => {
    const prefix = entry.replace(/^\.\//, '').replace(/\/$/, '');
    return path === prefix || path.startsWith(`${prefix}/`);
  });
}

describe('links of the packed README.md and docs/*.md', () => {
  it.each(pages.map((page) => [relative(repo, page), page]))(
    '%s ships in the package, and so does every file it links to',
    (_name, page) => {
      expect(shipsInPackage(page), `${relative(repo, page)} is not in package.json files`).toBe(
        true,
      );
      const outside = linkTargets(readFileSync(page, 'utf8'))
        .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
        .map((target) => resolve(dirname(page), decodeURIComponent(target.split('#')[0]!)))
        .filter((file) => !shipsInPackage(file))
        .map((file) => relative(repo, file));
      expect(outside).toEqual([]);
    },
  );
});

describe('the link checker itself', () => {
  it('slugs headings as GitHub does, numbering repeats', () => {
    const anchors = anchorsOf(
      '# Hooks\n## Budgets, cancellation and fail-closed\n### `PreToolUse` (tools)\n## Hooks\n' +
        '```md\n# not a heading\n```\n',
    );
    expect([...anchors]).toEqual([
      'hooks',
      'budgets-cancellation-and-fail-closed',
      'pretooluse-tools',
      'hooks-1',
    ]);
  });

  it('reads inline links and reference definitions, not links inside code', () => {
    expect(
      linkTargets(
        'See [a](docs/a.md#x) and [b](<b c.md> "title").\n`[no](code.md)`\n' +
          '```\n[no](fenced.md)\n```\n[ref]: ./ref.md\n',
      ),
    ).toEqual(['docs/a.md#x', 'b c.md', './ref.md']);
  });
});
