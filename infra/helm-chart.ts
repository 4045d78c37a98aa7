// The Helm chart (dist-helm/), generated from the same constructs as dist/: synthesized with sentinel values that a
// small post-processing step turns into `{{ .Values.x }}` templates.
import { App, Yaml } from 'cdk8s';
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { CrdChart } from './crd-chart.js';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../api/customapp.js';
import { DEFAULT_SHARDED_REPLICAS } from './custom-app-operator.js';
import { MIN_REPLICAS_FOR_DISRUPTION_BUDGET } from './operator-disruption-budget.js';
import { OperatorChart } from './operator-chart.js';
import { DEFAULT_OPERATOR_IMAGE } from './operator-deployment.js';
import { policyRules } from './operator-rbac.js';
import { OPERATOR_PERMISSIONS, type Permission, type PermissionScope, SHARDING_PERMISSIONS, workloadPermissions } from './permissions.js';
import { WORKLOAD_KINDS, type WorkloadResource } from '../api/workload.js';

/** Where `npm run synth` writes the chart, beside dist/ (so that `kubectl apply -f dist/` never meets a template). */
export const HELM_CHART_DIR = 'dist-helm';

/** The chart's values, as values.yaml gives them by default: what dist/ installs. */
export interface HelmValues {
  readonly image: string;
  /** Absent by default: 1, or {@link DEFAULT_SHARDED_REPLICAS} with `sharding`, as the construct chooses. */
  readonly replicas?: number;
  readonly namespace: string;
  readonly workloads: readonly WorkloadResource[];
  readonly sharding: boolean;
  readonly namespaces: readonly string[];
  readonly serviceMonitor: { readonly enabled: boolean };
}

/** The defaults: exactly dist/'s operator chart. */
export const DEFAULT_HELM_VALUES: HelmValues = {
  image: DEFAULT_OPERATOR_IMAGE,
  namespace: OPERATOR_NAMESPACE,
  workloads: [],
  sharding: false,
  namespaces: [],
  serviceMonitor: { enabled: false },
};

/**
 * The replica count, computed once at the top of the template as the construct computes it: `replicas` when given,
 * else 1, or {@link DEFAULT_SHARDED_REPLICAS} with `sharding`.
 */
const REPLICAS_VARIABLE = `{{- $replicas := $.Values.replicas | default (ternary ${DEFAULT_SHARDED_REPLICAS} 1 $.Values.sharding) }}\n`;

/**
 * Scalars the chart is synthesized with, each standing for one value, and the template that replaces it. A sentinel
 * must be something no construct writes on its own: a name no one uses, a replica count no one asks for (it must be
 * at least {@link MIN_REPLICAS_FOR_DISRUPTION_BUDGET}, so that the PodDisruptionBudget is synthesized). Templates
 * name the root as `$`, so that they hold inside a `range` too; `watched` is the namespace of the `range` over
 * `.Values.namespaces` (see {@link WATCHED_DOCUMENT}).
 */
const SENTINELS = {
  image: { value: 'helm-value-image', template: '{{ $.Values.image | quote }}' },
  namespace: { value: 'helm-value-namespace', template: '{{ $.Values.namespace }}' },
  watched: { value: 'helm-value-watched', template: '{{ $watched }}' },
  replicas: { value: 31415926, template: '{{ $replicas }}' },
} as const;

/** Documents present only when a value says so, by kind, and the condition (a Helm `if` pipeline). */
const DOCUMENT_CONDITIONS: Readonly<Record<string, string>> = {
  PodDisruptionBudget: `ge (int $replicas) ${MIN_REPLICAS_FOR_DISRUPTION_BUDGET}`,
  ServiceMonitor: '$.Values.serviceMonitor.enabled',
};

/**
 * A document of a watched namespace (its Role and RoleBinding), repeated for each of `.Values.namespaces` but the
 * operator's own, whose Role holds those grants itself (as `roleScopes` merges them).
 */
const WATCHED_DOCUMENT = {
  begin: '{{- range $watched := $.Values.namespaces }}\n{{- if ne $watched $.Values.namespace }}\n---\n',
  end: '{{- end }}\n{{- end }}\n',
};

/**
 * List items that a template writes: the placeholder item that stands for them in the synthesized object, and the
 * template (list items and actions at the list's indentation, which expandItems adds).
 */
interface TemplatedItems {
  readonly placeholder: string;
  readonly template: string;
}

/** A manifest as cdk8s synthesizes it: the fields read here. */
interface Manifest {
  kind: string;
  metadata: { name?: string; namespace?: string };
  rules?: unknown[];
  spec?: { template?: { spec?: { containers?: { args?: string[] }[] } } };
}

