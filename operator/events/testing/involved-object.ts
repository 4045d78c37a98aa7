// The CustomApp an Event recorder test posts Events about, by name.
import type { InvolvedObject } from '../recorder.js';

/** A CustomApp `name` in `namespace` as an Event's involved object, its uid derived from its name. */
export function involvedApp(name: string, namespace: string): InvolvedObject {
  return { apiVersion: 'app.example.com/v1', kind: 'CustomApp', name, namespace, uid: `uid-${name}` };
}
