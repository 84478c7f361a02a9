import type { Clock } from '../core/clock.js';
import type { State } from '../state.js';

/** Alerts and their fire/clear history. (Skeleton: filled in by the alerts work.) */
export class AlertStore {
  constructor(
    private readonly state: Pick<State, 'alerts'>,
    private readonly clock: Clock,
  ) {}

  export(): Pick<State, 'alerts'> {
    return this.state;
  }
}
