// Validation of built-in kinds (the commonly hit rules of pkg/apis/*/validation), returning field errors with the apiserver's texts.
import { type FieldError, forbiddenField, GoValue, invalidValue, notSupported, requiredValue, tooLong } from '../errors.js';
import { deepEqual, isObject, type KubeObject } from '../object.js';
import { dns1123LabelErrors, labelValueErrors, qualifiedNameErrors } from '../names.js';
import { isIP } from 'node:net';
import { ipBytes } from '../../x509/self-signed.js';
import { labelSelectorFromObject, labelsMatch } from '../selectors.js';

type Obj = Record<string, any>;

const configKey = /^[-._a-zA-Z0-9]+$/;

function configKeyErrors(key: string): string[] {
  const errors: string[] = [];
  if (key.length > 253) errors.push('must be no more than 253 characters');
  if (!configKey.test(key)) {
    errors.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  }
  if (key === '.' || key === '..') errors.push(`must not be '${key}'`);
  else if (key.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

function dataKeyErrors(obj: Obj, fields: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const field of fields) {
    const data = obj[field];
    if (!isObject(data)) continue;
    for (const key of Object.keys(data)) {
      for (const e of configKeyErrors(key)) errors.push(invalidValue(`${field}[${key}]`, key, e));
      if (seen.has(key)) errors.push(invalidValue(`${field}[${key}]`, key, 'duplicate of key present in other field'));
      seen.add(key);
    }
  }
  return errors;
}

function immutableData(obj: Obj, old: Obj | undefined, fields: readonly string[]): FieldError[] {
  if (old === undefined || old.immutable !== true) return [];
  const errors: FieldError[] = [];
  if (obj.immutable !== true) errors.push(forbiddenField('immutable', 'field is immutable when `immutable` is set'));
  for (const field of fields) {
    if (!deepEqual(obj[field] ?? {}, old[field] ?? {})) errors.push(forbiddenField(field, 'field is immutable when `immutable` is set'));
  }
  return errors;
}

/** core.MaxSecretSize: the limit on the summed value sizes of a ConfigMap's or Secret's data (1 MiB). */
const MAX_DATA_SIZE = 1024 * 1024;

/** The summed size in bytes of the values of `obj[field]`: UTF-8 strings, or base64 decoded when `base64`. */
function valueBytes(obj: Obj, field: string, base64: boolean): number {
  const data = obj[field];
  if (!isObject(data)) return 0;
  let total = 0;
  for (const value of Object.values(data)) {
    if (typeof value === 'string') total += base64 ? Buffer.from(value, 'base64').length : Buffer.byteLength(value, 'utf8');
  }
  return total;
}

export function validateConfigMap(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors = [...dataKeyErrors(obj, ['data', 'binaryData']), ...immutableData(obj, old, ['data', 'binaryData'])];
  // ValidateConfigMap reports the whole object (path "[]") when data and binaryData together pass 1 MiB.
  if (valueBytes(obj, 'data', false) + valueBytes(obj, 'binaryData', true) > MAX_DATA_SIZE) errors.push(tooLong('[]', MAX_DATA_SIZE));
  return errors;
}

export function validateSecret(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors = [...dataKeyErrors(obj, ['data']), ...immutableData(obj, old, ['data'])];
  if (valueBytes(obj, 'data', true) > MAX_DATA_SIZE) errors.push(tooLong('data', MAX_DATA_SIZE));
  if (old !== undefined && old.type !== obj.type) errors.push(invalidValue('type', obj.type, 'field is immutable'));
  return errors;
}

function portErrors(field: string, port: unknown): FieldError[] {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return [invalidValue(field, port, 'must be between 1 and 65535, inclusive')];
  }
  return [];
}

