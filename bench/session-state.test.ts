import test from 'ava';
import type { KubeClient } from '../operator/kube/client.js';
import type { BenchServer } from './server.js';
import { SessionBase, type SessionOptions } from './session-state.js';

/** A session whose server and client are stand-ins: only {@link SessionBase.close} runs. */
class Closing extends SessionBase {
  shut(process: { stop(): Promise<void> } | undefined): Promise<void> {
    return this.close(process);
  }
}

test('closing a session stops the API server even when stopping the client throws', async (t) => {
  const session = new Closing({ participant: 'ours', size: 20 } as SessionOptions);
  const stopped: string[] = [];
  session.server = { stop: async () => void stopped.push('server') } as unknown as BenchServer;
  session.client = {
    close: () => {
      throw new ReferenceError('the client failed to close');
    },
  } as unknown as KubeClient;
  await t.throwsAsync(session.shut({ stop: async () => void stopped.push('process') }), { instanceOf: ReferenceError });
  t.deepEqual(stopped, ['process', 'server'], 'the participant first, the server last');
});
