// The node's configuration files as pure functions of its addresses and paths: containerd, the CNI network, the kubelet.
import type { NodeAddresses } from './addresses.js';

/** Paths inside the node's mount namespace (its private /run tmpfs) where the node keeps its state. */
export const NODE_STATE = {
  root: '/run/customapp',
  containerdSocket: '/run/customapp/containerd.sock',
  containerdRoot: '/run/customapp/containerd/root',
  containerdState: '/run/customapp/containerd/state',
  kubeletRoot: '/run/customapp/kubelet',
  podLogs: '/run/customapp/pod-logs',
  cniState: '/run/customapp/cni',
} as const;

/** Where Debian's containernetworking-plugins installs the CNI plugins. */
export const CNI_BIN_DIR = '/usr/lib/cni';

/** The name of the CNI bridge in the node's namespace (its gateway is the first pod address). */
export const POD_BRIDGE = 'cni0';

/** Inputs of {@link containerdConfig}. */
export interface ContainerdConfigInput {
  /** The image every pod sandbox runs (built here). */
  readonly pauseImage: string;
  /** The directory holding the CNI network configuration. */
  readonly cniConfDir: string;
}

/**
 * containerd's configuration (version 2, containerd 1.6): everything under the node's private /run, runc with cgroupfs,
 * the CRI plugin with our pause image and CNI directory, pod network namespaces under the state directory, and
 * `restrict_oom_score_adj`: this machine refuses a negative oom_score_adj, and without it every sandbox fails with
 * runc's "can't get final child's PID from pipe: EOF".
 */
export function containerdConfig(input: ContainerdConfigInput): string {
  return `version = 2
root = "${NODE_STATE.containerdRoot}"
state = "${NODE_STATE.containerdState}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${NODE_STATE.containerdSocket}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${NODE_STATE.root}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${input.pauseImage}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${input.cniConfDir}"
    max_conf_num = 1
`;
}

/**
 * The pod network: a bridge in the node's namespace that is the pods' gateway, host-local addresses from the pod CIDR,
 * and no masquerading (`ipMasq: false`): pod traffic is routed to the node's namespace and to the host's end of the
 * link, and nowhere else, since the node's namespace has no default route.
 */
export function cniConfig(addresses: NodeAddresses): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'customapp',
      plugins: [
        {
          type: 'bridge',
          bridge: POD_BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: addresses.podCidr }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: `${NODE_STATE.cniState}/ipam`,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

/** Inputs of {@link kubeletConfig}. */
export interface KubeletConfigInput {
  readonly addresses: NodeAddresses;
  /** The cgroup (in every hierarchy) under which the kubelet puts its pods. */
  readonly cgroupRoot: string;
  /** The CA of kube-apiserver's kubelet client certificate. */
  readonly clientCaFile: string;
}

/**
 * The KubeletConfiguration: cgroupfs on this machine's cgroup v1 (`failCgroupV1: false`), no swap check, serving on
 * the node's address only, webhook authentication and authorization plus the apiserver's client certificate (exec,
 * logs), all state under the node's private /run, no image garbage collection (the images are built here and cannot
 * be pulled back), and eviction thresholds low enough that a busy shared disk evicts nothing.
 */
export function kubeletConfig(input: KubeletConfigInput): string {
  return `${JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: input.addresses.nodeIp,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: input.clientCaFile },
      },
      authorization: { mode: 'Webhook' },
      cgroupDriver: 'cgroupfs',
      cgroupRoot: input.cgroupRoot,
      cgroupsPerQOS: true,
      failCgroupV1: false,
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${NODE_STATE.containerdSocket}`,
      podLogsDir: NODE_STATE.podLogs,
      volumePluginDir: `${NODE_STATE.kubeletRoot}/volume-plugins`,
      resolvConf: '',
      clusterDomain: 'cluster.local',
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
      serializeImagePulls: false,
      protectKernelDefaults: false,
    },
    null,
    2,
  )}\n`;
}
