// What a workload's annotations ask for: whether it opted in, which ConfigMaps and Secrets roll it, pause and debounce; bad input as problems.
import { DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX, GROUP, MAX_DEBOUNCE_SECONDS } from '../../api/customapp.js';
import {
  MAX_WORKLOAD_REFERENCES,
  RELOAD_ANNOTATION,
  RELOAD_CONFIGMAPS_ANNOTATION,
  RELOAD_SECRETS_ANNOTATION,
  RELOADER_AUTO_ANNOTATION,
  RELOADER_CONFIGMAPS_ANNOTATION,
  RELOADER_CONFIGMAPS_AUTO_ANNOTATION,
  RELOADER_CONFIGMAPS_EXCLUDE_ANNOTATION,
  RELOADER_SECRETS_ANNOTATION,
  RELOADER_SECRETS_AUTO_ANNOTATION,
  RELOADER_SECRETS_EXCLUDE_ANNOTATION,
  ROLLOUT_DEBOUNCE_ANNOTATION,
  ROLLOUT_PAUSED_ANNOTATION,
} from '../../api/workload.js';
import type { DependencyKind } from '../dependencies/source.js';
import type { PodTemplate } from '../kube/objects.js';
import { type TemplateReference, templateReferences } from '../podtemplate/references.js';

/** One object whose content rolls the workload. */
export interface WorkloadReference {
  readonly kind: DependencyKind;
  readonly name: string;
  /** May be missing without a warning: marked `optional: true` wherever the template uses it, or named by an annotation only. */
  readonly optional: boolean;
  /** The keys the pod template reads, when every use names them: only their change rolls it. Undefined: any key. */
  readonly keys?: readonly string[];
}

/** What the annotations ask for. */
export interface ReloadSpec {
  /** Some opt-in annotation is set (true, or a list): the workload is served. */
  readonly optedIn: boolean;
  /** The objects whose content rolls it, each once (empty when not opted in, or when the annotations are refused). */
  readonly refs: readonly WorkloadReference[];
  /** `app.example.com/rollout-paused`. */
  readonly paused: boolean;
  /** `app.example.com/rollout-debounce-seconds`, in ms. */
  readonly debounceMs: number;
  /** Each bad annotation, quoting it (for one Warning Event): the rest is served as if it were absent. */
  readonly problems: readonly string[];
}

/** The annotations that opt a workload in (Reloader reads them on the pod template when none is on the workload). */
const OPT_IN = [
  RELOAD_ANNOTATION,
  RELOAD_CONFIGMAPS_ANNOTATION,
  RELOAD_SECRETS_ANNOTATION,
  RELOADER_AUTO_ANNOTATION,
  RELOADER_CONFIGMAPS_AUTO_ANNOTATION,
  RELOADER_SECRETS_AUTO_ANNOTATION,
  RELOADER_CONFIGMAPS_ANNOTATION,
  RELOADER_SECRETS_ANNOTATION,
];

/** Ours, beside the opt-in ones: the governance's per-workload settings. */
const KNOWN_OURS = new Set([
  ...OPT_IN.filter((key) => key.startsWith(`${GROUP}/`)),
  ROLLOUT_PAUSED_ANNOTATION,
  ROLLOUT_DEBOUNCE_ANNOTATION,
]);

/** True when `annotations` (a workload's or its template's) hold an annotation that opts it in. */
export function hasOptIn(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations !== undefined && OPT_IN.some((key) => annotations[key] !== undefined);
}

/** Every annotation key this file reads, for the cache's trim (`transform.ts`). */
export const READ_ANNOTATIONS: readonly string[] = [
  ...OPT_IN,
  RELOADER_CONFIGMAPS_EXCLUDE_ANNOTATION,
  RELOADER_SECRETS_EXCLUDE_ANNOTATION,
  ROLLOUT_PAUSED_ANNOTATION,
  ROLLOUT_DEBOUNCE_ANNOTATION,
];

