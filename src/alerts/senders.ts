import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Transporter } from 'nodemailer';
import { DELIVERY_ERROR_MAX_CHARS } from './delivery-schemas.js';

/**
 * The real sending of deliveries, off by default. A webhook, Slack or PagerDuty target is
 * POSTed only to a host listed in DELIVERY_ALLOW_HOSTS (a name that resolves to a loopback or
 * private address only when that address is listed too), with a timeout, no redirect
 * followed, and bounded bodies both ways; an e-mail goes only through the SMTP server SMTP_URL
 * names. And only to a target the operator gave: one of the seed, of the state file, or of a
 * state imported with the admin token (see TrustedTargets).
 */

/** The settings the senders read. */
export interface SenderSettings {
  deliveryAllowHosts?: string;
  deliveryTimeoutMs?: number;
  smtpUrl?: string;
  smtpFrom?: string;
}

/** The largest body a delivery POSTs. */
export const DELIVERY_BODY_MAX_BYTES = 64 * 1024;
/** How much of a receiver's answer is read before the connection is closed: its status is what counts. */
export const DELIVERY_RESPONSE_MAX_BYTES = 4 * 1024;
/** Deliveries under way at once, all worlds together; more wait in their outbox for the next look. */
export const DELIVERY_IN_FLIGHT_MAX = 32;
/** Targets remembered as given by the operator or the admin; past it the oldest are forgotten. */
export const TRUSTED_TARGETS_MAX = 10_000;
/** The header that carries a webhook body's signature, when its channel has a secret. */
export const SIGNATURE_HEADER = 'x-emulator-signature';

/** What one attempt came to. `retry`: worth trying again later; `refused`: never tried, and never will be. */
export interface AttemptOutcome {
  statusCode?: number;
  error?: string;
  ok: boolean;
  retry: boolean;
  refused?: boolean;
}

const cut = (text: string) => (text.length > DELIVERY_ERROR_MAX_CHARS ? `${text.slice(0, DELIVERY_ERROR_MAX_CHARS - 1)}…` : text);
const refused = (error: string): AttemptOutcome => ({ ok: false, retry: false, refused: true, error: cut(error) });

/** The address is loopback, private, link-local, carrier-grade NAT or unspecified (IPv4 or IPv6). */
export function isPrivateAddress(address: string): boolean {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/i.exec(address);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    const nat = a === 100 && b >= 64 && b < 128;
    return a === 0 || a === 10 || a === 127 || nat || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168);
  }
  const v6 = address.toLowerCase();
  return v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6);
}

