import { register } from 'node:module';

/**
 * Loaded with `node --import` (NODE_OPTIONS): appends the URL of every ES module the
 * process resolves to the file MODULE_LOG names, so a test can tell what was loaded.
 */
const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(process.env.MODULE_LOG)}, resolved.url + '\\n');
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