/** Go's `strconv.ParseBool`, which Reloader reads its annotations with. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

const NAME = new RegExp(DNS1123_SUBDOMAIN);
/** A Reloader pattern we honour: name characters and `.*` wildcards (linear to match; any other regex is refused). */
const PATTERN = /^[a-z0-9.*-]+$/;

interface Reader {
  readonly annotations: Readonly<Record<string, string>>;
  readonly problems: string[];
}

function flag(reader: Reader, key: string): boolean {
  const value = reader.annotations[key];
  if (value === undefined) return false;
  if (TRUE.has(value)) return true;
  if (!FALSE.has(value)) reader.problems.push(`annotation ${key}: ${JSON.stringify(value)} is not "true" or "false"`);
  return false;
}

/**
 * The entries of a comma-separated list (trimmed), each a name or, where `patterns`, a Reloader pattern (an anchored
 * regex of which we honour name characters and `.*`). A list longer than the limit, an empty entry, or an entry that is
 * neither is a problem, and the entry (or the whole list, when too long) is left out.
 */
function list(reader: Reader, key: string, patterns: boolean): { names: string[]; matchers: RegExp[] } {
  const value = reader.annotations[key];
  const out = { names: [] as string[], matchers: [] as RegExp[] };
  if (value === undefined) return out;
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_WORKLOAD_REFERENCES) {
    reader.problems.push(`annotation ${key}: ${entries.length} names, more than ${MAX_WORKLOAD_REFERENCES}; the list is ignored`);
    return out;
  }
  for (const entry of entries) {
    if (entry === '') reader.problems.push(`annotation ${key}: an empty name in ${JSON.stringify(truncate(value))}`);
    else if (entry.length <= DNS1123_SUBDOMAIN_MAX && NAME.test(entry)) out.names.push(entry);
    else if (patterns && entry.length <= DNS1123_SUBDOMAIN_MAX && PATTERN.test(entry) && /^([^*]|\.\*)*$/.test(entry)) {
      out.matchers.push(new RegExp(`^${entry}$`));
    } else {
      const what = patterns ? 'a name, or a pattern of name characters and .*' : 'a DNS-1123 name';
      reader.problems.push(`annotation ${key}: ${JSON.stringify(truncate(entry))} is not ${what}; it is ignored`);
    }
  }
  return out;
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function debounce(reader: Reader): number {
  const value = reader.annotations[ROLLOUT_DEBOUNCE_ANNOTATION];
  if (value === undefined) return 0;
  const seconds = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isInteger(seconds) && seconds <= MAX_DEBOUNCE_SECONDS) return seconds * 1000;
  reader.problems.push(
    `annotation ${ROLLOUT_DEBOUNCE_ANNOTATION}: ${JSON.stringify(truncate(value))} is not a number of seconds from 0 to ${MAX_DEBOUNCE_SECONDS}`,
  );
  return 0;
}

/** One kind's selection: what `auto` takes from the template, the names listed, the patterns, the exclusions. */
interface KindSelection {
  readonly kind: DependencyKind;
  readonly auto: boolean;
  readonly names: readonly string[];
  readonly matchers: readonly RegExp[];
  readonly excluded: ReadonlySet<string>;
}

function select(selection: KindSelection, used: readonly TemplateReference[]): WorkloadReference[] {
  const chosen = new Map<string, WorkloadReference>();
  for (const ref of used) {
    if (ref.kind !== selection.kind) continue;
    const listed = selection.names.includes(ref.name) || selection.matchers.some((matcher) => matcher.test(ref.name));
    if (selection.auto || listed) chosen.set(ref.name, { kind: ref.kind, name: ref.name, optional: ref.optional, keys: ref.keys });
  }
  // A name listed that the template does not use still rolls the workload (as with Reloader): it may be missing.
  for (const name of selection.names) if (!chosen.has(name)) chosen.set(name, { kind: selection.kind, name, optional: true });
  return [...chosen.values()].filter((ref) => !selection.excluded.has(ref.name));
}

