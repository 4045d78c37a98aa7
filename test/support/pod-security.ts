// The Pod Security Standards "restricted" profile (latest), as a function: a pod spec in, its violations out.

/** The parts of a core/v1 PodSpec that Pod Security looks at (structurally typed, so any client's objects fit). */
export interface PodSpecLike {
  readonly hostNetwork?: boolean;
  readonly hostPID?: boolean;
  readonly hostIPC?: boolean;
  readonly securityContext?: PodSecurityContextLike;
  readonly volumes?: readonly Record<string, unknown>[];
  readonly containers?: readonly ContainerLike[];
  readonly initContainers?: readonly ContainerLike[];
  readonly ephemeralContainers?: readonly ContainerLike[];
}
interface SeccompLike {
  readonly type?: string;
}
interface PodSecurityContextLike {
  readonly runAsNonRoot?: boolean;
  readonly runAsUser?: number;
  readonly seccompProfile?: SeccompLike;
  readonly seLinuxOptions?: Record<string, unknown>;
  readonly sysctls?: readonly { readonly name: string }[];
}
interface ContainerLike {
  readonly name?: string;
  readonly ports?: readonly { readonly hostPort?: number }[];
  readonly securityContext?: {
    readonly privileged?: boolean;
    readonly allowPrivilegeEscalation?: boolean;
    readonly runAsNonRoot?: boolean;
    readonly runAsUser?: number;
    readonly seccompProfile?: SeccompLike;
    readonly procMount?: string;
    readonly capabilities?: { readonly add?: readonly string[]; readonly drop?: readonly string[] };
  };
}

const RESTRICTED_VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/**
 * Checks a pod spec against the restricted Pod Security Standard (which includes baseline) and returns one
 * message per violation, in the words of the standard; an empty list means it passes.
 * @see https://kubernetes.io/docs/concepts/security/pod-security-standards/
 */
export function restrictedViolations(spec: PodSpecLike): string[] {
  const violations: string[] = [];
  const pod = spec.securityContext ?? {};
  if (spec.hostNetwork) violations.push('host namespaces: hostNetwork=true');
  if (spec.hostPID) violations.push('host namespaces: hostPID=true');
  if (spec.hostIPC) violations.push('host namespaces: hostIPC=true');
  for (const sysctl of pod.sysctls ?? []) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) violations.push(`sysctls: "${sysctl.name}" is not a safe sysctl`);
  }
  for (const volume of spec.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== 'name');
    if (type && !RESTRICTED_VOLUME_TYPES.has(type)) {
      violations.push(`volume types: volume "${String(volume.name)}" uses "${type}"`);
    }
  }
  if (pod.runAsUser === 0) violations.push('runAsUser: pod runAsUser=0');
  if (pod.seccompProfile?.type === 'Unconfined') violations.push('seccompProfile: pod type "Unconfined"');
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
  if (all.length === 0) violations.push('no containers');
  for (const container of all) {
    const name = `container "${container.name ?? '?'}"`;
    const sc = container.securityContext ?? {};
    if (sc.privileged) violations.push(`privileged: ${name} is privileged`);
    if (sc.procMount && sc.procMount !== 'Default') violations.push(`procMount: ${name} uses "${sc.procMount}"`);
    for (const port of container.ports ?? []) {
      if (port.hostPort) violations.push(`hostPorts: ${name} uses hostPort ${port.hostPort}`);
    }
    if (sc.allowPrivilegeEscalation !== false) {
      violations.push(`allowPrivilegeEscalation != false: ${name} must set allowPrivilegeEscalation=false`);
    }
    const drop = sc.capabilities?.drop ?? [];
    if (!drop.includes('ALL')) violations.push(`unrestricted capabilities: ${name} must drop ["ALL"]`);
    for (const added of sc.capabilities?.add ?? []) {
      if (added !== 'NET_BIND_SERVICE') violations.push(`unrestricted capabilities: ${name} adds "${added}"`);
    }
    const nonRoot = sc.runAsNonRoot ?? pod.runAsNonRoot;
    if (nonRoot !== true) violations.push(`runAsNonRoot != true: ${name} (or the pod) must set runAsNonRoot=true`);
    if (sc.runAsUser === 0) violations.push(`runAsUser=0: ${name}`);
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') {
      violations.push(`seccompProfile: ${name} (or the pod) must set type RuntimeDefault or Localhost`);
    }
  }
  return violations;
}
