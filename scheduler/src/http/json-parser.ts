import type { App } from './types.ts';

/**
 * JSON bodies through Fastify's own hardened parser (prototype-poisoning checks), except
 * that an empty body counts as no body: clients often send `Content-Type: application/json`
 * on bodiless actions such as publish. Every other media type is refused with 415.
 */
export function registerJsonParser(app: App): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  // JSON only: any other body type (text/plain included) is 415, never parsed as a string.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parse(request, text, done);
  });
}
