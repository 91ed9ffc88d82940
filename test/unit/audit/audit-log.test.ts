/**
 * The audit log's chain, signature and comparison with the history (issue 37, parts 3 and
 * 4), on the entries of a recorded session (test/fixtures/histories/demo-session.json): a
 * log verifies; a byte changed, an entry removed, two entries swapped, a forged signature, a
 * wrong key, an edited history are each named by entry.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import {
  AuditLogFormatError,
  compareSessionsWithHistory,
  compareWithHistory,
  sessionEntriesAfterLog,
  parseAuditLog,
  sessionAuditEntries,
  verifyAuditChain,
  writeAuditLog,
  type AuditEntryBody,
} from '../../../src/audit/index.js';

const fixture = new URL('../../fixtures/histories/demo-session.json', import.meta.url);
const history = historyFromJSON(JSON.parse(readFileSync(fixture, 'utf8')));
const audit = sessionAuditEntries([{ history }], 'session-demo');
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

function logOf(entries: readonly AuditEntryBody[] = audit.entries): string[] {
  return writeAuditLog(
    entries,
    {
      sessionId: audit.sessionId,
      workflowId: audit.workflowId,
      runIds: audit.runIds,
      covers: { sessions: [audit.sessionId], content: false, encrypted: false },
      exportedAt: new Date('2026-12-05T00:00:00Z'),
    },
    privateKey,
  );
}

function verify(lines: readonly string[], key = publicKey) {
  return verifyAuditChain(parseAuditLog(lines.join('\n')), key);
}

/** The line of the first entry of `kind`. */
function lineOf(lines: readonly string[], kind: string): number {
  return lines.findIndex((line) => (JSON.parse(line) as { kind: string }).kind === kind);
}