export function validateService(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {};
  const errors: FieldError[] = [];
  const types = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
  if (!types.includes(spec.type)) errors.push(notSupported('spec.type', spec.type, types));
  const ports: Obj[] = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0 && spec.type !== 'ExternalName' && spec.clusterIP !== 'None') errors.push(requiredValue('spec.ports'));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !port.name) errors.push(requiredValue(`${at}.name`));
    if (port.name) {
      for (const e of dns1123LabelErrors(port.name)) errors.push(invalidValue(`${at}.name`, port.name, e));
      if (names.has(port.name))
        errors.push({ type: 'FieldValueDuplicate', field: `${at}.name`, detail: `Duplicate value: ${JSON.stringify(port.name)}` });
      names.add(port.name);
    }
    errors.push(...portErrors(`${at}.port`, port.port));
    if (!['TCP', 'UDP', 'SCTP'].includes(port.protocol)) errors.push(notSupported(`${at}.protocol`, port.protocol, ['SCTP', 'TCP', 'UDP']));
  });
  if (
    old !== undefined &&
    isObject(old.spec) &&
    old.spec.clusterIP &&
    spec.clusterIP !== old.spec.clusterIP &&
    spec.type !== 'ExternalName'
  ) {
    errors.push(invalidValue('spec.clusterIPs[0]', spec.clusterIP ?? '', 'may not change once set'));
  }
  for (const [key, value] of Object.entries(isObject(spec.selector) ? spec.selector : {})) {
    for (const e of qualifiedNameErrors(key)) errors.push(invalidValue(`spec.selector`, key, e));
    for (const e of labelValueErrors(String(value))) errors.push(invalidValue(`spec.selector`, value, e));
  }
  return errors;
}

function containerErrors(field: string, containers: unknown, required: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (!Array.isArray(containers) || containers.length === 0) {
    if (required) errors.push(requiredValue(field));
    return errors;
  }
  const names = new Set<string>();
  containers.forEach((c: Obj, i) => {
    const at = `${field}[${i}]`;
    if (!c.name) errors.push(requiredValue(`${at}.name`));
    else {
      for (const e of dns1123LabelErrors(c.name)) errors.push(invalidValue(`${at}.name`, c.name, e));
      if (names.has(c.name))
        errors.push({ type: 'FieldValueDuplicate', field: `${at}.name`, detail: `Duplicate value: ${JSON.stringify(c.name)}` });
      names.add(c.name);
    }
    if (!c.image && field.endsWith('.containers')) errors.push(requiredValue(`${at}.image`));
    (Array.isArray(c.ports) ? c.ports : []).forEach((p: Obj, j: number) => {
      errors.push(...portErrors(`${at}.ports[${j}].containerPort`, p.containerPort));
    });
    const policies = ['Always', 'IfNotPresent', 'Never'];
    if (!policies.includes(c.imagePullPolicy)) errors.push(notSupported(`${at}.imagePullPolicy`, c.imagePullPolicy, policies));
  });
  return errors;
}

/**
 * What the apiserver checks alike in a Deployment, StatefulSet and DaemonSet spec: replicas ≥ 0, a selector that is
 * required, not empty (`empty selector is invalid for <kind>`), immutable and matching the template's labels (shown
 * as a Go map for a Deployment, as JSON for the others: the apiserver's texts differ), the containers and init
 * containers, and restartPolicy Always.
 */
