import type { Clock } from '../core/clock.js';
import type { State } from '../state.js';

/** Domains and annotations. (Skeleton: filled in by the annotations work.) */
export class AnnotationStore {
  constructor(
    private readonly state: Pick<State, 'domains' | 'annotations'>,
    private readonly clock: Clock,
  ) {}

  domains(): ReadonlyArray<{ id: number; name: string }> {
    return this.state.domains;
  }

  export(): Pick<State, 'domains' | 'annotations'> {
    return this.state;
  }
}
