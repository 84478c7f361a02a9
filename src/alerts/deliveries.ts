import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { storageLedgerOf, type StorageAccount, type StorageSettings } from '../core/storage.js';
import {
  DELIVERY_ERROR_MAX_CHARS,
  DELIVERY_MAX_ATTEMPTS,
  DELIVERY_RETRY_DELAYS_MS,
  type Delivery,
  type DeliveryQuery,
} from './delivery-schemas.js';
import type { Alert, AlertChannel, AlertEvent } from './schemas.js';
import {
  DELIVERY_IN_FLIGHT_MAX,
  SIGNATURE_HEADER,
  TrustedTargets,
  allowedHosts,
  checkUrl,
  postJson,
  sendMail,
  signature,
  type AttemptOutcome,
  type Mail,
  type SenderSettings,
} from './senders.js';

/**
 * Deliveries: each fire and clear of an alert makes one per enabled channel, kept in the
 * world's outbox with its payload, target, attempts and status. Sending for real is off by
 * default; with it on, an attempt is started when it falls due (at once for a new delivery,
 * at the emulated instant of each retry): looked for after each change of the world's clock,
 * before each request to the world, and by the world's wake-up timer (world/world.ts), which
 * the outbox tells of each change of its earliest due attempt. The network call runs on its
 * own; nothing waits for it, and what comes of it is written into the outbox (and sent on the
 * event stream) when it ends.
 *
 * A fire or clear only admits its deliveries (their bytes, worked out without building their
 * payloads) and keeps their records, with what their payloads are made of (the alert, the
 * channel, the event: all kept already, and never changed). A payload is built when it is
 * needed: for the attempt that sends it (in a later turn, once the request is answered), or
 * for whatever reads the outbox (a list, an export, a snapshot), which builds each payload it
 * shows. A stored delivery that nobody reads never has its payload built.
 */

/** The settings the outbox reads. */
export type DeliverySettings = SenderSettings &
  Partial<Pick<StorageSettings, 'deliveriesWorldMaxBytes' | 'deliveriesMaxBytes'>> & { deliveryLinkBase?: string; port?: number };

/**
 * What a delivery is charged besides its payload and target: the record in memory with room
 * for every attempt it may make (each with an error text), and its lines in the state file.
 */
export const DELIVERY_BYTES = 512 + DELIVERY_MAX_ATTEMPTS * (64 + DELIVERY_ERROR_MAX_CHARS);

/** The bytes one delivery is charged: fixed at its creation, whatever its attempts write later. */
export function deliveryBytes(d: Delivery): number {
  const reason = d.reason === undefined ? 0 : Buffer.byteLength(d.reason);
  return DELIVERY_BYTES + Buffer.byteLength(d.target) + Buffer.byteLength(JSON.stringify(d.payload)) + reason;
}

/** PagerDuty's Events API v2 endpoint, where a pagerduty target that is a routing key is sent. */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** What the process shares among every world's outbox: the allow-list, the trusted targets, the sends under way. */
export class DeliveryService {
  readonly hosts: ReadonlySet<string>;
  readonly trusted = new TrustedTargets();
  inFlight = 0;

  constructor(readonly settings: DeliverySettings) {
    this.hosts = allowedHosts(settings.deliveryAllowHosts);
  }

  /** Why a channel of this type is kept in the outbox only; undefined when it is sent. */
  storedOnly(type: AlertChannel['type']): string | undefined {
    if (type === 'sms') return 'sms is never sent: the outbox is where it ends';
    if (type === 'email') return this.settings.smtpUrl ? undefined : 'e-mail is sent only when SMTP_URL names a server';
    return this.hosts.size > 0 ? undefined : 'sending is off: DELIVERY_ALLOW_HOSTS lists no host';
  }

