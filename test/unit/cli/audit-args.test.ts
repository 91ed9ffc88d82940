/**
 * The command lines of `audit-export` and `audit-verify`: their options parse, each is refused
 * by the other commands, and an empty value is a usage error naming the option.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';

function command(argv: string[]) {
  const parsed = parseCommandLine(argv, {});
  if (parsed.kind !== 'command') throw new Error('expected a command');
  return parsed;
}

describe('audit command lines', () => {
  it('audit-export takes a session, --key, --out, --content; its timeout defaults to 120 s', () => {
    const parsed = command([
      'audit-export',
      's-1',
      '--key',
      'k.pem',
      '--out',
      'a.jsonl',
      '--content',
    ]);
    expect(parsed).toMatchObject({
      command: 'audit-export',
      args: ['s-1'],
      key: 'k.pem',
      out: 'a.jsonl',
      content: true,
      timeoutMs: 120_000,
    });
    expect(
      command(['audit-export', '--query', "AgentName = 'ops'", '--key', 'k.pem']),
    ).toMatchObject({ args: [], query: "AgentName = 'ops'" });
  });

  it('audit-verify takes the log, --pub and --session or --history', () => {
    expect(
      command(['audit-verify', 'a.jsonl', '--pub', 'p.pem', '--history', 'h.json']),
    ).toMatchObject({ args: ['a.jsonl'], pub: 'p.pem', history: 'h.json', content: false });
    expect(() => command(['audit-verify', '--pub', 'p.pem'])).toThrow(
      'audit-verify: missing <log.jsonl>',
    );
  });

  it('refuses the audit options elsewhere and empty values', () => {
    expect(() => command(['inspect', 's-1', '--key', 'k.pem'])).toThrow(
      'inspect does not take --key',
    );
    expect(() => command(['audit-verify', 'a.jsonl', '--key', 'k.pem'])).toThrow(
      'audit-verify does not take --key',
    );
    expect(() => command(['audit-verify', 'a.jsonl', '--pub', ' '])).toThrow(
      '--pub must not be empty',
    );
  });
});
