/**
 * Keys for integration tests of encrypted agents: a fresh key ring per run
 * (`encryption: TEST_KEY_RING`) and the `DURABLE_AGENT_ENCRYPTION_KEYS` text of other rings.
 */
import { randomBytes } from 'node:crypto';
import type { EncryptionKeyRing } from '../../src/payloads/encryption.js';

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