describe('audit log', () => {
  it('holds the decisions of the session: dispatches, an approval, tools, model steps', () => {
    const kinds = audit.entries.map((entry) => entry.kind);
    expect(kinds.slice(0, 2)).toEqual(['session', 'run']);
    expect(kinds).toContain('approval');
    expect(kinds.filter((kind) => kind === 'dispatch')).toHaveLength(13);
    expect(kinds.filter((kind) => kind === 'model-step')).toHaveLength(6);
    expect(kinds.at(-1)).toBe('session-end');
    const approval = audit.entries.find((entry) => entry.kind === 'approval')!;
    expect(approval).toMatchObject({ outcome: 'approved', by: '3602@vm', waitedMs: 4940 });
    const tool = audit.entries.find((entry) => entry.kind === 'tool')!;
    expect(tool.inputSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(tool).not.toHaveProperty('input');
  });

  it('of an encrypted session carries digests of reasons and diffs, content only when asked', () => {
    const sealed = sessionAuditEntries([{ history }], 'session-demo', { encrypted: true });
    const aborted = sealed.entries.find(
      (entry) => entry.kind === 'dispatch' && entry.decision === 'abort',
    )!;
    expect(aborted).not.toHaveProperty('reason');
    expect(aborted.reasonSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(sealed.entries)).not.toContain('rm -rf');
    const open = sessionAuditEntries([{ history }], 'session-demo', {
      encrypted: true,
      content: true,
    });
    const tool = open.entries.find((entry) => entry.kind === 'tool')!;
    expect(tool.input).toEqual({ file_path: expect.any(String) });
    expect(JSON.stringify(open.entries)).toContain('rm -rf');
  });

  it('verifies: chain, signature, and the history entry for entry', () => {
    const lines = logOf();
    expect(verify(lines)).toBeUndefined();
    expect(compareWithHistory(parseAuditLog(lines.join('\n')), audit.entries)).toBeUndefined();
  });

  it('names the entry in which one byte was changed', () => {
    const lines = logOf();
    const at = lineOf(lines, 'approval');
    lines[at] = lines[at]!.replace('"by":"3602@vm"', '"by":"3602@vn"');
    expect(verify(lines)).toMatchObject({
      problem: 'changed',
      kind: 'approval',
      seq: at - 1,
      line: at + 1,
    });
    expect(verify(lines)!.message).toContain(
      `entry seq ${at - 1} (approval, line ${at + 1}) was changed`,
    );
  });

  it('names the changed entry when its hash was made again', () => {
    const lines = logOf();
    const at = lineOf(lines, 'approval');
    const entry = JSON.parse(lines[at]!) as Record<string, unknown>;
    entry.by = 'mallory@ops';
    const { hash: _hash, ...body } = entry;
    entry.hash = createHash('sha256').update(canonical(body)).digest('hex');
    lines[at] = JSON.stringify(entry);
    expect(verify(lines)).toMatchObject({ problem: 'changed', kind: 'approval', seq: at - 1 });
  });

  it('names an entry removed', () => {
    const lines = logOf();
    const at = lineOf(lines, 'approval');
    lines.splice(at, 1);
    expect(verify(lines)).toMatchObject({ problem: 'missing', seq: at - 1 });
    expect(verify(lines)!.message).toContain(`entry seq ${at - 1} was removed`);
  });

  it('names the last entry removed (the signature covers one more)', () => {
    const lines = logOf();
    lines.splice(lines.length - 2, 1);
    expect(verify(lines)).toMatchObject({ problem: 'missing' });
    expect(verify(lines)!.message).toContain(
      `entries after seq ${audit.entries.length - 2} were removed`,
    );
  });

  it('names two entries swapped', () => {
    const lines = logOf();
    const at = lineOf(lines, 'approval');
    [lines[at], lines[at + 1]] = [lines[at + 1]!, lines[at]!];
    expect(verify(lines)).toMatchObject({ problem: 'moved', seq: at - 1, kind: 'approval' });
  });

  it('refuses a signature made with another key, and a log checked with another key', () => {
    const lines = logOf();
    const other = generateKeyPairSync('ed25519');
    expect(verify(lines, other.publicKey)).toMatchObject({ problem: 'signature' });
    const signature = JSON.parse(lines.at(-1)!) as { signature: string };
    const forged = Buffer.from(signature.signature, 'base64');
    forged[0] = forged[0]! ^ 1;
    lines[lines.length - 1] = JSON.stringify({
      ...signature,
      signature: forged.toString('base64'),
    });
    expect(verify(lines)).toMatchObject({ problem: 'signature' });
    expect(verify(lines)!.message).toContain('does not verify');
  });

  it('names the header when it was changed', () => {
    const lines = logOf();
    lines[0] = lines[0]!.replace('"content":false', '"content":true');
    expect(verify(lines)).toMatchObject({ problem: 'header', line: 1 });
  });

  it('names the entry of the history that differs, is missing or is not in the log', () => {
    const log = parseAuditLog(logOf().join('\n'));
    const at = audit.entries.findIndex((entry) => entry.kind === 'approval');
    const edited = audit.entries.map((entry, index) =>
      index === at ? { ...entry, by: 'someone-else' } : entry,
    );
    expect(compareWithHistory(log, edited)).toMatchObject({
      problem: 'changed',
      seq: at,
      kind: 'approval',
    });
    expect(compareWithHistory(log, edited)!.message).toContain(': by');
    const shorter = audit.entries.filter((_, index) => index !== at);
    expect(compareWithHistory(log, shorter)).toMatchObject({
      problem: 'extra',
      seq: at,
      kind: 'approval',
    });
    const reset = audit.entries.slice(0, at);
    expect(compareWithHistory(log, reset)).toMatchObject({
      problem: 'extra',
      seq: at,
      kind: 'approval',
    });
    const swapped = [...audit.entries];
    [swapped[at], swapped[at + 1]] = [swapped[at + 1]!, swapped[at]!];
    expect(compareWithHistory(log, swapped)).toMatchObject({ problem: 'moved', seq: at });
    const more = [
      ...audit.entries.slice(0, at),
      { kind: 'tool', toolUseId: 'x' } as AuditEntryBody,
      ...audit.entries.slice(at),
    ];
    expect(compareWithHistory(log, more)).toMatchObject({
      problem: 'missing',
      seq: at,
      kind: 'tool',
    });
  });

  it('names a log cut short after the session closed; a log exported before the end is a prefix', () => {
    // The key holder drops the last entries and signs again: chain and signature hold.
    const cut = audit.entries.slice(0, -3);
    const log = parseAuditLog(logOf(cut).join('\n'));
    expect(verifyAuditChain(log, publicKey)).toBeUndefined();
    // The session had closed before the log's export time: its end is not "after the export".
    expect(compareWithHistory(log, audit.entries)).toMatchObject({
      problem: 'missing',
      seq: cut.length,
    });
    expect(compareWithHistory(log, audit.entries)!.message).toMatch(
      /but the session closed at .*, before the export \(2026-12-05T00:00:00.000Z\): its last 3 entries were left out$/,
    );
    // Exported before the session closed, the same entries are a prefix of what it went on to do.
    const closedAt = (audit.entries.at(-1) as { closedAt?: number }).closedAt!;
    const early = {
      ...log,
      header: { ...log.header, exportedAt: new Date(closedAt - 1).toISOString() },
    };
    expect(compareWithHistory(early, audit.entries)).toBeUndefined();
  });

  it('compares a log of several sessions session by session: each a prefix of its own history', () => {
    // A `--query` log of two sessions, exported while the first still ran: its last entries
    // came after the export, and sit before the second session's in a whole comparison.
    const other = sessionAuditEntries([{ history }], 'session-other');
    const first = audit.entries.slice(0, -3);
    const closedAt = (audit.entries.at(-1) as { closedAt?: number }).closedAt!;
    const lines = writeAuditLog(
      [...first, ...other.entries],
      {
        sessionId: audit.sessionId,
        workflowId: audit.workflowId,
        runIds: audit.runIds,
        covers: { sessions: [audit.sessionId, 'other'], content: false, encrypted: false },
        exportedAt: new Date(closedAt - 1),
      },
      privateKey,
    );
    const log = parseAuditLog(lines.join('\n'));
    expect(verifyAuditChain(log, publicKey)).toBeUndefined();
    const histories = [audit.entries, other.entries];
    expect(compareWithHistory(log, histories.flat())).toBeDefined();
    expect(compareSessionsWithHistory(log, histories)).toBeUndefined();
    expect(sessionEntriesAfterLog(log, histories)).toBe(3);
    // An edit of the second session's history is named by the log's seq.
    const at = other.entries.findIndex((entry) => entry.kind === 'approval');
    const edited = other.entries.map((entry, index) =>
      index === at ? { ...entry, by: 'someone-else' } : entry,
    );
    expect(compareSessionsWithHistory(log, [audit.entries, edited])).toMatchObject({
      problem: 'changed',
      seq: first.length + at,
      kind: 'approval',
    });
    // The first session's log cut short after it closed is still named.
    const late = {
      ...log,
      header: { ...log.header, exportedAt: new Date(closedAt).toISOString() },
    };
    expect(compareSessionsWithHistory(late, histories)).toMatchObject({
      problem: 'missing',
      seq: first.length,
    });
  });

  it('says which line is malformed', () => {
    const lines = logOf();
    lines[3] = '{"seq": 2, "kind": ';
    expect(() => parseAuditLog(lines.join('\n'))).toThrow(AuditLogFormatError);
    expect(() => parseAuditLog(lines.join('\n'))).toThrow(/^line 4: not JSON/);
    expect(() => parseAuditLog(logOf().slice(1).join('\n'))).toThrow(
      'line 1: the first line is not the header',
    );
  });

  it('refuses a line with a key given twice, whose hash would cover only the last value', () => {
    const lines = logOf();
    const at = lines.findIndex((line) => line.includes('"kind":"dispatch"'));
    expect(at).toBeGreaterThan(0);
    // A reader taking the first `kind` would see another entry; JSON.parse keeps the last.
    lines[at] = lines[at]!.replace('{', '{"kind":"forged",');
    expect(() => parseAuditLog(lines.join('\n'))).toThrow(
      `line ${at + 1}: not written as the export writes a line (a key given twice, or spacing or escapes changed)`,
    );
  });

  it('refuses a key that is not Ed25519', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(() =>
      writeAuditLog(
        [],
        {
          sessionId: 's',
          workflowId: 'w',
          runIds: [],
          covers: { sessions: [], content: false, encrypted: false },
          exportedAt: new Date(),
        },
        rsa.privateKey,
      ),
    ).toThrow(/Ed25519 private key/);
    expect(() => verify(logOf(), rsa.publicKey)).toThrow(/Ed25519/);
  });
});

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}
