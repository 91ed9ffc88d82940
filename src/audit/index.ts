/**
 * Verifiable audit logs of sessions: entries from a session's history, chained by sha256 and
 * signed with Ed25519 (`durable-agent audit-export`), checked offline and against the
 * history (`durable-agent audit-verify`). docs/audit.md describes the format.
 *
 * @module
 */
export * from './audit-types.js';
export { digestOf, keyFingerprint } from './audit-digest.js';
export { runEntries, sessionEntry, type AuditEntryOptions } from './audit-entries.js';
export {
  addRunEntries,
  emptySessionAudit,
  sessionAuditEntries,
  type AuditRun,
  type SessionAudit,
} from './audit-session.js';
export {
  AuditLogFormatError,
  parseAuditLog,
  verifyAuditChain,
  writeAuditLog,
  type AuditProblem,
} from './audit-chain.js';
export {
  compareSessionsWithHistory,
  compareWithHistory,
  sessionEntriesAfterLog,
} from './audit-compare.js';
