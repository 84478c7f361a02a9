import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DomainError } from '../../src/core/errors.js';
import { ObjectStore, type ViewObject } from '../../src/repository/objects.js';
import { T0 } from '../helpers/app.js';

const none = { attributes: [] };

describe('ObjectStore view providers (the port other interfaces fill)', () => {
  it('serves a type from its provider, per tenant, and stores what is added beside it', () => {
    const compositions: Record<string, ViewObject[]> = {
      Default: [{ id: 7, name: '/Compositions/Checkout', attributes: [{ name: 'state', value: 'Unloaded' }] }],
      ACME: [{ id: 8, name: '/Compositions/Login', attributes: [] }],
    };
    const store = new ObjectStore([], { composition: (tenant) => compositions[tenant] ?? [] }, new ManualClock(T0), 1 << 20);
    expect(store.list('composition', 'Default', none).map((o) => [o.id, o.name])).toEqual([[7, '/Compositions/Checkout']]);
    expect(store.list('composition', 'ACME', none).map((o) => o.id)).toEqual([8]);
    expect(() => store.get('composition', 8, 'Default')).toThrow('no composition object with id 8');
    store.update('composition', 7, { description: 'nightly', attributes: [{ name: 'owner', value: 'qa' }] }, 'Default');
    expect(store.get('composition', 7, 'Default')).toMatchObject({
      description: 'nightly',
      attributes: [
        { name: 'state', value: 'Unloaded' },
        { name: 'owner', value: 'qa' },
      ],
    });
    const refused = (() => {
      try {
        store.delete('composition', 7, 'Default');
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).kind).toBe('conflict');
  });

  it('stores a type that has no provider, and says an unknown type is not found', () => {
    const store = new ObjectStore([], {}, new ManualClock(T0), 1 << 20);
    const id = store.create('composition', { name: '/Compositions/A' }, 'Default');
    expect(store.list('composition', 'Default', { attributes: [] }).map((o) => o.id)).toEqual([id]);
    expect(() => store.list('gizmo', 'Default', none)).toThrow("unknown object type 'gizmo'");
  });
});
