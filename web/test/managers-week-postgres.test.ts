import { describe, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { chromiumAvailable, NEEDS_CHROMIUM } from './support/browser.ts';
import { planAndPayAWeek } from './support/managers-week.ts';
import { NEEDS_POSTGRES, onPostgres, postgresAvailable } from './support/postgres.ts';
import { useStage } from './support/stage.ts';

/** The same week on PostgreSQL (a cluster of this file's own), as production runs. */
const stage = useStage(onPostgres);

describe(
  "a manager's week on PostgreSQL",
  runsIf(chromiumAvailable && postgresAvailable, chromiumAvailable ? NEEDS_POSTGRES : NEEDS_CHROMIUM),
  () => {
    it('invites, plans, publishes, sees a claim, approves, records time and exports the month', async () => {
      await planAndPayAWeek(stage);
    });
  },
);
