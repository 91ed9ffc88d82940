/**
 * What every page handler of the session page reads: the Temporal client and the settings
 * `createSessionUi` checked, as one record (the handlers are module functions over it).
 *
 * @module
 */
import type { PayloadCodec } from '@temporalio/common';
import type { Client } from '@temporalio/client';

/** The session page's settings and state, made once by `createSessionUi`. */
export interface UiContext {
  /** The client the page reads and answers through. */
  client: Client;
  /** Its namespace, the one listed. */
  namespace: string;
  /** Its data converter's codecs, which open the sessions' payloads. */
  codecs: readonly PayloadCodec[];
  /** Most sessions listed. */
  limit: number;
  /** How long a page waits on the server or a worker, ms. */
  timeoutMs: number;
  /** Who answers when the person gives no name. */
  identity: string;
  /** Only the sessions of this task queue, when set. */
  taskQueue: string | undefined;
  /** The token every page needs. */
  token: string;
  /** Whether `given` is the token (compared in constant time). */
  tokenMatches(given: string): boolean;
  /** The cookie keeping the token: named after the port once it listens. */
  cookieName: string;
  /** Clients that answer as a given identity (the Update records the client's). */
  answering: Map<string, Client>;
}