const ALL_WORKLOADS = Object.keys(WORKLOAD_KINDS) as WorkloadResource[];

/**
 * Where a role's rules come from, in the order the construct lists its permissions: the base table, then the rules of
 * `--workloads` in the order `.Values.workloads` names the kinds, then those of `--sharding`.
 */
type RuleSource = { readonly from: 'base' | 'sharding'; readonly permission: Permission } | { readonly from: 'workloads' };

/**
 * For one role, whether a scope's permissions are in it: always (`true`), never (`false`), or when a Helm condition
 * holds, together with the value the chart was synthesized with (to check the synthesized rules against).
 */
type Placement = Readonly<Record<PermissionScope, boolean | { readonly when: string; readonly synthesized: boolean }>>;

/** The roles whose rules depend on the values: the ClusterRole, the operator namespace's Role, a watched namespace's. */
const PLACEMENTS: Readonly<Record<'cluster' | 'operator' | 'watched', Placement>> = {
  cluster: { cluster: true, 'watched-namespaces': { when: 'not $.Values.namespaces', synthesized: false }, 'operator-namespace': false },
  operator: {
    cluster: false,
    'watched-namespaces': { when: 'has $.Values.namespace $.Values.namespaces', synthesized: false },
    'operator-namespace': true,
  },
  watched: { cluster: false, 'watched-namespaces': true, 'operator-namespace': false },
};

const RULE_SOURCES: readonly RuleSource[] = [
  ...OPERATOR_PERMISSIONS.map((permission) => ({ from: 'base' as const, permission })),
  { from: 'workloads' },
  ...SHARDING_PERMISSIONS.map((permission) => ({ from: 'sharding' as const, permission })),
];

/** The rule of each workload kind, where `--workloads` adds one (none when the base already grants its verbs). */
const WORKLOAD_RULES = ALL_WORKLOADS.flatMap((kind) =>
  workloadPermissions([kind], OPERATOR_PERMISSIONS).map((permission) => ({ kind, permission })),
);

/** A permission as the rule the construct writes, in plain JSON (as the synthesized manifest has it). */
const ruleOf = (permission: Permission): unknown => JSON.parse(JSON.stringify(policyRules([permission], permission.scope)[0]));

/** `body` under a Helm condition (none for `true`). */
const guarded = (condition: string | true, body: string): string =>
  condition === true ? body : `{{- if ${condition} }}\n${body}{{- end }}\n`;

/** Template text under a condition (`true`: none). */
interface Guarded {
  readonly condition: string | true;
  readonly body: string;
}

/** The parts in order, each run of parts under the same condition under one `if`, so that the chart reads as a list. */
function joinGuarded(parts: readonly Guarded[]): string {
  const runs: Guarded[] = [];
  for (const part of parts) {
    const last = runs.at(-1);
    if (last?.condition === part.condition) runs[runs.length - 1] = { condition: last.condition, body: last.body + part.body };
    else runs.push(part);
  }
  return runs.map(({ condition, body }) => guarded(condition, body)).join('');
}

/**
 * The rules template of a role, and the rules it gives with the values the chart was synthesized with (every
 * workload kind, sharding, one watched namespace that is not the operator's). Throws unless those are exactly the
 * synthesized rules: a template that does not follow the construct is worse than no chart.
 */
export function templateRules(role: keyof typeof PLACEMENTS, synthesized: readonly unknown[]): string {
  const placement = PLACEMENTS[role];
  const expected: unknown[] = [];
  const parts = RULE_SOURCES.flatMap((source): Guarded[] => {
    const scope = source.from === 'workloads' ? 'watched-namespaces' : source.permission.scope;
    const where = placement[scope];
    if (where === false) return [];
    const place = where === true ? true : where.when;
    const present = where === true || where.synthesized;
    if (source.from === 'workloads') {
      if (present) expected.push(...WORKLOAD_RULES.map(({ permission }) => ruleOf(permission)));
      const branches = WORKLOAD_RULES.map(
        ({ kind, permission }, index) =>
          `{{- ${index === 0 ? 'if' : 'else if'} eq . ${JSON.stringify(kind)} }}\n${stringify([ruleOf(permission)])}`,
      );
      return [{ condition: place, body: `{{- range $.Values.workloads }}\n${branches.join('')}{{- end }}\n{{- end }}\n` }];
    }
    const rule = ruleOf(source.permission);
    if (present) expected.push(rule);
    const condition = source.from === 'sharding' ? (place === true ? '$.Values.sharding' : `and $.Values.sharding (${place})`) : place;
    return [{ condition, body: stringify([rule]) }];
  });
  if (!isDeepStrictEqual(synthesized, expected)) {
    throw new Error(
      `helm chart: the ${role} role's synthesized rules are not those the template gives with the same values:\n` +
        `synthesized ${JSON.stringify(synthesized)}\nexpected ${JSON.stringify(expected)}`,
    );
  }
  return joinGuarded(parts);
}

