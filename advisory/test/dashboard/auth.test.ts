import { describe, expect, it } from 'vitest';
import { basicUser, credentialsMatch, FailedAttempts } from '../../src/dashboard/auth.ts';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;
const expected = { user: 'operator', password: 'pässword:with colon' };

describe('dashboard credentials', () => {
  it('takes exactly the configured user and password, in UTF-8, the password after the first colon', () => {
    expect(credentialsMatch(basic('operator:pässword:with colon'), expected)).toBe(true);
    expect(credentialsMatch(`  ${basic('operator:pässword:with colon')}  `, expected)).toBe(true);
    expect(credentialsMatch(basic('operator:pässword:with colon').replace('Basic', 'basic'), expected)).toBe(
      true,
    );
    for (const header of [
      undefined,
      '',
      basic('operator:wrong'),
      basic('Operator:pässword:with colon'),
      basic('operatorpässword'),
      basic(':operator:pässword:with colon'),
      `Bearer ${basic('operator:pässword:with colon').slice(6)}`,
      `x${basic('operator:pässword:with colon')}`,
      `${basic('operator:pässword:with colon')} extra`,
      'Basic !!!',
    ]) {
      expect(credentialsMatch(header, expected), String(header)).toBe(false);
    }
    expect(credentialsMatch(basic(':'), { user: '', password: '' })).toBe(true);
    expect(credentialsMatch(basic(''), { user: '', password: '' })).toBe(false);
  });

  it('pauses a client after max failures in the window, until the oldest leaves it', () => {
    const attempts = new FailedAttempts(3, 10_000, 100);
    const t0 = 1_000_000;
    expect(attempts.retryAfter('a', t0)).toBe(0);
    attempts.fail('a', t0);
    attempts.fail('a', t0 + 1_000);
    expect(attempts.retryAfter('a', t0 + 1_000)).toBe(0);
    attempts.fail('a', t0 + 2_000);
    expect(attempts.retryAfter('a', t0 + 2_000)).toBe(8);
    expect(attempts.retryAfter('b', t0 + 2_000)).toBe(0);
    // The oldest failure leaves the window exactly 10 s after it happened.
    expect(attempts.retryAfter('a', t0 + 9_999)).toBe(1);
    expect(attempts.retryAfter('a', t0 + 10_000)).toBe(0);
    // Only failures within the window count: the one at t0 has left it.
    attempts.fail('a', t0 + 10_500);
    expect(attempts.retryAfter('a', t0 + 10_500)).toBe(1);
    expect(attempts.retryAfter('a', t0 + 11_000)).toBe(0);
    for (let i = 0; i < 10; i++) attempts.fail('c', t0 + i);
    expect(attempts.retryAfter('c', t0 + 10)).toBe(10);
    attempts.succeed('c');
    expect(attempts.retryAfter('c', t0 + 10)).toBe(0);
    // Bounded: the least recently failing client is forgotten first.
    const small = new FailedAttempts(1, 10_000, 2);
    small.fail('x', t0);
    small.fail('y', t0);
    small.fail('x', t0 + 1);
    small.fail('z', t0 + 2);
    expect(small.size).toBe(2);
    expect(small.retryAfter('y', t0 + 3)).toBe(0);
    expect(small.retryAfter('x', t0 + 3)).toBeGreaterThan(0);
  });
});

describe('basicUser', () => {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  it('gives the user name of a user:password pair, for the log, and nothing else', () => {
    expect(basicUser(`Basic ${b64('operator:secret')}`)).toBe('operator');
    expect(basicUser(`basic ${b64('ünïcode:x:y')}`)).toBe('ünïcode');
    expect(basicUser(`Basic ${b64(':only-a-password')}`)).toBe('');
    // No colon, another scheme, not base64, nothing: no user.
    for (const header of [`Basic ${b64('no-colon')}`, `Bearer ${b64('a:b')}`, 'Basic !!!', '', undefined])
      expect(basicUser(header), String(header)).toBeNull();
    // A name as long as a client likes is cut for the log.
    expect(basicUser(`Basic ${b64(`${'u'.repeat(5000)}:x`)}`)).toBe('u'.repeat(200));
  });
});
