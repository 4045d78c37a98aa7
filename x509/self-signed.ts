// A self-signed X.509 certificate (ECDSA P-256) built with node:crypto, the DER written by hand: node:crypto parses
// certificates but cannot issue one. Shared by the emulator's https side and the operator's metrics server.
import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/** A certificate and its private key, both PEM. */
export interface SelfSignedCertificate {
  readonly cert: string;
  readonly key: string;
}

/** What {@link selfSignedCertificate} names and for how long. */
export interface SelfSignedOptions {
  /** Subject and issuer common name. */
  readonly commonName: string;
  /** DNS subject alternative names. @default ['localhost'] */
  readonly dnsNames?: readonly string[];
  /** IP subject alternative names, IPv4 or IPv6. @default ['127.0.0.1', '::1'] */
  readonly ipAddresses?: readonly string[];
  /** The time it is issued at; it is valid from an hour before (clock skew). @default new Date() */
  readonly now?: Date;
  /** How long it stays valid after `now`. @default one year */
  readonly validForMs?: number;
}

const YEAR_MS = 365 * 24 * 3600_000;

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
  const bytes = [parts[0]! * 40 + parts[1]!];
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
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function utcTime(date: Date): Buffer {
  const s = `${date.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

function generalizedTime(date: Date): Buffer {
  const s = `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  return tlv(0x18, Buffer.from(s, 'ascii'));
}

/** RFC 5280: UTCTime through 2049, GeneralizedTime from 2050. */
function time(date: Date): Buffer {
  return date.getUTCFullYear() < 2050 ? utcTime(date) : generalizedTime(date);
}

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

/** The 4 or 16 bytes of an IP address; throws with the address when it is neither IPv4 nor IPv6. */
export function ipBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (!isIPv6(address)) throw new Error(`"${address}" is not an IPv4 or IPv6 address`);
  // A trailing dotted IPv4 part (`::ffff:10.0.0.1`) becomes its two hex groups.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((word) => word.toString(16)).join(':'),
  );
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const front = groups(head!);
  const back = tail === undefined ? [] : groups(tail);
  const words = [...front, ...Array.from({ length: 8 - front.length - back.length }, () => 0), ...back];
  const bytes = Buffer.alloc(16);
  for (const [index, word] of words.entries()) bytes.writeUInt16BE(word, index * 2);
  return bytes;
}

/**
 * A self-signed certificate (its own CA, so a client can trust exactly it with `ca: cert`) for the given names, with
 * a fresh ECDSA P-256 key that exists only in the returned PEM. Valid from an hour before `now`.
 */
export function selfSignedCertificate(options: SelfSignedOptions): SelfSignedCertificate {
  const now = options.now ?? new Date();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + (options.validForMs ?? YEAR_MS));
  const alternativeNames = [
    ...(options.dnsNames ?? ['localhost']).map((dns) => tlv(0x82, Buffer.from(dns, 'ascii'))),
    ...(options.ipAddresses ?? ['127.0.0.1', '::1']).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const subjectAltName = sequence(oid('2.5.29.17'), tlv(0x04, sequence(...alternativeNames)));
  const basicConstraints = sequence(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), tlv(0x04, sequence(tlv(0x01, Buffer.from([0xff])))));
  const serial = randomBytes(16);
  // Positive and minimal: a leading 0x00 followed by a byte below 0x80 is an illegal DER padding (1 in 128 starts
  // failed with ERR_OSSL_ASN1_ILLEGAL_PADDING before this).
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name(options.commonName),
    sequence(time(notBefore), time(notAfter)),
    name(options.commonName),
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
