import { expectData } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { addDays, dateIn } from '../i18n/format.ts';
import { ActionButton, Loaded, OutcomeMessage, useAction } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';
import { ShiftSummary } from '../ui/shift-summary.tsx';

/**
 * The shifts I may take in the next 14 days, as the API decides (qualified, free, no
 * overlap, no time off), each slot with its fill and a Claim button. A refusal (someone
 * was quicker) is said in words and the list is read again.
 */
export function OpenShifts() {
  const { api, t, format, timeZone } = useApp();
  const today = dateIn(timeZone, new Date());
  const [resource, reload] = useResource(
    () =>
      expectData(
        api.GET('/api/v1/me/open-shifts', { params: { query: { from: today, to: addDays(today, 14) } } }),
      ),
    [today],
    'open-shifts',
  );
  const claim = useAction();
  return (
    <>
      <h1 tabIndex={-1}>{t('open.heading')}</h1>
      <p class="muted">{t('open.lead')}</p>
      <OutcomeMessage outcome={claim.outcome} />
      <Loaded resource={resource} retry={reload}>
        {(open) =>
          open.length === 0 ? (
            <p class="empty">{t('open.empty')}</p>
          ) : (
            <ul class="cards">
              {open.map((item) => (
                <li key={item.shift.id} class="card">
                  <ShiftSummary facts={item} id={`open-${item.shift.id}`} />
                  <ul class="slots">
                    {item.slots.map((slot) => (
                      <li key={slot.id} class="slot">
                        <span>
                          <span class="chip">{slot.role.name}</span>{' '}
                          {t('common.filled', { filled: slot.filled_count, needed: slot.capacity })}
                        </span>
                        <ActionButton
                          action={claim}
                          describedBy={`open-${item.shift.id}`}
                          variant="primary"
                          then={reload}
                          run={async () => {
                            await expectData(
                              api.POST('/api/v1/shifts/{shift_id}/slots/{slot_id}/claim', {
                                params: { path: { shift_id: item.shift.id, slot_id: slot.id } },
                              }),
                            );
                            return t('open.claimed', {
                              shift: item.shift.name,
                              when: format.range(item.shift.starts_at, item.shift.ends_at),
                            });
                          }}
                        >
                          {t('open.claim')}
                        </ActionButton>
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </>
  );
}
