import './styles.css';
import { render } from 'preact';
import { createApi, expectData } from './api/client.ts';
import { SignedInApp } from './app.tsx';
import { AppContext, type AppContextValue } from './app-context.ts';
import { callbackPath, createSession, type Session } from './auth/session.ts';
import { type AppConfig, appBase, loadConfig } from './config.ts';
import { formatter } from './i18n/format.ts';
import { chooseLanguage, formatLocale, storeChoice, storedChoice, translator } from './i18n/language.ts';
import type { Language } from './i18n/messages.ts';
import { readSnapshot, saveSnapshot } from './offline/snapshots.ts';
import { registerServiceWorker } from './push/service-worker.ts';
import { SignIn } from './screens/sign-in.tsx';

const root = document.getElementById('app')!;
const configKey = 'shifts.config';

/** The sign-in settings; offline, the ones the last visit read. */
async function config(): Promise<AppConfig | null> {
  try {
    const fresh = await loadConfig();
    localStorage.setItem(configKey, JSON.stringify(fresh));
    return fresh;
  } catch {
    const kept = localStorage.getItem(configKey);
    return kept ? (JSON.parse(kept) as AppConfig) : null;
  }
}

function browserLanguages(): readonly string[] {
  return navigator.languages.length > 0 ? navigator.languages : [navigator.language];
}

function showSignIn(session: Session | null, problem?: string) {
  const language = chooseLanguage(storedChoice(), browserLanguages());
  document.documentElement.lang = language;
  render(
    <SignIn
      t={translator(language)}
      problem={problem}
      onSignIn={session ? () => session.signIn(window.location.href) : undefined}
    />,
    root,
  );
}

/** Tenant settings the screens need (time zone, language), kept for offline starts. */
interface Setting {
  timezone: string;
  locale: string;
  shift_colleagues_visible: boolean;
  /** The signed-in user's role, as the API last said it. */
  admin?: boolean;
}

async function start(): Promise<void> {
  void registerServiceWorker();
  const settings = await config();
  if (!settings?.client_id) return showSignIn(null);
  const session = createSession({ ...settings, client_id: settings.client_id });

  if (window.location.href.startsWith(new URL(callbackPath, appBase).href)) {
    try {
      const next = await session.completeSignIn();
      window.history.replaceState(null, '', next);
    } catch (error) {
      window.history.replaceState(null, '', appBase);
      return showSignIn(session, error instanceof Error ? error.message : String(error));
    }
  }
  const user = await session.user();
  if (!user) return showSignIn(session);
  session.onChange((next) => {
    if (!next) showSignIn(session);
  });

  const api = createApi(session);
  const userKey = user.profile.sub;
  let tenant = readSnapshot<Setting>(userKey, 'tenant')?.data ?? null;
  let choice = storedChoice();
  try {
    // Both at once: the first screen waits for them.
    const [fresh, me] = await Promise.all([
      expectData(api.GET('/api/v1/tenant/settings')),
      expectData(api.GET('/api/v1/me')),
    ]);
    tenant = {
      timezone: fresh.timezone,
      locale: fresh.locale,
      shift_colleagues_visible: fresh.shift_colleagues_visible,
      admin: me.role === 'admin',
    };
    saveSnapshot(userKey, 'tenant', tenant);
    const saved = me.locale ? chooseLanguage(null, [me.locale]) : null;
    if (saved && saved !== choice) {
      choice = saved;
      storeChoice(choice);
    }
  } catch {
    // Offline, or the server is down: the copies kept on this device will do.
  }
  const timeZone = tenant?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;

  const show = (languageChoice: Language | null) => {
    const language = chooseLanguage(languageChoice, browserLanguages(), tenant?.locale);
    document.documentElement.lang = language;
    const t = translator(language);
    document.title = t('app.title');
    const value: AppContextValue = {
      api,
      session,
      userKey,
      language,
      languageChoice,
      timeZone,
      showColleagues: tenant?.shift_colleagues_visible ?? false,
      isAdmin: tenant?.admin ?? false,
      t,
      format: formatter(formatLocale(language, browserLanguages()), timeZone),
      setLanguage(next) {
        storeChoice(next);
        show(next);
      },
    };
    render(
      <AppContext.Provider value={value}>
        <SignedInApp />
      </AppContext.Provider>,
      root,
    );
  };
  show(choice);
}

void start();
