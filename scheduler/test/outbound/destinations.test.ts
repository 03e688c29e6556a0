import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  DestinationRefused,
  isPublicAddress,
  OutboundPolicy,
  parseAllowedHosts,
} from '../../src/outbound/destinations.ts';

/** The address rules for URLs callers choose (push endpoints), apart from any route. */
describe('parseAllowedHosts (OUTBOUND_ALLOWED_HOSTS)', () => {
  it('reads hosts with and without ports, IPv6 in brackets, in the URL reader’s spelling', () => {
    expect(parseAllowedHosts(' Push.Corp.Example:8443 , 10.0.0.7,[FD00::1]:443 ')).toEqual([
      { host: 'push.corp.example', port: 8443 },
      { host: '10.0.0.7', port: null },
      { host: '[fd00::1]', port: 443 },
    ]);
    expect(parseAllowedHosts(undefined)).toEqual([]);
    expect(parseAllowedHosts('  ')).toEqual([]);
  });

  it.each([
    'https://push.example',
    'push.example:0',
    'push.example:70000',
    'a b',
    'push.example/x',
    'user@host',
    ',',
  ])('refuses %j naming the entry', (raw) => {
    expect(() => parseAllowedHosts(raw)).toThrow(/is not a host or host:port/);
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.31.255.255', false],
    ['192.168.0.1', false],
    ['169.254.169.254', false],
    ['100.100.100.200', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.251', false],
    ['198.51.100.1', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::7f00:1', false],
    ['::127.0.0.1', false],
    ['::7f00:1', false],
    ['::a9fe:a9fe', false],
    ['::8.8.8.8', false],
    ['fe80::1%eth0', false],
    ['2002:7f00:1::1', false],
    ['2001:db8::1', false],
    ['not an address', false],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('OutboundPolicy.refusal', () => {
  const policy = new OutboundPolicy(parseAllowedHosts('push.corp.example:8443,10.0.0.7'));

  it.each([
    ['https://fcm.googleapis.com/fcm/send/x', null],
    ['https://updates.push.services.mozilla.com/wpush/v2/x', null],
    ['https://push.corp.example:8443/x', null],
    ['http://push.corp.example:8443/x', null],
    ['https://10.0.0.7/x', null],
    ['http://10.0.0.7:9000/x', null],
    ['https://push.corp.example/x', 'must name a public host (internal and single-label names are refused)'],
    ['http://fcm.googleapis.com/x', 'must be an https URL'],
    ['ftp://fcm.googleapis.com/x', 'must be an https URL'],
    [
      'https://10.0.0.8/x',
      'must name a public host (loopback, private, link-local and other reserved addresses are refused)',
    ],
    ['https://user:pw@10.0.0.7/x', 'must not carry a user name or password'],
    ['https://fcm.googleapis.com:99999/x', 'must be an absolute https URL'],
    ['/relative', 'must be an absolute https URL'],
  ])('%s: %s', (url, expected) => {
    expect(policy.refusal(url)).toBe(expected);
  });
});

describe('OutboundPolicy.lookupFor', () => {
  const resolving =
    (...addresses: string[]) =>
    (): LookupAddress[] =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  function lookup(policy: OutboundPolicy, url: string, all: boolean) {
    const fn = policy.lookupFor(new URL(url));
    if (!fn) return Promise.resolve('system lookup');
    return new Promise((resolve) => {
      (fn as unknown as (h: string, o: { all: boolean }, cb: (...args: unknown[]) => void) => void)(
        new URL(url).hostname,
        { all },
        (error, address, family) => resolve(error ?? { address, family }),
      );
    });
  }

  it('hands on the addresses of a name that resolves only to public ones', async () => {
    const policy = new OutboundPolicy([], resolving('8.8.8.8', '2001:4860:4860::8888'));
    expect(await lookup(policy, 'https://push.example.net/x', false)).toEqual({
      address: '8.8.8.8',
      family: 4,
    });
    expect(await lookup(policy, 'https://push.example.net/x', true)).toEqual({
      address: [
        { address: '8.8.8.8', family: 4 },
        { address: '2001:4860:4860::8888', family: 6 },
      ],
      family: undefined,
    });
  });

  it('refuses a name any of whose addresses is not public', async () => {
    const policy = new OutboundPolicy([], resolving('8.8.8.8', '10.0.0.1'));
    const error = await lookup(policy, 'https://push.example.net/x', true);
    expect(error).toBeInstanceOf(DestinationRefused);
    expect((error as Error).message).toBe(
      'push.example.net resolves to 10.0.0.1, which is not a public address',
    );
  });

  it('leaves admitted hosts to the system resolver, or to an injected one without the check', async () => {
    expect(
      await lookup(
        new OutboundPolicy(parseAllowedHosts('push.corp.example')),
        'https://push.corp.example/x',
        false,
      ),
    ).toBe('system lookup');
    const injected = new OutboundPolicy(parseAllowedHosts('push.corp.example'), resolving('10.0.0.9'));
    expect(await lookup(injected, 'https://push.corp.example/x', false)).toEqual({
      address: '10.0.0.9',
      family: 4,
    });
  });

  it('passes on a failed resolution as it is', async () => {
    const policy = new OutboundPolicy([], () =>
      Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })),
    );
    expect(await lookup(policy, 'https://push.example.net/x', false)).toMatchObject({ code: 'ENOTFOUND' });
    const empty = new OutboundPolicy([], () => []);
    expect(await lookup(empty, 'https://push.example.net/x', false)).toMatchObject({ code: 'ENOTFOUND' });
  });
});
