// Unit tests of the node slots' addresses and of the check that they collide with nothing on the machine.
import test from 'ava';
import { collisions, MAX_SLOTS, nodeAddresses, overlaps } from '../../envtest/node/addresses.js';

test('overlaps: CIDRs sharing an address overlap, neighbours do not', (t) => {
  t.true(overlaps('10.214.0.0/24', '10.214.0.128/25'));
  t.true(overlaps('10.0.0.0/8', '10.214.3.7'));
  t.true(overlaps('10.214.0.5', '10.214.0.5/32'));
  t.false(overlaps('10.214.0.0/24', '10.214.1.0/24'));
  t.false(overlaps('10.213.0.0/30', '10.213.0.4/30'));
  t.throws(() => overlaps('10.214.0.0/33', '10.0.0.0/8'), { message: /"10\.214\.0\.0\/33" has a prefix longer than 32/ });
  t.throws(() => overlaps('fd00::/64', '10.0.0.0/8'), { message: /"fd00::\/64" is not an IPv4 address or CIDR/ });
});

test('each slot has its own link, pod and Service ranges, and slots never overlap one another', (t) => {
  const slots = Array.from({ length: MAX_SLOTS }, (_, slot) => nodeAddresses(slot));
  t.deepEqual(slots[1], {
    slot: 1,
    hostInterface: 'customapp1',
    hostIp: '10.213.1.1',
    nodeIp: '10.213.1.2',
    linkCidr: '10.213.1.0/30',
    podCidr: '10.214.1.0/24',
    serviceCidr: '10.215.1.0/24',
    kubernetesServiceIp: '10.215.1.1',
    nodeName: 'customapp-node',
  });
  const ranges = slots.flatMap((slot) => [slot.linkCidr, slot.podCidr, slot.serviceCidr]);
  for (const [i, a] of ranges.entries()) for (const b of ranges.slice(i + 1)) t.false(overlaps(a, b), `${a} and ${b}`);
  t.throws(() => nodeAddresses(MAX_SLOTS), { message: `node slot ${MAX_SLOTS} is not in [0, ${MAX_SLOTS})` });
});

test("collisions names each of the node's ranges that a host route overlaps, and ignores default routes", (t) => {
  const node = nodeAddresses(0);
  t.deepEqual(
    collisions(node, [
      { cidr: '0.0.0.0/0', where: 'default' },
      { cidr: '192.0.2.0/24', where: 'eth0' },
      { cidr: '10.214.0.0/16', where: 'vpn0' },
      { cidr: '10.213.0.1/32', where: 'local' },
    ]),
    ['10.214.0.0/24 overlaps 10.214.0.0/16 (vpn0)', '10.213.0.0/30 overlaps 10.213.0.1/32 (local)'],
  );
  t.deepEqual(collisions(node, [{ cidr: '10.0.0.0/16', where: 'envtest services' }]), []);
});
