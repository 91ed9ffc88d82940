/**
 * The codec server's HTTP contract over a real loopback socket: Temporal's remote codec
 * protocol, the bearer token, the Web UI's CORS, `X-Namespace`, and its error answers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodecServer, type CodecServer } from '../../../src/codec-server/index.js';
import { ConfigError } from '../../../src/common/errors.js';

const TOKEN = 'unit-test-token-0123456789';
const UI = 'http://127.0.0.1:8233';
const ring = { currentKeyId: 'k1', keys: { k1: randomBytes(32) } };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const plain = { payloads: [{ metadata: { encoding: b64('json/plain') }, data: b64('"secret"') }] };

let server: CodecServer;

beforeAll(async () => {
  server = await createCodecServer({
    keys: ring,
    token: TOKEN,
    corsOrigins: [UI],
    namespaces: ['default'],
  });
});
afterAll(async () => {
  await server.close();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Namespace': 'default',
      Authorization: `Bearer ${TOKEN}`,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('createCodecServer', () => {
  it('encodes to sealed payloads and decodes them back, under any path prefix and query', async () => {
    const encoded = await post('/encode', plain);
    expect(encoded.status).toBe(200);
    const sealed = (await encoded.json()) as typeof plain & {
      payloads: { metadata: Record<string, string> }[];
    };
    expect(Buffer.from(sealed.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe(
      'binary/encrypted',
    );
    expect(
      Buffer.from(sealed.payloads[0]!.metadata['encryption-key-id']!, 'base64').toString(),
    ).toBe('k1');
    expect(JSON.stringify(sealed)).not.toContain(b64('"secret"'));
    const decoded = await post('/codec/default/decode?preserveStorageRefs=true', sealed);
    expect(decoded.status).toBe(200);
    expect(await decoded.json()).toEqual(plain);
  });

  it('refuses a request without a bearer token, with another token or another scheme: 401', async () => {
    for (const authorization of ['', 'Bearer wrong-token-0123456789', `Basic ${TOKEN}`]) {
      const response = await post('/decode', plain, { Authorization: authorization });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it("answers the Web UI's preflight without a token, allowing its origin, credentials and headers", async () => {
    const response = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: UI,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,x-namespace',
        'Access-Control-Request-Private-Network': 'true',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(UI);
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('access-control-allow-private-network')).toBe('true');
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const header of ['authorization', 'content-type', 'x-namespace']) {
      expect(allowed).toContain(header);
    }
    const answer = await post('/decode', plain, { Origin: UI });
    expect(answer.headers.get('access-control-allow-origin')).toBe(UI);
  });

  it('refuses an origin it does not list: 403, no CORS headers', async () => {
    const response = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves only its namespaces (X-Namespace): another, or none, gets 404', async () => {
    expect((await post('/decode', plain, { 'X-Namespace': 'other' })).status).toBe(404);
    const none = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(plain),
    });
    expect(none.status).toBe(404);
  });

  it('answers 422 naming the key id for a payload its ring cannot open', async () => {
    const other = await createCodecServer({
      keys: { currentKeyId: 'k1', keys: { k1: randomBytes(32) } },
      token: TOKEN,
    });
    try {
      const sealed = await (await post('/encode', plain)).json();
      const response = await fetch(`${other.url}/decode`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(sealed),
      });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ code: 'PAYLOAD_UNDECRYPTABLE', keyId: 'k1' });
    } finally {
      await other.close();
    }
  });

  it('answers an empty Payloads message (`{}` in proto3 JSON, as the Temporal CLI sends it) with none', async () => {
    for (const path of ['/decode', '/encode']) {
      const response = await post(path, {});
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ payloads: [] });
    }
  });

  it('answers 400 for a body that is not Payloads JSON, 404 for another path, 405 for GET', async () => {
    expect((await post('/decode', '{not json')).status).toBe(400);
    expect((await post('/decode', '[]')).status).toBe(400);
    expect((await post('/decode', { payloads: 'x' })).status).toBe(400);
    expect((await post('/decode', { payloads: [{ data: 'not base64!' }] })).status).toBe(400);
    expect((await post('/other', plain)).status).toBe(404);
    expect((await fetch(`${server.url}/decode`)).status).toBe(405);
  });

  it('refuses a short token, a CORS entry that is not an origin, and both or neither of keys and codecs', async () => {
    await expect(createCodecServer({ keys: ring, token: 'short' })).rejects.toThrow(ConfigError);
    await expect(
      createCodecServer({ keys: ring, token: TOKEN, corsOrigins: ['http://localhost:8233/'] }),
    ).rejects.toThrow(/not an origin/);
    await expect(createCodecServer({ token: TOKEN })).rejects.toThrow(/one of keys .* or codecs/);
    await expect(createCodecServer({ keys: ring, codecs: [], token: TOKEN })).rejects.toThrow(
      /one of keys/,
    );
  });
});
