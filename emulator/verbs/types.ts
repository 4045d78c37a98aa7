// The options and results of the API verbs, shared by the verbs, the HTTP layer and the watch server.
import type { Authorizer, UserInfo } from '../authz.js';
import type { FieldValidation } from '../fieldvalidation.js';
import type { KubeObject } from '../object.js';
import type { FieldSelector, LabelSelector } from '../selectors.js';

/** Per-request options of a write. */
export interface WriteContext {
  readonly user: UserInfo;
  readonly userAgent?: string;
  readonly fieldManager?: string;
  readonly dryRun: boolean;
  readonly fieldValidation: FieldValidation;
  /** Collects `Warning` headers. */
  readonly warnings: string[];
  readonly authorize: Authorizer;
}

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
}

export interface ListResult {
  readonly items: KubeObject[];
  readonly resourceVersion: number;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export interface DeleteOptions {
  readonly propagationPolicy?: string;
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly orphanDependents?: boolean;
  readonly dryRun?: boolean;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WriteResult {
  readonly object: KubeObject;
  /** 201 for a create (POST, PUT that creates, apply that creates), else 200. */
  readonly created: boolean;
}

export type DeleteResult =
  | { readonly kind: 'object'; readonly object: KubeObject }
  | { readonly kind: 'status'; readonly object: KubeObject };

export interface ApiOptions {
  readonly clock: () => Date;
  readonly random: () => number;
}

/** Selectors of a list or watch, parsed and checked against the resource. */
export interface Selection {
  readonly namespace: string;
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
}
