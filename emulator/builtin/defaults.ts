// Defaulting of built-in kinds, as the apiserver's SetDefaults_* functions do when decoding (checked against envtest).
import type { KubeObject } from '../object.js';
import { isObject } from '../object.js';

type Obj = Record<string, any>;

function obj(parent: Obj, key: string): Obj {
  if (!isObject(parent[key])) parent[key] = {};
  return parent[key];
}

function setDefault(target: Obj, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null || target[key] === '') target[key] = value;
}

function each(list: unknown, fn: (item: Obj) => void): void {
  if (Array.isArray(list)) for (const item of list) if (isObject(item)) fn(item);
}

function httpGetDefaults(handler: unknown): void {
  if (!isObject(handler) || !isObject(handler.httpGet)) return;
  setDefault(handler.httpGet, 'path', '/');
  setDefault(handler.httpGet, 'scheme', 'HTTP');
}

function probeDefaults(probe: unknown): void {
  if (!isObject(probe)) return;
  setDefault(probe, 'timeoutSeconds', 1);
  setDefault(probe, 'periodSeconds', 10);
  setDefault(probe, 'successThreshold', 1);
  setDefault(probe, 'failureThreshold', 3);
  httpGetDefaults(probe);
  if (isObject(probe.grpc) && probe.grpc.service === undefined) probe.grpc.service = '';
}

/** The image pull policy default: Always for ":latest" or an untagged image, else IfNotPresent. */
function pullPolicyFor(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return lastSegment.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function containerDefaults(container: Obj): void {
  if (!isObject(container.resources)) container.resources = {};
  setDefault(container, 'terminationMessagePath', '/dev/termination-log');
  setDefault(container, 'terminationMessagePolicy', 'File');
  setDefault(container, 'imagePullPolicy', pullPolicyFor(container.image));
  each(container.ports, (port) => setDefault(port, 'protocol', 'TCP'));
  each(container.env, (env) => {
    if (isObject(env.valueFrom) && isObject(env.valueFrom.fieldRef)) setDefault(env.valueFrom.fieldRef, 'apiVersion', 'v1');
  });
  probeDefaults(container.livenessProbe);
  probeDefaults(container.readinessProbe);
  probeDefaults(container.startupProbe);
  if (isObject(container.lifecycle)) {
    httpGetDefaults(container.lifecycle.postStart);
    httpGetDefaults(container.lifecycle.preStop);
  }
}

const volumeSources = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function volumeDefaults(volume: Obj): void {
  if (!volumeSources.some((s) => volume[s] !== undefined && volume[s] !== null)) volume.emptyDir = {};
  for (const source of ['configMap', 'secret', 'downwardAPI', 'projected']) {
    if (isObject(volume[source])) setDefault(volume[source], 'defaultMode', 420);
  }
  if (isObject(volume.downwardAPI)) {
    each(volume.downwardAPI.items, (item) => {
      if (isObject(item.fieldRef)) setDefault(item.fieldRef, 'apiVersion', 'v1');
    });
  }
  if (isObject(volume.projected) && volume.projected.sources === undefined) volume.projected.sources = null;
  if (isObject(volume.hostPath)) setDefault(volume.hostPath, 'type', '');
}

export function podSpecDefaults(spec: Obj): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  if (!isObject(spec.securityContext)) spec.securityContext = {};
  setDefault(spec, 'schedulerName', 'default-scheduler');
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  each(spec.containers, containerDefaults);
  each(spec.initContainers, containerDefaults);
  each(spec.ephemeralContainers, containerDefaults);
  each(spec.volumes, volumeDefaults);
}

export function deploymentDefaults(deployment: KubeObject): void {
  const spec = obj(deployment as Obj, 'spec');
  setDefault(spec, 'replicas', 1);
  const strategy = obj(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = obj(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', '25%');
    setDefault(rolling, 'maxSurge', '25%');
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  const template = obj(spec, 'template');
  podSpecDefaults(obj(template, 'spec'));
}

/** apps/v1 SetDefaults_StatefulSet: OrderedReady, RollingUpdate with partition 0, PVC retention Retain, 1 replica, 10 revisions. */
export function statefulSetDefaults(statefulSet: KubeObject): void {
  const spec = obj(statefulSet as Obj, 'spec');
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = obj(spec, 'updateStrategy');
  if (!strategy.type) {
    strategy.type = 'RollingUpdate';
    obj(strategy, 'rollingUpdate');
  }
  if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate !== undefined) setDefault(obj(strategy, 'rollingUpdate'), 'partition', 0);
  const retention = obj(spec, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  setDefault(spec, 'replicas', 1);
  setDefault(spec, 'revisionHistoryLimit', 10);
  podSpecDefaults(obj(obj(spec, 'template'), 'spec'));
}

/** apps/v1 SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, 10 revisions. */
export function daemonSetDefaults(daemonSet: KubeObject): void {
  const spec = obj(daemonSet as Obj, 'spec');
  const strategy = obj(spec, 'updateStrategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = obj(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', 1);
    setDefault(rolling, 'maxSurge', 0);
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  podSpecDefaults(obj(obj(spec, 'template'), 'spec'));
}

export function serviceDefaults(service: KubeObject): void {
  const spec = obj(service as Obj, 'spec');
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'ClientIP') {
    const config = obj(spec, 'sessionAffinityConfig');
    const clientIP = obj(config, 'clientIP');
    setDefault(clientIP, 'timeoutSeconds', 10800);
  }
  each(spec.ports, (port) => {
    setDefault(port, 'protocol', 'TCP');
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
  });
  if (spec.type !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') setDefault(spec, 'externalTrafficPolicy', 'Cluster');
  if (spec.type === 'LoadBalancer') setDefault(spec, 'allocateLoadBalancerNodePorts', true);
}

export function namespaceDefaults(namespace: KubeObject): void {
  const labels = (namespace.metadata.labels ??= {});
  if (namespace.metadata.name) labels['kubernetes.io/metadata.name'] = namespace.metadata.name;
}

export function secretDefaults(secret: KubeObject): void {
  setDefault(secret as Obj, 'type', 'Opaque');
}

export function bindingDefaults(binding: KubeObject): void {
  each((binding as Obj).subjects, (subject) => {
    if (subject.apiGroup !== undefined) return;
    subject.apiGroup = subject.kind === 'ServiceAccount' ? '' : 'rbac.authorization.k8s.io';
  });
}

export function crdDefaults(crd: KubeObject): void {
  const spec = obj(crd as Obj, 'spec');
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const names = obj(spec, 'names');
  if (typeof names.kind === 'string') setDefault(names, 'singular', names.kind.toLowerCase());
  if (typeof names.kind === 'string') setDefault(names, 'listKind', `${names.kind}List`);
}

export function coreEventDefaults(event: KubeObject): void {
  const e = event as Obj;
  if (e.eventTime === undefined) e.eventTime = null;
  setDefault(e, 'reportingComponent', '');
  setDefault(e, 'reportingInstance', '');
  if (!isObject(e.involvedObject)) e.involvedObject = {};
  if (!isObject(e.source)) e.source = {};
  if (e.firstTimestamp === undefined) e.firstTimestamp = null;
  if (e.lastTimestamp === undefined) e.lastTimestamp = null;
}

/** networking/v1 SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort: policyTypes from the rules, TCP ports. */
export function networkPolicyDefaults(policy: KubeObject): void {
  const spec = obj(policy as Obj, 'spec');
  for (const rules of [spec.ingress, spec.egress]) each(rules, (rule) => each(rule.ports, (port) => setDefault(port, 'protocol', 'TCP')));
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}