  /** One attempt; resolves (never rejects) with what came of it. */
  send(d: Delivery, secret: string | undefined): Promise<AttemptOutcome> {
    if (!this.trusted.has(d.channel, d.target)) {
      return Promise.resolve({
        ok: false,
        retry: false,
        refused: true,
        error: 'the target is not one of the seed, the state file or a state imported with ADMIN_TOKEN',
      });
    }
    if (d.channel === 'email') return sendMail(this.settings, d.payload as unknown as Mail);
    const url = checkUrl(d.channel === 'pagerduty' && !isUrl(d.target) ? PAGERDUTY_EVENTS_URL : d.target, this.hosts);
    if (!(url instanceof URL)) return Promise.resolve(url);
    const body = JSON.stringify(d.payload);
    const headers: Record<string, string> = { 'x-emulator-delivery': String(d.id) };
    if (d.channel === 'webhook' && secret !== undefined) headers[SIGNATURE_HEADER] = signature(secret, body);
    return postJson(url, body, headers, this.hosts, this.settings.deliveryTimeoutMs ?? 5000);
  }
}

const isUrl = (target: string) => /^https?:\/\//i.test(target);

const services = new WeakMap<object, DeliveryService>();
const NO_CONFIG = {};

/** The service of every world built from one configuration (as the storage ledger, core/storage.ts). */
export function deliveryServiceOf(config: DeliverySettings | undefined): DeliveryService {
  const key = config ?? NO_CONFIG;
  let service = services.get(key);
  if (!service) services.set(key, (service = new DeliveryService(config ?? {})));
  return service;
}

/**
 * The channel targets of a state are the operator's (the seed, the state file) or the admin's
 * (an import through the control API with ADMIN_TOKEN set): only such targets are ever sent to.
 */
export function trustTargets(config: DeliverySettings | undefined, state: object | undefined): void {
  deliveryServiceOf(config).trusted.trust((state as { alerts?: ReadonlyArray<Pick<Alert, 'channels'>> } | undefined)?.alerts);
}

/** What a fire or clear makes, worked out before anything is kept. */
export interface PlannedDeliveries {
  made: Entry[];
  /** How many of the oldest finished deliveries make room. */
  dropped: number;
  growth: number;
}

/** What the outbox is given by its store and its world. */
export interface OutboxContext {
  /** The secret of an alert's channel, read when a webhook is signed (never kept in the outbox). */
  secretOf(alert: string, channel: string, target: string): string | undefined;
  /** A delivery reached its end (sent, failed, refused): for the event stream. */
  settled?(delivery: Delivery): void;
  /** The sandbox this world is; none for the default world. */
  world?: string;
  /** The earliest instant an attempt is due (nextAttemptAt) changed: the world sets its wake-up timer again. */
  dueChanged?(): void;
}

/**
 * A delivery of the outbox, with the bytes it is charged. One a fire or clear made has no
 * payload in `d` until an attempt needs it: `alert`, `channel`, `event` and `link` are what it
 * is built from until then (undefined once it is, and for a delivery of a loaded state).
 */
interface Entry {
  d: Delivery;
  bytes: number;
  alert: Alert | undefined;
  channel: AlertChannel | undefined;
  event: AlertEvent | undefined;
  link: string | undefined;
}

/**
 * The bytes of a channel's payload for one fire's or clear's texts, with the delivery id and
 * the event's instant taken as 0: only a webhook's payload holds either, as a number (the ISO
 * time every type may hold is always 24 characters long), so the bytes of another id and
 * instant follow from the count of their digits. Kept per channel for its last texts: an alert
 * fired again and again with the same message costs no payload built to be counted.
 */
interface SizeOf {
  message: string | undefined;
  subject: string | undefined;
  link: string;
  /** DELIVERY_BYTES, the target, the reason and the payload at id 0 and instant 0. */
  bytes: number;
}

/** The digits of a whole number >= 0 as JSON writes it (up to 1e21), counted without writing it. */
function digits(n: number): number {
  let count = 1;
  for (let power = 10; n >= power && count < 21; power *= 10) count++;
  return count;
}

/** The attempts of a delivery that has made none: one list shared by all, frozen, replaced by its own at the first attempt. */
const NO_ATTEMPTS: Delivery['attempts'] = Object.freeze([]) as unknown as Delivery['attempts'];

