// An informer a test drives by hand: each apply or delete updates the store, then emits the change, as the reflector does.
import { BehaviorSubject, Subject } from 'rxjs';
import type { Informer } from '../informer.js';
import { type Indexers, objectKey, Store, type StoreChange } from '../store.js';
import type { KubeObject } from '../../kube/objects.js';

export class FakeInformer<T extends KubeObject> implements Informer<T> {
  readonly store: Store<T>;
  private readonly changes = new Subject<StoreChange<T>>();
  readonly events$ = this.changes.asObservable();
  readonly synced$ = new BehaviorSubject(true);

  constructor(indexers: Indexers<T> = {}) {
    this.store = new Store<T>(indexers);
  }

  apply(object: T): void {
    this.store.apply(object);
    this.changes.next({ type: 'apply', key: objectKey(object), object });
  }

  delete(object: T): void {
    this.store.delete(object);
    this.changes.next({ type: 'delete', key: objectKey(object), object });
  }
}
