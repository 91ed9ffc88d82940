/**
 * The HTTP servers the package serves itself (the session page, the codec server): listening
 * and closing them, one way for both.
 *
 * @module
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Listen on `host:port` (port 0: a free one).
 * @returns the port listened on, and the server's URL (`http://host:port`, an IPv6 host in
 *   brackets).
 * @throws the server's `error` (e.g. `EADDRINUSE`) when it cannot listen.
 */
export async function listen(
  server: Server,
  host: string,
  port = 0,
): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const listened = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { port: listened, url: `http://${shownHost}:${listened}` };
}

/** Stop `server` and close every connection it holds (kept-alive ones too). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    server.closeAllConnections();
  });
}