/** What a fire or clear of an alert without channels makes. */
const NOTHING_PLANNED: PlannedDeliveries = Object.freeze({ made: Object.freeze([]) as unknown as Entry[], dropped: 0, growth: 0 });

const text = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The payload of each channel type. Webhook: the emulator's own JSON (docs/alerts.md);
 * Slack: an incoming-webhook message; PagerDuty: an Events API v2 event (`trigger` on fire,
 * `resolve` on clear, one dedup key per alert); e-mail: to, subject and text; sms: to and text.
 */
export function payloadOf(id: number, alert: Alert, channel: AlertChannel, event: AlertEvent, texts: FireTexts): Record<string, unknown> {
  const { fired, time, subject, headline, link } = texts;
  switch (channel.type) {
    case 'webhook':
      return {
        type: fired ? 'alert.fired' : 'alert.cleared',
        deliveryId: id,
        alert: { uid: alert.uid, name: alert.name },
        state: fired ? 'firing' : 'cleared',
        at: event.at,
        time,
        ...(fired ? { message: event.message, subject: event.subject } : {}),
        link,
      };
    case 'slack':
      return {
        text: fired ? `:rotating_light: *${text(subject)}*\n${text(headline)}\n<${link}|${text(alert.name)}>` : `:white_check_mark: *${text(alert.name)}* cleared\n<${link}|${text(alert.name)}>`,
      };
    case 'pagerduty': {
      const common = { routing_key: isUrl(channel.target) ? alert.uid : channel.target, dedup_key: `cloud-emulator/${alert.uid}` };
      if (!fired) return { ...common, event_action: 'resolve' };
      return {
        ...common,
        event_action: 'trigger',
        payload: {
          summary: headline.slice(0, 1024),
          source: 'cloud-emulator',
          severity: 'critical',
          timestamp: time,
          custom_details: { alert: alert.uid, name: alert.name, subject },
        },
        client: 'cloud-emulator',
        client_url: link,
        links: [{ href: link, text: alert.name }],
      };
    }
    case 'email':
      return fired
        ? { to: channel.target, subject, text: `${headline}\n\nAlert: ${alert.name} (${alert.uid}), fired ${time}\n${link}\n` }
        : { to: channel.target, subject: `Cleared: ${subject}`, text: `${alert.name} cleared ${time}\n\n${link}\n` };
    case 'sms':
      return { to: channel.target, text: headline };
  }
}

/** What every delivery of one fire or clear says, worked out once for all its channels. */
export interface FireTexts {
  fired: boolean;
  /** The event's time in ISO 8601. */
  time: string;
  subject: string;
  headline: string;
  link: string;
}

export function fireTexts(alert: Alert, event: AlertEvent, link: string): FireTexts {
  const fired = event.action === 'fire';
  return {
    fired,
    time: new Date(event.at).toISOString(),
    subject: event.subject ?? alert.subject ?? alert.name,
    headline: fired ? event.message ?? `${alert.name} is firing` : `${alert.name} cleared`,
    link,
  };
}

/** The outbox of one world. */
export class Outbox {
  /** Oldest first. */
  private entries: Entry[] = [];
  private head = 0;
  private readonly pending = new Set<Entry>();
  private readonly running = new Set<Entry>();
  private readonly underWay = new Set<Promise<void>>();
  private nextId = 1;
  private heldBytes = 0;
  /** The earliest nextAttemptAt of a pending delivery not under way; undefined when none. */
  private nextDueAt: number | undefined;
  /** The look for due attempts scheduled after a fire or clear, until it has run. */
  private looking: Promise<void> | undefined;
  /** The world no longer holds this outbox (reset, replaced, deleted, closed): no attempt is started any more. */
  private disposed = false;
  /** The bytes of each channel's payload for its last texts (SizeOf). */
  private readonly sizes = new WeakMap<AlertChannel, { fire?: SizeOf; clear?: SizeOf }>();
  /** The links of the alerts, by uid (linkOf). */
  private readonly links = new Map<string, string>();
  /** The texts of the last payload built, for the next of the same fire or clear (an export builds them in turn). */
  private lastTexts: { alert: Alert; event: AlertEvent; texts: FireTexts } | undefined;
  private readonly storage: StorageAccount;
  private readonly service: DeliveryService;
  private readonly worldMaxBytes: number;
  private readonly linkBase: string;

