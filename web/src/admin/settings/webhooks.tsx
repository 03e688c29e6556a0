import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';
import { AdminTable, UnseenHeader } from '../ui/table.tsx';
import { DeleteButton } from './catalogues.tsx';

type EventType = Schemas['CreateWebhookRequest']['events'][number];

/** The event types a webhook may receive (the API's list). */
const eventTypes: readonly EventType[] = [
  'shift.published',
  'assignment.created',
  'assignment.removed',
  'offer.updated',
  'time_off.updated',
  'time_entry.recorded',
  'form.submitted',
];

/**
 * Webhooks: list, add (the signing secret is shown once, right after, and kept nowhere),
 * delete, and a webhook's deliveries.
 */
export function Webhooks() {
  const text = useText();
  const { api, format } = useApp();
  const action = useAdminAction();
  const [webhooks, reload] = useResource(() => expectData(api.GET('/api/v1/webhooks')), []);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [created, setCreated] = useState<Schemas['CreatedWebhook'] | null>(null);
  const [copied, setCopied] = useState(false);
  const [openId, setOpenId] = useState<string | null>(null);
  return (
    <>
      <OutcomeMessage outcome={action.outcome} />
      {created && (
        <section class="notice settings-secret" aria-labelledby="secret-heading">
          <h3 id="secret-heading">{text('settings.secretHeading', { url: created.url })}</h3>
          <p>
            <code id="webhook-secret">{created.secret}</code>
          </p>
          <p>{text('settings.secretHint')}</p>
          <div class="actions">
            <button
              type="button"
              class="button"
              aria-describedby="webhook-secret"
              onClick={() =>
                void navigator.clipboard.writeText(created.secret).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              {copied ? text('settings.copied') : text('settings.copy')}
            </button>
            <button type="button" class="button" onClick={() => setCreated(null)}>
              {text('settings.secretDone')}
            </button>
          </div>
        </section>
      )}
      <Loaded resource={webhooks} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('settings.noWebhooks')}</p>
          ) : (
            <AdminTable
              caption={text('settings.webhooks')}
              head={
                <>
                  <th scope="col">{text('settings.url')}</th>
                  <th scope="col">{text('settings.events')}</th>
                  <th scope="col">{text('settings.state')}</th>
                  <UnseenHeader label={text('settings.actions')} />
                </>
              }
            >
              {list.map((hook) => (
                <tr key={hook.id}>
                  <th scope="row" id={`hook-${hook.id}`} class="settings-url">
                    {hook.url}
                  </th>
                  <td>{hook.events.join(', ')}</td>
                  <td>
                    {hook.disabled_at
                      ? text('settings.disabled', {
                          time: format.dateTime(hook.disabled_at),
                          reason: hook.disabled_reason ?? '',
                        })
                      : text('settings.active')}
                  </td>
                  <td class="settings-buttons">
                    <button
                      type="button"
                      class="button"
                      aria-describedby={`hook-${hook.id}`}
                      aria-pressed={openId === hook.id}
                      onClick={() => setOpenId(openId === hook.id ? null : hook.id)}
                    >
                      {text('settings.deliveries')}
                    </button>
                    <DeleteButton
                      describedBy={`hook-${hook.id}`}
                      action={action}
                      then={reload}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } }),
                        );
                        if (openId === hook.id) setOpenId(null);
                        return text('settings.deleted', { name: hook.url });
                      }}
                    />
                  </td>
                </tr>
              ))}
            </AdminTable>
          )
        }
      </Loaded>
      {openId && <Deliveries id={openId} />}
      <form
        class="form"
        aria-labelledby="add-webhook"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              const hook = await expectData(api.POST('/api/v1/webhooks', { body: { url, events } }));
              setCreated(hook);
              setCopied(false);
              setUrl('');
              setEvents([]);
              return text('settings.added', { name: hook.url });
            })
            .then(() => reload());
        }}
      >
        <h3 id="add-webhook">{text('settings.addWebhook')}</h3>
        <InputField
          label={text('settings.url')}
          type="url"
          required
          maxLength={2048}
          placeholder="https://"
          value={url}
          onValue={setUrl}
        />
        <fieldset>
          <legend>{text('settings.events')}</legend>
          <div class="settings-checks">
            {eventTypes.map((type) => (
              <label key={type} class="choice">
                <input
                  type="checkbox"
                  checked={events.includes(type)}
                  onChange={(e) =>
                    setEvents(
                      (e.target as HTMLInputElement).checked
                        ? [...events, type]
                        : events.filter((t) => t !== type),
                    )
                  }
                />
                <span>{type}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {text('settings.addWebhook')}
          </button>
        </div>
      </form>
    </>
  );
}

function Deliveries({ id }: { id: string }) {
  const text = useText();
  const { api, format } = useApp();
  const [deliveries, reload] = useResource(
    () => expectData(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id } } })),
    [id],
  );
  return (
    <section aria-labelledby="deliveries" class="settings-sub">
      <h3 id="deliveries">{text('settings.deliveries')}</h3>
      <Loaded resource={deliveries} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('settings.noDeliveries')}</p>
          ) : (
            <AdminTable
              caption={text('settings.deliveries')}
              head={
                <>
                  <th scope="col">{text('settings.when')}</th>
                  <th scope="col">{text('settings.eventType')}</th>
                  <th scope="col">{text('settings.state')}</th>
                  <th scope="col" class="number">
                    {text('settings.tries')}
                  </th>
                  <th scope="col">{text('settings.answer')}</th>
                  <th scope="col">{text('settings.lastError')}</th>
                </>
              }
            >
              {list.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{format.dateTime(delivery.created_at)}</td>
                  <td>{delivery.event_type}</td>
                  <td>
                    {delivery.status}
                    {delivery.next_retry_at
                      ? ` (${text('settings.nextTry', { time: format.dateTime(delivery.next_retry_at) })})`
                      : ''}
                  </td>
                  <td class="number">{delivery.attempts}</td>
                  <td>
                    {delivery.response_code ?? '—'}
                    {delivery.duration_ms !== null ? `, ${delivery.duration_ms} ms` : ''}
                  </td>
                  <td>{delivery.last_error ?? ''}</td>
                </tr>
              ))}
            </AdminTable>
          )
        }
      </Loaded>
    </section>
  );
}
