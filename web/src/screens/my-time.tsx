import { expectData } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import type { MessageKey } from '../i18n/messages.ts';
import { Loaded } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';

/** My recorded time, my overtime balance and every change to it: read-only. */
export function MyTime() {
  const { api, t, format } = useApp();
  const [resource, reload] = useResource(
    async () => {
      const [balance, entries, ledger] = await Promise.all([
        expectData(api.GET('/api/v1/time-tracking/balance')),
        expectData(api.GET('/api/v1/time-tracking/entries', { params: { query: { limit: '50' } } })),
        expectData(api.GET('/api/v1/time-tracking/ledger')),
      ]);
      return { balance, entries, ledger };
    },
    [],
    'my-time',
  );
  return (
    <>
      <h1 tabIndex={-1}>{t('time.heading')}</h1>
      <Loaded resource={resource} retry={reload}>
        {({ balance, entries, ledger }) => (
          <>
            <section class="card balance" aria-labelledby="balance">
              <h2 id="balance">{t('time.balance')}</h2>
              <p class="balance-value">{format.minutes(balance.balance_minutes)}</p>
            </section>
            <section aria-labelledby="entries">
              <h2 id="entries">{t('time.entries')}</h2>
              {entries.length === 0 ? (
                <p class="muted">{t('time.noEntries')}</p>
              ) : (
                <ul class="cards">
                  {/* An open entry (clocked in, not out) has no end or worked minutes yet: not listed here. */}
                  {[...entries].reverse().flatMap((entry) =>
                    entry.ended_at === null || entry.worked_minutes === null
                      ? []
                      : [
                          <li key={entry.id} class="card">
                            <p class="shift-time">{format.range(entry.started_at, entry.ended_at)}</p>
                            <p>
                              {t('time.worked', {
                                worked: format.minutes(entry.worked_minutes),
                                break: format.minutes(entry.break_minutes),
                              })}
                            </p>
                          </li>,
                        ],
                  )}
                </ul>
              )}
            </section>
            <section aria-labelledby="ledger">
              <h2 id="ledger">{t('time.ledger')}</h2>
              {ledger.length === 0 ? (
                <p class="muted">{t('time.noLedger')}</p>
              ) : (
                <table class="ledger">
                  <tbody>
                    {[...ledger].reverse().map((row) => (
                      <tr key={row.id}>
                        <td>{format.day(row.created_at)}</td>
                        <td>{t(`ledger.${row.kind}` as MessageKey)}</td>
                        <td class="number">
                          {row.delta_minutes > 0 ? '+' : ''}
                          {format.minutes(row.delta_minutes)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
          </>
        )}
      </Loaded>
    </>
  );
}
