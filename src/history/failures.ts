/**
 * What a history's failures say, as the timeline reads them: a Temporal `Failure` (an
 * activity's, a marker's, an Update's, the workflow's) and its message, application failure
 * type, timeout and cause chain. Pure.
 *
 * @module
 */
import type { PayloadList } from './decode.js';

/** A Temporal failure as a history holds it (the fields the timeline reads). */
export type Failure = {
  message?: string | null;
  cause?: Failure | null;
  timeoutFailureInfo?: { timeoutType?: number | string | null } | null;
  applicationFailureInfo?: { type?: string | null } | null;
  canceledFailureInfo?: { details?: PayloadList } | null;
} | null;

/** The failure's own message, when it has one. */
export function failureMessage(failure: Failure): string | undefined {
  return typeof failure?.message === 'string' && failure.message !== ''
    ? failure.message
    : undefined;
}

/** The application failure type in a failure's chain, if any. */
export function failureTypeOf(failure: Failure | undefined): string | undefined {
  for (let f = failure ?? null, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    const type = f.applicationFailureInfo?.type;
    if (typeof type === 'string') return type;
  }
  return undefined;
}

/** Whether a failure's chain holds a timeout. */
export function hasTimeout(failure: Failure): boolean {
  for (let f = failure, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    if (f.timeoutFailureInfo) return true;
  }
  return false;
}

/** The deepest failure of a chain (a local activity's marker wraps the activity's own). */
export function innermost(failure: Failure): Failure {
  let f = failure;
  for (let depth = 0; f?.cause && depth < 8; depth++) f = f.cause;
  return f;
}

const TIMEOUT_TYPES: Record<number, string> = {
  1: 'START_TO_CLOSE',
  2: 'SCHEDULE_TO_START',
  3: 'SCHEDULE_TO_CLOSE',
  4: 'HEARTBEAT',
};

/** The timeout type of an activity timeout failure, named as the SDK names it (`HEARTBEAT`). */
export function timeoutTypeOf(failure: Failure): string {
  for (let f = failure, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    const type = f.timeoutFailureInfo?.timeoutType;
    if (typeof type === 'number') return TIMEOUT_TYPES[type] ?? String(type);
    if (typeof type === 'string') return type.replace(/^TIMEOUT_TYPE_/, '');
  }
  return 'UNKNOWN';
}
