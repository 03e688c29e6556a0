import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../src/errors.ts';

describe('error catalogue', () => {
  it('documents every error code in docs/scheduler/errors.md', () => {
    const doc = readFileSync(new URL('../../docs/scheduler/errors.md', import.meta.url), 'utf8');
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      expect(doc, code).toMatch(new RegExp(`\\| *\`${code}\` *\\| *${status} *\\|`));
    }
  });
});
