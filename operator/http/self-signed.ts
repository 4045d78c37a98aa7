// The metrics server's certificate when none is mounted: self-signed at start, its key only ever in memory.
import { hostname } from 'node:os';
import { selfSignedCertificate } from '../../x509/self-signed.js';

/** A serving certificate and its private key, PEM. */
export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

/** Options of {@link selfSignedMetricsCertificate}. */
export interface SelfSignedMetricsOptions {
  /** Extra DNS names (the metrics Service's, for example). @default none */
  readonly dnsNames?: readonly string[];
  /** This host's name, also named (a pod's hostname is its name). @default os.hostname() */
  readonly hostName?: string;
  /** @default new Date() */
  readonly now?: Date;
}

/**
 * A certificate made at start-up, as controller-runtime's metrics server does when no certificate directory is
 * given: for localhost, 127.0.0.1, ::1 and this host's name, valid for a year (a new one at each start; a scraper of
 * a self-signed endpoint skips verification anyway, so the name list is a courtesy). The key is generated here and
 * never written anywhere. Mount a certificate (`--metrics-cert-dir`) for scrapers that verify.
 */
export function selfSignedMetricsCertificate(options: SelfSignedMetricsOptions = {}): ServingCertificate {
  const host = options.hostName ?? hostname();
  const dnsNames = [...new Set(['localhost', ...(host ? [host] : []), ...(options.dnsNames ?? [])])];
  return selfSignedCertificate({ commonName: 'customapp-operator-metrics', dnsNames, now: options.now });
}
