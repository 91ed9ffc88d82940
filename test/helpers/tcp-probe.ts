/**
 * A loopback TCP listener that counts the connections made to it: a test that something
 * failed "before connecting to anything" checks that none was made, an order rather than a
 * time. With `forwardTo`, each connection is piped to that address (a real server stays
 * reachable through it).
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProbe {
  /** `127.0.0.1:<port>`, to pass as a server address. */
  address: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Listen on a free loopback port. */
export async function tcpProbe(forwardTo?: string): Promise<TcpProbe> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((socket) => {
    accepted++;
    track(socket);
    if (!forwardTo) return;
    const [host, port] = [
      forwardTo.slice(0, forwardTo.lastIndexOf(':')),
      forwardTo.slice(forwardTo.lastIndexOf(':') + 1),
    ];
    const upstream = connect(Number(port), host);
    track(upstream);
    socket.pipe(upstream).pipe(socket);
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
