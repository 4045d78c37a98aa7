// kube-apiserver's audit log: the flags that write it as JSON lines, a policy for writes, and its timestamps.

/** kube-apiserver flags that write the audit log of `policyPath` to `logPath` as JSON lines, unbuffered and unrotated. */
export function auditFlags(policyPath: string, logPath: string): string[] {
  return [
    `--audit-policy-file=${policyPath}`,
    `--audit-log-path=${logPath}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=100000',
    '--audit-log-maxbackup=1',
  ];
}

/**
 * An audit policy that logs the metadata (user, user agent, objectRef, timestamps, status) of every write (create,
 * update, patch, delete, deletecollection) by a member of `userGroups` once, when it completes, and nothing else.
 */
export function writesAuditPolicy(userGroups: readonly string[]): string {
  return [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: ["RequestReceived", "ResponseStarted"]',
    'rules:',
    '- level: Metadata',
    `  userGroups: ${JSON.stringify(userGroups)}`,
    '  verbs: ["create", "update", "patch", "delete", "deletecollection"]',
    '- level: None',
    '',
  ].join('\n');
}

/** RFC 3339 with microseconds → epoch milliseconds with the microseconds as a fraction. */
export function auditTimeMs(stamp: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(stamp);
  if (!match) return Date.parse(stamp);
  const fraction = Number(`0.${match[2] ?? '0'}`);
  return Date.parse(`${match[1]}Z`) + fraction * 1000;
}
