import type { ControllableClock } from '../core/clock.js';
import type { State } from '../state.js';

/** Grids, cloud servers, RSDBs and test environments. (Skeleton: filled in by the provisioning work.) */
export class ProvisioningStore {
  constructor(
    private readonly state: Pick<State, 'grids' | 'cloudServers' | 'rsdbs' | 'environments'>,
    private readonly clock: ControllableClock,
    private readonly timeScale: number,
  ) {}

  /** Names and ids of the repository objects this store owns (the Objects call). */
  catalog(): Record<'grids' | 'environments' | 'rsdbs', ReadonlyArray<{ id: number; name: string }>> {
    return this.state;
  }

  export(): Pick<State, 'grids' | 'cloudServers' | 'rsdbs' | 'environments'> {
    return this.state;
  }
}