function templateWorkloadErrors(
  kind: string,
  obj: KubeObject,
  old: KubeObject | undefined,
  renderLabels: (labels: Record<string, string>) => unknown,
): FieldError[] {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {};
  const errors: FieldError[] = [];
  if (typeof spec.replicas === 'number' && spec.replicas < 0) {
    errors.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  }
  const template: Obj = isObject(spec.template) ? spec.template : {};
  const templateLabels = (isObject(template.metadata) && isObject(template.metadata.labels) ? template.metadata.labels : {}) as Record<
    string,
    string
  >;
  if (!isObject(spec.selector)) {
    errors.push(requiredValue('spec.selector'));
  } else {
    const selector = labelSelectorFromObject(spec.selector);
    if (selector.length === 0) errors.push(invalidValue('spec.selector', spec.selector, `empty selector is invalid for ${kind}`));
    else if (!labelsMatch(selector, templateLabels)) {
      errors.push(
        invalidValue('spec.template.metadata.labels', renderLabels(templateLabels), '`selector` does not match template `labels`'),
      );
    }
    if (old !== undefined && isObject(old.spec) && !deepEqual(old.spec.selector, spec.selector)) {
      errors.push(invalidValue('spec.selector', spec.selector, 'field is immutable'));
    }
  }
  const podSpec: Obj = isObject(template.spec) ? template.spec : {};
  errors.push(...containerErrors('spec.template.spec.containers', podSpec.containers, true));
  errors.push(...containerErrors('spec.template.spec.initContainers', podSpec.initContainers, false));
  if (podSpec.restartPolicy !== 'Always') errors.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy, ['Always']));
  return errors;
}

/** A StatefulSet's or DaemonSet's spec: the checks of every workload template, and an update strategy of RollingUpdate or OnDelete. */
function updateStrategyWorkload(kind: 'statefulset' | 'daemonset'): (obj: KubeObject, old: KubeObject | undefined) => FieldError[] {
  return (obj, old) => {
    const spec: Obj = isObject(obj.spec) ? obj.spec : {};
    const errors = templateWorkloadErrors(kind, obj, old, (labels) => labels);
    const strategy: Obj = isObject(spec.updateStrategy) ? spec.updateStrategy : {};
    if (!['OnDelete', 'RollingUpdate'].includes(strategy.type)) {
      errors.push(notSupported('spec.updateStrategy.type', strategy.type, ['OnDelete', 'RollingUpdate']));
    }
    return errors;
  };
}

export const validateStatefulSet = updateStrategyWorkload('statefulset');
export const validateDaemonSet = updateStrategyWorkload('daemonset');

