// Tests of the hand-built self-signed certificate: it always parses, names what it was asked to, and pairs with its key.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import test from 'ava';
import { ipBytes, selfSignedCertificate } from './self-signed.js';

test('a thousand fresh certificates all parse as DER (no illegal INTEGER padding in the serial)', (t) => {
  for (let i = 0; i < 1000; i++) {
    const certificate = new X509Certificate(selfSignedCertificate({ commonName: 'test' }).cert);
    t.true(certificate.serialNumber.length > 0);
  }
});

test('by default it covers localhost, 127.0.0.1 and ::1, is valid now for a year, and is its own issuer', (t) => {
  const now = new Date();
  const { cert, key } = selfSignedCertificate({ commonName: 'customapp-test', now });
  const certificate = new X509Certificate(cert);
  t.is(certificate.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  t.is(certificate.checkIP('127.0.0.1'), '127.0.0.1');
  t.is(certificate.checkHost('localhost'), 'localhost');
  t.is(certificate.subject, 'CN=customapp-test');
  t.is(certificate.issuer, 'CN=customapp-test');
  t.true(certificate.checkIssued(certificate));
  t.true(certificate.verify(certificate.publicKey));
  t.true(certificate.checkPrivateKey(createPrivateKey(key)));
  t.is(new Date(certificate.validFrom).getTime(), Math.floor(now.getTime() / 1000) * 1000 - 3600_000);
  t.is(new Date(certificate.validTo).getTime(), Math.floor(now.getTime() / 1000) * 1000 + 365 * 24 * 3600_000);
});

test('the names asked for, and a validity past 2049 (GeneralizedTime)', (t) => {
  const certificate = new X509Certificate(
    selfSignedCertificate({
      commonName: 'metrics',
      dnsNames: ['svc.ns.svc', 'pod-0'],
      ipAddresses: ['10.1.2.3', 'fd00::1:2', '::ffff:10.0.0.1'],
      validForMs: 40 * 365 * 24 * 3600_000,
    }).cert,
  );
  t.is(
    certificate.subjectAltName,
    'DNS:svc.ns.svc, DNS:pod-0, IP Address:10.1.2.3, IP Address:FD00:0:0:0:0:0:1:2, IP Address:0:0:0:0:0:FFFF:A00:1',
  );
  t.true(new Date(certificate.validTo).getUTCFullYear() > 2050);
});

test('IP addresses become their 4 or 16 bytes, and anything else is refused with the input quoted', (t) => {
  t.deepEqual([...ipBytes('192.168.0.1')], [192, 168, 0, 1]);
  t.is(ipBytes('::1').toString('hex'), '00000000000000000000000000000001');
  t.is(ipBytes('2001:db8::8a2e:370:7334').toString('hex'), '20010db80000000000008a2e03707334');
  t.is(ipBytes('1:2:3:4:5:6:7:8').toString('hex'), '00010002000300040005000600070008');
  t.is(ipBytes('::ffff:1.2.3.4').toString('hex'), '00000000000000000000ffff01020304');
  t.throws(() => ipBytes('localhost'), { message: '"localhost" is not an IPv4 or IPv6 address' });
});
