// The addresses of one node slot, and the check that none of them collides with a route or address of this machine.

/** Every address and name a node slot uses; all of them live on interfaces the node creates. */
export interface NodeAddresses {
  readonly slot: number;
  /** The host's end of the veth pair to the node's network namespace. */
  readonly hostInterface: string;
  /** The host's address on it: kube-apiserver binds and advertises it (the `kubernetes` Service's endpoint). */
  readonly hostIp: string;
  /** The node's address (eth0 in its namespace): the kubelet's node IP. */
  readonly nodeIp: string;
  /** The /30 between the host and the node. */
  readonly linkCidr: string;
  /** Pod addresses (the CNI bridge in the node's namespace); routed from the host to the node, and nowhere else. */
  readonly podCidr: string;
  /** ClusterIPs (kube-proxy's iptables rules in the node's namespace). */
  readonly serviceCidr: string;
  /** The `kubernetes` Service's ClusterIP (the first of serviceCidr): KUBERNETES_SERVICE_HOST in pods. */
  readonly kubernetesServiceIp: string;
  /** The node's name. */
  readonly nodeName: string;
}

/** How many clusters may run side by side on one machine. */
export const MAX_SLOTS = 4;

/**
 * Slot `n` uses 10.213.n.0/30 for the host–node link, 10.214.n.0/24 for pods and 10.215.n.0/24 for Services: ranges
 * picked to be unusual (not Docker's, kind's, k3s's, kubeadm's or CGNAT's defaults); {@link collisions} checks them.
 */
export function nodeAddresses(slot: number): NodeAddresses {
  if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_SLOTS) throw new Error(`node slot ${slot} is not in [0, ${MAX_SLOTS})`);
  return {
    slot,
    hostInterface: `customapp${slot}`,
    hostIp: `10.213.${slot}.1`,
    nodeIp: `10.213.${slot}.2`,
    linkCidr: `10.213.${slot}.0/30`,
    podCidr: `10.214.${slot}.0/24`,
    serviceCidr: `10.215.${slot}.0/24`,
    kubernetesServiceIp: `10.215.${slot}.1`,
    nodeName: 'customapp-node',
  };
}

function parseCidr(cidr: string): { base: number; bits: number } {
  const match = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(?:\/(\d+))?$/.exec(cidr.trim());
  if (!match) throw new Error(`"${cidr}" is not an IPv4 address or CIDR`);
  const octets = match.slice(1, 5).map(Number);
  if (octets.some((octet) => octet > 255)) throw new Error(`"${cidr}" is not an IPv4 address or CIDR`);
  const bits = match[5] === undefined ? 32 : Number(match[5]);
  if (bits > 32) throw new Error(`"${cidr}" has a prefix longer than 32`);
  const address = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (address & mask) >>> 0, bits };
}

/** Whether two IPv4 CIDRs (or addresses) share an address. */
export function overlaps(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  const bits = Math.min(x.bits, y.bits);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (x.base & mask) >>> 0 === (y.base & mask) >>> 0;
}

/**
 * The host's routes and addresses (the destinations of `ip -4 -j route show table all` and the `local` entries of
 * `ip -4 -j addr`) that overlap the node's ranges, as "<node range> overlaps <host range> (<where>)" lines. Default
 * routes do not count: they overlap everything and route elsewhere only what nothing more specific claims.
 */
export function collisions(node: NodeAddresses, hostRanges: readonly { readonly cidr: string; readonly where: string }[]): string[] {
  const ours = [node.linkCidr, node.podCidr, node.serviceCidr];
  const found: string[] = [];
  for (const host of hostRanges) {
    if (parseCidr(host.cidr).bits === 0) continue;
    for (const range of ours) if (overlaps(range, host.cidr)) found.push(`${range} overlaps ${host.cidr} (${host.where})`);
  }
  return found;
}