  constructor(
    seed: readonly Delivery[],
    private readonly clock: Clock,
    settings: DeliverySettings | undefined,
    private readonly context: OutboxContext,
  ) {
    this.storage = storageLedgerOf(settings).open(clock, 'deliveries');
    this.service = deliveryServiceOf(settings);
    this.worldMaxBytes = settings?.deliveriesWorldMaxBytes ?? Number.POSITIVE_INFINITY;
    this.linkBase = settings?.deliveryLinkBase ?? `http://localhost:${settings?.port ?? 8080}`;
    for (const d of [...seed].sort((a, b) => a.id - b.id)) {
      const entry: Entry = { d: structuredClone(d), bytes: deliveryBytes(d), alert: undefined, channel: undefined, event: undefined, link: undefined };
      this.entries.push(entry);
      this.heldBytes += entry.bytes;
      if (d.status === 'pending') this.pending.add(entry);
      this.nextId = Math.max(this.nextId, d.id + 1);
    }
    this.findNextDue();
  }

  /** Where a delivery links to: the alert in the control API of its world. */
  private linkOf(uid: string): string {
    let link = this.links.get(uid);
    if (link === undefined) {
      const world = this.context.world === undefined ? '' : `/sandbox/${encodeURIComponent(this.context.world)}`;
      link = `${this.linkBase}${world}/_emulator/alerts/${encodeURIComponent(uid)}`;
      // Bounded by the world's alerts: only an alert that exists makes deliveries.
      this.links.set(uid, link);
    }
    return link;
  }

  /** A delivery's payload: kept in it, or built from what it was made of. */
  private payloadOf(entry: Entry): Record<string, unknown> {
    const { d, alert, channel, event, link } = entry;
    if (!alert || !channel || !event || link === undefined) return d.payload;
    let last = this.lastTexts;
    if (!last || last.alert !== alert || last.event !== event) last = this.lastTexts = { alert, event, texts: fireTexts(alert, event, link) };
    return payloadOf(d.id, alert, channel, event, last.texts);
  }

  /** A copy of a delivery, with its payload, as a list or an export shows it. */
  private copyOf(entry: Entry): Delivery {
    const { d } = entry;
    return { ...d, payload: this.payloadOf(entry), attempts: d.attempts.map((a) => ({ ...a })) };
  }

  /** The bytes a delivery of `channel` for `event` is charged (deliveryBytes), without building its payload. */
  private sizeOf(id: number, alert: Alert, channel: AlertChannel, event: AlertEvent, link: string, reason: string | undefined): number {
    let kept = this.sizes.get(channel);
    if (!kept) this.sizes.set(channel, (kept = {}));
    const fired = event.action === 'fire';
    let size = fired ? kept.fire : kept.clear;
    if (size === undefined || size.message !== event.message || size.subject !== event.subject || size.link !== link) {
      const at0 = { ...event, at: 0 };
      const payload = payloadOf(0, alert, channel, at0, fireTexts(alert, at0, link));
      const payloadBytes = Buffer.byteLength(JSON.stringify(payload));
      const bytes = DELIVERY_BYTES + Buffer.byteLength(channel.target) + payloadBytes + (reason === undefined ? 0 : Buffer.byteLength(reason));
      size = { message: event.message, subject: event.subject, link, bytes };
      if (fired) kept.fire = size;
      else kept.clear = size;
    }
    return channel.type === 'webhook' ? size.bytes - 2 + digits(id) + digits(event.at) : size.bytes;
  }

