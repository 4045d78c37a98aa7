// The emulator's throwaway self-signed certificate for its https side: kubectl sends credentials only over TLS, so
// the port also speaks https (clients skip verification, as the kubeconfig says).
import { type SelfSignedCertificate, selfSignedCertificate } from '../x509/self-signed.js';

export type { SelfSignedCertificate };

/** A certificate for localhost, 127.0.0.1 and ::1, valid from an hour ago for ten years. */
export function emulatorCertificate(now = new Date()): SelfSignedCertificate {
  return selfSignedCertificate({ commonName: 'customapp-emulator', now, validForMs: 10 * 365 * 24 * 3600_000 });
}
