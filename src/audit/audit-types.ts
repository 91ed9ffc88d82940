/**
 * The lines of an audit log (`durable-agent audit-export`): a header, one entry per decision
 * read from the session's history, each carrying the hash of the one before, and a signature.
 * The format is in docs/audit.md.
 *
 * @module
 */
import type { JsonObject } from '../common/json.js';

/** The format of the log, written in its header: readers refuse any other. */
export const AUDIT_FORMAT = 'durable-agent-audit/1';

/** The signature algorithm of every log of {@link AUDIT_FORMAT}. */
export const AUDIT_SIGNATURE_ALGORITHM = 'ed25519';

/**
 * What an entry records:
 * - `session`: a session the log covers starts (its id, workflow id, agent);
 * - `run`: one of its runs (one per continue-as-new), with the agent's version and
 *   definition fingerprint it ran, how it stood at the end of the history;
 * - `upgrade`: a move to another version (`session.upgrade()`);
 * - `prompt`: a `send` (its text's digest, how it ended);
 * - `dispatch`: a hook dispatch, with each callback's decision, reason and edits (diffs);
 * - `model-step`: a model call, why it stopped, the calls it asked for, its token usage;
 * - `permission`: the policy's answer for a tool call;
 * - `approval`: a person's answer to an ask: who, when, how long it waited, the digest;
 * - `tool`: a tool's run: the digests of its input and output, how it ended;
 * - `session-end`: the SessionEnd marker and how the run ended.
 */
export type AuditEntryKind =
  | 'session'
  | 'run'
  | 'upgrade'
  | 'prompt'
  | 'dispatch'
  | 'model-step'
  | 'permission'
  | 'approval'
  | 'tool'
  | 'session-end';

/** An entry's content: what the history says, before it is numbered and chained. */
export type AuditEntryBody = JsonObject & { kind: AuditEntryKind };

/**
 * One entry line: `seq` (0-based position), `kind`, the entry's fields, `prevHash` (the hash
 * of the entry before, the header's for seq 0) and `hash`: sha256 (hex) of the canonical JSON
 * of the entry without `hash` (seq and prevHash included).
 */
export type AuditEntry = AuditEntryBody & { seq: number; prevHash: string; hash: string };

/** What a log covers: how its entries were made. */
export interface AuditCoverage {
  /** The sessions, in the order their entries come. */
  sessions: string[];
  /** The visibility query that listed them, for a log of a query. */
  query?: string;
  /** Whether content (inputs, outputs, texts) is in the entries, or only its digests. */
  content: boolean;
  /** Whether the session's payloads were encrypted: reasons and diffs are then digests too. */
  encrypted: boolean;
}

/** The first line. `hash`: sha256 of the canonical JSON of the header without `hash`. */
export interface AuditHeader {
  kind: 'header';
  format: typeof AUDIT_FORMAT;
  /** The session's id (the first one's, for a log of a query). */
  sessionId: string;
  /** Its workflow id. */
  workflowId: string;
  /** The run ids (`originalExecutionRunId` of each run's start), oldest first. */
  runIds: string[];
  covers: AuditCoverage;
  /** When the log was written, ISO 8601. */
  exportedAt: string;
  /** The signing key: its algorithm and `sha256:` of its public key (SPKI DER). */
  key: { algorithm: typeof AUDIT_SIGNATURE_ALGORITHM; fingerprint: string };
  hash: string;
}

/**
 * The last line: an Ed25519 signature (base64) over the canonical JSON of
 * `{ format, headerHash, lastHash, entries }`: since each hash covers the one before, it
 * signs the header and every entry in their order.
 */
export interface AuditSignature {
  kind: 'signature';
  algorithm: typeof AUDIT_SIGNATURE_ALGORITHM;
  /** The public key's fingerprint, as in the header. */
  fingerprint: string;
  headerHash: string;
  /** The hash of the last entry (the header's when there is none). */
  lastHash: string;
  /** How many entries the log holds. */
  entries: number;
  signature: string;
}

/** A log read back: its header, entries and signature, with the line each came from. */
export interface AuditLog {
  header: AuditHeader;
  entries: AuditEntry[];
  signature: AuditSignature;
  /** The 1-based line number of each entry, by index. */
  entryLines: number[];
}
