/**
 * The HTTP side of Temporal's remote codec protocol: the operation a path names, the
 * request body read under its cap, `Payloads` messages as proto3 JSON both ways, and the
 * JSON answers (an {@link HttpError} for a request that gets an error).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload } from '@temporalio/common';
import { messageOf } from '../common/errors.js';

/** A request that gets an error answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** `encode` or `decode`, from the path's last part (any prefix, any query string). */
export function operationOf(url: string): 'encode' | 'decode' | undefined {
  const path = url.split('?')[0]!.replace(/\/+$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === 'encode' || last === 'decode' ? last : undefined;
}

export async function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new HttpError(413, `request body over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function bytesOf(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) {
    throw new HttpError(400, `${where} must be base64 text`);
  }
  return Buffer.from(value, 'base64');
}

/** A `Payloads` message as proto3 JSON. */
export function parsePayloads(body: string): Payload[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new HttpError(400, `body is not JSON: ${messageOf(error)}`);
  }
  const shape = 'body must be {"payloads": [{"metadata": {...}, "data": "..."}]}';
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, shape);
  }
  // proto3 JSON leaves an empty repeated field out: `{}` is a Payloads message with none (the
  // Temporal CLI sends it, and retries until its deadline on anything but an answer).
  const list = (parsed as { payloads?: unknown }).payloads ?? [];
  if (!Array.isArray(list)) throw new HttpError(400, shape);
  return list.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null) {
      throw new HttpError(400, `payloads[${index}] must be an object`);
    }
    const { metadata = {}, data } = item as { metadata?: unknown; data?: unknown };
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      throw new HttpError(400, `payloads[${index}].metadata must be an object`);
    }
    const payload: Payload = { metadata: {} };
    for (const [key, value] of Object.entries(metadata)) {
      payload.metadata![key] = bytesOf(value, `payloads[${index}].metadata.${key}`);
    }
    if (data !== undefined && data !== null)
      payload.data = bytesOf(data, `payloads[${index}].data`);
    return payload;
  });
}

export function payloadToJson(payload: Payload): {
  metadata: Record<string, string>;
  data?: string;
} {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (value) metadata[key] = Buffer.from(value).toString('base64');
  }
  return payload.data
    ? { metadata, data: Buffer.from(payload.data).toString('base64') }
    : { metadata };
}

export function respond(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