/** Which role of {@link PLACEMENTS} a synthesized manifest is, if any. */
function roleOf(manifest: Manifest): keyof typeof PLACEMENTS | undefined {
  if (manifest.metadata.name !== OPERATOR_NAME) return undefined;
  if (manifest.kind === 'ClusterRole') return 'cluster';
  if (manifest.kind !== 'Role') return undefined;
  if (manifest.metadata.namespace === SENTINELS.namespace.value) return 'operator';
  if (manifest.metadata.namespace === SENTINELS.watched.value) return 'watched';
  throw new Error(`helm chart: a Role in namespace ${manifest.metadata.namespace}, neither the operator's nor a watched one`);
}

/**
 * The Deployment's arguments that values add, each the flag the chart was synthesized with and the items that
 * template it.
 */
const TEMPLATED_ARGS: readonly { readonly flag: string; readonly template: string }[] = [
  {
    flag: `--workloads=${ALL_WORKLOADS.join(',')}`,
    template: '{{- with $.Values.workloads }}\n- --workloads={{ join "," . }}\n{{- end }}\n',
  },
  {
    flag: `--namespaces=${SENTINELS.watched.value}`,
    template: '{{- with $.Values.namespaces }}\n- --namespaces={{ join "," . }}\n{{- end }}\n',
  },
  { flag: '--sharding', template: '{{- if $.Values.sharding }}\n- --sharding\n{{- end }}\n' },
];

/**
 * The manifest with placeholder items where values write list items: the rules of the roles, and the Deployment's
 * arguments of `--workloads`, `--namespaces` and `--sharding`.
 */
function templateValues(synthesized: Manifest, items: TemplatedItems[], document: number): Manifest {
  const manifest = structuredClone(synthesized);
  const role = roleOf(manifest);
  if (role) {
    const placeholder = `helm-item-${document}-rules`;
    items.push({ placeholder, template: templateRules(role, manifest.rules ?? []) });
    manifest.rules = [placeholder];
  }
  const args = manifest.kind === 'Deployment' ? manifest.spec?.template?.spec?.containers?.[0]?.args : undefined;
  if (args) {
    TEMPLATED_ARGS.forEach(({ flag, template }, index) => {
      const at = args.indexOf(flag);
      if (at < 0) throw new Error(`helm chart: the operator Deployment has no ${flag} argument`);
      const placeholder = `helm-item-${document}-arg-${index}`;
      items.push({ placeholder, template });
      args[at] = placeholder;
    });
  }
  return manifest;
}

/** `text` with each placeholder item replaced by its template, indented where the placeholder was. */
function expandItems(text: string, items: readonly TemplatedItems[]): string {
  let out = text;
  for (const item of items) {
    const line = new RegExp(`^( *)- ${item.placeholder}\\n`, 'm');
    const match = line.exec(out);
    if (!match) throw new Error(`helm chart: placeholder ${item.placeholder} not found`);
    const indent = match[1]!;
    const body = item.template
      .trimEnd()
      .split('\n')
      .map((each) => indent + each)
      .join('\n');
    out = out.replace(line, () => `${body}\n`);
  }
  return out;
}

/** `text` with every sentinel replaced by its template; throws when one is missing (a prop the constructs stopped using). */
function replaceSentinels(text: string): string {
  let out = text;
  for (const [name, { value, template }] of Object.entries(SENTINELS)) {
    const pattern = new RegExp(`\\b${String(value)}\\b`, 'g');
    if (!pattern.test(out)) throw new Error(`helm chart: the sentinel of .Values.${name} (${value}) appears nowhere`);
    out = out.replace(pattern, template);
  }
  return out;
}

/**
 * The operator's templates: the operator chart synthesized with the sentinels, every kind of workload, sharding, one
 * watched namespace and a ServiceMonitor.
 */
