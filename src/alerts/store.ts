import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { DomainError, conflicting, invalid, missing } from '../core/errors.js';
import { RateCounters } from '../core/rate-counters.js';
import { storageLedgerOf, type StorageAccount, type StorageSettings } from '../core/storage.js';
import { ALERT_HISTORY_LIMIT, type Alert, type AlertEvent, type AlertSections, type FireContent } from './schemas.js';
import { RuleWatch, describeRule, unitOf, type RuleChange, type RumSource } from './rules.js';
import { Outbox, type DeliverySettings, type OutboxContext } from './deliveries.js';
import type { DeliveryQuery } from './delivery-schemas.js';

/**
 * Alerts and everything sent through them. Each fire and clear is recorded with its time
 * and content, so a test can ask afterwards what its system under test triggered.
 */
/** The settings the alert store reads: the length of a fire's texts, and the bytes its histories may grow by. */
export type AlertLimits = Partial<StorageSettings> & DeliverySettings & { alertTextMaxBytes?: number };

/**
 * What a fire or clear record is charged besides its texts: the record in memory, and its
 * lines in the state file (pretty-printed, indented as deep as a sandbox's alerts are).
 */
export const ALERT_EVENT_BYTES = 192;

/** The bytes a history record is charged: its texts' UTF-8 bytes, plus ALERT_EVENT_BYTES. */
export function alertEventBytes(event: AlertEvent): number {
  const text = (t: string | undefined) => (t === undefined ? 0 : Buffer.byteLength(t));
  return ALERT_EVENT_BYTES + text(event.message) + text(event.subject);
}

export class AlertStore {
  private readonly alerts = new Map<string, Alert>();
  /** Calls per alert uid in the current rate-limit window; a reset starts them afresh. */
  readonly rateLimits = new RateCounters();
  /** What the histories grew by since the store was built, charged to its world and the process. */
  private readonly storage: StorageAccount;
  private readonly textMaxBytes: number;
  /** The threshold rules, by alert uid (rules/rules.ts): brought up to now before the alerts are read or changed. */
  private readonly rules = new Map<string, RuleWatch>();
  private settling = false;
  /** The deliveries each fire and clear made (deliveries.ts). */
  readonly outbox: Outbox;