  /**
   * The deliveries a fire or clear makes, and the room they take: the oldest finished
   * deliveries make room under DELIVERIES_WORLD_MAX_BYTES; past it (pending ones fill it) or
   * past DELIVERIES_MAX_BYTES, throws a `full` DomainError (507) and nothing is kept.
   */
  plan(alert: Alert, event: AlertEvent): PlannedDeliveries {
    if (alert.channels.length === 0) return NOTHING_PLANNED;
    const made: Entry[] = [];
    let id = this.nextId;
    let link: string | undefined;
    let adding = 0;
    for (const channel of alert.channels) {
      if (channel.enabled === false) continue;
      link ??= this.linkOf(alert.uid);
      const stored = this.service.storedOnly(channel.type);
      // The payload keeps its place (the order of the fields) and is built when it is needed.
      const d: Delivery = stored
        ? { id, alert: alert.uid, action: event.action, channel: channel.type, target: channel.target, status: 'stored', reason: stored, createdAt: event.at, payload: undefined!, attempts: NO_ATTEMPTS }
        : { id, alert: alert.uid, action: event.action, channel: channel.type, target: channel.target, status: 'pending', nextAttemptAt: event.at, createdAt: event.at, payload: undefined!, attempts: NO_ATTEMPTS };
      const bytes = this.sizeOf(id, alert, channel, event, link, stored);
      made.push({ d, bytes, alert, channel, event, link });
      adding += bytes;
      id++;
    }
    if (made.length === 0) return NOTHING_PLANNED;
    let freed = 0;
    let dropped = 0;
    for (let i = this.head; i < this.entries.length && this.heldBytes - freed + adding > this.worldMaxBytes; i++) {
      const entry = this.entries[i];
      // Only finished deliveries make room: a pending one is still to be sent.
      if (entry.d.status === 'pending') break;
      freed += entry.bytes;
      dropped++;
    }
    const growth = adding - freed;
    this.storage.check(growth);
    return { made, dropped, growth };
  }

