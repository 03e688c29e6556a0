import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.ts';

/**
 * The process logger: one JSON object per line for log collectors, or pino-pretty's
 * readable lines when a person watches a terminal. Authorization headers never appear.
 */
export function createLogger(level: Config['logLevel'], interactive = process.stdout.isTTY === true): Logger {
  const options = { level, redact: ['req.headers.authorization'] };
  if (!interactive) return pino(options);
  return pino(options, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}
