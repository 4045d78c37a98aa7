// The kubelet's client CA and kube-apiserver's client certificate for the kubelet (exec, logs), made with openssl.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The files {@link kubeletClientCertificates} writes. */
export interface KubeletClientCertificates {
  /** The CA the kubelet trusts for client certificates (its `authentication.x509.clientCAFile`). */
  readonly caFile: string;
  /** kube-apiserver's `--kubelet-client-certificate`: CN kube-apiserver-kubelet-client, O system:masters. */
  readonly certFile: string;
  /** kube-apiserver's `--kubelet-client-key`. */
  readonly keyFile: string;
}

async function openssl(args: readonly string[]): Promise<void> {
  try {
    await execFileAsync('openssl', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`openssl ${args.slice(0, 2).join(' ')} failed: ${stderr || String(error)}`, { cause: error });
  }
}

/**
 * Writes a one-day CA and a client certificate signed by it into `dir`. kube-apiserver presents the certificate to
 * the kubelet, which authenticates it with the CA and authorizes it through a SubjectAccessReview (system:masters).
 */
export async function kubeletClientCertificates(dir: string): Promise<KubeletClientCertificates> {
  const caKey = join(dir, 'kubelet-client-ca.key');
  const caFile = join(dir, 'kubelet-client-ca.crt');
  const keyFile = join(dir, 'apiserver-kubelet-client.key');
  const csr = join(dir, 'apiserver-kubelet-client.csr');
  const certFile = join(dir, 'apiserver-kubelet-client.crt');
  const extensions = join(dir, 'apiserver-kubelet-client.ext');
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '1',
    '-subj',
    '/CN=customapp-kubelet-client-ca',
  ]);
  await openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    csr,
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
  ]);
  writeFileSync(extensions, 'keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    certFile,
    '-days',
    '1',
    '-extfile',
    extensions,
  ]);
  return { caFile, certFile, keyFile };
}
