/**
 * What is a secret in a request or an answer, and how it is masked: the one place that knows,
 * read by the request journal and by the parity recorder, so that a secret the journal hides
 * is hidden in a recording too, and in the same way. Pure: no HTTP, no Fastify.
 */

/** Headers whose values are secrets: a journal is read on screens and pasted into bug reports. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['x-auth-token', 'authentication', 'authorization', 'proxy-authorization', 'cookie']);

/** What a masked value is replaced with. */
export const MASK = '***';

/**
 * Fields of a request body whose values are secrets (the Tokens log-in's), masked as the
 * secret headers are. Matched in the body's text, so at any depth and in a cut body too.
 */
export const SECRET_FIELDS: readonly string[] = ['password', 'apiToken'];

/**
 * Fields of an answer whose values are secrets: those of a request, and the session token the
 * log-in answers (`{"token": "..."}`).
 */
export const ANSWER_SECRET_FIELDS: readonly string[] = [...SECRET_FIELDS, 'token'];

/**
 * A secret field and its string value, or the start of one that a cut ends. The value part
 * cannot backtrack: each character is either a plain one or an escape, never both.
 */
function fieldValuePattern(fields: readonly string[]): RegExp {
  return new RegExp(`("(?:${fields.join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*(?:"|\\\\?$)`, 'g');
}

const PATTERNS = new Map<readonly string[], RegExp>([
  [SECRET_FIELDS, fieldValuePattern(SECRET_FIELDS)],
  [ANSWER_SECRET_FIELDS, fieldValuePattern(ANSWER_SECRET_FIELDS)],
]);

/** What is shown instead of a body when a secret could not be found in the text to be masked. */
export const WITHHELD = '[body withheld: it holds a secret field the journal could not mask]';

/**
 * The body text with the values of secret fields masked. `parsed` is the parsed body, when
 * there is one: a secret field at its top level whose value is still in the text after
 * masking (written with escapes, say) withholds the whole body, so a secret never shows.
 * `fields` is SECRET_FIELDS (a request's) or ANSWER_SECRET_FIELDS (an answer's).
 */
export function maskSecrets(text: string, parsed: unknown, fields: readonly string[] = SECRET_FIELDS): string {
  if (!fields.some((field) => text.includes(field))) {
    // A field name written with escapes ("pass\u0077ord") is caught by the parsed body.
    if (!hasSecretField(parsed, fields)) return text;
  }
  const pattern = PATTERNS.get(fields) ?? fieldValuePattern(fields);
  const out = text.replace(pattern, `$1"${MASK}"`);
  if (hasSecretField(parsed, fields)) {
    const body = parsed as Record<string, unknown>;
    for (const field of fields) {
      const value = body[field];
      if (typeof value === 'string' && value !== '' && value !== MASK && out.includes(value)) return WITHHELD;
    }
  }
  return out;
}

function hasSecretField(parsed: unknown, fields: readonly string[]): boolean {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
  return fields.some((field) => Object.hasOwn(parsed, field));
}

/** A secret header's value masked. The scheme of an Authorization value says what kind of credential was sent; the rest goes. */
export function maskHeaderValue(value: string): string {
  const space = value.indexOf(' ');
  const scheme = space > 0 && space < 16 ? value.slice(0, space + 1) : '';
  return `${scheme}${MASK}`;
}

/** Headers as Node hands them over, the secret ones masked (names in lower case, as Node gives them). */
export function maskHeaders(headers: Record<string, string | string[] | undefined> | null): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!headers) return out;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (SECRET_HEADERS.has(name)) out[name] = Array.isArray(value) ? value.map(maskHeaderValue) : maskHeaderValue(value);
    else out[name] = value;
  }
  return out;
}

/** A query string (without its `?`) with the values of parameters named as secret fields (ANSWER_SECRET_FIELDS) masked. */
export function maskQuery(query: string): string {
  if (query === '' || !ANSWER_SECRET_FIELDS.some((field) => query.includes(field))) return query;
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A name that is not valid percent-encoding is compared as written.
      }
      return eq >= 0 && ANSWER_SECRET_FIELDS.includes(decoded) ? `${name}=${MASK}` : pair;
    })
    .join('&');
}
