import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { useApp } from './app-context.ts';
import { appBase } from './config.ts';
import { paths } from './routes.ts';
import { Me } from './screens/me.tsx';
import { MyShifts } from './screens/my-shifts.tsx';
import { MyTime } from './screens/my-time.tsx';
import { OpenShifts } from './screens/open-shifts.tsx';
import { Requests } from './screens/requests.tsx';
import { ShiftDetail } from './screens/shift-detail.tsx';
import { Icon } from './ui/icons.tsx';

// The manager's desk is its own chunk: staff never load it (web/scripts/bundle-size.ts).
const admin = () => import('./admin/index.tsx');
const Schedule = lazy(() => admin().then((m) => m.Schedule));
const Approvals = lazy(() => admin().then((m) => m.Approvals));
const People = lazy(() => admin().then((m) => m.People));
const Timesheets = lazy(() => admin().then((m) => m.Timesheets));
const Settings = lazy(() => admin().then((m) => m.Settings));

const management = [
  { href: paths.schedule, key: 'nav.schedule' },
  { href: paths.approvals, key: 'nav.approvals' },
  { href: paths.people, key: 'nav.people' },
  { href: paths.timesheets, key: 'nav.timesheets' },
  { href: paths.settings, key: 'nav.settings' },
] as const;

const adminPaths: readonly string[] = management.map((item) => item.href);

/** Admins' links to the manager's screens, above the screen. */
function ManageNavigation() {
  const { t } = useApp();
  const { path } = useLocation();
  return (
    <nav class="manage" aria-label={t('nav.manage')}>
      <ul>
        {management.map((item) => (
          <li key={item.href}>
            <a href={item.href} aria-current={path.startsWith(item.href) ? 'page' : undefined}>
              {t(item.key)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const navigation = [
  { href: paths.myShifts, key: 'nav.myShifts', icon: 'calendar' },
  { href: paths.openShifts, key: 'nav.openShifts', icon: 'plus' },
  { href: paths.requests, key: 'nav.requests', icon: 'swap' },
  { href: paths.myTime, key: 'nav.myTime', icon: 'clock' },
  { href: paths.me, key: 'nav.me', icon: 'person' },
] as const;

function Navigation() {
  const { t } = useApp();
  const { path } = useLocation();
  return (
    <nav class="tabs" aria-label={t('nav.label')}>
      <ul>
        {navigation.map((item) => {
          const current = item.href === paths.myShifts ? path === item.href : path.startsWith(item.href);
          return (
            <li key={item.href}>
              <a href={item.href} aria-current={current ? 'page' : undefined}>
                <Icon name={item.icon} />
                <span>{t(item.key)}</span>
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** Moves focus to the new screen's heading after a navigation, as a page load would. */
function FocusOnNavigation({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [path]);
  return <>{children}</>;
}

/** A tapped notification (src/sw/worker.ts) opens its shift in this window. */
function FollowNotifications() {
  const { route } = useLocation();
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const open = (event: MessageEvent) => {
      const message = event.data as { type?: string; url?: unknown } | null;
      if (message?.type !== 'open' || typeof message.url !== 'string' || !message.url.startsWith(appBase))
        return;
      route(new URL(message.url).pathname);
    };
    navigator.serviceWorker.addEventListener('message', open);
    return () => navigator.serviceWorker.removeEventListener('message', open);
  }, [route]);
  return null;
}

/** The screen's frame: the manager's screens take the width of a desktop. */
function Screen({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const wide = adminPaths.some((href) => path.startsWith(href));
  return (
    <main id="content" class={wide ? 'screen screen-wide' : 'screen'}>
      {children}
    </main>
  );
}

export function SignedInApp() {
  const { t, isAdmin } = useApp();
  return (
    <LocationProvider scope={paths.myShifts}>
      <a class="skip-link" href="#content">
        {t('app.skip')}
      </a>
      {isAdmin && <ManageNavigation />}
      <Screen>
        <FocusOnNavigation>
          <Router>
            <Route path={paths.myShifts} component={MyShifts} />
            <Route path={paths.openShifts} component={OpenShifts} />
            <Route path={paths.shiftPattern} component={ShiftDetail} />
            <Route path={paths.requests} component={Requests} />
            <Route path={paths.myTime} component={MyTime} />
            <Route path={paths.me} component={Me} />
            {isAdmin
              ? [
                  <Route key="schedule" path={paths.schedule} component={Schedule} />,
                  <Route key="approvals" path={paths.approvals} component={Approvals} />,
                  <Route key="people" path={paths.people} component={People} />,
                  <Route key="timesheets" path={paths.timesheets} component={Timesheets} />,
                  <Route key="settings" path={paths.settings} component={Settings} />,
                ]
              : []}
            <Route default component={MyShifts} />
          </Router>
        </FocusOnNavigation>
      </Screen>
      <Navigation />
      <FollowNotifications />
    </LocationProvider>
  );
}
