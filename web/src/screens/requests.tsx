import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { addDays, dateIn, startOfDay } from '../i18n/format.ts';
import type { MessageKey } from '../i18n/messages.ts';
import { paths } from '../routes.ts';
import { type Action, ActionButton, Loaded, OutcomeMessage, useAction } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';

/** Time off (ask, see, withdraw) and offers (accept what is offered to me, follow mine). */
export function Requests() {
  const { t } = useApp();
  const action = useAction();
  return (
    <>
      <h1 tabIndex={-1}>{t('requests.heading')}</h1>
      <OutcomeMessage outcome={action.outcome} />
      <Offers action={action} />
      <TimeOff action={action} />
    </>
  );
}

function Offers({ action }: { action: Action }) {
  const { api, t, format } = useApp();
  const [resource, reload] = useResource(async () => {
    const [me, offers] = await Promise.all([
      expectData(api.GET('/api/v1/me')),
      expectData(api.GET('/api/v1/offers')),
    ]);
    // The offers name their shift; a handful of reads, each a published shift.
    const shifts = new Map<string, Schemas['Shift']>();
    await Promise.all(
      [...new Set(offers.map((o) => o.shift_id))].map(async (id) => {
        const shift = await api.GET('/api/v1/shifts/{id}', { params: { path: { id } } });
        if (shift.data) shifts.set(id, shift.data);
      }),
    );
    return {
      incoming: offers
        .filter((o) => o.status === 'open' && o.from_user_id !== me.id)
        .map((o) => ({ offer: o, shift: shifts.get(o.shift_id) ?? null })),
      outgoing: offers
        .filter((o) => o.from_user_id === me.id)
        .map((o) => ({ offer: o, shift: shifts.get(o.shift_id) ?? null })),
    };
  }, []);
  const when = (shift: Schemas['Shift'] | null) =>
    shift ? `${shift.name}, ${format.range(shift.starts_at, shift.ends_at)}` : '';
  return (
    <section aria-labelledby="offers">
      <h2 id="offers">{t('requests.offers')}</h2>
      <Loaded resource={resource} retry={reload}>
        {({ incoming, outgoing }) => (
          <>
            <h3>{t('requests.incoming')}</h3>
            {incoming.length === 0 ? (
              <p class="muted">{t('requests.noIncoming')}</p>
            ) : (
              <ul class="cards">
                {incoming.map(({ offer, shift }) => (
                  <li key={offer.id} class="card">
                    <p class="shift-time">{when(shift)}</p>
                    <ActionButton
                      action={action}
                      variant="primary"
                      then={reload}
                      run={async () => {
                        const taken = await expectData(
                          api.POST('/api/v1/offers/{id}/accept', { params: { path: { id: offer.id } } }),
                        );
                        return t(
                          taken.status === 'accepted' ? 'requests.acceptedWaiting' : 'requests.accepted',
                        );
                      }}
                    >
                      {t('requests.accept')}
                    </ActionButton>
                  </li>
                ))}
              </ul>
            )}
            <h3>{t('requests.outgoing')}</h3>
            {outgoing.length === 0 ? (
              <p class="muted">{t('requests.noOutgoing')}</p>
            ) : (
              <ul class="cards">
                {outgoing.map(({ offer, shift }) => (
                  <li key={offer.id} class="card">
                    <p class="shift-time">
                      {shift ? <a href={paths.shift(shift.id)}>{when(shift)}</a> : null}
                    </p>
                    <p>
                      <span class={`chip chip-${offer.status}`}>
                        {t(`offerStatus.${offer.status}` as MessageKey)}
                      </span>{' '}
                      {offer.to_user_id ? t('requests.toColleague') : t('requests.toAnyone')}
                    </p>
                    {offer.status === 'open' && (
                      <ActionButton
                        action={action}
                        then={reload}
                        run={async () => {
                          await expectData(
                            api.DELETE('/api/v1/offers/{id}', { params: { path: { id: offer.id } } }),
                          );
                          return undefined;
                        }}
                      >
                        {t('requests.withdrawOffer')}
                      </ActionButton>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

function TimeOff({ action }: { action: Action }) {
  const { api, t, format, timeZone } = useApp();
  const tomorrow = addDays(dateIn(timeZone, new Date()), 1);
  const [open, setOpen] = useState(false);
  const [from, setFrom] = useState(tomorrow);
  const [to, setTo] = useState(tomorrow);
  const [reason, setReason] = useState('');
  const [resource, reload] = useResource(
    () =>
      expectData(
        api.GET('/api/v1/time-off', {
          params: { query: { from: startOfDay(timeZone, dateIn(timeZone, new Date())) } },
        }),
      ),
    [],
  );
  // Whole local days: the first day's start to the start of the day after the last.
  const span = (timeOff: Schemas['TimeOff']) =>
    `${format.day(timeOff.starts_at)} – ${format.day(new Date(Date.parse(timeOff.ends_at) - 1))}`;
  return (
    <section aria-labelledby="time-off">
      <h2 id="time-off">{t('requests.timeOff')}</h2>
      {!open ? (
        <button type="button" class="button button-primary" onClick={() => setOpen(true)}>
          {t('requests.requestTimeOff')}
        </button>
      ) : (
        <form
          class="form"
          aria-labelledby="time-off-form"
          onSubmit={(event) => {
            event.preventDefault();
            void action
              .run(async () => {
                await expectData(
                  api.POST('/api/v1/me/time-off', {
                    body: {
                      starts_at: startOfDay(timeZone, from),
                      ends_at: startOfDay(timeZone, addDays(to, 1)),
                      reason: reason.trim() === '' ? null : reason.trim(),
                    },
                  }),
                );
                setOpen(false);
                return t('requests.sent');
              })
              .then(() => reload());
          }}
        >
          <h3 id="time-off-form">{t('requests.requestTimeOff')}</h3>
          <label class="field">
            <span>{t('requests.from')}</span>
            <input
              type="date"
              required
              value={from}
              min={dateIn(timeZone, new Date())}
              onInput={(e) => {
                const value = (e.target as HTMLInputElement).value;
                setFrom(value);
                if (value > to) setTo(value);
              }}
            />
          </label>
          <label class="field">
            <span>{t('requests.to')}</span>
            <input
              type="date"
              required
              value={to}
              min={from}
              onInput={(e) => setTo((e.target as HTMLInputElement).value)}
            />
          </label>
          <label class="field">
            <span>{t('requests.reason')}</span>
            <input
              type="text"
              maxLength={500}
              value={reason}
              onInput={(e) => setReason((e.target as HTMLInputElement).value)}
            />
          </label>
          <div class="actions">
            <button type="submit" class="button button-primary" disabled={action.busy}>
              {t('requests.send')}
            </button>
            <button type="button" class="button" onClick={() => setOpen(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      )}
      <Loaded resource={resource} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{t('requests.noTimeOff')}</p>
          ) : (
            <ul class="cards">
              {list.map((timeOff) => (
                <li key={timeOff.id} class="card">
                  <p class="shift-time">{span(timeOff)}</p>
                  <p>
                    <span class={`chip chip-${timeOff.status}`}>{t(`status.${timeOff.status}`)}</span>
                    {timeOff.reason ? ` ${timeOff.reason}` : ''}
                  </p>
                  {timeOff.status === 'requested' && (
                    <ActionButton
                      action={action}
                      then={reload}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/time-off/{id}', { params: { path: { id: timeOff.id } } }),
                        );
                        return undefined;
                      }}
                    >
                      {t('requests.withdrawTimeOff')}
                    </ActionButton>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
