// A throwaway self-signed certificate (ECDSA P-256, DER built by hand) for the emulator's https side: kubectl sends
// credentials only over TLS, so the port also speaks https (clients skip verification, as the kubeconfig says).
import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n >>= 8;
  }
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes = [parts[0] * 40 + parts[1]];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    let v = p >> 7;
    while (v > 0) {
      chunk.unshift((v & 0x7f) | 0x80);
      v >>= 7;
    }
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes[0] & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function utcTime(date: Date): Buffer {
  const s = `${date.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

function generalizedTime(date: Date): Buffer {
  const s = `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  return tlv(0x18, Buffer.from(s, 'ascii'));
}

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

export interface SelfSignedCertificate {
  readonly cert: string;
  readonly key: string;
}

/** A certificate for localhost, 127.0.0.1 and ::1, valid from an hour ago for ten years. */
export function selfSignedCertificate(now = new Date()): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const subjectAltName = sequence(
    oid('2.5.29.17'),
    tlv(
      0x04,
      sequence(
        tlv(0x82, Buffer.from('localhost', 'ascii')),
        tlv(0x87, Buffer.from([127, 0, 0, 1])),
        tlv(0x87, Buffer.concat([Buffer.alloc(15), Buffer.from([1])])),
      ),
    ),
  );
  const basicConstraints = sequence(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), tlv(0x04, sequence(tlv(0x01, Buffer.from([0xff])))));
  const serial = randomBytes(16);
  // Positive and minimal: a leading 0x00 followed by a byte below 0x80 is an illegal DER padding (1 in 128 starts
  // failed with ERR_OSSL_ASN1_ILLEGAL_PADDING before this).
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name('customapp-emulator'),
    sequence(utcTime(notBefore), notAfter.getUTCFullYear() < 2050 ? utcTime(notAfter) : generalizedTime(notAfter)),
    name('customapp-emulator'),
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, sequence(subjectAltName, basicConstraints)),
  );
  const signature = createSign('sha256').update(tbs).sign(privateKey);
  const der = sequence(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const pem = `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  return { cert: pem, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
