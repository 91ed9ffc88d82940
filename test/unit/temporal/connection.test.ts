import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TemporalConnectionError } from '../../../src/common/errors.js';
import {
  AGENT_CONNECTION_HINTS,
  checkNamespace,
  probeAddress,
  transportReason,
} from '../../../src/temporal/connection.js';

describe('transportReason', () => {
  // The texts @temporalio/worker's NativeConnection.connect rejects with (1.24).
  it('reads a refused connection out of the core transport error', () => {
    const error = new Error(
      'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))',
    );
    expect(transportReason(error)).toBe('connection refused (nothing listens on that port)');
  });

  it('reads an unknown host out of the core transport error', () => {
    const error = new Error(
      'tonic::transport::Error(Transport, ConnectError(ConnectError("dns error", Custom { kind: Uncategorized, error: "failed to lookup address information: Name or service not known" })))',
    );
    expect(transportReason(error)).toBe('unknown host (the name does not resolve)');
  });

  it('reads a connect timeout (a port that accepts and never answers) out of the core error', () => {
    const error = new Error(
      'transport error: Failed to call GetSystemInfo: Status { code: Unavailable, source: Some(tonic::transport::Error(Transport, TimeoutExpired(()))) }',
    );
    expect(transportReason(error)).toMatch(/^no answer \(the connection timed out/);
  });

  it('reads a port that is not an HTTP/2 gRPC server out of the core error', () => {
    for (const text of [
      'transport error: tonic::transport::Error(Transport, hyper::Error(Io, Custom { kind: BrokenPipe, error: "connection closed" }))',
      'transport error: hyper::Error(Http2, Error { kind: GoAway(b"", FRAME_SIZE_ERROR, Library) })',
    ]) {
      expect(transportReason(new Error(text))).toMatch(/not with Temporal's gRPC/);
    }
  });

  it('keeps an unknown transport error on one line', () => {
    expect(transportReason(new Error('something\nelse'))).toBe('transport error: something else');
  });
});

describe('probeAddress', () => {
  it('finds a closed loopback port refused, which is decisive', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await probeAddress(`127.0.0.1:${port}`)).toMatchObject({
      connected: false,
      decisive: true,
      reason: 'connection refused (nothing listens on that port)',
      error: expect.objectContaining({ code: 'ECONNREFUSED' }),
    });
  });

  it('finds a listening port connected, which says nothing yet', async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      expect(await probeAddress(`127.0.0.1:${port}`)).toMatchObject({
        connected: true,
        decisive: false,
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('says an address that is not host:port is not, without connecting; waiting does not fix it', async () => {
    expect(await probeAddress('http://x:1/y')).toMatchObject({
      decisive: true,
      reason: "'http://x:1/y' is not host:port",
    });
    expect(await probeAddress('http://x:1')).toMatchObject({
      decisive: true,
      reason: "'http://x:1' is not host:port (drop the scheme: 'x:1')",
    });
  });
});

describe('checkNamespace', () => {
  it('turns a NOT_FOUND answer into NAMESPACE_NOT_FOUND naming the namespace and address', async () => {
    const notFound = Object.assign(new Error('5 NOT_FOUND: Namespace nope is not found.'), {
      code: 5,
    });
    const error = await checkNamespace(
      { describeNamespace: () => Promise.reject(notFound) },
      '127.0.0.1:7233',
      'nope',
      AGENT_CONNECTION_HINTS,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalConnectionError);
    expect(error).toMatchObject({
      code: 'NAMESPACE_NOT_FOUND',
      namespace: 'nope',
      address: '127.0.0.1:7233',
      cause: notFound,
    });
  });

  it('lets a server that refuses the call (permissions) pass', async () => {
    const denied = Object.assign(new Error('7 PERMISSION_DENIED: Request unauthorized.'), {
      code: 7,
    });
    await expect(
      checkNamespace(
        { describeNamespace: () => Promise.reject(denied) },
        'a:1',
        'ns',
        AGENT_CONNECTION_HINTS,
      ),
    ).resolves.toBeUndefined();
  });
});
