/**
 * A TLS-terminating gRPC proxy in front of a plain Temporal frontend, for the connection
 * tests: HTTP/2 over TLS in (optionally requiring a client certificate), plain HTTP/2 out,
 * every request's headers recorded (so a test sees the `authorization` metadata), and
 * certificates made by `openssl` in a temporary folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  connect as h2connect,
  constants,
  createSecureServer,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/** Certificates for one test file: a CA, two server certificates and a client's. */
export interface TestCertificates {
  dir: string;
  caPath: string;
  /** For `127.0.0.1` and `localhost`. */
  serverCertPath: string;
  serverKeyPath: string;
  /** For `temporal.test` only (a server name override must be used). */
  namedCertPath: string;
  namedKeyPath: string;
  /** Client certificate (CN `durable-agent-test-client`) signed by the CA. */
  clientCertPath: string;
  clientKeyPath: string;
  /** A client certificate signed by another CA. */
  strangerCertPath: string;
  strangerKeyPath: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** Make a CA and certificates signed by it (EC P-256, valid 2 days). */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'conn-tls-'));
  const key = (name: string) =>
    openssl(dir, [
      'genpkey',
      '-algorithm',
      'EC',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-out',
      `${name}.key`,
    ]);
  const ca = (name: string) => {
    key(name);
    openssl(dir, [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
  };
  const leaf = (name: string, signer: string, ext: string) => {
    key(name);
    openssl(dir, [
      'req',
      '-new',
      '-key',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    ]);
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${signer}.pem`,
      '-CAkey',
      `${signer}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ]);
  };
  ca('test-ca');
  ca('other-ca');
  const serverExt = (san: string) =>
    `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`;
  const clientExt =
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n';
  leaf('server', 'test-ca', serverExt('IP:127.0.0.1,DNS:localhost'));
  leaf('named', 'test-ca', serverExt('DNS:temporal.test'));
  leaf('durable-agent-test-client', 'test-ca', clientExt);
  leaf('stranger', 'other-ca', clientExt);
  const at = (file: string) => join(dir, file);
  return {
    dir,
    caPath: at('test-ca.pem'),
    serverCertPath: at('server.pem'),
    serverKeyPath: at('server.key'),
    namedCertPath: at('named.pem'),
    namedKeyPath: at('named.key'),
    clientCertPath: at('durable-agent-test-client.pem'),
    clientKeyPath: at('durable-agent-test-client.key'),
    strangerCertPath: at('stranger.pem'),
    strangerKeyPath: at('stranger.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A running proxy. */
export interface TlsProxy {
  /** `127.0.0.1:<port>`. */
  address: string;
  /** Headers of every request forwarded, in order. */
  readonly requests: IncomingHttpHeaders[];
  /** Common names of the client certificates of the TLS connections accepted. */
  readonly clientNames: string[];
  close(): Promise<void>;
}

/** HTTP/2 headers a proxy must not forward. */
const HOP_HEADERS = new Set([
  ':authority',
  ':scheme',
  ':method',
  ':path',
  ':status',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
]);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_HEADERS.has(name) && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Start a TLS proxy on a free loopback port forwarding to the plain frontend `upstream`.
 * @param options.requestCert require a client certificate signed by `caPath` (mTLS).
 */
export async function startTlsProxy(options: {
  upstream: string;
  certPath: string;
  keyPath: string;
  caPath: string;
  requestCert?: boolean;
}): Promise<TlsProxy> {
  const requests: IncomingHttpHeaders[] = [];
  const clientNames: string[] = [];
  const upstreams = new Set<ClientHttp2Session>();
  const downstreams = new Set<ServerHttp2Session>();
  const server = createSecureServer({
    cert: readFileSync(options.certPath),
    key: readFileSync(options.keyPath),
    ca: readFileSync(options.caPath),
    requestCert: options.requestCert ?? false,
    rejectUnauthorized: options.requestCert ?? false,
    allowHTTP1: false,
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    const cn = socket.getPeerCertificate()?.subject?.CN;
    if (typeof cn === 'string') clientNames.push(cn);
  });
  // One upstream HTTP/2 session per downstream session, closed with it.
  server.on('session', (session) => {
    const upstream = h2connect(`http://${options.upstream}`);
    upstream.on('error', () => session.destroy());
    upstreams.add(upstream);
    downstreams.add(session);
    session.on('close', () => {
      downstreams.delete(session);
      upstreams.delete(upstream);
      upstream.close();
    });
    session.on('error', () => undefined);
    (session as unknown as { upstream: ClientHttp2Session }).upstream = upstream;
  });
  server.on('stream', (down: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    requests.push(headers);
    const upstream = (down.session as unknown as { upstream: ClientHttp2Session }).upstream;
    const up = upstream.request({
      ':method': headers[':method'],
      ':path': headers[':path'],
      ...forwardable(headers),
    });
    let trailers: OutgoingHttpHeaders = {};
    down.pipe(up);
    up.on('response', (response) => {
      const status = response[':status'] ?? 200;
      const rest = forwardable(response);
      if (rest['grpc-status'] !== undefined) {
        // A trailers-only answer (a gRPC error before any message): status in the headers.
        down.respond({ ':status': status, ...rest }, { endStream: true });
        return;
      }
      down.respond({ ':status': status, ...rest }, { waitForTrailers: true });
      up.pipe(down);
    });
    up.on('trailers', (t) => (trailers = forwardable(t)));
    down.on('wantTrailers', () => down.sendTrailers(trailers));
    up.on('error', () => {
      if (!down.destroyed) down.close(constants.NGHTTP2_INTERNAL_ERROR);
    });
    up.on('close', () => {
      if (!down.destroyed && !down.headersSent) down.close(up.rstCode);
    });
    down.on('error', () => undefined);
    down.on('close', () => {
      if (!up.destroyed) up.close(constants.NGHTTP2_CANCEL);
    });
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    requests,
    clientNames,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open sessions hold close(): end them.
        for (const d of downstreams) d.destroy();
        for (const u of upstreams) u.destroy();
      });
    },
  };
}