export function validateDeployment(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {};
  const errors = templateWorkloadErrors('deployment', obj, old, goMap);
  const strategy: Obj = isObject(spec.strategy) ? spec.strategy : {};
  if (!['Recreate', 'RollingUpdate'].includes(strategy.type))
    errors.push(notSupported('spec.strategy.type', strategy.type, ['Recreate', 'RollingUpdate']));
  if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined) {
    errors.push(forbiddenField('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  }
  return errors;
}

/** Renders a label map the way Go's %#v renders map[string]string (sorted keys). */
function goMap(labels: Record<string, string>): GoValue {
  return new GoValue(
    `map[string]string{${Object.keys(labels)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${JSON.stringify(labels[k])}`)
      .join(', ')}}`,
  );
}

export function validateNamespace(obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const finalizers = isObject(obj.spec) && Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
  finalizers.forEach((f: string, i: number) => {
    for (const e of qualifiedNameErrors(f)) errors.push(invalidValue(`spec.finalizers[${i}]`, f, e));
  });
  return errors;
}

function ruleErrors(rules: unknown, field: string): FieldError[] {
  const errors: FieldError[] = [];
  (Array.isArray(rules) ? rules : []).forEach((rule: Obj, i: number) => {
    const at = `${field}[${i}]`;
    if (!Array.isArray(rule.verbs) || rule.verbs.length === 0)
      errors.push(requiredValue(`${at}.verbs`, 'verbs must contain at least one value'));
    const hasResources = Array.isArray(rule.resources) && rule.resources.length > 0;
    const hasUrls = Array.isArray(rule.nonResourceURLs) && rule.nonResourceURLs.length > 0;
    if (hasUrls && hasResources)
      errors.push(
        invalidValue(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'),
      );
    if (!hasUrls && !hasResources) errors.push(requiredValue(`${at}.resources`, 'resource rules must supply at least one resource'));
    if (hasResources && (!Array.isArray(rule.apiGroups) || rule.apiGroups.length === 0))
      errors.push(requiredValue(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
  });
  return errors;
}

export function validateRole(obj: KubeObject): FieldError[] {
  return ruleErrors((obj as Obj).rules, 'rules');
}

export function validateBinding(obj: KubeObject, old: KubeObject | undefined, clusterScoped: boolean): FieldError[] {
  const o = obj as Obj;
  const errors: FieldError[] = [];
  const ref: Obj = isObject(o.roleRef) ? o.roleRef : {};
  const kinds = clusterScoped ? ['ClusterRole'] : ['Role', 'ClusterRole'];
  if (ref.apiGroup !== 'rbac.authorization.k8s.io')
    errors.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', ['rbac.authorization.k8s.io']));
  if (!kinds.includes(ref.kind)) errors.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errors.push(requiredValue('roleRef.name'));
  (Array.isArray(o.subjects) ? o.subjects : []).forEach((s: Obj, i: number) => {
    const at = `subjects[${i}]`;
    if (!s.name) errors.push(requiredValue(`${at}.name`));
    const subjectKinds = ['ServiceAccount', 'User', 'Group'];
    if (!subjectKinds.includes(s.kind)) errors.push(notSupported(`${at}.kind`, s.kind ?? '', subjectKinds));
    if (s.kind === 'ServiceAccount' && clusterScoped && !s.namespace) errors.push(requiredValue(`${at}.namespace`));
  });
  if (old !== undefined && !deepEqual((old as Obj).roleRef, o.roleRef)) {
    errors.push(invalidValue('roleRef', o.roleRef, 'cannot change roleRef'));
  }
  return errors;
}

export function validateLease(obj: KubeObject): FieldError[] {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {};
  const errors: FieldError[] = [];
  if (spec.leaseDurationSeconds !== undefined && !(spec.leaseDurationSeconds > 0)) {
    errors.push(invalidValue('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0) {
    errors.push(invalidValue('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return errors;
}

/**
 * Event validation on the core/v1 form (pkg/apis/core/validation ValidateEventCreate): the legacy rules, and through
 * events.k8s.io/v1 the strict ones (eventTime required, deprecated fields unset).
 */
export function validateEvent(obj: KubeObject, viaEventsApi: boolean): FieldError[] {
  const e = obj as Obj;
  const errors: FieldError[] = [];
  const namespace = obj.metadata.namespace ?? '';
  const involved: Obj = isObject(e.involvedObject) ? e.involvedObject : {};
  const controllerField = viaEventsApi ? 'reportingController' : 'reportingComponent';
  const has = (v: unknown) => typeof v === 'string' && v !== '';
  const tooLong = (field: string, value: unknown, limit: number) => {
    if (typeof value === 'string' && value.length > limit) errors.push(invalidValue(field, '', `can have at most ${limit} characters`));
  };
  if (!has(e.eventTime)) {
    const mismatch = involved.namespace ? namespace !== involved.namespace : namespace !== '' && namespace !== 'default';
    if (mismatch) errors.push(invalidValue('involvedObject.namespace', involved.namespace ?? '', 'does not match event.namespace'));
  } else {
    if (!involved.namespace && namespace !== 'default' && namespace !== 'kube-system')
      errors.push(invalidValue('involvedObject.namespace', involved.namespace ?? '', 'does not match event.namespace'));
    if (!has(e.reportingComponent)) errors.push(requiredValue(controllerField));
    for (const m of qualifiedNameErrors(e.reportingComponent ?? ''))
      errors.push(invalidValue(controllerField, e.reportingComponent ?? '', m));
    if (!has(e.reportingInstance)) errors.push(requiredValue('reportingInstance'));
    tooLong('reportingInstance', e.reportingInstance, 128);
    if (!has(e.action)) errors.push(requiredValue('action'));
    tooLong('action', e.action, 128);
    if (!has(e.reason)) errors.push(requiredValue('reason'));
    tooLong('reason', e.reason, 128);
    tooLong('message', e.message, 1024);
  }
  if (!viaEventsApi) return errors;
  if (!has(e.eventTime)) errors.push(requiredValue('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') errors.push(invalidValue('type', '', `has invalid value: ${e.type ?? ''}`));
  if (has(e.firstTimestamp)) errors.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (has(e.lastTimestamp)) errors.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (typeof e.count === 'number' && e.count !== 0) errors.push(invalidValue('count', '', 'needs to be unset'));
  if (isObject(e.source) && (has(e.source.component) || has(e.source.host))) errors.push(invalidValue('source', '', 'needs to be unset'));
  return errors;
}

/** IsValidPortNum's message. */
const PORT_RANGE = 'must be between 1 and 65535, inclusive';

function portNumberErrors(port: unknown): string[] {
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [PORT_RANGE];
}

/** IsValidPortName (an IANA_SVC_NAME). */
function portNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length < 1 || name.length > 15) errors.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errors.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errors.push('must not contain consecutive hyphens');
  if (/[a-z]/.test(name) === false) errors.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errors.push('must not begin or end with a hyphen');
  return errors;
}

/** metav1 validation.ValidateLabelSelector: matchLabels keys and values, matchExpressions operators and values. */
function labelSelectorErrors(selector: unknown, at: string): FieldError[] {
  if (!isObject(selector)) return [];
  const errors: FieldError[] = [];
  const s = selector as Obj;
  each(s.matchExpressions, (expression: Obj, index) => {
    const path = `${at}.matchExpressions[${index}]`;
    const values: unknown[] = Array.isArray(expression.values) ? expression.values : [];
    if (expression.operator === 'In' || expression.operator === 'NotIn') {
      if (values.length === 0) errors.push(requiredValue(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (expression.operator === 'Exists' || expression.operator === 'DoesNotExist') {
      if (values.length > 0)
        errors.push(forbiddenField(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errors.push(invalidValue(`${path}.operator`, expression.operator, 'not a valid selector operator'));
    }
    for (const e of qualifiedNameErrors(String(expression.key ?? ''))) errors.push(invalidValue(`${path}.key`, expression.key, e));
    for (const value of values) for (const e of labelValueErrors(String(value))) errors.push(invalidValue(`${path}.values`, value, e));
  });
  if (isObject(s.matchLabels)) {
    for (const [key, value] of Object.entries(s.matchLabels as Record<string, string>)) {
      for (const e of qualifiedNameErrors(key)) errors.push(invalidValue(`${at}.matchLabels`, key, e));
      for (const e of labelValueErrors(String(value))) errors.push(invalidValue(`${at}.matchLabels`, value, e));
    }
  }
  return errors;
}

function each(list: unknown, visit: (item: Obj, index: number) => void): void {
  if (!Array.isArray(list)) return;
  for (const [index, item] of list.entries()) if (isObject(item)) visit(item as Obj, index);
}

function networkPolicyPortErrors(port: Obj, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const protocols = ['TCP', 'UDP', 'SCTP'];
  if (port.protocol !== undefined && !protocols.includes(port.protocol))
    errors.push(notSupported(`${at}.protocol`, port.protocol, protocols));
  if (port.port === undefined) {
    if (port.endPort !== undefined)
      errors.push(invalidValue(`${at}.endPort`, port.endPort, 'may not be specified when `port` is not specified'));
  } else if (typeof port.port === 'number') {
    for (const e of portNumberErrors(port.port)) errors.push(invalidValue(`${at}.port`, port.port, e));
    if (port.endPort !== undefined) {
      // The apiserver (1.34) reports `port` as the value here, not endPort.
      if (port.endPort < port.port) errors.push(invalidValue(`${at}.endPort`, port.port, 'must be greater than or equal to `port`'));
      for (const e of portNumberErrors(port.endPort)) errors.push(invalidValue(`${at}.endPort`, port.endPort, e));
    }
  } else {
    if (port.endPort !== undefined)
      errors.push(invalidValue(`${at}.endPort`, port.endPort, 'may not be specified when `port` is non-numeric'));
    for (const e of portNameErrors(String(port.port))) errors.push(invalidValue(`${at}.port`, port.port, e));
  }
  return errors;
}

const CIDR_FORMAT = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

interface Cidr {
  readonly family: 4 | 6;
  readonly prefix: number;
  /** The address as one number. */
  readonly address: bigint;
}

/** A CIDR as netutils.ParseCIDRSloppy reads it: an address and a prefix length within its family. */
function parsedCidr(cidr: string): Cidr | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!match) return undefined;
  const family = isIP(match[1]!);
  const prefix = Number(match[2]);
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return undefined;
  const address = BigInt(`0x${ipBytes(match[1]!).toString('hex')}`);
  return { family: family as 4 | 6, prefix, address };
}

/** Whether `inner`'s address lies in `outer`'s network (IPNet.Contains). */
function sameNetwork(outer: Cidr, inner: Cidr): boolean {
  const bits = BigInt(outer.family === 4 ? 32 : 128);
  const shift = bits - BigInt(outer.prefix);
  return outer.address >> shift === inner.address >> shift;
}

function networkPolicyPeerErrors(peer: Obj, at: string): FieldError[] {
  const errors: FieldError[] = [];
  let peers = 0;
  if (peer.podSelector !== undefined && peer.podSelector !== null) {
    peers += 1;
    errors.push(...labelSelectorErrors(peer.podSelector, `${at}.podSelector`));
  }
  if (peer.namespaceSelector !== undefined && peer.namespaceSelector !== null) {
    peers += 1;
    errors.push(...labelSelectorErrors(peer.namespaceSelector, `${at}.namespaceSelector`));
  }
  if (isObject(peer.ipBlock)) {
    peers += 1;
    const block = peer.ipBlock as Obj;
    const cidr = block.cidr ? parsedCidr(String(block.cidr)) : undefined;
    if (!block.cidr) errors.push(requiredValue(`${at}.ipBlock.cidr`));
    else if (cidr === undefined) errors.push(invalidValue(`${at}.ipBlock.cidr`, block.cidr, CIDR_FORMAT));
    else {
      const excepts: unknown[] = Array.isArray(block.except) ? block.except : [];
      for (const [index, value] of excepts.entries()) {
        const except = parsedCidr(String(value));
        if (except === undefined) errors.push(invalidValue(`${at}.ipBlock.except[${index}]`, value, CIDR_FORMAT));
        else if (!(except.family === cidr.family && cidr.prefix < except.prefix && sameNetwork(cidr, except)))
          errors.push(invalidValue(`${at}.ipBlock.except[${index}]`, value, 'must be a strict subset of `cidr`'));
      }
    }
  }
  if (peers === 0) errors.push(requiredValue(at, 'must specify a peer'));
  else if (peers > 1 && isObject(peer.ipBlock)) errors.push(forbiddenField(at, 'may not specify both ipBlock and another peer'));
  return errors;
}

/** networking ValidateNetworkPolicySpec: the pod selector, each rule's ports and peers, and policyTypes. */
export function validateNetworkPolicy(obj: KubeObject): FieldError[] {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {};
  const errors: FieldError[] = [...labelSelectorErrors(spec.podSelector, 'spec.podSelector')];
  for (const [direction, peersField] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    each(spec[direction], (rule, index) => {
      const at = `spec.${direction}[${index}]`;
      each(rule.ports, (port, p) => errors.push(...networkPolicyPortErrors(port, `${at}.ports[${p}]`)));
      each(rule[peersField], (peer, p) => errors.push(...networkPolicyPeerErrors(peer, `${at}.${peersField}[${p}]`)));
    });
  }
  const types: unknown[] = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (types.length > 2) {
    errors.push(invalidValue('spec.policyTypes', types, 'may not specify more than two policyTypes'));
    return errors;
  }
  for (const [index, type] of types.entries()) {
    if (type !== 'Ingress' && type !== 'Egress') errors.push(notSupported(`spec.policyTypes[${index}]`, type, ['Ingress', 'Egress']));
  }
  return errors;
}
