// WATCH over HTTP: the watch options checked as the apiserver does, then the stream handed to the WatchHub.
import { badRequest } from '../errors.js';
import { WatchHub } from '../watch.js';
import type { ResourceCall } from './deps.js';

export function serveWatch({ deps, req, res, rt, namespace, info, query, rendering, user }: ResourceCall): void {
  const { api, hub } = deps;
  const { name } = info;
  let fieldSelector = query.get('fieldSelector') ?? '';
  if (name !== '') fieldSelector = fieldSelector === '' ? `metadata.name=${name}` : `${fieldSelector},metadata.name=${name}`;
  const selection = api.parseSelection(rt, namespace, query.get('labelSelector') ?? '', fieldSelector);
  const sendInitialEvents = query.has('sendInitialEvents') ? query.get('sendInitialEvents') === 'true' : undefined;
  const resourceVersion = query.get('resourceVersion') ?? '';
  const resourceVersionMatch = query.get('resourceVersionMatch') ?? '';
  WatchHub.validate({ resourceVersion, resourceVersionMatch, allowBookmarks: false, sendInitialEvents, timeoutSeconds: undefined });
  if (resourceVersion !== '' && !/^\d+$/.test(resourceVersion))
    throw badRequest(`resourceVersion: Invalid value: "${resourceVersion}": must be a non-negative integer`);
  const timeout = query.get('timeoutSeconds');
  const table = rendering === 'table' ? { columns: rt.columns(), includeObject: query.get('includeObject') ?? 'Metadata' } : undefined;
  hub.serve(
    {
      rt,
      selection,
      resourceVersion,
      resourceVersionMatch,
      allowBookmarks: query.get('allowWatchBookmarks') === 'true',
      sendInitialEvents,
      timeoutSeconds: timeout === null ? 1800 + Math.floor(Math.random() * 1800) : Number(timeout),
      user: user.username,
      table,
    },
    res,
    () => deps.logger.debug({ stream: 'watch', resource: rt.resource, user: user.username }, 'watch closed'),
  );
  req.on('error', () => res.destroy());
}
