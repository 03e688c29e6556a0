import { describe, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { anotherTenantGetsNothing } from '../support/cross-tenant.ts';

/** Another tenant's records are 404 on every route with a path id (see support/cross-tenant.ts). */
const t = useRouteTests();

describe('another tenant, on every route with a path id', () => {
  it('gets 404 NOT_FOUND and changes nothing', async () => {
    await anotherTenantGetsNothing(t);
  });
});