/**
 * Reads a workload's annotations (those on its pod template when none that opts in is on the workload itself, as
 * Reloader does). Ours and Reloader's mean the same and add up:
 * - `app.example.com/reload` or `reloader.stakater.com/auto` "true": every ConfigMap and Secret the pod template uses;
 *   `configmap.reloader.stakater.com/auto` (`secret.…`): only its ConfigMaps (Secrets);
 * - `app.example.com/reload-configmaps` (`-secrets`): these names; `configmap.reloader.stakater.com/reload`
 *   (`secret.…`): these names, or patterns (Reloader's anchored regexes; we honour `.*` wildcards) matched against the
 *   names the template uses;
 * - `configmaps.exclude.reloader.stakater.com/reload` (`secrets.…`): never these.
 * Every bad value is a problem (quoted) and is ignored; more than {@link MAX_WORKLOAD_REFERENCES} objects in all is a
 * problem that leaves the workload unserved (no watch for a 10k-name annotation).
 */
export function reloadSpec(metadataAnnotations: Readonly<Record<string, string>> | undefined, template: PodTemplate): ReloadSpec {
  const own = metadataAnnotations ?? {};
  const annotations = hasOptIn(own) ? own : (template.metadata?.annotations ?? {});
  const reader: Reader = {
    annotations: { ...annotations, ...pick(own, [ROLLOUT_PAUSED_ANNOTATION, ROLLOUT_DEBOUNCE_ANNOTATION]) },
    problems: [],
  };
  for (const key of Object.keys(own)) {
    if (key.startsWith(`${GROUP}/reload`) && !KNOWN_OURS.has(key)) {
      reader.problems.push(`annotation ${key} is unknown: the kinds are ${RELOAD_CONFIGMAPS_ANNOTATION} and ${RELOAD_SECRETS_ANNOTATION}`);
    }
  }
  const paused = flag(reader, ROLLOUT_PAUSED_ANNOTATION);
  const debounceMs = debounce(reader);
  const optedIn = hasOptIn(annotations);
  if (!optedIn) return { optedIn, refs: [], paused, debounceMs, problems: reader.problems };
  const auto = flag(reader, RELOAD_ANNOTATION) || flag(reader, RELOADER_AUTO_ANNOTATION);
  const kinds: [DependencyKind, string, string, string, string][] = [
    [
      'ConfigMap',
      RELOADER_CONFIGMAPS_AUTO_ANNOTATION,
      RELOAD_CONFIGMAPS_ANNOTATION,
      RELOADER_CONFIGMAPS_ANNOTATION,
      RELOADER_CONFIGMAPS_EXCLUDE_ANNOTATION,
    ],
    [
      'Secret',
      RELOADER_SECRETS_AUTO_ANNOTATION,
      RELOAD_SECRETS_ANNOTATION,
      RELOADER_SECRETS_ANNOTATION,
      RELOADER_SECRETS_EXCLUDE_ANNOTATION,
    ],
  ];
  const used = templateReferences(template);
  const refs: WorkloadReference[] = [];
  for (const [kind, typedAuto, ours, reloaders, exclude] of kinds) {
    const mine = list(reader, ours, false);
    const theirs = list(reader, reloaders, true);
    refs.push(
      ...select(
        {
          kind,
          auto: flag(reader, typedAuto) || auto,
          names: [...new Set([...mine.names, ...theirs.names])],
          matchers: theirs.matchers,
          excluded: new Set(list(reader, exclude, false).names),
        },
        used,
      ),
    );
  }
  if (refs.length > MAX_WORKLOAD_REFERENCES) {
    reader.problems.push(
      `${refs.length} ConfigMaps and Secrets selected, more than ${MAX_WORKLOAD_REFERENCES}: the workload is not served`,
    );
    return { optedIn, refs: [], paused, debounceMs, problems: reader.problems };
  }
  return { optedIn, refs, paused, debounceMs, problems: reader.problems };
}

function pick(annotations: Readonly<Record<string, string>>, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (annotations[key] === undefined ? [] : [[key, annotations[key]!]])));
}
