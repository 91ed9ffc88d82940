/**
 * Writing and checking an audit log's chain: each entry's `hash` covers the entry with the
 * previous entry's hash (`prevHash`; the header's for the first), and one Ed25519 signature
 * over the last hash signs them all. Pure apart from node:crypto.
 *
 * @module
 */
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../common/json.js';
import { digestOf, keyFingerprint } from './audit-digest.js';
import {
  AUDIT_FORMAT,
  AUDIT_SIGNATURE_ALGORITHM,
  type AuditCoverage,
  type AuditEntry,
  type AuditEntryBody,
  type AuditHeader,
  type AuditLog,
  type AuditSignature,
} from './audit-types.js';

/** What {@link writeAuditLog} needs beside the entries. */
interface AuditLogMeta {
  sessionId: string;
  workflowId: string;
  runIds: string[];
  covers: AuditCoverage;
  /** When the log is written. */
  exportedAt: Date;
}

/**
 * A signed log of `bodies`: the header line, one line per entry (numbered from 0, chained),
 * the signature line; each line one JSON object, no newline at the end of the last.
 *
 * @param privateKey an Ed25519 private key.
 * @throws {TypeError} when the key is not an Ed25519 private key.
 */
export function writeAuditLog(
  bodies: readonly AuditEntryBody[],
  meta: AuditLogMeta,
  privateKey: KeyObject,
): string[] {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new TypeError(
      `the signing key must be an Ed25519 private key, got a ${privateKey.asymmetricKeyType ?? privateKey.type} ${privateKey.type} key`,
    );
  }
  const fingerprint = keyFingerprint(createPublicKey(privateKey));
  const header = withHash({
    kind: 'header',
    format: AUDIT_FORMAT,
    sessionId: meta.sessionId,
    workflowId: meta.workflowId,
    runIds: meta.runIds,
    covers: meta.covers,
    exportedAt: meta.exportedAt.toISOString(),
    key: { algorithm: AUDIT_SIGNATURE_ALGORITHM, fingerprint },
  }) as unknown as AuditHeader;
  const lines = [JSON.stringify(header)];
  let prevHash = header.hash;
  bodies.forEach((body, seq) => {
    const entry = withHash({ seq, ...body, prevHash }) as AuditEntry;
    prevHash = entry.hash;
    lines.push(JSON.stringify(entry));
  });
  const signed = { headerHash: header.hash, lastHash: prevHash, entries: bodies.length };
  const signature: AuditSignature = {
    kind: 'signature',
    algorithm: AUDIT_SIGNATURE_ALGORITHM,
    fingerprint,
    ...signed,
    signature: sign(null, signedBytes(signed), privateKey).toString('base64'),
  };
  lines.push(JSON.stringify(signature));
  return lines;
}

/** `record` with `hash`: sha256 of its canonical JSON. */
function withHash(record: Record<string, unknown>): Record<string, unknown> {
  return { ...record, hash: digestOf(record) };
}

/** The bytes the signature is over. */
function signedBytes(signed: { headerHash: string; lastHash: string; entries: number }): Buffer {
  return Buffer.from(canonicalJson({ format: AUDIT_FORMAT, ...signed }));
}

/** A log that cannot be read: the line and what is wrong with it (bad input, not tampering). */
export class AuditLogFormatError extends Error {
  /** The 1-based line number, when one line is at fault. */
  readonly line: number | undefined;
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = 'AuditLogFormatError';
    this.line = line;
  }
}

/**
 * Read a log's lines (blank lines at its end ignored).
 * @throws {AuditLogFormatError} naming the line: not JSON, not an object, no header first, no
 *   signature last, an entry without `seq`/`kind`/`prevHash`/`hash`, another format.
 */
export function parseAuditLog(text: string): AuditLog {
  const lines = text.split('\n');
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  if (lines.length < 2) {
    throw new AuditLogFormatError(
      'not an audit log: it needs a header line and a signature line at least',
    );
  }
  const records = lines.map((line, index) => parseLine(line, index + 1));
  const header = records[0]!;
  if (header.kind !== 'header') {
    throw new AuditLogFormatError('the first line is not the header', 1);
  }
  if (header.format !== AUDIT_FORMAT) {
    throw new AuditLogFormatError(
      `format ${JSON.stringify(header.format)} is not ${AUDIT_FORMAT}`,
      1,
    );
  }
  const signature = records.at(-1)!;
  if (signature.kind !== 'signature' || typeof signature.signature !== 'string') {
    throw new AuditLogFormatError('the last line is not the signature', records.length);
  }
  const entries = records.slice(1, -1);
  entries.forEach((entry, index) => {
    const ok =
      typeof entry.seq === 'number' &&
      typeof entry.kind === 'string' &&
      typeof entry.prevHash === 'string' &&
      typeof entry.hash === 'string';
    if (!ok) {
      throw new AuditLogFormatError(
        'not an entry: it needs seq, kind, prevHash and hash',
        index + 2,
      );
    }
  });
  return {
    header: header as unknown as AuditHeader,
    entries: entries as AuditEntry[],
    signature: signature as unknown as AuditSignature,
    entryLines: entries.map((_, index) => index + 2),
  };
}

function parseLine(line: string, number: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new AuditLogFormatError(`not JSON (${(error as Error).message})`, number);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AuditLogFormatError('not a JSON object', number);
  }
  // Exactly as the export wrote it: a key given twice would hash as its last value while a
  // reader (or another parser) takes the first, so any other spelling of the line is refused.
  if (JSON.stringify(value) !== line) {
    throw new AuditLogFormatError(
      'not written as the export writes a line (a key given twice, or spacing or escapes changed)',
      number,
    );
  }
  return value as Record<string, unknown>;
}

