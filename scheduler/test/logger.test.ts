import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

describe('process logger', () => {
  it('writes JSON lines for log collectors when no person watches', () => {
    const { lines, destination } = capture();
    createLogger('info', { interactive: false, destination }).info({ port: 8080 }, 'scheduler ready');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 30, msg: 'scheduler ready', port: 8080 });
  });

  it('writes readable lines on a terminal, and still redacts tokens', () => {
    const { lines, destination } = capture();
    createLogger('info', { interactive: true, destination }).info(
      { req: { headers: { authorization: 'Bearer secret-token' } } },
      'scheduler ready',
    );
    const text = lines.join('\n');
    expect(text).toMatch(/INFO.*scheduler ready/);
    expect(() => JSON.parse(lines[0] ?? '')).toThrow();
    expect(text).not.toContain('secret-token');
  });

  it('respects the level', () => {
    const { lines, destination } = capture();
    const log = createLogger('warn', { interactive: false, destination });
    log.info('quiet');
    log.warn('loud');
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['loud']);
  });
});
