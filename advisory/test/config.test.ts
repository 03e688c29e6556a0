import { describe, expect, it } from 'vitest';
import { ConfigError, loadApplianceConfig } from '../src/appliance/config.ts';

/** The appliance's settings as values: defaults, and a ConfigError naming the variable. */
const base = {
  ADVISORY_FEED_URL: '/srv/feed',
  ADVISORY_PUBLIC_KEYS: 'feed.pub',
  ADVISORY_INVENTORY: 'inv.yaml',
};

function refusal(env: Record<string, string>): string {
  try {
    loadApplianceConfig({ ...base, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('ADVISORY_TRUST_PROXY', () => {
  it('is off by default; takes true, a hop count, or addresses and CIDR ranges', () => {
    const trust = (value?: string) =>
      loadApplianceConfig({ ...base, ...(value === undefined ? {} : { ADVISORY_TRUST_PROXY: value }) })
        .trustProxy;
    expect(trust()).toBe(false);
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.1, 192.168.0.0/16,::1,fd00::/8')).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
    ]);
  });

  it('names the variable for anything else', () => {
    for (const value of [
      'yes',
      '0',
      '11',
      '10.0.0.1/33',
      'fd00::/129',
      'proxy.lan',
      '10.0.0.0/8/1',
      '10.0.0.1,,',
    ]) {
      expect(refusal({ ADVISORY_TRUST_PROXY: value }), value).toMatch(/^ADVISORY_TRUST_PROXY: /);
    }
  });
});
