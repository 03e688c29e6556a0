import { describe, expect, it } from 'vitest';
import type { Asset } from '../../src/inventory/asset.ts';
import { checkReported } from '../../src/inventory/config.ts';

const asset = (name: string, products: Record<string, string> = { debian: '13.2' }): Asset => ({
  name,
  source: 'pve',
  products,
  facts: {},
  status: 'ok',
});

describe('what an adapter reports', () => {
  it('is held to the inventory file rules', () => {
    expect(checkReported([asset('pve/web-1'), asset('pve/db-1')], 'pve')).toHaveLength(2);
    const refused: [Asset[], RegExp][] = [
      [[asset('x'.repeat(201))], /source pve reported: \/assets\/0\/name/],
      [[asset('has spaces and \u001b[2J')], /source pve reported: \/assets\/0\/name/],
      [[asset('twice'), asset('twice')], /source pve reported: asset twice is listed twice/],
      [[asset('v', { debian: 'x'.repeat(101) })], /source pve reported: \/assets\/0\/products\/debian/],
      [[asset('v', { 'Not A Key': '1' })], /source pve reported: \/assets\/0\/products/],
    ];
    for (const [assets, problem] of refused) expect(() => checkReported(assets, 'pve')).toThrow(problem);
  });
});
