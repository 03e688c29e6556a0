import { register } from 'node:module';

/**
 * Loaded with `node --import` (NODE_OPTIONS): appends the URL of every ES module the
 * process resolves to the file MODULE_LOG names, each line `<url>\t<importer's url>`, so a
 * test can tell what was loaded and by whom (a loader hook registered later, such as
 * import-in-the-middle's, runs before this one: it sees the URLs before any rewrite).
 */
const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(process.env.MODULE_LOG)}, resolved.url + '\\t' + (context.parentURL ?? '') + '\\n');
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
