// Counts the scope changes of a shard's caches in its pod's log: each one costs every scoped cache one LIST.
import { parseJsonLines } from '../support/json-lines.js';

/** The shard's log lines that carry the scope version they belong to (operator/shard/shard.ts). */
const SCOPE_LINES = new Set(['shard.member.joined', 'shard.member.left', 'shard.drained']);

/**
 * How many times a shard's cache scope changed in [fromMs, toMs), from its pod's log `text` (JSON lines; the logs of
 * its containers may be joined, and a line seen twice counts once). The scope changes when the shard's view changes
 * (a `shard.member.joined` or `shard.member.left` line per member that came or went, all of one version) and when it
 * acknowledges a view (`shard.drained`): each version makes every scoped cache list once, whether or not its view was
 * acknowledged before the next change came. The versions of one process are counted: a process that started in the
 * window is a cold start, which lists everything anyway. Lines without a version (another build) are not counted.
 */
export function scopeChanges(text: string, fromMs: number, toMs: number): number {
  const versions = new Set<number>();
  for (const line of parseJsonLines<Record<string, unknown>>(text, () => undefined)) {
    if (!SCOPE_LINES.has(String(line.msg)) || typeof line.scope !== 'number') continue;
    const at = Date.parse(String(line.time));
    if (at >= fromMs && at < toMs) versions.add(line.scope);
  }
  return versions.size;
}

/**
 * How many LISTs in [fromMs, toMs) the operator's log `text` explains as new subscriptions rather than relists: a
 * dependency stream that stopped (its last ref released) and was subscribed again later lists again, as its first
 * subscription did. Counted per stream: every `subscribed` line of a stream after its first in the window (a line seen
 * twice, from joined container logs, counts once).
 */
export function resubscriptions(text: string, fromMs: number, toMs: number): number {
  const perStream = new Map<string, Set<string>>();
  for (const line of parseJsonLines<Record<string, unknown>>(text, () => undefined)) {
    if (line.msg !== 'subscribed' || typeof line.stream !== 'string') continue;
    const at = Date.parse(String(line.time));
    if (!(at >= fromMs && at < toMs)) continue;
    const times = perStream.get(line.stream) ?? new Set<string>();
    times.add(String(line.time));
    perStream.set(line.stream, times);
  }
  return [...perStream.values()].reduce((sum, times) => sum + times.size - 1, 0);
}
