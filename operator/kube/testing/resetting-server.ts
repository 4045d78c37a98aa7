// A plain-HTTP server for the transport's tests: it answers each request with 200 and `{}` and keeps the connection
// open, or resets the connection instead, as a server closing an idle keep-alive connection at the moment the client
// reuses it looks to the client.
import { createServer, type Socket } from 'node:net';

export interface ResettingServer {
  readonly url: string;
  /** The connections it accepted so far. */
  readonly connections: number;
  close(): void;
}

/**
 * Starts a server that asks `reset` about each request (its request line, and its index on its own connection from
 * 0): true resets that connection, false answers.
 */
export async function resettingServer(reset: (requestLine: string, indexOnConnection: number) => boolean): Promise<ResettingServer> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const listener = createServer((socket) => {
    sockets.add(socket);
    connections += 1;
    let index = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      for (const line of chunk
        .toString()
        .split('\r\n')
        .filter((text) => / HTTP\/1\.1$/.test(text))) {
        if (reset(line, index++)) {
          socket.resetAndDestroy();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}');
      }
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      listener.close();
    },
  };
}
