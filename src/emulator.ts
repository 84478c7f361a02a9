import type { Config } from './config.js';
import type { ControllableClock } from './core/clock.js';
import { AuthStore } from './auth/store.js';
import { ProvisioningStore } from './provisioning/store.js';
import { AnnotationStore } from './annotations/store.js';
import { AlertStore } from './alerts/store.js';
import type { State } from './state.js';

export interface Stores {
  auth: AuthStore;
  provisioning: ProvisioningStore;
  annotations: AnnotationStore;
  alerts: AlertStore;
}

/**
 * Owns the live stores. Routes reach data through `emulator.stores`, never through a store
 * captured at registration, so reset and import can swap every store at once.
 */
export class Emulator {
  private current: Stores;

  constructor(
    private readonly seed: State,
    readonly clock: ControllableClock,
    readonly config: Config,
  ) {
    this.current = this.build(structuredClone(seed));
  }

  get stores(): Stores {
    return this.current;
  }

  /** Back to the seed the process started with. */
  reset(): void {
    this.current = this.build(structuredClone(this.seed));
  }

  /** Replaces the whole state (already validated). */
  replace(state: State): void {
    this.current = this.build(structuredClone(state));
  }

  /** The whole state in the fixture format. */
  exportState(): State {
    const { auth, provisioning, annotations, alerts } = this.current;
    return structuredClone({
      users: auth.exportUsers(),
      tokens: auth.exportTokens(),
      ...provisioning.export(),
      ...annotations.export(),
      ...alerts.export(),
    });
  }

  private build(state: State): Stores {
    const { clock, config } = this;
    return {
      auth: new AuthStore(state.users, state.tokens, clock, config.tokenIdleTimeoutMs),
      provisioning: new ProvisioningStore(state, clock, config.timeScale),
      annotations: new AnnotationStore(state, clock),
      alerts: new AlertStore(state, clock),
    };
  }
}
