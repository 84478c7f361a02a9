import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import type { Credentials, TokenSeed, UserSeed } from './schemas.js';

export interface Session {
  token: string;
  userName: string;
  /** The tenant the session works in. */
  tenant: string;
  /** Every tenant the user is in (X-Tenant-Name may pick any of them). */
  tenants: readonly string[];
}

/** The user's own tenant, then the further ones. */
export const tenantsOf = (user: UserSeed): string[] =>
  // Asked on every request with a token: most users have no other tenant.
  user.tenants === undefined || user.tenants.length === 0 ? [user.tenant] : [user.tenant, ...user.tenants.filter((t) => t !== user.tenant)];

/** Below this many tokens, expired ones are not worth a sweep. */
const MIN_SWEEP_SIZE = 256;

type TokenRecord = TokenSeed & { lastUsedAt: number };

/**
 * Users and their session tokens. Tokens expire after an idle time on the emulator's clock.
 * A token that is never used again nor logged out would stay in memory for good, so log-ins
 * sweep the expired ones whenever the count of tokens has doubled since the last sweep: each
 * sweep is paid for by the log-ins since the one before, and the tokens held stay below
 * twice those live at the last sweep (or MIN_SWEEP_SIZE).
 */
export class AuthStore {
  private readonly users = new Map<string, UserSeed>();
  private readonly tokens = new Map<string, TokenRecord>();
  /** The next log-in that finds this many tokens sweeps first. */
  private sweepAtSize: number;

  constructor(
    users: UserSeed[],
    tokens: TokenSeed[],
    private readonly clock: Clock,
    private readonly idleTimeoutMs: number,
  ) {
    for (const user of users) this.users.set(user.userName, user);
    const now = clock.now();
    for (const token of tokens) this.tokens.set(token.token, { ...token, lastUsedAt: token.lastUsedAt ?? now });
    this.sweepAtSize = Math.max(MIN_SWEEP_SIZE, 2 * this.tokens.size);
  }

  /** Tokens held in memory, expired ones not swept yet included. */
  get size(): number {
    return this.tokens.size;
  }

  /** The Tokens call: a new session for valid credentials, or undefined. */
  logIn(body: Credentials): string | undefined {
    const user =
      'apiToken' in body
        ? [...this.users.values()].find((u) => u.apiToken !== undefined && u.apiToken === body.apiToken)
        : this.users.get(body.userName);
    if (!user) return undefined;
    if ('password' in body && user.password !== body.password) return undefined;
    if (body.tenant !== undefined && !tenantsOf(user).includes(body.tenant)) return undefined;
    const now = this.clock.now();
    if (this.tokens.size >= this.sweepAtSize) {
      this.sweep(now);
      this.sweepAtSize = Math.max(MIN_SWEEP_SIZE, 2 * this.tokens.size);
    }
    const token = randomUUID();
    this.tokens.set(token, {
      token,
      userName: user.userName,
      neverExpires: false,
      lastUsedAt: now,
      ...(body.tenant !== undefined && body.tenant !== user.tenant ? { tenant: body.tenant } : {}),
    });
    return token;
  }

  logOut(token: string): void {
    this.tokens.delete(token);
  }

  /** The session of a valid token, refreshing its idle time; undefined if unknown or expired. */
  use(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const record = this.tokens.get(token);
    if (!record) return undefined;
    const now = this.clock.now();
    if (!this.isLive(record, now)) {
      this.tokens.delete(token);
      return undefined;
    }
    record.lastUsedAt = now;
    const user = this.users.get(record.userName);
    if (!user) return undefined;
    const tenants = tenantsOf(user);
    // A tenant the user has since left (an import) falls back to the user's own.
    return { token, userName: user.userName, tenant: record.tenant !== undefined && tenants.includes(record.tenant) ? record.tenant : user.tenant, tenants };
  }

  /**
   * The session of an API token sent as `Authorization: Bearer`: the user's, for this
   * request only (no session token is made); undefined for an unknown API token.
   */
  useApiToken(apiToken: string): Session | undefined {
    if (!apiToken) return undefined;
    for (const user of this.users.values()) {
      if (user.apiToken !== undefined && user.apiToken === apiToken) return { token: `apiToken:${user.userName}`, userName: user.userName, tenant: user.tenant, tenants: tenantsOf(user) };
    }
    return undefined;
  }

  /**
   * The session of `Authorization: Basic` credentials: the user's, for this request only (no
   * session token is made, as for an API token); undefined for an unknown user or a wrong password.
   */
  useBasic(userName: string, password: string): Session | undefined {
    const user = this.users.get(userName);
    if (!user || user.password !== password) return undefined;
    return { token: `basic:${user.userName}`, userName: user.userName, tenant: user.tenant, tenants: tenantsOf(user) };
  }

  /**
   * Whether `token` is a live session token, without using it (its idle time is not
   * refreshed, an expired one is not dropped): for the message of a refused request only.
   */
  isSessionToken(token: string): boolean {
    const record = this.tokens.get(token);
    return record !== undefined && this.isLive(record, this.clock.now()) && this.users.has(record.userName);
  }

  exportUsers(): UserSeed[] {
    return [...this.users.values()];
  }

  /** How many users and live tokens an export would hold, without building it. */
  counts(): Record<'users' | 'tokens', number> {
    const now = this.clock.now();
    let tokens = 0;
    for (const t of this.tokens.values()) if (this.isLive(t, now)) tokens++;
    return { users: this.users.size, tokens };
  }

  /** The live tokens; the expired ones are dropped on the way, as they can never be used again. */
  exportTokens(): TokenSeed[] {
    this.sweep(this.clock.now());
    return [...this.tokens.values()];
  }

  /**
   * Users and live tokens for an export in slices (core/snapshot.ts): users are never
   * changed, so they are handed out as they are; a token's last use changes in place, so
   * each token is copied.
   */
  snapshot(): Record<'users' | 'tokens', SectionSnapshot> {
    this.sweep(this.clock.now());
    return { users: { items: [...this.users.values()] }, tokens: { items: [...this.tokens.values()].map((t) => ({ ...t })) } };
  }

  private isLive(record: TokenRecord, now: number): boolean {
    return record.neverExpires || now - record.lastUsedAt < this.idleTimeoutMs;
  }

  /** Drops every expired token (`neverExpires` ones never are). */
  private sweep(now: number): void {
    for (const [token, record] of this.tokens) if (!this.isLive(record, now)) this.tokens.delete(token);
  }
}
