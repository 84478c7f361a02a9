/**
 * The app key of an mPulse domain (the Query API's <api-key>, the repository object's apiKey
 * attribute): pure, so that every interface that names domains agrees on it.
 */

/** The tenant that owns a domain whose seed names none: the tenant the seed's users and objects default to. */
export const DEFAULT_DOMAIN_TENANT = 'Default';

/** The tenant that owns a domain, and so its app's real-user data (the Query API) and its repository object. */
export function domainTenant(domain: { readonly tenant?: string }): string {
  return domain.tenant ?? DEFAULT_DOMAIN_TENANT;
}

const KEY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A domain's app key: the one its seed gives, else five groups of five characters derived
 * from its id (the real keys' shape), the same for the same id in every run.
 */
export function domainApiKey(domain: { readonly id: number; readonly apiKey?: string }): string {
  if (domain.apiKey !== undefined) return domain.apiKey;
  // A 32-bit multiplicative hash stepped per character: no crypto needed, just stable and spread.
  let h = domain.id >>> 0;
  let key = '';
  for (let i = 0; i < 25; i++) {
    h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x9e3779b9 + i) >>> 0;
    key += KEY_ALPHABET[h % KEY_ALPHABET.length];
    if (i % 5 === 4 && i < 24) key += '-';
  }
  return key;
}
