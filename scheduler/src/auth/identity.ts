import type { JWTPayload } from 'jose';
import { v5 as uuidv5 } from 'uuid';
import { oneLineClaim } from '../input/text.ts';

/**
 * The kind of caller a token speaks for. Not to be confused with the job roles of a
 * tenant (`roles`, `role_id`: what qualifications grant and slots require).
 */
export type AccessRole = 'admin' | 'employee' | 'customer';

export const accessRoles: readonly AccessRole[] = ['admin', 'employee', 'customer'];

/** Who is calling, as established from a verified token. Ids are 32-hex uuids. */
export interface Identity {
  tenantId: string;
  userId: string;
  role: AccessRole;
  customerId: string | null;
  /** The customer claim exactly as the token carries it (forms echo it back). */
  customerClaim: string | null;
  /** The issuer that vouched for the token: claim values map to ids per issuer. */
  issuer: string;
  name: string | null;
  email: string | null;
}

/** Where the token's claims are found (configurable: AUTH_*_CLAIM). */
export interface ClaimNames {
  user: string;
  tenant: string;
  /** May be a dotted path such as `realm_access.roles`. */
  role: string;
  customer: string;
  name: string;
  email: string;
}

/** Why a verified token still yields no usable identity. */
export type IdentityProblem = 'missing-subject' | 'missing-tenant' | 'malformed-claim' | 'no-known-role';

/** Fixed namespace for deriving ids from claim values (UUIDv5). */
const CLAIM_NAMESPACE = '6b0b8a8e-2f4e-5f0e-9a51-5d2c1f7b9e30';

/** A UUID exactly as identity providers write one: lowercase, hyphenated. */
const canonicalUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A claim value (subject, tenant or customer) as a uuid, by one rule for all three:
 * - a canonical UUID (lowercase, hyphenated) whose version is not 5 is kept as it is,
 *   so ids match the identity provider's own (Keycloak, Entra ID);
 * - every other value (names, emails, `auth0|…`, upper-case or 32-hex UUIDs, and any
 *   version-5 UUID) becomes UUIDv5(namespace, issuer + value).
 * Derived ids are always version 5 and kept ids never are, so the two sets cannot meet,
 * and each rule alone is one-to-one: no value a user can choose for a claim reaches the
 * id of another value. Two issuers never share a derived id.
 */
export function claimToUuid(issuer: string, value: string): string {
  if (canonicalUuid.test(value) && value[14] !== '5') return value.replaceAll('-', '');
  const name = `${issuer}\n${value}`;
  let id = derived.get(name);
  if (id === undefined) {
    id = uuidv5(name, CLAIM_NAMESPACE).replaceAll('-', '');
    // Bounded memo: a SHA-1 per claim per request is measurable on the hot path.
    if (derived.size >= 10_000) derived.clear();
    derived.set(name, id);
  }
  return id;
}

const derived = new Map<string, string>();

/** Reads `a.b.c` from a payload; a plain name that contains dots is tried first. */
function claimAt(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  let node: unknown = payload;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const rolePrecedence: AccessRole[] = ['admin', 'employee', 'customer'];

/** A role claim may be a string, a space-separated string, or an array (Keycloak realm roles). */
function pickRole(value: unknown): AccessRole | null {
  const candidates = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : [];
  const held = new Set(
    candidates.filter((c): c is string => typeof c === 'string').map((c) => c.toLowerCase()),
  );
  return rolePrecedence.find((role) => held.has(role)) ?? null;
}

/**
 * A profile claim as storable, displayable text: one line (control characters, line
 * separators and bidirectional overrides become spaces: a name is shown in calendar
 * feeds and lists), no lone surrogates, bounded.
 */
function optionalString(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = oneLineClaim(value, 320);
  return text === '' ? null : text;
}

const maxIdClaimLength = 1024;

/**
 * An id claim as the text its id is derived from, taken exactly as sent (no trimming:
 * "alice" and " alice" are different values, so they get different ids); `malformed`
 * when it cannot identify anyone. A number is marked apart from text, so the claim `42`
 * and the claim `"42"` never share an id: the mark holds a NUL, which no text claim may.
 */
function idClaim(value: unknown): string | null | 'malformed' {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? `\u0000number:${value}` : 'malformed';
  if (typeof value !== 'string') return 'malformed';
  // A lone surrogate has no UTF-8 form to hash; a NUL would meet the number mark.
  if (!value.isWellFormed() || value.includes('\u0000') || value.length > maxIdClaimLength)
    return 'malformed';
  return value;
}

/**
 * The user id a subject claim maps to under an issuer, by the rule tokens follow (so a
 * user pre-provisioned by subject is the one its first token lands on); null when the
 * value could identify nobody (its token would be refused).
 */
export function userIdForSubject(issuer: string, subject: unknown): string | null {
  const value = idClaim(subject);
  return value === null || value === 'malformed' ? null : claimToUuid(issuer, value);
}

export function identityFromClaims(
  payload: JWTPayload,
  issuer: string,
  names: ClaimNames,
): Identity | IdentityProblem {
  const subject = idClaim(claimAt(payload, names.user));
  if (subject === 'malformed') return 'malformed-claim';
  if (!subject) return 'missing-subject';
  const tenant = idClaim(claimAt(payload, names.tenant));
  if (tenant === 'malformed') return 'malformed-claim';
  if (!tenant) return 'missing-tenant';
  const customerValue = claimAt(payload, names.customer);
  const customer = idClaim(customerValue);
  if (customer === 'malformed') return 'malformed-claim';
  const role = pickRole(claimAt(payload, names.role));
  if (!role) return 'no-known-role';
  return {
    tenantId: claimToUuid(issuer, tenant),
    userId: claimToUuid(issuer, subject),
    role,
    customerId: customer ? claimToUuid(issuer, customer) : null,
    // The claim as text to show and store: a number's digits (its mark lives only in the id).
    customerClaim: customer ? (typeof customerValue === 'number' ? String(customerValue) : customer) : null,
    issuer,
    name: optionalString(claimAt(payload, names.name)),
    email: optionalString(claimAt(payload, names.email)),
  };
}