  /** Keeps what plan() worked out; the first attempts start (and build their payloads) once the request that made them is answered. */
  commit(planned: PlannedDeliveries): void {
    if (planned.made.length === 0) return;
    for (let i = 0; i < planned.dropped; i++) {
      this.heldBytes -= this.entries[this.head].bytes;
      this.head++;
    }
    if (this.head > 256 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    this.storage.add(planned.growth);
    for (const entry of planned.made) {
      const { d } = entry;
      this.entries.push(entry);
      this.heldBytes += entry.bytes;
      this.nextId = d.id + 1;
      if (d.status === 'pending') {
        this.pending.add(entry);
        if (this.nextDueAt === undefined || d.nextAttemptAt! < this.nextDueAt) this.nextDueAt = d.nextAttemptAt;
      }
    }
    // After this turn: the fire's answer and its event go first, and the request never waits
    // for a payload to be built or sent.
    if (this.pending.size > 0) {
      this.looking ??= new Promise((resolve) =>
        setImmediate(() => {
          this.looking = undefined;
          this.due(this.clock.now());
          // One that could not start (DELIVERY_IN_FLIGHT_MAX under way) is looked for again by the world's timer.
          if (this.pending.size > 0) this.context.dueChanged?.();
          resolve();
        }),
      );
    }
  }

  /** The world no longer holds this outbox: no attempt is started any more (those under way end, and are written here). */
  dispose(): void {
    this.disposed = true;
  }

  /** Starts every attempt due by `now` (up to DELIVERY_IN_FLIGHT_MAX under way in the process). Cheap when none is. */
  due(now: number): void {
    if (this.disposed || this.nextDueAt === undefined || this.nextDueAt > now) return;
    for (const entry of this.pending) {
      if (this.running.has(entry) || entry.d.nextAttemptAt! > now) continue;
      if (this.service.inFlight >= DELIVERY_IN_FLIGHT_MAX) break;
      this.start(entry, now);
    }
    this.findNextDue();
  }

  /** Resolves once every attempt under way has ended (the tests' and the shutdown's wait). */
  async settled(): Promise<void> {
    await this.looking;
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  private start(entry: Entry, at: number): void {
    const { d } = entry;
    // What it sends: built now, kept with it from now on (the event stream shows it when it ends).
    if (entry.alert) {
      d.payload = this.payloadOf(entry);
      entry.alert = entry.channel = entry.event = entry.link = undefined;
    }
    delete d.nextAttemptAt;
    this.running.add(entry);
    this.service.inFlight++;
    const sending = this.service
      .send(d, this.context.secretOf(d.alert, d.channel, d.target))
      .catch((error: unknown): AttemptOutcome => ({ ok: false, retry: true, error: String(error).slice(0, DELIVERY_ERROR_MAX_CHARS) }))
      .then((outcome) => this.finish(entry, at, outcome));
    this.underWay.add(sending);
    void sending.finally(() => this.underWay.delete(sending));
  }

  private finish(entry: Entry, at: number, outcome: AttemptOutcome): void {
    const { d } = entry;
    this.running.delete(entry);
    this.service.inFlight--;
    const { statusCode, error } = outcome;
    if (d.attempts === NO_ATTEMPTS) d.attempts = [];
    d.attempts.push({ at, ...(statusCode !== undefined ? { statusCode } : {}), ...(error !== undefined ? { error } : {}) });
    if (outcome.ok) d.status = 'sent';
    else if (outcome.refused) d.status = 'refused';
    else if (outcome.retry && d.attempts.length < DELIVERY_MAX_ATTEMPTS) d.nextAttemptAt = at + DELIVERY_RETRY_DELAYS_MS[d.attempts.length - 1];
    else d.status = 'failed';
    if (d.status !== 'pending') {
      this.pending.delete(entry);
      // A finished delivery never changes again: the event may show it as it is.
      this.context.settled?.(d);
    }
    this.findNextDue();
    // A slot is free: what is already due goes now.
    this.due(this.clock.now());
  }

  private findNextDue(): void {
    let next: number | undefined;
    for (const entry of this.pending) {
      if (this.running.has(entry)) continue;
      const at = entry.d.nextAttemptAt!;
      if (next === undefined || at < next) next = at;
    }
    if (next === this.nextDueAt) return;
    this.nextDueAt = next;
    this.context.dueChanged?.();
  }

  /** The earliest instant a retry is due; undefined when none waits. */
  get nextAttemptAt(): number | undefined {
    return this.nextDueAt;
  }

  /** Deliveries, newest first, filtered, a page at a time (`next`: ask again with before=next). */
  list(query: DeliveryQuery = {}): { total: number; deliveries: Delivery[]; next?: number } {
    const limit = query.limit ?? 100;
    const out: Delivery[] = [];
    let next: number | undefined;
    for (let i = this.entries.length - 1; i >= this.head; i--) {
      const { d } = this.entries[i];
      if (query.before !== undefined && d.id >= query.before) continue;
      if (!matches(d, query)) continue;
      if (out.length === limit) {
        next = out[out.length - 1].id;
        break;
      }
      out.push(this.copyOf(this.entries[i]));
    }
    return { total: this.size, deliveries: out, ...(next !== undefined ? { next } : {}) };
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  /** Bytes the deliveries held are charged (DELIVERIES_WORLD_MAX_BYTES bounds it). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Every delivery, oldest first, copied. */
  export(): Delivery[] {
    const out: Delivery[] = [];
    for (let i = this.head; i < this.entries.length; i++) out.push(this.copyOf(this.entries[i]));
    return out;
  }

  /** For an export in slices: each delivery copied shallowly (its attempts change while one is under way), with its payload. */
  snapshot(): SectionSnapshot {
    const items: unknown[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i];
      const { d } = entry;
      items.push({ ...d, payload: this.payloadOf(entry), attempts: d.attempts.slice() });
    }
    return { items };
  }
}

/** Whether a delivery passes the filters of a list. */
const matches = (d: Delivery, q: DeliveryQuery): boolean =>
  (q.alert === undefined || d.alert === q.alert) && (q.channel === undefined || d.channel === q.channel) && (q.status === undefined || d.status === q.status);

/**
 * A state imported through the control API (PUT /_emulator/state, a sandbox's PUT with a
 * state): its targets are the admin's only when ADMIN_TOKEN is set, and so authenticated the
 * import. Without it anyone who reaches the port could import them, and they are never sent.
 */
export function trustImported(config: DeliverySettings & { adminToken?: string }, state: Parameters<typeof trustTargets>[1]): void {
  if (config.adminToken !== undefined) trustTargets(config, state);
}
