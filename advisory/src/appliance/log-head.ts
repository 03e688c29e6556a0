/**
 * The decision log's last head as the appliance recorded it (`log-head.json` in the state
 * directory, appliance/state.ts): a log that existed and is gone, or was cut short or
 * replaced, cannot pass for a fresh one. Deleting both log files leaves a log that
 * verifies (a new chain, a new first checkpoint); the recorded head says it had more.
 */
export interface LogHead {
  seq: number;
  hash: string;
}

/**
 * Why the log as it stands is not the one recorded, or null when it may be: it has fewer
 * entries than the recorded head (deleted or cut short), or as many with another last hash
 * (replaced). A log that grew past the recorded head is judged by its chain and
 * checkpoints (decisions/verify.ts), not here.
 */
export function logLoss(recorded: LogHead | null, head: LogHead | null): string | null {
  if (recorded === null || recorded.seq === 0) return null;
  const seq = head?.seq ?? 0;
  const restore = 'restore decisions.jsonl and checkpoints.jsonl from a backup';
  if (seq < recorded.seq)
    return `the decision log had ${recorded.seq} entries (its last hash ${recorded.hash.slice(0, 16)}…) and now has ${seq}: it was deleted or cut short (${restore}; to accept the loss and start a new log, remove log-head.json from the state directory)`;
  if (seq === recorded.seq && head?.hash !== recorded.hash)
    return `the decision log's entry ${seq} is not the one recorded (its hash was ${recorded.hash.slice(0, 16)}…): the log was replaced (${restore})`;
  return null;
}
