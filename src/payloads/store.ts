/**
 * Where values too large for Temporal's history go: a content-addressed blob store that
 * history refers to by `sha256:<hex>` reference (the claim-check pattern).
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError, EngineError } from '../common/errors.js';

/**
 * A store for large payloads. Workers and clients of one agent must share it: a value put
 * by a worker is read back by another worker after a crash, or by a client.
 *
 * Implement it over shared storage for a cluster (S3, GCS, a database); {@link fileStore}
 * is the embedded default. Values are immutable and named by their content, so `put` may be
 * called twice with the same bytes and must answer the same reference.
 */
export interface PayloadStore {
  /** Store `data`; resolves to its reference once the bytes are durable. */
  put(data: Uint8Array): Promise<string>;
  /**
   * The bytes stored under `ref`.
   * @throws {PayloadNotFoundError} when nothing is stored under it.
   */
  get(ref: string): Promise<Uint8Array>;
}

/** No value under a payload reference (deleted, or another machine's store). */
export class PayloadNotFoundError extends EngineError {
  /** The reference asked for. */
  readonly ref: string;
  constructor(ref: string, where: string) {
    super(
      'PAYLOAD_NOT_FOUND',
      `No payload '${ref}' in ${where}: workers and clients of an agent must share one payload store`,
    );
    this.ref = ref;
  }
}

const REF = /^sha256:([0-9a-f]{64})$/;

/** The reference a content-addressed store gives `data`: `sha256:<64 hex digits>`. */
export function payloadRef(data: Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/**
 * The embedded store: one file per value under `dir` (`<dir>/<2 hex>/<64 hex>`), written
 * to a temporary file, fsynced and renamed, so a crash never leaves half a value under a
 * reference. Reads check the content against the reference.
 *
 * Good for one machine, or several sharing a filesystem; a cluster passes its own
 * {@link PayloadStore}. Nothing is ever deleted: remove the folder of a finished session's
 * values when you no longer need them.
 *
 * @param dir Folder of the values; created on the first `put`.
 * @default dir `.durable-agent/payloads` under the working directory (see `createAgent`)
 */
export function fileStore(dir: string): PayloadStore {
  if (typeof dir !== 'string' || dir === '') {
    throw new ConfigError('fileStore: dir must be a non-empty path');
  }
  const root = resolve(dir);
  const pathOf = (hex: string) => join(root, hex.slice(0, 2), hex);
  return {
    async put(data) {
      const ref = payloadRef(data);
      const hex = ref.slice('sha256:'.length);
      const target = pathOf(hex);
      await mkdir(join(root, hex.slice(0, 2)), { recursive: true });
      const temp = `${target}.${randomUUID()}.tmp`;
      const file = await open(temp, 'w');
      try {
        await file.writeFile(data);
        await file.sync();
      } finally {
        await file.close();
      }
      try {
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      return ref;
    },
    async get(ref) {
      const match = REF.exec(ref);
      if (!match) throw new PayloadNotFoundError(String(ref), `the store at ${root}`);
      let data: Buffer;
      try {
        data = await readFile(pathOf(match[1]!));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          throw new PayloadNotFoundError(ref, `the store at ${root}`);
        }
        throw error;
      }
      if (payloadRef(data) !== ref) {
        throw new EngineError(
          'PAYLOAD_CORRUPT',
          `Payload '${ref}' in ${root} is corrupt: its content differs from its reference`,
        );
      }
      return data;
    },
  };
}

/** Whether `value` implements {@link PayloadStore}. */
export function isPayloadStore(value: unknown): value is PayloadStore {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PayloadStore).put === 'function' &&
    typeof (value as PayloadStore).get === 'function'
  );
}
