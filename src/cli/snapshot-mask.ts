import { createHmac, randomBytes } from 'node:crypto';
import { RE2JS } from 're2js';

/**
 * The replacements of `snapshot`: secrets and personal data of a tenant, each replaced by a
 * value made from an HMAC-SHA256 of it under the snapshot's key, so the same input gives the
 * same replacement everywhere in a snapshot (and in every snapshot taken with the same
 * `--mask-key`), and the replacement does not give the input away without the key.
 */

/** An e-mail address in free text. RE2: linear in the text, whatever the tenant wrote. */
const EMAIL = RE2JS.compile('[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+');

const KEY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export class Masker {
  private readonly key: Buffer;
  /** Known personal values (names of people, user names that are no e-mail address) and their replacements. */
  private readonly known = new Map<string, string>();
  /** How many values of each kind were replaced. */
  readonly counts = { emails: 0, names: 0, secrets: 0, appKeys: 0 };

  constructor(key?: string) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  private hash(kind: string, value: string): string {
    return createHmac('sha256', this.key).update(`${kind}\0${value}`).digest('hex');
  }

  /** An e-mail address (or a user name): `user-3f2a9c1b@example.com`; case of the address ignored. */
  email(value: string): string {
    this.counts.emails++;
    return `user-${this.hash('email', value.toLowerCase()).slice(0, 8)}@example.com`;
  }

  /** A person's name: `Person 3f2a9c`. */
  personName(value: string): string {
    this.counts.names++;
    return `Person ${this.hash('name', value).slice(0, 6)}`;
  }

  /** A password, token or API token: `masked-<16 hex>`. */
  secret(value: string): string {
    this.counts.secrets++;
    return `masked-${this.hash('secret', value).slice(0, 16)}`;
  }

  /** An app key: five groups of five characters, the real keys' shape. */
  appKey(value: string): string {
    this.counts.appKeys++;
    const h = Buffer.from(this.hash('appkey', value), 'hex');
    let key = '';
    for (let i = 0; i < 25; i++) {
      key += KEY_ALPHABET[h[i] % KEY_ALPHABET.length];
      if (i % 5 === 4 && i < 24) key += '-';
    }
    return key;
  }

  /** A user name: an e-mail address, or another log-in name (replaced as one too). */
  userName(value: string): string {
    return this.email(value);
  }

  /** Makes `value` (a person's name, a user name) be replaced wherever free text holds it. */
  know(value: string, replacement: string): void {
    if (value.trim().length >= 3) this.known.set(value, replacement);
  }

  /** Free text with every e-mail address and every known personal value replaced. */
  text(value: string): string {
    let out = value.includes('@') ? EMAIL.matcher(value).replaceAll((...match: unknown[]) => this.email(String(match[0]))) : value;
    for (const [known, replacement] of this.known) if (out.includes(known)) out = out.split(known).join(replacement);
    return out;
  }
}