function operatorTemplate(): string {
  const chart = new OperatorChart(new App(), OPERATOR_NAME, {
    image: SENTINELS.image.value,
    replicas: SENTINELS.replicas.value,
    operatorNamespace: SENTINELS.namespace.value,
    workloads: ALL_WORKLOADS,
    sharding: true,
    namespaces: [SENTINELS.watched.value],
    serviceMonitor: true,
  });
  const fixed: string[] = [];
  const watched: string[] = [];
  (chart.toJson() as Manifest[]).forEach((manifest, index) => {
    const items: TemplatedItems[] = [];
    const text = expandItems(Yaml.stringify(templateValues(manifest, items, index)), items);
    if (manifest.metadata.namespace === SENTINELS.watched.value) {
      watched.push(text);
      return;
    }
    const condition = DOCUMENT_CONDITIONS[manifest.kind];
    fixed.push(condition ? `{{- if ${condition} }}\n${text}{{- end }}\n` : text);
  });
  if (watched.length === 0) throw new Error('helm chart: nothing synthesized in the watched namespace');
  const repeated = `${WATCHED_DOCUMENT.begin}${watched.join('---\n')}${WATCHED_DOCUMENT.end}`;
  return replaceSentinels(`${REPLICAS_VARIABLE}${fixed.join('---\n')}${repeated}`);
}

/** A namespace's name, a DNS-1123 label (with `maxLength: 63`). */
const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** The JSON schema of values.yaml: Helm refuses other values at lint, template and install, naming the field. */
function valuesSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: false,
    required: ['image', 'namespace', 'workloads', 'sharding', 'namespaces', 'serviceMonitor'],
    properties: {
      image: { type: 'string', minLength: 1, description: 'The operator image.' },
      replicas: {
        type: 'integer',
        minimum: 1,
        description: `Operator replicas (leader election keeps one active, unless sharding); ${MIN_REPLICAS_FOR_DISRUPTION_BUDGET} or more adds a PodDisruptionBudget. Default 1, or ${DEFAULT_SHARDED_REPLICAS} with sharding.`,
      },
      namespace: {
        type: 'string',
        pattern: NAMESPACE_PATTERN,
        maxLength: 63,
        description: 'The namespace the chart creates and installs the operator into.',
      },
      workloads: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', enum: ALL_WORKLOADS },
        description: 'Existing workload kinds that roll, by annotation, on the ConfigMaps and Secrets they use (--workloads).',
      },
      sharding: {
        type: 'boolean',
        description: 'Every replica works on its share of the CustomApps and workloads (--sharding) instead of one leader.',
      },
      namespaces: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', pattern: NAMESPACE_PATTERN, maxLength: 63 },
        description:
          'The only namespaces the operator lists and watches (--namespaces), its grants there in a Role of each; empty: every namespace.',
      },
      serviceMonitor: {
        type: 'object',
        additionalProperties: false,
        properties: { enabled: { type: 'boolean', description: 'A prometheus-operator ServiceMonitor (needs its CRDs).' } },
      },
    },
  };
}

const README = `# customapp-operator Helm chart

Generated by \`npm run synth\` from the cdk8s constructs in infra/ (the same that write dist/); do not edit it here.

\`\`\`sh
helm install customapp-operator dist-helm/     # no --create-namespace: the chart creates its namespace
\`\`\`

Values (values.yaml, checked by values.schema.json): \`image\`, \`replicas\` (default 1, or ${DEFAULT_SHARDED_REPLICAS} with sharding;
2 or more adds a PodDisruptionBudget), \`namespace\`, \`workloads\` (deployments, statefulsets, daemonsets, rollouts),
\`sharding\`, \`namespaces\` (the only namespaces watched, with the grants in a Role of each; empty: all) and
\`serviceMonitor.enabled\`. With the
defaults it installs exactly what \`kubectl apply -f dist/\` does. The CRD is in crds/: Helm installs it with the
chart and never upgrades or deletes it (\`kubectl apply -f dist/customapp-crd.k8s.yaml\` upgrades it).
`;

/**
 * The chart's files by path under dist-helm/: Chart.yaml (version `version`, appVersion the image tag), values.yaml,
 * values.schema.json, the CRD in crds/, the operator's templates and a README.
 */
export function helmChartFiles(version: string): Map<string, string> {
  const crds = new CrdChart(new App(), 'customapp-crd');
  const chart = {
    apiVersion: 'v2',
    name: OPERATOR_NAME,
    description: 'The CustomApp operator: rolls apps when the ConfigMaps and Secrets they read change',
    type: 'application',
    version,
    appVersion: DEFAULT_OPERATOR_IMAGE.slice(DEFAULT_OPERATOR_IMAGE.lastIndexOf(':') + 1),
  };
  return new Map([
    ['Chart.yaml', stringify(chart)],
    ['values.yaml', stringify(DEFAULT_HELM_VALUES)],
    ['values.schema.json', `${JSON.stringify(valuesSchema(), null, 2)}\n`],
    ['crds/customapp-crd.yaml', Yaml.stringify(...crds.toJson())],
    ['templates/customapp-operator.yaml', operatorTemplate()],
    ['README.md', README],
  ]);
}
