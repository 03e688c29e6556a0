import type { JWTPayload } from 'jose';
import { v5 as uuidv5 } from 'uuid';
import type { ClaimNames } from '../config.ts';
import type { Role } from '../db/types.ts';
import { parseId } from '../ids.ts';

/** Who is calling, as established from a verified token. Ids are 32-hex uuids. */
export interface Identity {
  tenantId: string;
  userId: string;
  role: Role;
  customerId: string | null;
  name: string | null;
  email: string | null;
}

/** Why a verified token still yields no usable identity. */
export type IdentityProblem = 'missing-subject' | 'missing-tenant' | 'no-known-role';

/** Fixed namespace for deriving ids from non-UUID claim values (UUIDv5). */
const CLAIM_NAMESPACE = '6b0b8a8e-2f4e-5f0e-9a51-5d2c1f7b9e30';

/**
 * A claim value as a uuid. Identity providers often use opaque subject strings; those
 * map to UUIDv5(namespace, issuer + value) so the same user of the same issuer always
 * gets the same id and two issuers never collide.
 */
export function claimToUuid(issuer: string, value: string): string {
  const direct = parseId(value);
  if (direct) return direct;
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

const rolePrecedence: Role[] = ['admin', 'employee', 'customer'];

/** A role claim may be a string, a space-separated string, or an array (Keycloak realm roles). */
function pickRole(value: unknown): Role | null {
  const candidates = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : [];
  const held = new Set(
    candidates.filter((c): c is string => typeof c === 'string').map((c) => c.toLowerCase()),
  );
  return rolePrecedence.find((role) => held.has(role)) ?? null;
}

/** A profile claim as storable text: no NUL characters, no lone surrogates, bounded. */
function optionalString(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.replaceAll('\u0000', '').toWellFormed().trim().slice(0, 320);
  return text === '' ? null : text;
}

function idClaim(value: unknown): string | null {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

export function identityFromClaims(
  payload: JWTPayload,
  issuer: string,
  names: ClaimNames,
): Identity | IdentityProblem {
  const subject = idClaim(claimAt(payload, names.user));
  if (!subject) return 'missing-subject';
  const tenant = idClaim(claimAt(payload, names.tenant));
  if (!tenant) return 'missing-tenant';
  const role = pickRole(claimAt(payload, names.role));
  if (!role) return 'no-known-role';
  const customer = idClaim(claimAt(payload, names.customer));
  return {
    tenantId: claimToUuid(issuer, tenant),
    userId: claimToUuid(issuer, subject),
    role,
    customerId: customer ? claimToUuid(issuer, customer) : null,
    name: optionalString(claimAt(payload, names.name)),
    email: optionalString(claimAt(payload, names.email)),
  };
}
