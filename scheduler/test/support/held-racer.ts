import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../src/db/database.ts';

/**
 * A race made to happen every time: `racer` writes in a transaction of the owner's that
 * stays open while `request` starts and reaches the rows the racer holds; then the racer
 * commits. On PostgreSQL the request waits on the racer's row locks and meets its changes
 * as they commit (a key it checks may be gone by then); on the embedded database it waits
 * for the one session and then reads what the racer left.
 */
export async function raceAgainst(
  owner: Db,
  racer: (trx: Db) => Promise<unknown>,
  request: () => Promise<LightMyRequestResponse>,
  holdMs = 300,
): Promise<LightMyRequestResponse> {
  let answer: Promise<LightMyRequestResponse> | undefined;
  await owner.transaction().execute(async (trx) => {
    await racer(trx);
    answer = request();
    await new Promise((resolve) => setTimeout(resolve, holdMs));
  });
  if (!answer) throw new Error('the request never started');
  return answer;
}