  constructor(
    state: AlertSections,
    private readonly clock: Clock,
    limits?: AlertLimits,
    /** The Query API's data the rules watch (without it, a rule sees no data and never holds), and when the state was loaded. */
    rules?: { rum: RumSource | undefined; loadedAt: number },
    context: Omit<OutboxContext, 'secretOf'> = {},
  ) {
    const loadedAt = rules?.loadedAt ?? clock.now();
    for (const alert of state.alerts) {
      this.alerts.set(alert.uid, structuredClone(alert));
      // A rule without a status starts watching at the load; one with a status (an export's) goes on from it.
      if (alert.rule) this.rules.set(alert.uid, new RuleWatch(alert.rule, rules?.rum, alert.ruleStatus ? Number.NEGATIVE_INFINITY : loadedAt));
    }
    const secretOf = (uid: string, type: string, target: string) => this.alerts.get(uid)?.channels.find((c) => c.type === type && c.target === target)?.secret;
    this.outbox = new Outbox(state.deliveries ?? [], clock, limits, { ...context, secretOf });
    this.storage = storageLedgerOf(limits).open(clock, 'alerts');
    this.textMaxBytes = limits?.alertTextMaxBytes ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Brings every rule up to the clock's now: each change of its condition since it was last
   * looked at is recorded, at the instant it happened, through fire and clear, as a call
   * would be; a disabled alert (409) or a full history (507) records nothing of it.
   */
  private settle(): void {
    if (this.settling || this.rules.size === 0) return;
    this.settling = true;
    try {
      const now = this.clock.now();
      for (const [uid, watch] of this.rules) {
        const alert = this.alerts.get(uid)!;
        alert.ruleStatus = watch.advance(alert.ruleStatus, now, (change) => this.applyRule(uid, change));
      }
    } finally {
      this.settling = false;
    }
  }

  private applyRule(uid: string, change: RuleChange): void {
    try {
      if (!change.holding) this.clear(uid, change);
      else {
        const alert = this.alerts.get(uid)!;
        const rule = alert.rule!;
        const message = alert.message ?? `${alert.name}: ${describeRule(rule)} (${change.value ?? 'no data'}${change.value === null ? '' : ` ${unitOf(rule)}`})`;
        this.fire(uid, { message }, change);
      }
    } catch (error) {
      if (!(error instanceof DomainError && (error.kind === 'conflict' || error.kind === 'full'))) throw error;
    }
  }

  /**
   * Every change a rule recorded in [from, to] (its fires and clears), oldest first per alert,
   * for the event stream; the rules are brought up to now first.
   */
  ruleChanges(from: number, to: number, visit: (uid: string, event: AlertEvent) => void): void {
    if (this.rules.size === 0) return;
    this.settle();
    for (const uid of this.rules.keys()) {
      const { history } = this.alerts.get(uid)!;
      let i = history.length;
      while (i > 0 && history[i - 1].at >= from) i--;
      for (; i < history.length && history[i].at <= to; i++) if (history[i].by === 'rule') visit(uid, history[i]);
    }
  }

  /** The fire or clear a rule recorded at `at`, with the alert less its history, as the event stream sends it. */
  ruleChangeAt(uid: string, at: number): { alert: Omit<Alert, 'history'>; entry: AlertEvent } | undefined {
    const found = this.alerts.get(uid);
    const history = found?.history ?? [];
    let i = history.length - 1;
    while (i >= 0 && history[i].at >= at && !(history[i].at === at && history[i].by === 'rule')) i--;
    const entry = i >= 0 && history[i].at === at ? history[i] : undefined;
    if (!found || !entry) return undefined;
    const { history: _history, ...alert } = found;
    return { alert: structuredClone(alert), entry: { ...entry } };
  }

  /**
   * When the event stream must look again: the first fire or clear of a rule after `after`,
   * recorded already (up to now) or looked for ahead, or, for an enabled rule that found none
   * ahead, the end of its look ahead; undefined when there is no rule.
   */
  ruleWakeAt(after: number): number | undefined {
    if (this.rules.size === 0) return undefined;
    this.settle();
    let next: number | undefined;
    const sooner = (at: number | undefined) => {
      if (at !== undefined && at > after && (next === undefined || at < next)) next = at;
    };
    for (const [uid, watch] of this.rules) {
      const alert = this.alerts.get(uid)!;
      const { history } = alert;
      for (let i = history.length - 1; i >= 0 && history[i].at > after; i--) if (history[i].by === 'rule') sooner(history[i].at);
      if (!alert.enabled || !alert.ruleStatus) continue;
      sooner(watch.nextChange(alert.ruleStatus) ?? watch.lookedUntil());
    }
    return next;
  }

  /** Every alert with its state and history, in fixture order. */
  /** A page of the outbox (Outbox.list), once every rule is brought up to now: a fire a rule made while nobody looked is in it. */
  deliveries(query?: DeliveryQuery): ReturnType<Outbox['list']> {
    this.settle();
    return this.outbox.list(query);
  }

  list(): Alert[] {
    this.settle();
    return [...this.alerts.values()].map((a) => structuredClone(a));
  }

  /** Whether an alert with this uid exists. */
  has(uid: string): boolean {
    return this.alerts.has(uid);
  }

  /** One alert with its state and history; 404 if the uid is unknown. */
  get(uid: string): Alert {
    this.settle();
    return structuredClone(this.find(uid));
  }

  /**
   * An alert as it is now, less its history, and the last fire or clear recorded: what the
   * event stream sends of a change, copied without walking the history.
   */
  latest(uid: string): { alert: Omit<Alert, 'history'>; last: AlertEvent | undefined } {
    this.settle();
    const { history, ...alert } = this.find(uid);
    const last = history[history.length - 1];
    return { alert: structuredClone(alert), last: last && { ...last } };
  }

  /** Enables or disables an alert (a change made in the user interface); 404 if unknown. */
  setEnabled(uid: string, enabled: boolean): Alert {
    this.settle();
    const alert = this.find(uid);
    alert.enabled = enabled;
    alert.lastUpdated = this.clock.now();
    return structuredClone(alert);
  }

  /**
   * Triggers the alert: 404 if unknown, 409 if disabled. Fields left out of `content` take
   * the alert's defaults. Firing an alert that is already firing notifies again. `rule`: the
   * change of the alert's threshold rule that fires it, at its own instant.
   */
  fire(uid: string, content: FireContent = {}, rule?: RuleChange): AlertEvent {
    this.settle();
    const alert = this.usable(uid);
    this.checkText('message', content.message);
    this.checkText('subject', content.subject);
    const at = rule?.at ?? this.clock.now();
    const event = this.record(alert, {
      action: 'fire',
      at,
      message: content.message ?? alert.message ?? `${alert.name} is firing`,
      subject: content.subject ?? alert.subject ?? alert.name,
      ...(rule ? { by: 'rule' as const, value: rule.value } : {}),
    });
    alert.state = 'firing';
    alert.lastTriggered = at;
    return event;
  }

  /** Clears the alert: 404 if unknown, 409 if disabled. Clearing a cleared alert is recorded too. `rule` as for fire. */
  clear(uid: string, rule?: RuleChange): AlertEvent {
    this.settle();
    const alert = this.usable(uid);
    const at = rule?.at ?? this.clock.now();
    const event = this.record(alert, { action: 'clear', at, ...(rule ? { by: 'rule' as const, value: rule.value } : {}) });
    alert.state = 'cleared';
    alert.lastCleared = at;
    return event;
  }

  export(): Required<AlertSections> {
    return { alerts: this.list(), deliveries: this.outbox.export() };
  }

  /**
   * The alerts for an export in slices (core/snapshot.ts). An alert changes in place, so each
   * is copied, but shallowly: its fields (the channels are never changed), and its history's
   * list of events (which are never changed either), a few kilobytes for a full one. Copied
   * as JSON text, as they were, every alert of every world being written was held as text at
   * once, and parsed again to be written: a state file of 20 sandboxes with full histories
   * peaked at +45 to +62 MiB of RSS for an 18 MiB file.
   */
  snapshot(): Record<'alerts' | 'deliveries', SectionSnapshot> {
    this.settle();
    return { alerts: { items: [...this.alerts.values()].map((a) => ({ ...a, history: a.history.slice() })) }, deliveries: this.outbox.snapshot() };
  }

  /** How many alerts and deliveries there are, without copying them. */
  counts(): Record<'alerts' | 'deliveries', number> {
    return { alerts: this.alerts.size, deliveries: this.outbox.size };
  }

  private find(uid: string): Alert {
    const alert = this.alerts.get(uid);
    if (!alert) throw missing(`alert '${uid}' does not exist`);
    return alert;
  }

  private usable(uid: string): Alert {
    const alert = this.find(uid);
    if (!alert.enabled) throw conflicting(`alert '${uid}' (${alert.name}) is disabled; it must be enabled before it can be fired or cleared`);
    return alert;
  }

  /** A text past ALERT_TEXT_MAX_BYTES is refused (400), not cut: nothing a client sends is kept half. */
  private checkText(field: 'message' | 'subject', text: string | undefined): void {
    // A string of n UTF-16 units takes at least n bytes of UTF-8: most texts are checked without counting.
    if (text === undefined || text.length * 3 <= this.textMaxBytes) return;
    const bytes = Buffer.byteLength(text);
    if (bytes > this.textMaxBytes) throw invalid(`the ${field} is ${bytes} bytes long (UTF-8); ALERT_TEXT_MAX_BYTES allows at most ${this.textMaxBytes}`);
  }

  /**
   * Keeps the event in the alert's history, after its bytes were admitted (ALERT_HISTORY_WORLD_MAX_BYTES,
   * ALERT_HISTORY_MAX_BYTES, the state file's bounds): a refused event changes nothing, not even the alert's state.
   * Every fire and clear passes here, and here makes its deliveries, admitted with it (DELIVERIES_WORLD_MAX_BYTES,
   * DELIVERIES_MAX_BYTES).
   */
  private record(alert: Alert, event: AlertEvent): AlertEvent {
    const { history } = alert;
    const dropped = history.length >= ALERT_HISTORY_LIMIT ? history.length - ALERT_HISTORY_LIMIT + 1 : 0;
    let freed = 0;
    for (let i = 0; i < dropped; i++) freed += alertEventBytes(history[i]);
    const growth = alertEventBytes(event) - freed;
    this.storage.check(growth);
    const deliveries = this.outbox.plan(alert, event);
    this.storage.add(growth);
    history.push(event);
    // One event over the limit is dropped with shift(), which V8 does in constant time by
    // moving the array's start; splice(0, 1) moved all 1,000 events on every fire of a full
    // history (about 5 µs a call). The schema caps a seed's history, so more than one over is
    // not expected, but is handled.
    if (history.length === ALERT_HISTORY_LIMIT + 1) history.shift();
    else if (history.length > ALERT_HISTORY_LIMIT) history.splice(0, history.length - ALERT_HISTORY_LIMIT);
    this.outbox.commit(deliveries);
    return { ...event };
  }
}
