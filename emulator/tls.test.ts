// Tests of the emulator's hand-built self-signed certificate: it always parses, and names localhost and 127.0.0.1.
import test from 'ava';
import { X509Certificate } from 'node:crypto';
import { selfSignedCertificate } from './tls.js';

test('a thousand fresh certificates all parse as DER (no illegal INTEGER padding in the serial)', (t) => {
  for (let i = 0; i < 1000; i++) {
    const certificate = new X509Certificate(selfSignedCertificate().cert);
    t.true(certificate.serialNumber.length > 0);
  }
});

test('the certificate covers localhost and 127.0.0.1 and is valid now', (t) => {
  const certificate = new X509Certificate(selfSignedCertificate().cert);
  t.regex(certificate.subjectAltName ?? '', /DNS:localhost/);
  t.regex(certificate.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  t.true(certificate.checkIP('127.0.0.1') === '127.0.0.1');
  t.true(new Date(certificate.validFrom) < new Date() && new Date() < new Date(certificate.validTo));
});
