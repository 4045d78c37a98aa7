// The options and outcomes of API calls: verbs, list and watch scopes, patch types, writes and deletes, request samples.

/** The verbs of the Kubernetes API, as RBAC and metrics name them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One finished request, for metrics and the benchmark. */
export interface RequestSample {
  readonly verb: Verb;
  /** `configmaps`, `deployments.apps`, `customapps.app.example.com`. */
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  /** HTTP status, or 0 when the request failed before an answer. */
  readonly code: number;
  readonly durationMs: number;
}

/** Scope and selectors of a list or watch. */
export interface ListOptions {
  /** Namespace, or undefined for all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /**
   * A list answer longer than this many bytes is not read further: the request is aborted and rejected with
   * reason `AnswerTooLarge` (`isAnswerTooLarge`), so no more than this is ever held. Kubernetes has no byte limit
   * on a page; ask again with a smaller `limit`. @default no limit
   */
  readonly maxBytes?: number;
  /**
   * Told the length in bytes of the answer once it is read whole, and whether it was protobuf (read into a Buffer and
   * decoded object by object, never one string): a pager sizes its next page by it. @default none
   */
  readonly onBytes?: (bytes: number, protobuf: boolean) => void;
}

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Start after this version; undefined = the current state first, as synthetic ADDED events. */
  readonly resourceVersion?: string;
  /** Ask the server for BOOKMARK events. */
  readonly allowWatchBookmarks?: boolean;
  /** The server ends the watch after this many seconds. */
  readonly timeoutSeconds?: number;
}

/** The patch formats the API accepts. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';
/** The Content-Type of each patch type. */
export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface WriteOptions {
  readonly fieldManager?: string;
  /** For apply patches: take ownership of conflicting fields. */
  readonly force?: boolean;
  /** `status`, `finalizers`… */
  readonly subresource?: string;
  readonly signal?: AbortSignal;
}

export interface DeleteOptions {
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly signal?: AbortSignal;
}
