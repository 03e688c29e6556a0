import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { Refusal, useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { describeRefusal } from '../ui/problems.ts';
import type { Clock } from './clock.ts';
import { copyForward } from './copy.ts';
import type { SeatStore, Shift } from './data.ts';

/** Copy the shown week's shifts to the next week as drafts, after saying what will happen. */
export function CopyDialog({
  shifts,
  nextWeek,
  clock,
  store,
  onClose,
  onCopied,
  reload,
}: {
  shifts: readonly Shift[];
  nextWeek: readonly string[];
  clock: Clock;
  store: SeatStore;
  onClose: () => void;
  onCopied: (done: string) => void;
  /** Reads the week again (some copies were made, some refused). */
  reload: () => void;
}) {
  const { api, timeZone, t } = useApp();
  const text = useText();
  const action = useAdminAction();
  const target = clock.range(nextWeek[0] ?? '', nextWeek[6] ?? '');
  return (
    <Dialog title={text('schedule.copyWeek')} onClose={onClose}>
      <p>{text('schedule.copyAsk', { count: shifts.length, week: target })}</p>
      <OutcomeMessage outcome={action.outcome} />
      <div class="actions">
        <button
          type="button"
          class="button button-primary"
          disabled={action.busy || shifts.length === 0}
          onClick={() =>
            void action.run(async () => {
              const seats = await store.ensure(shifts.map((s) => s.id));
              const { copied, refused } = await copyForward(api, timeZone, shifts, seats);
              const done = text('schedule.copied', { count: copied, week: target });
              if (refused.length > 0) {
                reload();
                throw new Refusal(
                  `${done} ${text('schedule.copyRefused', { count: refused.length, reason: describeRefusal(refused[0], text, t) })}`,
                );
              }
              onCopied(done);
              return undefined;
            })
          }
        >
          {text('schedule.copyConfirm', { count: shifts.length })}
        </button>
        <button type="button" class="button" onClick={onClose}>
          {text('admin.cancel')}
        </button>
      </div>
    </Dialog>
  );
}
