/**
 * The thread `Grep` searches in. It reads the files and runs the model's regular
 * expression off the worker's event loop: a pattern that backtracks for minutes stalls only
 * this thread, which `Grep` terminates when its time budget runs out or the call is
 * aborted, while heartbeats and every other session on the worker carry on.
 *
 * Loaded only as a thread's entry script (see `grep-thread.ts`); it imports Node built-ins
 * only, so it starts fast and needs nothing resolved at run time. It answers one
 * {@link GrepThreadRequest} at a time, for as long as it lives.
 *
 * @module
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

/** The `workerData` of a search thread. */
export interface GrepThreadData {
  kind: 'durable-agent-grep';
}

/** One search. */
export interface GrepSearchRequest {
  /** Real path of the searched folder; `files` are relative to it. */
  dir: string;
  /** Files to search, in order, already checked to be inside the workspace. */
  files: readonly string[];
  /** The regular expression's source, without flags (already checked to compile). */
  pattern: string;
  /** Stop after this many matching lines; one more sets `capped`. */
  maxMatches: number;
  /** Files larger than this are skipped, bytes. */
  maxFileBytes: number;
  /** A NUL byte within this many first bytes marks a file binary (skipped). */
  binarySniffBytes: number;
  /** A matching line is sent cut to this many UTF-16 units (the caller cuts it for the model). */
  lineUnits: number;
  /** Post a `progress` message every this many files searched. */
  progressEvery: number;
  /**
   * Over a `SharedArrayBuffer`: element 0 is the index in `files` of the file being searched
   * (-1 before the first), readable by the caller while this thread is busy in a regex.
   */
  current: Int32Array;
}

/** What the caller posts to the thread. */
export interface GrepThreadRequest {
  /** Echoed in every message about this search. */
  id: number;
  search: GrepSearchRequest;
}

/** One matching line. */
export interface GrepMatch {
  /** As given in `files`. */
  file: string;
  /** 1-based. */
  lineNumber: number;
  /** The line without its line break, at most `lineUnits` UTF-16 units of it. */
  text: string;
}

/** How a search ended, or how far it got. */
export type GrepSearchMessage =
  | { kind: 'progress'; filesSearched: number }
  | { kind: 'done'; matches: GrepMatch[]; capped: boolean; filesSearched: number }
  | { kind: 'failed'; name: string; message: string };

/** What a search thread posts: a {@link GrepSearchMessage} about search `id`. */
export type GrepThreadMessage = GrepSearchMessage & { id: number };

/** The file's text, or `undefined` when it is binary, too large, a symlink, or unreadable. */
async function readTextFile(path: string, request: GrepSearchRequest): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    if (size > request.maxFileBytes) return undefined;
    const bytes = await handle.readFile();
    if (bytes.subarray(0, request.binarySniffBytes).includes(0)) return undefined;
    return bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

async function search(
  request: GrepSearchRequest,
  post: (message: GrepSearchMessage) => void,
): Promise<void> {
  const regex = new RegExp(request.pattern);
  const matches: GrepMatch[] = [];
  let capped = false;
  let filesSearched = 0;
  search: for (let f = 0; f < request.files.length; f++) {
    Atomics.store(request.current, 0, f);
    const file = request.files[f] as string;
    const text = await readTextFile(join(request.dir, file), request);
    if (text === undefined) continue;
    filesSearched++;
    if (filesSearched % request.progressEvery === 0) post({ kind: 'progress', filesSearched });
    const lines = text.split('\n');
    // A final newline ends the last line; it does not start another.
    if (lines[lines.length - 1] === '') lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] as string).replace(/\r$/, '');
      if (!regex.test(line)) continue;
      if (matches.length >= request.maxMatches) {
        capped = true;
        break search;
      }
      // Only a bound on what crosses threads; Grep itself cuts the line for the model.
      const text = line.length > request.lineUnits ? line.slice(0, request.lineUnits) : line;
      matches.push({ file, lineNumber: i + 1, text });
    }
  }
  post({ kind: 'done', matches, capped, filesSearched });
}

const data = workerData as Partial<GrepThreadData> | null | undefined;
if (parentPort && data?.kind === 'durable-agent-grep') {
  const port: MessagePort = parentPort;
  port.on('message', ({ id, search: request }: GrepThreadRequest) => {
    const post = (message: GrepSearchMessage) =>
      port.postMessage({ ...message, id } satisfies GrepThreadMessage);
    search(request, post).catch((error: unknown) => {
      const { name, message } =
        error instanceof Error ? error : { name: 'Error', message: String(error) };
      post({ kind: 'failed', name, message });
    });
  });
}
