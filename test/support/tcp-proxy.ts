// A loopback TCP proxy in front of an API server, for tests that cut connections (TLS passes through untouched).
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** The target URL with the proxy's port (`https://127.0.0.1:<port>`): give it to the client under test. */
  readonly url: string;
  /** Client connections open now. */
  readonly connections: number;
  /** Destroys every open connection, as a network failure would (in-flight watches break mid-stream). */
  dropAll(): void;
  /** While down, new connections are accepted and destroyed at once (the server is unreachable). */
  setDown(down: boolean): void;
  /** Drops everything and stops listening. */
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port that forwards every connection to `target` (an `http(s)://host:port` URL). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const url = new URL(target);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(port, url.hostname);
    open.add(client);
    const close = (): void => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('tcp proxy: no port');
  const dropAll = (): void => {
    for (const socket of [...open]) socket.destroy();
  };
  return {
    url: `${url.protocol}//127.0.0.1:${address.port}`,
    get connections() {
      return open.size;
    },
    dropAll,
    setDown: (value) => {
      down = value;
    },
    close: async () => {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
