/**
 * The approval digest: what binds a person's answer to the exact tool call they were shown.
 * The session computes it when it asks (`workflows/prompt/tool-permission.ts`), lists it
 * with the pending request, and refuses an answer that names another digest, saying what
 * changed. Pure and workflow-safe.
 *
 * @module
 */
import { canonicalJson, type JsonObject } from './json.js';
import { sha256Hex } from './sha256.js';

/** What an approval digest is the hash of: one tool call as the session would run it. */
export interface ApprovalDigestParts {
  /** The session that asks. */
  sessionId: string;
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The exact input the tool would run with. */
  input: JsonObject;
  /** The session's agent version when it asked (absent in sessions from before versions). */
  version?: string | undefined;
  /** That version's definition fingerprint (absent with `version`). */
  fingerprint?: string | undefined;
}

/** How many hex digits of a digest people are shown (`pending`, the session page). */
const APPROVAL_DIGEST_SHOWN = 12;

/** The fewest hex digits an answer may name a digest by: the ones people are shown. */
const DIGEST_FORM = /^[0-9a-f]{12,64}$/;

/**
 * The approval digest of a call: sha256 (64 lowercase hex digits) of the canonical JSON of
 * its {@link ApprovalDigestParts}.
 */
export function approvalDigest(parts: ApprovalDigestParts): string {
  return sha256Hex(
    canonicalJson({
      sessionId: parts.sessionId,
      toolUseId: parts.toolUseId,
      toolName: parts.toolName,
      input: parts.input,
      ...(parts.version !== undefined ? { version: parts.version } : {}),
      ...(parts.fingerprint !== undefined ? { fingerprint: parts.fingerprint } : {}),
    }),
  );
}

/** The digest as people are shown it: its first {@link APPROVAL_DIGEST_SHOWN} hex digits. */
export function shortDigest(digest: string): string {
  return digest.slice(0, APPROVAL_DIGEST_SHOWN);
}

/**
 * Why `given` is not a digest an answer can name (12 to 64 lowercase hex digits), or
 * `undefined` when it is.
 */
export function whyNotDigest(given: unknown): string | undefined {
  if (typeof given !== 'string') return `digest must be a string, got ${typeof given}`;
  return DIGEST_FORM.test(given)
    ? undefined
    : `digest must be 12 to 64 lowercase hex digits (as 'pending' shows it), got '${given}'`;
}

/** Whether `given` (a whole digest or its first 12 or more hex digits) names `digest`. */
export function digestMatches(given: string, digest: string): boolean {
  return DIGEST_FORM.test(given) && digest.startsWith(given);
}

/**
 * What differs between the call `asked` (whose digest an answer named) and the call `now`
 * (the request it answered), one phrase each, e.g. `the input (keys: content)` or
 * `the agent version (1.0 -> 1.1)`; empty when nothing does.
 */
export function digestChanges(asked: ApprovalDigestParts, now: ApprovalDigestParts): string[] {
  const changes: string[] = [];
  if (asked.sessionId !== now.sessionId) {
    changes.push(`the session ('${asked.sessionId}' -> '${now.sessionId}')`);
  }
  if (asked.toolUseId !== now.toolUseId) {
    changes.push(`the tool call ('${asked.toolUseId}' -> '${now.toolUseId}')`);
  }
  if (asked.toolName !== now.toolName) {
    changes.push(`the tool (${asked.toolName} -> ${now.toolName})`);
  }
  const keys = changedKeys(asked.input, now.input);
  if (keys.length > 0) changes.push(`the input (keys: ${keys.join(', ')})`);
  if (asked.version !== now.version) {
    changes.push(`the agent version (${asked.version ?? 'none'} -> ${now.version ?? 'none'})`);
  } else if (asked.fingerprint !== now.fingerprint) {
    changes.push(
      `the agent definition (fingerprint ${asked.fingerprint ?? 'none'} -> ${now.fingerprint ?? 'none'})`,
    );
  }
  return changes;
}

/** The top-level keys whose values differ (added, removed or changed), sorted. */
function changedKeys(a: JsonObject, b: JsonObject): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((key) => canonicalJson(a[key]) !== canonicalJson(b[key]));
}
