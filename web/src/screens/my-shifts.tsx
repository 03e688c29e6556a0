import { expectData } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { addDays, dateIn } from '../i18n/format.ts';
import { paths } from '../routes.ts';
import { Loaded } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';
import { ShiftSummary } from '../ui/shift-summary.tsx';
import { Clock, clockOffered } from './clock.tsx';

/**
 * Home: my shifts of the next 14 days in the tenant's zone, the next one first and apart;
 * the clock under it while it is the current seat.
 */
export function MyShifts() {
  const { api, t, timeZone } = useApp();
  const today = dateIn(timeZone, new Date());
  const [resource, reload] = useResource(
    () =>
      expectData(
        api.GET('/api/v1/me/assignments', { params: { query: { from: today, to: addDays(today, 14) } } }),
      ),
    [today],
    'my-shifts',
  );
  return (
    <>
      <h1 tabIndex={-1}>{t('myShifts.heading')}</h1>
      <Loaded resource={resource} retry={reload}>
        {(assignments) => {
          const now = Date.now();
          const upcoming = assignments
            .filter((a) => Date.parse(a.shift.ends_at) > now)
            .sort((a, b) => Date.parse(a.shift.starts_at) - Date.parse(b.shift.starts_at));
          if (upcoming.length === 0) {
            return (
              <div class="empty">
                <p>{t('myShifts.empty')}</p>
                <a class="button" href={paths.openShifts}>
                  {t('myShifts.findOpen')}
                </a>
              </div>
            );
          }
          const [next, ...later] = upcoming;
          return (
            <>
              <section aria-labelledby="next-shift">
                <h2 id="next-shift">{t('myShifts.next')}</h2>
                <a class="card card-link card-next" href={paths.shift(next!.shift.id)}>
                  {Date.parse(next!.shift.starts_at) <= now && (
                    <span class="chip chip-now">{t('myShifts.now')}</span>
                  )}
                  <ShiftSummary facts={next!} />
                </a>
                {clockOffered(next!.shift, now) && <Clock seat={next!} />}
              </section>
              {later.length > 0 && (
                <section aria-labelledby="later-shifts">
                  <h2 id="later-shifts">{t('myShifts.later')}</h2>
                  <ul class="cards">
                    {later.map((a) => (
                      <li key={a.id}>
                        <a class="card card-link" href={paths.shift(a.shift.id)}>
                          <ShiftSummary facts={a} />
                        </a>
                      </li>
                    ))}
                  </ul>
                </section>
              )}
            </>
          );
        }}
      </Loaded>
    </>
  );
}
