import type { Finding } from '../../feed/author/lint.ts';
import { type Io, printable } from '../io.ts';

/** Prints each finding as `file:line: severity [rule] message` (stderr); returns the error count. */
export function printFindings(io: Io, findings: readonly Finding[]): number {
  for (const finding of findings) {
    io.err(
      printable(`${finding.file}:${finding.line}: ${finding.severity} [${finding.rule}] ${finding.message}`),
    );
  }
  return findings.filter((f) => f.severity === 'error').length;
}

export const errorCount = (errors: number): string => `${errors} error${errors === 1 ? '' : 's'}`;
