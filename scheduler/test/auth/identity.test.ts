import type { JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { claimToUuid, type Identity, identityFromClaims, userIdForSubject } from '../../src/auth/identity.ts';
import { defaultClaimNames } from '../../src/config.ts';

/**
 * identity.ts is pure: a verified payload in, an identity or the reason there is none out.
 * Claims are written here as an identity provider might send them, whatever jose's types say.
 */
const ISSUER = 'https://idp.example/realms/unit';
const identity = (payload: Record<string, unknown>, names = defaultClaimNames) =>
  identityFromClaims(payload as JWTPayload, ISSUER, names);
const base = { sub: 'alice', tenant_id: 'acme', role: 'employee' };
const derivedV5 = /^[0-9a-f]{12}5[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

describe('claimToUuid', () => {
  const kept = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

  it('keeps a canonical non-v5 UUID as 32 hex digits, exactly', () => {
    expect(claimToUuid(ISSUER, kept)).toBe('3f2504e04f8941d39a0c0305e82c3301');
    expect(claimToUuid(ISSUER, '00000000-0000-0000-0000-000000000000')).toBe('0'.repeat(32));
  });

  it.each([
    ['text before it', `x${kept}`],
    ['text after it', `${kept}x`],
    ['a non-hex digit', '3f2504e0-4f89-41d3-9a0c-0305e82c330g'],
    ['upper case', kept.toUpperCase()],
    ['no hyphens', kept.replaceAll('-', '')],
    ['a short group', '3f2504e-04f89-41d3-9a0c-0305e82c3301'],
    ['version 5', '3f2504e0-4f89-51d3-9a0c-0305e82c3301'],
  ])('derives a v5 id from a UUID-like value with %s', (_label, value) => {
    const id = claimToUuid(ISSUER, value);
    expect(id).toMatch(derivedV5);
    expect(id).toBe(claimToUuid(ISSUER, value));
  });

  it('derives one id per value and per issuer, the same on every call', () => {
    const ids = new Set<string>();
    for (const issuer of ['https://one', 'https://two']) {
      for (const value of ['alice', 'bob', 'alice ', 'Alice']) {
        const id = claimToUuid(issuer, value);
        expect(claimToUuid(issuer, value)).toBe(id);
        ids.add(id);
      }
    }
    expect(ids.size).toBe(8);
  });

  it('cannot be steered into another identity: a claim equal to a derived id is derived again', () => {
    // alice's derived id, written as a UUID by a user who controls their own claim value
    const alice = claimToUuid('https://one', 'alice');
    const hyphenated = `${alice.slice(0, 8)}-${alice.slice(8, 12)}-${alice.slice(12, 16)}-${alice.slice(16, 20)}-${alice.slice(20)}`;
    for (const imitation of [alice, hyphenated]) {
      expect(claimToUuid('https://one', imitation)).not.toBe(alice);
    }
  });

  it('cannot be steered by splitting issuer and value differently', () => {
    expect(claimToUuid('https://a', 'b')).not.toBe(claimToUuid('https://', 'ab'));
  });

  it('keeps deriving the same ids after far more values than it remembers', () => {
    const first = claimToUuid(ISSUER, 'memo-0');
    for (let i = 1; i <= 10_050; i++) claimToUuid(ISSUER, `memo-${i}`);
    expect(claimToUuid(ISSUER, 'memo-0')).toBe(first);
    expect(claimToUuid(ISSUER, 'memo-10050')).toMatch(derivedV5);
  });
});

describe('userIdForSubject', () => {
  it('gives the id a token with that subject is given', () => {
    for (const sub of [
      'alice',
      ' alice',
      'Bob@Example.com',
      'auth0|42',
      '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    ]) {
      expect(userIdForSubject(ISSUER, sub), sub).toBe((identity({ ...base, sub }) as Identity).userId);
    }
    // A derived id is the issuer's own.
    expect(userIdForSubject('https://other.example', 'alice')).not.toBe(userIdForSubject(ISSUER, 'alice'));
  });

  it('answers null for a value no token could carry', () => {
    for (const sub of ['', 'a'.repeat(1025), 'x\u0000y', '\ud800', {}]) {
      expect(userIdForSubject(ISSUER, sub)).toBeNull();
    }
  });
});

describe('identityFromClaims', () => {
  it('maps the default claims to an identity', () => {
    expect(
      identity({ ...base, customer_id: 'c-7', name: 'Alice A.', email: 'alice@acme.test' }),
    ).toEqual<Identity>({
      tenantId: claimToUuid(ISSUER, 'acme'),
      userId: claimToUuid(ISSUER, 'alice'),
      role: 'employee',
      customerId: claimToUuid(ISSUER, 'c-7'),
      customerClaim: 'c-7',
      issuer: ISSUER,
      name: 'Alice A.',
      email: 'alice@acme.test',
    });
  });

  it('leaves customer, name and email null when the token has none', () => {
    expect(identity(base)).toMatchObject({ customerId: null, name: null, email: null });
    expect(identity({ ...base, customer_id: null, name: null, email: null })).toMatchObject({
      customerId: null,
      name: null,
      email: null,
    });
  });

  describe('id claims', () => {
    it('takes an id claim exactly as sent: padded and plain values are different users', () => {
      const padded = identity({ ...base, sub: '  alice\t' });
      expect(padded).toMatchObject({ userId: claimToUuid(ISSUER, '  alice\t') });
      expect(padded).not.toMatchObject({ userId: claimToUuid(ISSUER, 'alice') });
    });

    it('takes id claims exactly as sent: padding and number-or-text make different ids', () => {
      const idOf = (sub: unknown) => {
        const result = identity({ sub, tenant_id: 't', role: 'admin' });
        return typeof result === 'string' ? result : result.userId;
      };
      const ids = [
        idOf('alice'),
        idOf(' alice'),
        idOf('alice\t'),
        idOf('42'),
        idOf(42),
        idOf('\u0000number:42'),
      ];
      expect(ids.at(-1)).toBe('malformed-claim');
      expect(new Set(ids.slice(0, 5)).size).toBe(5);
      expect(idOf('')).toBe('missing-subject');
    });

    it('marks an integer id claim apart from the same digits as text', () => {
      expect(identity({ ...base, sub: 42, tenant_id: 7 })).toMatchObject({
        userId: claimToUuid(ISSUER, '\u0000number:42'),
        tenantId: claimToUuid(ISSUER, '\u0000number:7'),
      });
      expect(identity({ ...base, sub: 42 })).not.toMatchObject({ userId: claimToUuid(ISSUER, '42') });
    });

    it('keeps a numeric customer claim as its digits, the number mark only in the id it derives', () => {
      const result = identity({ ...base, customer_id: 4711 });
      expect(result).toMatchObject({
        customerClaim: '4711',
        customerId: claimToUuid(ISSUER, '\u0000number:4711'),
      });
    });

    it('makes name and email claims one line: control characters, separators and overrides become spaces', () => {
      const result = identity({
        ...base,
        name: 'Eve\r\nX-WR-CALNAME:Owned\u0007 \u202Egnp.exe',
        email: 'eve@example.com\nBcc: all@example.com',
      });
      expect(result).toMatchObject({
        name: 'Eve X-WR-CALNAME:Owned gnp.exe',
        email: 'eve@example.com Bcc: all@example.com',
      });
    });

    it('calls a text id claim holding NUL malformed: it could meet a number mark', () => {
      expect(identity({ ...base, sub: '\u0000number:42' })).toBe('malformed-claim');
    });

    it.each([
      ['an unsafe integer', { sub: 2 ** 53 }],
      ['a fraction', { sub: 1.5 }],
      ['a boolean', { sub: true }],
      ['an array', { tenant_id: ['acme'] }],
      ['an object customer', { customer_id: { id: 1 } }],
      ['a lone surrogate', { sub: 'a\ud800' }],
      ['a lone low surrogate in the tenant', { tenant_id: 'a\udfffb' }],
      ['a lone surrogate in the customer', { role: 'customer', customer_id: '\ud83d' }],
      ['an object subject', { sub: { id: 1 } }],
      ['a fractional tenant', { tenant_id: 1.5 }],
      ['1025 characters', { sub: 'x'.repeat(1025) }],
    ])('calls %s malformed', (_label, claims) => {
      expect(identity({ ...base, ...claims })).toBe('malformed-claim');
    });

    it('accepts an id claim of exactly 1024 characters', () => {
      expect(identity({ ...base, sub: 'x'.repeat(1024) })).toMatchObject({
        userId: claimToUuid(ISSUER, 'x'.repeat(1024)),
      });
    });

    it.each([
      ['absent', {}],
      ['null', { sub: null }],
      ['empty', { sub: '' }],
    ])('answers missing-subject when the subject is %s', (_label, claims) => {
      const { sub: _sub, ...rest } = base;
      expect(identity({ ...rest, ...claims })).toBe('missing-subject');
    });

    it.each([
      ['absent', {}],
      ['empty', { tenant_id: '' }],
    ])('answers missing-tenant when the tenant is %s', (_label, claims) => {
      const { tenant_id: _tenant, ...rest } = base;
      expect(identity({ ...rest, ...claims })).toBe('missing-tenant');
    });

    it('checks the subject before the tenant, and both before the role', () => {
      expect(identity({ sub: true, tenant_id: true, role: 'auditor' })).toBe('malformed-claim');
      expect(identity({ tenant_id: true, role: 'auditor' })).toBe('missing-subject');
      expect(identity({ sub: 'u', role: 'auditor' })).toBe('missing-tenant');
      expect(identity({ sub: 'u', tenant_id: 't', customer_id: false, role: 'auditor' })).toBe(
        'malformed-claim',
      );
    });
  });

  describe('role claim', () => {
    it.each([
      ['a plain string', 'customer', 'customer'],
      ['any case', 'ADMIN', 'admin'],
      ['a space-separated string, highest first', 'offline employee  admin', 'admin'],
      ['tabs and new lines', 'customer\temployee\n', 'employee'],
      ['an array, highest first', ['customer', 'employee'], 'employee'],
      ['an array with other values in it', [42, null, 'Admin', { role: 'x' }], 'admin'],
    ])('reads %s', (_label, role, expected) => {
      expect(identity({ ...base, role })).toMatchObject({ role: expected });
    });

    it.each([
      ['an unknown role', 'auditor'],
      ['a number', 42],
      ['an object', { admin: true }],
      ['an empty array', []],
      ['a role glued to another word', 'adminemployee'],
      ['no claim at all', undefined],
    ])('answers no-known-role for %s', (_label, role) => {
      expect(identity({ ...base, role })).toBe('no-known-role');
    });
  });

  describe('claim paths', () => {
    const names = { ...defaultClaimNames, tenant: 'org.id', role: 'realm_access.roles' };

    it('reads dotted paths into nested objects', () => {
      expect(
        identity(
          { sub: 'u', org: { id: 'acme' }, realm_access: { roles: ['uma_authorization', 'admin'] } },
          names,
        ),
      ).toMatchObject({ tenantId: claimToUuid(ISSUER, 'acme'), role: 'admin' });
    });

    it('prefers a claim whose own name contains the dots', () => {
      const tenantClaim = 'https://acme.example/tenant';
      expect(
        identity(
          { sub: 'u', role: 'admin', [tenantClaim]: 'flat' },
          { ...defaultClaimNames, tenant: tenantClaim },
        ),
      ).toMatchObject({ tenantId: claimToUuid(ISSUER, 'flat') });
      expect(
        identity(
          { sub: 'u', role: 'admin', 'org.id': 'flat', org: { id: 'nested' } },
          { ...defaultClaimNames, tenant: 'org.id' },
        ),
      ).toMatchObject({ tenantId: claimToUuid(ISSUER, 'flat') });
    });

    it.each([
      ['null', { org: null }],
      ['text', { org: 'acme' }],
      ['a number', { org: 5 }],
      ['absent', {}],
    ])('finds no tenant when a step of the path is %s, and does not throw', (_label, claims) => {
      expect(identity({ sub: 'u', role: 'admin', ...claims }, names)).toBe('missing-tenant');
    });

    it('stops at a missing step deeper down', () => {
      expect(
        identity(
          { sub: 'u', role: 'admin', org: { id: 'acme' } },
          { ...names, role: 'realm_access.roles.all' },
        ),
      ).toBe('no-known-role');
      expect(
        identity(
          { sub: 'u', org: { id: 'acme' }, realm_access: 'admin' },
          { ...names, role: 'realm_access.roles' },
        ),
      ).toBe('no-known-role');
    });
  });

  describe('profile claims', () => {
    const profile = (claims: Record<string, unknown>) => {
      const result = identity({ ...base, ...claims });
      if (typeof result === 'string') throw new Error(result);
      return { name: result.name, email: result.email };
    };

    it('trims, drops NUL characters and repairs lone surrogates', () => {
      expect(profile({ name: '  Ada\u0000 Lovelace  ', email: 'a\ud800@x.test' })).toEqual({
        name: 'Ada Lovelace',
        email: 'a\ufffd@x.test',
      });
    });

    it('keeps at most 320 characters', () => {
      const long = `${'n'.repeat(319)}xyz`;
      expect(profile({ name: long }).name).toBe(long.slice(0, 320));
    });

    it('keeps exactly 320 characters as they are', () => {
      expect(profile({ email: 'e'.repeat(320) }).email).toBe('e'.repeat(320));
    });

    it.each([
      ['blank', '  \u0000 '],
      ['a number', 42],
      ['an object', { first: 'Ada' }],
      ['an array', ['Ada']],
    ])('stores no name or email when the claim is %s', (_label, value) => {
      expect(profile({ name: value, email: value })).toEqual({ name: null, email: null });
    });
  });
});
