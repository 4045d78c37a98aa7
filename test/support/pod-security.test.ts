// Tests of the restricted Pod Security check itself, so that a pass means something.
import test from 'ava';
import { restrictedViolations, type PodSpecLike } from './pod-security.js';

const compliant: PodSpecLike = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [
    {
      name: 'app',
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    },
  ],
};

test('a compliant pod has no violations', (t) => {
  t.deepEqual(restrictedViolations(compliant), []);
});

const cases: Array<[string, PodSpecLike, RegExp]> = [
  ['host network', { ...compliant, hostNetwork: true }, /hostNetwork/],
  ['no seccomp', { ...compliant, securityContext: { runAsNonRoot: true } }, /seccompProfile/],
  ['root allowed', { ...compliant, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }, /runAsNonRoot/],
  [
    'escalation',
    { ...compliant, containers: [{ name: 'a', securityContext: { capabilities: { drop: ['ALL'] } } }] },
    /allowPrivilegeEscalation/,
  ],
  [
    'capabilities kept',
    { ...compliant, containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false } }] },
    /drop \["ALL"\]/,
  ],
  [
    'capability added',
    {
      ...compliant,
      containers: [
        { name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['SYS_ADMIN'] } } },
      ],
    },
    /SYS_ADMIN/,
  ],
  [
    'privileged',
    {
      ...compliant,
      containers: [{ name: 'a', securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
    },
    /privileged/,
  ],
  ['hostPath', { ...compliant, volumes: [{ name: 'h', hostPath: { path: '/' } }] }, /hostPath/],
  [
    'hostPort',
    {
      ...compliant,
      containers: [
        { name: 'a', ports: [{ hostPort: 80 }], securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
      ],
    },
    /hostPort 80/,
  ],
  [
    'unsafe sysctl',
    { ...compliant, securityContext: { ...compliant.securityContext, sysctls: [{ name: 'kernel.msgmax' }] } },
    /kernel.msgmax/,
  ],
];
for (const [name, spec, expected] of cases) {
  test(`a pod with ${name} is reported`, (t) => {
    const violations = restrictedViolations(spec);
    t.true(
      violations.some((v) => expected.test(v)),
      violations.join('; '),
    );
  });
}
