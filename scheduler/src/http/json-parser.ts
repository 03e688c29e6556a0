import { AppError, validationFailed } from '../errors.ts';
import type { App } from './types.ts';

/**
 * The first string in a parsed body that PostgreSQL cannot store or that is not valid
 * Unicode (a NUL character, a lone surrogate), as a field path; null when there is none.
 */
export function findUnstorableString(value: unknown, path = ''): string | null {
  if (typeof value === 'string') {
    return value.includes('\u0000') || !value.isWellFormed() ? path || 'body' : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableString(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key.includes('\u0000') || !key.isWellFormed()) return path || 'body';
      const found = findUnstorableString(child, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * JSON bodies through Fastify's own hardened parser (prototype-poisoning checks), except
 * that an empty body counts as no body: clients often send `Content-Type: application/json`
 * on bodiless actions such as publish. Every other media type is refused with 415.
 * Strings PostgreSQL cannot store are refused here with a 422 naming the field.
 */
export function registerJsonParser(app: App): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  // JSON only: any other body type (text/plain included) is 415, never parsed as a string.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser<Buffer>('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      // Fatal: invalid UTF-8 is refused, never stored as U+FFFD.
      text = utf8.decode(body);
    } catch {
      done(new AppError('BAD_REQUEST', 'request body is not valid UTF-8'), undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parse(request, text, (error, value) => {
      if (error) {
        done(error, undefined);
        return;
      }
      const field = findUnstorableString(value);
      if (field) {
        done(validationFailed(field, 'must not contain NUL characters or invalid Unicode'), undefined);
        return;
      }
      done(null, value);
    });
  });
}
