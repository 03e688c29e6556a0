import { describe, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { chromiumAvailable, NEEDS_CHROMIUM } from './support/browser.ts';
import { planAndPayAWeek } from './support/managers-week.ts';
import { useStage } from './support/stage.ts';

/** The manager's week end to end on the embedded database (PGlite), as `npm start` runs. */
const stage = useStage();

describe("a manager's week on PGlite", runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('invites, plans, publishes, sees a claim, approves, records time and exports the month', async () => {
    await planAndPayAWeek(stage);
  });
});
