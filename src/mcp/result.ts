/**
 * An MCP tool's `CallToolResult` as our `ToolResult`: what the model reads is text, so each
 * content part becomes text or a line naming it. Pure, apart from `saveFullOutput`.
 *
 * @module
 */
import { isPlainObject, type JsonObject } from '../common/json.js';
import type { ToolResult } from '../common/types.js';
import { capOutput } from '../tools/output.js';
import { asJson } from './tools.js';

/** What {@link mcpResultToToolResult} needs besides the result. */
interface McpResultOptions {
  /** Largest text the model gets, UTF-8 bytes; longer text is cut with a marker. */
  maxOutputBytes: number;
  /**
   * Keep a full output (text cut for the model, or an image, audio or blob's bytes) and get
   * its reference (`sha256:...`). Absent: binary parts stay inline in `metadata.mcpContent`
   * and cut text is lost. A rejection is ignored (the part stays inline, the text is cut).
   */
  saveFullOutput?(content: string | Uint8Array): Promise<string>;
}

/** `error.type` of the result of an MCP call the server answered with `isError: true`. */
const MCP_TOOL_ERROR_TYPE = 'McpToolError';
/** `error.code` of the same. */
const MCP_TOOL_ERROR_CODE = 'MCP_TOOL_ERROR';

/**
 * Map an MCP `CallToolResult` to a `ToolResult`. Nothing the server sends is trusted: a
 * malformed result or part becomes a line of text, never a throw.
 *
 * - `text` parts: their text. Parts are joined with blank lines.
 * - `image` / `audio`: a line `[image image/png, 1234 bytes]`; the bytes go to
 *   `saveFullOutput` when given (the line and `metadata.mcpContent[i].ref` name the ref),
 *   else stay as base64 in `metadata.mcpContent[i].data`.
 * - `resource_link`: `[resource link: <name> <uri> (<mimeType>)]`.
 * - `resource` (embedded): its text, or `[resource <uri>, N bytes]` for a blob (kept as above).
 * - another type: `[<type> content]`.
 * - `structuredContent`: `data`; and, when no part is text, its JSON is the text.
 * - `isError: true`: an error result, `error` `{ type: 'McpToolError', code: 'MCP_TOOL_ERROR',
 *   message: <the text> }`.
 * - Text over `maxOutputBytes` is cut by `capOutput` and, with `saveFullOutput`, kept whole
 *   (`outputRef`). Empty text reads `(no output)`.
 *
 * @param result What `McpConnections.callTool` returned.
 */
export async function mcpResultToToolResult(
  result: unknown,
  options: McpResultOptions,
): Promise<ToolResult> {
  const record = isPlainObject(result) ? result : {};
  const parts = Array.isArray(record['content']) ? (record['content'] as unknown[]) : [];
  const pieces: string[] = [];
  const kept: JsonObject[] = [];
  let hasText = false;
  for (const part of parts) {
    if (isPlainObject(part) && part['type'] === 'text' && typeof part['text'] === 'string') {
      hasText = true;
    }
    pieces.push(await partText(part, kept, options));
  }
  const data = asJson(record['structuredContent']);
  if (!hasText && data !== undefined) pieces.unshift(JSON.stringify(data, null, 2));
  if (parts.length === 0 && data === undefined && 'toolResult' in record) {
    // Servers of protocol 2024-10-07 answer `{ toolResult }`.
    pieces.push(JSON.stringify(asJson(record['toolResult']) ?? null));
  }
  const full = pieces.join('\n\n') || '(no output)';
  const totalBytes = Buffer.byteLength(full, 'utf8');
  const ref =
    totalBytes > options.maxOutputBytes && options.saveFullOutput
      ? await options.saveFullOutput(full).catch(() => undefined)
      : undefined;
  const capped = capOutput(full, options.maxOutputBytes, ref);
  const metadata: JsonObject = {
    outputBytes: totalBytes,
    truncated: capped.truncated,
    ...(kept.length > 0 ? { mcpContent: kept } : {}),
  };
  const common = {
    model: capped.text,
    metadata,
    ...(ref !== undefined ? { outputRef: ref } : {}),
  };
  if (record['isError'] === true) {
    return {
      status: 'error',
      ...common,
      error: { type: MCP_TOOL_ERROR_TYPE, message: capped.text, code: MCP_TOOL_ERROR_CODE },
    };
  }
  return { status: 'success', ...common, ...(data !== undefined ? { data } : {}) };
}

/** The text standing for one content part; binary parts are also pushed to `kept`. */
async function partText(
  part: unknown,
  kept: JsonObject[],
  options: McpResultOptions,
): Promise<string> {
  if (!isPlainObject(part)) return '[malformed content]';
  const type = typeof part['type'] === 'string' ? part['type'] : 'unknown';
  switch (type) {
    case 'text':
      return typeof part['text'] === 'string' ? part['text'] : '[text content]';
    case 'image':
    case 'audio': {
      if (typeof part['data'] !== 'string') return `[${type} content]`;
      const mimeType = typeof part['mimeType'] === 'string' ? part['mimeType'] : 'unknown';
      return keepBinary(`${type} ${mimeType}`, { type, mimeType }, part['data'], kept, options);
    }
    case 'resource_link': {
      const name = stringOr(part['name'], '(unnamed)');
      const mime = typeof part['mimeType'] === 'string' ? ` (${part['mimeType']})` : '';
      return `[resource link: ${name} ${stringOr(part['uri'], '(no uri)')}${mime}]`;
    }
    case 'resource': {
      const resource = isPlainObject(part['resource']) ? part['resource'] : {};
      if (typeof resource['text'] === 'string') return resource['text'];
      const uri = stringOr(resource['uri'], '(no uri)');
      if (typeof resource['blob'] !== 'string') return `[resource ${uri}]`;
      const entry: JsonObject = { type, uri };
      if (typeof resource['mimeType'] === 'string') entry['mimeType'] = resource['mimeType'];
      return keepBinary(`resource ${uri}`, entry, resource['blob'], kept, options);
    }
    default:
      return `[${type} content]`;
  }
}

/**
 * The line `[<what>, N bytes]` of a base64 part, saved through `saveFullOutput` (the line
 * then names the ref) or kept inline in `kept`.
 */
async function keepBinary(
  what: string,
  entry: JsonObject,
  base64: string,
  kept: JsonObject[],
  options: McpResultOptions,
): Promise<string> {
  const bytes = Buffer.from(base64, 'base64');
  const ref = options.saveFullOutput
    ? await options.saveFullOutput(bytes).catch(() => undefined)
    : undefined;
  kept.push({ ...entry, bytes: bytes.length, ...(ref !== undefined ? { ref } : { data: base64 }) });
  return `[${what}, ${bytes.length} bytes${ref !== undefined ? `: ${ref}` : ''}]`;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
