/**
 * The digests of an audit log: sha256 (hex) of a value's canonical JSON, and of an Ed25519
 * public key.
 *
 * @module
 */
import { createHash, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../common/json.js';

/** sha256 (hex) of `value`'s canonical JSON (object keys sorted at every depth). */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** `sha256:` and the hex sha256 of a public key's SPKI DER: how a log names its key. */
export function keyFingerprint(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}
