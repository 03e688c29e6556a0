import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.ts';

export interface LoggerOptions {
  /** A person watches a terminal: readable lines instead of JSON. */
  interactive?: boolean;
  /** Where lines go (standard output unless a test captures them). */
  destination?: DestinationStream;
}

/**
 * The process logger: one JSON object per line for log collectors, or pino-pretty's
 * readable lines when standard output is a terminal. Authorization headers never appear.
 */
export function createLogger(level: Config['logLevel'], options: LoggerOptions = {}): Logger {
  const interactive = options.interactive ?? process.stdout.isTTY === true;
  const settings = { level, redact: ['req.headers.authorization'] };
  if (interactive) {
    return pino(
      settings,
      pretty({
        colorize: options.destination === undefined,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
        ...(options.destination ? { destination: options.destination } : {}),
        sync: true,
      }),
    );
  }
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