/** The host names and addresses of DELIVERY_ALLOW_HOSTS, lower case; empty: no POST is made. */
export function allowedHosts(setting: string | undefined): ReadonlySet<string> {
  return new Set(
    (setting ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1'))
      .filter(Boolean),
  );
}

/** The "type target" pairs the operator or the admin gave, oldest first. */
export class TrustedTargets {
  private readonly keys = new Set<string>();

  /** Every channel target of these alerts is one the operator or the admin gave. */
  trust(alerts: ReadonlyArray<{ channels?: ReadonlyArray<{ type: string; target: string }> }> | undefined): void {
    for (const alert of alerts ?? []) {
      for (const c of alert.channels ?? []) {
        const key = `${c.type} ${c.target}`;
        this.keys.delete(key);
        this.keys.add(key);
        if (this.keys.size > TRUSTED_TARGETS_MAX) this.keys.delete(this.keys.values().next().value as string);
      }
    }
  }

  has(type: string, target: string): boolean {
    return this.keys.has(`${type} ${target}`);
  }
}

/** A POST request's target, checked against the allow-list before anything is resolved or connected. */
export function checkUrl(target: string, hosts: ReadonlySet<string>): URL | AttemptOutcome {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return refused(`'${target}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused(`only http and https targets are sent to (not ${url.protocol})`);
  if (url.username || url.password) return refused('a target with credentials in its URL is not sent to');
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (!hosts.has(host)) return refused(`host '${host}' is not listed in DELIVERY_ALLOW_HOSTS`);
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup, refusing a name that resolves to a loopback or private address unless that
 * address (or `localhost`, for loopback) is listed: a listed public name cannot be pointed
 * at the machine's own services.
 */
function guardedLookup(hosts: ReadonlySet<string>) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '');
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address) && !hosts.has(a.address) && !(hostname.toLowerCase() === 'localhost' && /^(127\.|::1$)/.test(a.address)));
      if (bad) return callback(Object.assign(new Error(`'${hostname}' resolves to the private address ${bad.address}, which DELIVERY_ALLOW_HOSTS does not list`), { code: 'EREFUSED_PRIVATE' }), options.all ? [] : '');
      if (options.all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/** Retried: no answer, a timeout, 408, 429 and 5xx. Not: a redirect (never followed) and other 4xx. */
function outcomeOf(statusCode: number): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return { ok: true, retry: false, statusCode };
  if (statusCode >= 300 && statusCode < 400) return { ok: false, retry: false, statusCode, error: `answered ${statusCode}: redirects are not followed` };
  return { ok: false, retry: statusCode === 408 || statusCode === 429 || statusCode >= 500, statusCode, error: `answered ${statusCode}` };
}

/** POSTs `body` as JSON; resolves (never rejects) with what came of it. */
export function postJson(url: URL, body: string, headers: Record<string, string>, hosts: ReadonlySet<string>, timeoutMs: number): Promise<AttemptOutcome> {
  const bytes = Buffer.byteLength(body);
  if (bytes > DELIVERY_BODY_MAX_BYTES) return Promise.resolve(refused(`the body is ${bytes} bytes, more than the ${DELIVERY_BODY_MAX_BYTES} a delivery sends`));
  const literal = isIP(url.hostname.replace(/^\[(.*)\]$/, '$1')) !== 0;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(bytes), 'user-agent': 'cloud-emulator-deliveries', ...headers },
        // A listed address literal is the operator's choice; a name is resolved through the guard.
        ...(literal ? {} : { lookup: guardedLookup(hosts) as never }),
        agent: false,
      },
      (response: IncomingMessage) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > DELIVERY_RESPONSE_MAX_BYTES) response.destroy();
        });
        const done = () => settle(outcomeOf(response.statusCode ?? 0));
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      settle({ ok: false, retry: true, error: `no answer within DELIVERY_TIMEOUT_MS (${timeoutMs} ms)` });
      request.destroy();
    }, timeoutMs);
    timer.unref?.();
    request.on('error', (error: NodeJS.ErrnoException) => {
      const private_ = error.code === 'EREFUSED_PRIVATE';
      settle(private_ ? refused(error.message) : { ok: false, retry: true, error: cut(error.code ? `${error.code}: ${error.message}` : error.message) });
    });
    request.end(body);
  });
}

/** The HMAC-SHA256 of a body with a channel's secret, as the signature header carries it. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** An e-mail as a delivery's payload holds it. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** One SMTP transport per server URL, made on the first e-mail (nodemailer is loaded then, not before). */
const transports = new Map<string, Promise<Transporter>>();

function transportFor(smtpUrl: string, timeoutMs: number): Promise<Transporter> {
  let made = transports.get(smtpUrl);
  if (!made) {
    made = import('nodemailer').then((nodemailer) =>
      nodemailer.createTransport({ url: smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }),
    );
    made.catch(() => transports.delete(smtpUrl));
    transports.set(smtpUrl, made);
  }
  return made;
}

/** Sends an e-mail through SMTP_URL; resolves (never rejects) with what came of it. */
export async function sendMail(settings: SenderSettings, mail: Mail): Promise<AttemptOutcome> {
  try {
    const transport = await transportFor(settings.smtpUrl!, settings.deliveryTimeoutMs ?? 5000);
    const info = (await transport.sendMail({ from: settings.smtpFrom, ...mail })) as { response?: string; rejected?: unknown[] };
    const code = Number(/^\d{3}/.exec(info.response ?? '')?.[0] ?? 250);
    if (Array.isArray(info.rejected) && info.rejected.length > 0) return { ok: false, retry: false, statusCode: code, error: `the SMTP server refused ${mail.to}` };
    return { ok: true, retry: false, statusCode: code };
  } catch (error) {
    const e = error as { responseCode?: number; message?: string };
    // 5xx is a permanent refusal of the SMTP server; anything else (4xx, no connection) may pass later.
    const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
    return { ok: false, retry: !permanent, ...(e.responseCode ? { statusCode: e.responseCode } : {}), error: cut(e.message ?? String(error)) };
  }
}
