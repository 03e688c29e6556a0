import { ApiError, expectData, type Schemas } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { ActionButton, OutcomeMessage, useAction } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';

const HOUR = 3_600_000;

/**
 * Whether to offer the clock for a seat: from an hour before its shift starts until it
 * ends. The API decides (its window runs on to the midnight after the end, and it says
 * "not now" in a code of its own); the app only offers.
 */
export function clockOffered(shift: { starts_at: string; ends_at: string }, now: number): boolean {
  return Date.parse(shift.starts_at) - HOUR <= now && now < Date.parse(shift.ends_at);
}

/**
 * Clock in and out of the current seat: `Clock in`, then the start and `Clock out`, then
 * the time sent for confirmation. What was clocked is the caller's own entry of the seat
 * (`GET /time-tracking/entries`); with the tenant's time tracking off (404) nothing shows.
 */
export function Clock({ seat }: { seat: Schemas['MyAssignment'] }) {
  const { api, t, format } = useApp();
  const action = useAction();
  const [entry, reload] = useResource(
    async () => {
      // An entry of the seat starts at the earliest an hour before its shift.
      const from = new Date(Date.parse(seat.shift.starts_at) - HOUR).toISOString();
      try {
        const entries = await expectData(
          api.GET('/api/v1/time-tracking/entries', { params: { query: { from } } }),
        );
        return { tracking: true, entry: entries.find((e) => e.shift_assignment_id === seat.id) ?? null };
      } catch (error) {
        if (error instanceof ApiError && error.problem.status === 404)
          return { tracking: false, entry: null };
        throw error;
      }
    },
    [seat.id],
    `clock-${seat.id}`,
  );
  if (entry.state !== 'ready' || !entry.data.tracking) return null;
  const clocked = entry.data.entry;
  const clock = (way: 'clock-in' | 'clock-out') => async () => {
    const path =
      way === 'clock-in' ? '/api/v1/me/assignments/{id}/clock-in' : '/api/v1/me/assignments/{id}/clock-out';
    await expectData(api.POST(path, { params: { path: { id: seat.id } } }));
    return t(way === 'clock-in' ? 'clock.clockedIn' : 'clock.clockedOut');
  };
  // Before the clock-in a button; clocked in, the start and a button; clocked out, the time.
  const way = clocked === null ? 'clock-in' : clocked.ended_at === null ? 'clock-out' : null;
  const line =
    clocked === null
      ? null
      : clocked.ended_at === null
        ? t('clock.since', { time: format.dateTime(clocked.started_at) })
        : t(clocked.status === 'confirmed' ? 'clock.confirmed' : 'clock.sent', {
            time: format.range(clocked.started_at, clocked.ended_at),
          });
  // The button keeps its place from Clock in to Clock out, so the focus stays on it.
  return (
    <section class="card clock" aria-label={t('clock.label')}>
      {line && <p>{line}</p>}
      {way && (
        <ActionButton action={action} variant="primary" run={clock(way)} then={reload}>
          {t(way === 'clock-in' ? 'clock.in' : 'clock.out')}
        </ActionButton>
      )}
      <OutcomeMessage outcome={action.outcome} />
    </section>
  );
}
