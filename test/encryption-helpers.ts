/**
 * An encrypted agent for integration tests, until `createAgent` takes an `encryption` option:
 * a test file replaces the agent's data converter with one that seals every payload under
 * {@link TEST_KEY_RING} (the encryption codec first, the payload store's second, the agent's
 * order), by
 *
 *     vi.mock('../../src/payloads/data-converter.js', () => import('../encryption-helpers.js'));
 *
 * Everything else is real: the worker, the client, the server, the codec.
 */
import { randomBytes } from 'node:crypto';
import type { DataConverter } from '@temporalio/common';
import { encryptedCodecs } from '../src/payloads/encrypted-converter.js';
import type { EncryptionKeyRing } from '../src/payloads/encryption.js';
import type { ResolvedAgentOptions } from '../src/agent/options.js';

/** Id of the key the test agent seals with. */
export const TEST_KEY_ID = 'test-2026-01';

/** The test agent's key (fresh each run), base64. */
export const TEST_KEY = randomBytes(32).toString('base64');

/** The ring the test agent seals with. */
export const TEST_KEY_RING: EncryptionKeyRing = {
  currentKeyId: TEST_KEY_ID,
  keys: { [TEST_KEY_ID]: TEST_KEY },
};

/** A fresh random key, base64. */
export const newKey = (): string => randomBytes(32).toString('base64');

/** `DURABLE_AGENT_ENCRYPTION_KEYS` for `entries` (`[keyId, base64Key]`, the current first). */
export const keysVariable = (...entries: [string, string][]): string =>
  entries.map(([id, key]) => `${id}:${key}`).join(',');

/** Stands in for src/payloads/data-converter.ts's `dataConverterOf`: always encrypted. */
export function dataConverterOf(
  options: Pick<ResolvedAgentOptions, 'payloadStore' | 'offloadPayloadBytes'>,
): DataConverter {
  return { payloadCodecs: encryptedCodecs(TEST_KEY_RING, options) };
}