/** What is wrong with a log, naming the entry (its seq and kind) and its line. */
export interface AuditProblem {
  /**
   * - `changed`: the entry's content is not what was hashed (or not what the history says);
   * - `missing`: an entry was removed (or the history has one the log lacks);
   * - `extra`: the log has an entry the history does not;
   * - `moved`: entries are out of their order;
   * - `header`: the header was changed, or names another session;
   * - `signature`: the signature does not verify, or covers another chain.
   */
  problem: 'changed' | 'missing' | 'extra' | 'moved' | 'header' | 'signature';
  /** The entry's seq, when one is at fault. */
  seq?: number;
  /** The entry's kind. */
  kind?: string;
  /** The 1-based line of the log. */
  line?: number;
  /** One line saying it all. */
  message: string;
}

/**
 * Check a log's chain and signature with the signer's public key (offline). Returns the
 * first problem, or undefined when every hash and the signature hold.
 *
 * @throws {TypeError} when `publicKey` is not an Ed25519 key.
 */
export function verifyAuditChain(log: AuditLog, publicKey: KeyObject): AuditProblem | undefined {
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw new TypeError(
      `the public key must be an Ed25519 key, got ${publicKey.asymmetricKeyType ?? publicKey.type}`,
    );
  }
  const pub = publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  const { header, entries, signature, entryLines } = log;
  const { hash: headerHash, ...headerBody } = header;
  if (digestOf(headerBody) !== headerHash) {
    return {
      problem: 'header',
      line: 1,
      message: 'line 1 (header) was changed: its hash does not match its content',
    };
  }
  const fingerprint = keyFingerprint(pub);
  if (header.key?.fingerprint !== fingerprint || signature.fingerprint !== fingerprint) {
    return {
      problem: 'signature',
      line: entryLines.length + 2,
      message: `the log was signed by key ${header.key?.fingerprint}, not by the given public key (${fingerprint})`,
    };
  }
  const order = checkOrder(log);
  if (order) return order;
  const chain = checkChain(log);
  if (typeof chain !== 'string') return chain;
  const prevHash = chain;
  const last = entries.at(-1);
  if (
    signature.lastHash !== prevHash ||
    signature.entries !== entries.length ||
    signature.headerHash !== headerHash
  ) {
    return {
      problem: signature.entries > entries.length ? 'missing' : 'signature',
      ...(last ? { seq: last.seq, kind: last.kind, line: entryLines.at(-1)! } : {}),
      message:
        signature.entries > entries.length
          ? `entries after seq ${last?.seq ?? -1} were removed: the signature covers ${signature.entries} entries, the log holds ${entries.length}`
          : `the signature covers another chain (${signature.entries} entries, last hash ${signature.lastHash.slice(0, 12)}…): the log ends at seq ${last?.seq ?? -1}`,
    };
  }
  const signed = signedBytes({ headerHash, lastHash: prevHash, entries: entries.length });
  let valid = false;
  try {
    valid = verify(null, signed, pub, Buffer.from(signature.signature, 'base64'));
  } catch {
    valid = false;
  }
  if (!valid) {
    return {
      problem: 'signature',
      line: entryLines.length + 2,
      message: `the signature (line ${entryLines.length + 2}) does not verify with the given public key`,
    };
  }
  return undefined;
}

/** Each entry's hash and link to the one before; returns the last hash, or the first problem. */
function checkChain(log: AuditLog): AuditProblem | string {
  const { header, entries, entryLines } = log;
  const headerHash = header.hash;
  let prevHash = headerHash;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!;
    const where = { seq: entry.seq, kind: entry.kind, line: entryLines[index]! };
    const { hash, ...body } = entry;
    if (digestOf(body) !== hash) {
      return {
        problem: 'changed',
        ...where,
        message: `${named(entry, where.line)} was changed: its hash does not match its content`,
      };
    }
    if (entry.prevHash !== prevHash) {
      // The entry before was changed and its hash made again: this one still names the old one.
      const before = entries[index - 1];
      if (!before) {
        return {
          problem: 'header',
          line: 1,
          message: `line 1 (header) was changed: ${named(entry, where.line)} names another header hash`,
        };
      }
      const beforeLine = entryLines[index - 1]!;
      return {
        problem: 'changed',
        seq: before.seq,
        kind: before.kind,
        line: beforeLine,
        message: `${named(before, beforeLine)} was changed: ${named(entry, where.line)} names another hash for it`,
      };
    }
    prevHash = hash;
  }
  return prevHash;
}

/** Entries out of sequence: one removed (a seq skipped), or moved (a seq out of place). */
function checkOrder(log: AuditLog): AuditProblem | undefined {
  const { entries, entryLines } = log;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!;
    if (entry.seq === index) continue;
    const line = entryLines[index]!;
    const found = entries.findIndex((other, at) => at > index && other.seq === index);
    if (found >= 0) {
      const moved = entries[found]!;
      return {
        problem: 'moved',
        seq: index,
        kind: moved.kind,
        line: entryLines[found]!,
        message: `entry seq ${index} (${moved.kind}) was moved: it is on line ${entryLines[found]}, after ${named(entry, line)}`,
      };
    }
    const later = entries.some((other) => other.seq > index);
    return {
      problem: later ? 'missing' : 'moved',
      seq: index,
      message: later
        ? `entry seq ${index} was removed: line ${line} holds seq ${entry.seq} (${entry.kind}) where seq ${index} belongs`
        : `${named(entry, line)} is out of order: seq ${index} belongs on line ${line}`,
      line,
    };
  }
  return undefined;
}

function named(entry: { seq: number; kind: string }, line: number): string {
  return `entry seq ${entry.seq} (${entry.kind}, line ${line})`;
}
