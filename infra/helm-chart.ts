// The Helm chart (dist-helm/), generated from the same constructs as dist/: synthesized with sentinel values that a
// small post-processing step turns into `{{ .Values.x }}` templates.
import { App, Yaml } from 'cdk8s';
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { CrdChart } from './crd-chart.js';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from './customapp-api.js';
import { MIN_REPLICAS_FOR_DISRUPTION_BUDGET } from './operator-disruption-budget.js';
import { OperatorChart } from './operator-chart.js';
import { DEFAULT_OPERATOR_IMAGE } from './operator-deployment.js';
import { policyRules } from './operator-rbac.js';
import { OPERATOR_PERMISSIONS, workloadPermissions } from './permissions.js';
import { WORKLOAD_KINDS, type WorkloadResource } from './workload-api.js';

/** Where `npm run synth` writes the chart, beside dist/ (so that `kubectl apply -f dist/` never meets a template). */
export const HELM_CHART_DIR = 'dist-helm';

/** The chart's values, as values.yaml gives them by default: what dist/ installs. */
export interface HelmValues {
  readonly image: string;
  readonly replicas: number;
  readonly namespace: string;
  readonly workloads: readonly WorkloadResource[];
  readonly serviceMonitor: { readonly enabled: boolean };
}

/** The defaults: exactly dist/'s operator chart. */
export const DEFAULT_HELM_VALUES: HelmValues = {
  image: DEFAULT_OPERATOR_IMAGE,
  replicas: 1,
  namespace: OPERATOR_NAMESPACE,
  workloads: [],
  serviceMonitor: { enabled: false },
};

/**
 * Scalars the chart is synthesized with, each standing for one value, and the template that replaces it. A sentinel
 * must be something no construct writes on its own: a name no one uses, a replica count no one asks for (it must be
 * at least {@link MIN_REPLICAS_FOR_DISRUPTION_BUDGET}, so that the PodDisruptionBudget is synthesized).
 */
const SENTINELS = {
  image: { value: 'helm-value-image', template: '{{ .Values.image | quote }}' },
  namespace: { value: 'helm-value-namespace', template: '{{ .Values.namespace }}' },
  replicas: { value: 31415926, template: '{{ .Values.replicas }}' },
} as const;

/** Documents present only when a value says so, by kind, and the condition (a Helm `if` pipeline). */
const DOCUMENT_CONDITIONS: Readonly<Record<string, string>> = {
  PodDisruptionBudget: `ge (int .Values.replicas) ${MIN_REPLICAS_FOR_DISRUPTION_BUDGET}`,
  ServiceMonitor: '.Values.serviceMonitor.enabled',
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
  metadata: { name?: string };
  rules?: unknown[];
  spec?: { template?: { spec?: { containers?: { args?: string[] }[] } } };
}

const ALL_WORKLOADS = Object.keys(WORKLOAD_KINDS) as WorkloadResource[];

/**
 * The ClusterRole's rules for `--workloads`, in the order `.Values.workloads` lists the kinds (as the construct writes
 * them), and the Deployment's `--workloads=` argument under `with .Values.workloads`. The chart was synthesized with
 * every kind: each adds exactly the rule `workloadPermissions` gives it (none when the base already grants its verbs),
 * after the base rules.
 */
function templateWorkloads(synthesized: Manifest, items: TemplatedItems[], document: number): Manifest {
  const manifest = structuredClone(synthesized);
  if (manifest.metadata.name !== OPERATOR_NAME) return manifest;
  const placeholder = `helm-item-${document}`;
  if (manifest.kind === 'ClusterRole' && manifest.rules) {
    const byKind = ALL_WORKLOADS.flatMap((kind) =>
      policyRules(workloadPermissions([kind], OPERATOR_PERMISSIONS), ['cluster', 'watched-namespaces']).map((rule) => ({
        kind,
        rule: JSON.parse(JSON.stringify(rule)),
      })),
    );
    const base = manifest.rules.length - byKind.length;
    byKind.forEach(({ kind, rule }, index) => {
      if (!isDeepStrictEqual(manifest.rules![base + index], rule)) {
        throw new Error(
          `helm chart: the ClusterRole's rule ${base + index} is not the one of --workloads=${kind}: ${JSON.stringify(rule)}`,
        );
      }
    });
    const branches = byKind.map(
      ({ kind }, index) =>
        `{{- ${index === 0 ? 'if' : 'else if'} eq . ${JSON.stringify(kind)} }}\n${stringify([manifest.rules![base + index]])}`,
    );
    items.push({ placeholder, template: `{{- range .Values.workloads }}\n${branches.join('')}{{- end }}\n{{- end }}\n` });
    manifest.rules = [...manifest.rules.slice(0, base), placeholder];
  }
  const args = manifest.kind === 'Deployment' ? manifest.spec?.template?.spec?.containers?.[0]?.args : undefined;
  if (args) {
    const flag = `--workloads=${ALL_WORKLOADS.join(',')}`;
    const at = args.indexOf(flag);
    if (at < 0) throw new Error(`helm chart: the operator Deployment has no ${flag} argument`);
    items.push({ placeholder, template: '{{- with .Values.workloads }}\n- --workloads={{ join "," . }}\n{{- end }}\n' });
    args[at] = placeholder;
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

/** The operator's templates: the operator chart synthesized with the sentinels, every kind of workload and a ServiceMonitor. */
function operatorTemplate(): string {
  const chart = new OperatorChart(new App(), OPERATOR_NAME, {
    image: SENTINELS.image.value,
    replicas: SENTINELS.replicas.value,
    operatorNamespace: SENTINELS.namespace.value,
    workloads: ALL_WORKLOADS,
    serviceMonitor: true,
  });
  const documents = (chart.toJson() as Manifest[]).map((manifest, index) => {
    const items: TemplatedItems[] = [];
    const text = expandItems(Yaml.stringify(templateWorkloads(manifest, items, index)), items);
    const condition = DOCUMENT_CONDITIONS[manifest.kind];
    return condition ? `{{- if ${condition} }}\n${text}{{- end }}\n` : text;
  });
  return replaceSentinels(documents.join('---\n'));
}

/** The JSON schema of values.yaml: Helm refuses other values at lint, template and install, naming the field. */
function valuesSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: false,
    required: ['image', 'replicas', 'namespace', 'workloads', 'serviceMonitor'],
    properties: {
      image: { type: 'string', minLength: 1, description: 'The operator image.' },
      replicas: {
        type: 'integer',
        minimum: 1,
        description: `Operator replicas (leader election keeps one active); ${MIN_REPLICAS_FOR_DISRUPTION_BUDGET} or more adds a PodDisruptionBudget.`,
      },
      namespace: {
        type: 'string',
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
        maxLength: 63,
        description: 'The namespace the chart creates and installs the operator into.',
      },
      workloads: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', enum: ALL_WORKLOADS },
        description: 'Existing workload kinds that roll, by annotation, on the ConfigMaps and Secrets they use (--workloads).',
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

Values (values.yaml, checked by values.schema.json): \`image\`, \`replicas\` (2 or more adds a PodDisruptionBudget),
\`namespace\`, \`workloads\` (deployments, statefulsets, daemonsets, rollouts) and \`serviceMonitor.enabled\`. With the
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
