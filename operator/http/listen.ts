// Binds an endpoint server to its address or, when allowed and the port is taken, to a free port of the same host.
import type { Logger } from 'pino';
import type { BindAddress } from './bind-address.js';
import type { EndpointServer } from './servers.js';

/** Where to listen, and whether a busy port may be traded for a free one. */
export interface ListenAddress extends BindAddress {
  /**
   * When the port is taken (EADDRINUSE), listen on a free port of the same host instead, and log where
   * (`listen.fallback`). For defaults only: an address the user chose must be the one served, or fail. @default false
   */
  readonly orFreePort?: boolean;
}

/** `:8080`, `127.0.0.1:8080`, `[::1]:8080`: an address as the bind-address flags spell it. */
export function formatBindAddress(address: BindAddress): string {
  if (!address.host) return `:${address.port}`;
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** The port of an endpoint is taken by another process. */
export class AddressInUseError extends Error {
  override readonly name = 'AddressInUseError';

  constructor(
    /** Which endpoint: `metrics`, `probes`. */
    readonly endpoint: string,
    readonly address: BindAddress,
    options?: ErrorOptions,
  ) {
    super(`${endpoint}: ${formatBindAddress(address)} is already in use by another process`, options);
  }
}

function inUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}

/**
 * Serves `endpoint` with `serve` on `address`. A busy port rejects with an {@link AddressInUseError}, unless the
 * address says `orFreePort`: then the same host gets a port the system picks, and a warning says which.
 */
export async function listenOn(
  endpoint: string,
  address: ListenAddress,
  serve: (address: BindAddress) => Promise<EndpointServer>,
  logger?: Logger,
): Promise<EndpointServer> {
  const { orFreePort, ...bind } = address;
  try {
    return await serve(bind);
  } catch (error) {
    if (!inUse(error)) throw error;
    if (!orFreePort || bind.port === 0) throw new AddressInUseError(endpoint, bind, { cause: error });
  }
  const server = await serve({ ...bind, port: 0 });
  logger?.warn({ endpoint, requested: formatBindAddress(bind), url: server.url }, 'listen.fallback');
  return server;
}
