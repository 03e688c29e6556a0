import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { generatedSchema, schemaFile } from '../../scripts/generate-api.ts';

// The typed client is only as true as its types: they must be what the scheduler's OpenAPI
// document says today (npm run api:generate -w web rewrites them).
it('types every call from the OpenAPI document the scheduler serves now', async () => {
  expect(
    readFileSync(schemaFile, 'utf8') === (await generatedSchema()),
    'web/src/api/schema.d.ts is stale: npm run api:generate -w web',
  ).toBe(true);
});
