import { useEffect, useState } from 'preact/hooks';
import { expectData } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { type Language, languageNames, languages } from '../i18n/messages.ts';
import { forgetSnapshots } from '../offline/snapshots.ts';
import { currentSubscription, enablePush, type PushState, pushSupported } from '../push/subscribe.ts';
import { ActionButton, Loaded, OutcomeMessage, useAction } from '../ui/feedback.tsx';
import { useResource } from '../ui/resource.ts';

/** Notifications and my browsers, the calendar link, language, sign out. */
export function Me() {
  const { api, t, format, session, languageChoice, setLanguage } = useApp();
  const action = useAction();
  const [me] = useResource(() => expectData(api.GET('/api/v1/me')), [], 'me');
  const [browsers, reloadBrowsers] = useResource(() => expectData(api.GET('/api/v1/push-subscriptions')), []);
  const [pushState, setPushState] = useState<PushState | null>(() =>
    !pushSupported() ? 'unsupported' : Notification.permission === 'denied' ? 'blocked' : null,
  );
  const [thisEndpoint, setThisEndpoint] = useState<string | null>(null);
  const [calendarUrl, setCalendarUrl] = useState<string | null>(null);
  // Whether a link exists (its address is shown only when it is made: only a hash is kept).
  const [calendar, reloadCalendar] = useResource(async () => {
    const existing = await api.GET('/api/v1/me/calendar-token');
    if (existing.response.status === 404) return null;
    return expectData(Promise.resolve(existing));
  }, []);

  useEffect(() => {
    void currentSubscription().then((subscription) => setThisEndpoint(subscription?.endpoint ?? null));
  }, []);

  return (
    <>
      <h1 tabIndex={-1}>{t('me.heading')}</h1>
      {me.state === 'ready' && <p class="lead">{me.data.display_name ?? me.data.email ?? ''}</p>}
      <OutcomeMessage outcome={action.outcome} />

      <section aria-labelledby="notifications">
        <h2 id="notifications">{t('me.notifications')}</h2>
        {pushState === 'unsupported' ? (
          <p class="muted">{t('me.unsupported')}</p>
        ) : pushState === 'blocked' ? (
          <p class="notice">{t('me.blocked')}</p>
        ) : (
          <ActionButton
            action={action}
            variant="primary"
            then={reloadBrowsers}
            run={async () => {
              const state = await enablePush(api);
              setPushState(state);
              setThisEndpoint((await currentSubscription())?.endpoint ?? null);
              return state === 'enabled' ? t('me.enabled') : undefined;
            }}
          >
            {t('me.enable')}
          </ActionButton>
        )}
        <h3>{t('me.browsers')}</h3>
        <Loaded resource={browsers} retry={reloadBrowsers}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">{t('me.noBrowsers')}</p>
            ) : (
              <ul class="cards">
                {list.map((browser) => (
                  <li key={browser.id} class="card row">
                    <span>
                      {browser.label ?? new URL(browser.endpoint).host}
                      {browser.endpoint === thisEndpoint ? ` (${t('me.thisBrowser')})` : ''}
                      <br />
                      <span class="muted">{t('me.since', { date: format.day(browser.created_at) })}</span>
                    </span>
                    <ActionButton
                      action={action}
                      then={reloadBrowsers}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/push-subscriptions/{id}', {
                            params: { path: { id: browser.id } },
                          }),
                        );
                        return undefined;
                      }}
                    >
                      {t('me.removeBrowser')}
                    </ActionButton>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>

      <section id="calendar" aria-labelledby="calendar-heading">
        <h2 id="calendar-heading">{t('me.calendar')}</h2>
        <p class="muted">{t('me.calendarLead')}</p>
        {!calendarUrl && calendar.state === 'ready' && calendar.data && (
          <p>{t('me.calendarSince', { date: format.day(calendar.data.created_at) })}</p>
        )}
        {calendarUrl && (
          <label class="field">
            <span>{t('me.calendarLink')}</span>
            <input
              type="url"
              readOnly
              value={calendarUrl}
              onFocus={(e) => (e.target as HTMLInputElement).select()}
            />
          </label>
        )}
        <ActionButton
          action={action}
          then={reloadCalendar}
          run={async () => {
            setCalendarUrl((await expectData(api.POST('/api/v1/me/calendar-token'))).url);
            return undefined;
          }}
        >
          {calendarUrl || (calendar.state === 'ready' && calendar.data)
            ? t('me.calendarNew')
            : t('me.calendarCreate')}
        </ActionButton>
      </section>

      <section aria-labelledby="language">
        <h2 id="language">{t('me.language')}</h2>
        <label class="field">
          <span class="visually-hidden">{t('me.language')}</span>
          <select
            value={languageChoice ?? ''}
            onChange={(event) => {
              const value = (event.target as HTMLSelectElement).value;
              const choice = value === '' ? null : (value as Language);
              // Kept on the user record too, so the next device speaks it from the start.
              void api.PATCH('/api/v1/me', { body: { locale: choice } }).catch(() => undefined);
              setLanguage(choice);
            }}
          >
            <option value="">{t('me.languageAuto')}</option>
            {languages.map((language) => (
              <option key={language} value={language} lang={language}>
                {languageNames[language]}
              </option>
            ))}
          </select>
        </label>
      </section>

      <section>
        <button
          type="button"
          class="button"
          onClick={() => {
            forgetSnapshots();
            void session.signOut();
          }}
        >
          {t('me.signOut')}
        </button>
      </section>
    </>
  );
}
