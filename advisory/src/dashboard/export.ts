import type { DecisionEntry } from '../decisions/chain.ts';
import type { LogVerification } from '../decisions/verify.ts';

/**
 * The decision log export (`GET /decisions.json`): every entry and checkpoint as stored,
 * the appliance's public key, and the appliance's own verification of them. It verifies
 * offline too: `advisory log verify --export decisions.json [--appliance-key appliance.pub]`.
 */
export const EXPORT_FORMAT = 'advisory-decision-log/1';

export interface DecisionsExport {
  format: typeof EXPORT_FORMAT;
  exported_at: string;
  appliance_key: string;
  verification: LogVerification;
  entries: DecisionEntry[];
  checkpoints: unknown[];
}

export async function decisionsExport(
  decisions: {
    entries(): Promise<DecisionEntry[]>;
    verify(): Promise<LogVerification>;
    checkpoints(): Promise<unknown[]>;
    publicKeyText(): Promise<string>;
  },
  at: Date,
): Promise<DecisionsExport> {
  return {
    format: EXPORT_FORMAT,
    exported_at: at.toISOString(),
    appliance_key: await decisions.publicKeyText(),
    verification: await decisions.verify(),
    entries: await decisions.entries(),
    checkpoints: await decisions.checkpoints(),
  };
}
