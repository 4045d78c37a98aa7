// Parses a controller-runtime bind address (`:8080`, `127.0.0.1:8081`, `0` to disable).

/** Where to listen. */
export interface BindAddress {
  /** The host, or undefined for every interface. */
  readonly host?: string;
  /** The port; 0 picks a free one. */
  readonly port: number;
}

/**
 * `:8080` → every interface, port 8080; `127.0.0.1:0` → loopback, a free port; `[::1]:8080` → IPv6 loopback;
 * `0` → undefined (disabled, as in controller-runtime). Throws with the offending value otherwise.
 */
export function parseBindAddress(flag: string, value: string): BindAddress | undefined {
  if (value === '0') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || port > 65535) {
    throw new Error(
      `${flag}: "${value}" is not a bind address; expected [host]:port (for example ":8080" or "127.0.0.1:8080"), or "0" to disable`,
    );
  }
  const host = match[1] ?? match[2];
  return { host: host ? host : undefined, port };
}
