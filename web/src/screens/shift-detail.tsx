import { useState } from 'preact/hooks';
import { expectData } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { paths } from '../routes.ts';
import { ActionButton, Loaded, OutcomeMessage, useAction } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';
import { addressLine, ShiftSummary } from '../ui/shift-summary.tsx';

/**
 * One of my shifts: where, as what, with whom, the event's description; withdraw, offer
 * (to anyone or one colleague) and the way to the calendar link.
 */
export function ShiftDetail({ params }: { params: { id: string } }) {
  const { api, t, showColleagues } = useApp();
  const id = params.id;
  const [resource, reload] = useResource(
    async () => {
      const shift = await expectData(api.GET('/api/v1/shifts/{id}', { params: { path: { id } } }));
      const [event, mine] = await Promise.all([
        expectData(api.GET('/api/v1/events/{id}', { params: { path: { id: shift.event_id } } })),
        expectData(
          api.GET('/api/v1/me/assignments', {
            params: { query: { from: shift.starts_at, to: shift.ends_at } },
          }),
        ),
      ]);
      const seat = mine.find((a) => a.shift_id === shift.id) ?? null;
      // Who else is on it, where the tenant shows that (and only to someone on the shift).
      const colleagues =
        seat && showColleagues
          ? await expectData(
              api.GET('/api/v1/shifts/{shift_id}/colleagues', { params: { path: { shift_id: id } } }),
            )
          : [];
      return { shift, event, seat, colleagues };
    },
    [id, showColleagues],
    `shift.${id}`,
  );
  const action = useAction();
  const [step, setStep] = useState<'none' | 'withdraw' | 'offer'>('none');

  return (
    <>
      <p>
        <a href={paths.myShifts}>← {t('detail.back')}</a>
      </p>
      <h1 tabIndex={-1}>{t('detail.heading')}</h1>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={resource} retry={reload}>
        {({ shift, event, seat, colleagues }) => (
          <>
            <section class="card">
              <ShiftSummary
                facts={{ shift, event, role: seat?.role, location: seat?.location }}
                heading="h2"
              />
              {seat?.location && addressLine(seat.location) && (
                <p class="muted">{addressLine(seat.location)}</p>
              )}
            </section>
            {colleagues.length > 0 && (
              <section aria-labelledby="with">
                <h2 id="with">{t('detail.with')}</h2>
                <ul class="people">
                  {colleagues.map((person) => (
                    <li key={person.id}>
                      {person.name ?? '—'} <span class="chip">{person.role.name}</span>
                    </li>
                  ))}
                </ul>
              </section>
            )}
            {event.description && (
              <section aria-labelledby="about">
                <h2 id="about">{t('detail.about')}</h2>
                <p class="description">{event.description}</p>
              </section>
            )}
            {!seat ? (
              <p class="notice">{t('detail.notMine')}</p>
            ) : (
              <div class="actions">
                {step === 'withdraw' ? (
                  <fieldset class="confirm">
                    <legend>{t('detail.withdrawAsk')}</legend>
                    <ActionButton
                      action={action}
                      variant="danger"
                      then={reload}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/shifts/{shift_id}/assignments/{assignment_id}', {
                            params: { path: { shift_id: shift.id, assignment_id: seat.id } },
                          }),
                        );
                        setStep('none');
                        return t('detail.withdrawn');
                      }}
                    >
                      {t('detail.withdrawConfirm')}
                    </ActionButton>
                    <button type="button" class="button" onClick={() => setStep('none')}>
                      {t('common.cancel')}
                    </button>
                  </fieldset>
                ) : step === 'offer' ? (
                  <OfferForm
                    assignmentId={seat.id}
                    busy={action.busy}
                    onCancel={() => setStep('none')}
                    onSend={(toUserId) =>
                      void action
                        .run(async () => {
                          await expectData(
                            api.POST('/api/v1/assignments/{id}/offer', {
                              params: { path: { id: seat.id } },
                              body: toUserId ? { to_user_id: toUserId } : {},
                            }),
                          );
                          setStep('none');
                          return t('detail.offered');
                        })
                        .then((done) => {
                          if (done) void reload();
                        })
                    }
                  />
                ) : (
                  <>
                    <button type="button" class="button" onClick={() => setStep('offer')}>
                      {t('detail.offer')}
                    </button>
                    <button type="button" class="button" onClick={() => setStep('withdraw')}>
                      {t('detail.withdraw')}
                    </button>
                    <a class="button" href={`${paths.me}#calendar`}>
                      {t('detail.calendar')}
                    </a>
                  </>
                )}
              </div>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

function OfferForm({
  assignmentId,
  busy,
  onSend,
  onCancel,
}: {
  assignmentId: string;
  busy: boolean;
  onSend: (toUserId: string | null) => void;
  onCancel: () => void;
}) {
  const { api, t } = useApp();
  const [to, setTo] = useState<'anyone' | 'colleague'>('anyone');
  const [colleague, setColleague] = useState('');
  const [candidates, reload] = useResource(
    () =>
      expectData(
        api.GET('/api/v1/assignments/{id}/offer-candidates', { params: { path: { id: assignmentId } } }),
      ),
    [assignmentId],
  );
  return (
    <form
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        onSend(to === 'colleague' ? colleague : null);
      }}
    >
      <fieldset>
        <legend>{t('detail.offerHeading')}</legend>
        <label class="choice">
          <input type="radio" name="to" checked={to === 'anyone'} onChange={() => setTo('anyone')} />
          {t('detail.offerAnyone')}
        </label>
        <label class="choice">
          <input type="radio" name="to" checked={to === 'colleague'} onChange={() => setTo('colleague')} />
          {t('detail.offerColleague')}
        </label>
      </fieldset>
      {to === 'colleague' && (
        <Loaded resource={candidates} retry={reload}>
          {(people) =>
            people.length === 0 ? (
              <p class="notice">{t('detail.offerNoCandidates')}</p>
            ) : (
              <label class="field">
                <span>{t('detail.offerWho')}</span>
                <select
                  required
                  value={colleague}
                  onChange={(event) => setColleague((event.target as HTMLSelectElement).value)}
                >
                  <option value="" />
                  {people.map((person) => (
                    <option key={person.id} value={person.id}>
                      {person.name}
                    </option>
                  ))}
                </select>
              </label>
            )
          }
        </Loaded>
      )}
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={busy}>
          {t('detail.offerSend')}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
