/// <reference lib="dom" />
/**
 * bench/manager-screens: how soon each of the manager's screens answers a click, on the
 * demo tenant and on a large one, and whether the week grid renders a busy week without
 * jank. The real thing throughout: the scheduler from its sources on PGlite (as
 * `npm start`), the built app, Debian's Chromium, signed in as the demo admin through the
 * development provider.
 *
 * - A click's answer: from the click on the screen's link in the Manage navigation
 *   (a capture listener in the page takes `performance.now()`) to the first animation
 *   frame in which the screen's heading and content are shown (a table, list, form or
 *   card: the first answer), and to the first in which nothing says "Loading…" any more
 *   (complete: every card's own details too, such as an approval's impact); polled on
 *   every frame. The first visit of a round includes loading the admin chunk only in
 *   round 1 (a fresh page); each screen is clicked ROUNDS times, from another screen.
 * - Baseline from the same run: the same clicks on the demo tenant (a week of 20 shifts,
 *   4 people); then the tenant grows to PEOPLE people and SHIFTS shifts (one event, 143
 *   shifts a day for five weeks: about 1,000 in the week shown), seats given, time off
 *   asked for, and the clicks are measured again. Printed: medians, the worst click, the
 *   ratio large/demo, and each against the 200 ms the issue names.
 * - The week grid: Schedule opened on the week with about 1,000 shifts, with the
 *   browser's long-animation-frame entries observed (frames over 50 ms): their count,
 *   the longest, and the blocking time (the sum of each frame's time past 50 ms).
 *
 *   npm run bench:manager-screens            (ROUNDS=5 PEOPLE=500 SHIFTS=5000)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../scripts/test-chromium.ts';
import { type Scheduler, spawnScheduler } from '../../web/test/support/scheduler-process.ts';
import { apiAs } from '../../web/test/support/tokens.ts';
import { median } from '../support/harness.ts';

const rounds = Number(process.env.ROUNDS ?? 5);
const peopleCount = Number(process.env.PEOPLE ?? 500);
const shiftCount = Number(process.env.SHIFTS ?? 5000);
const budgetMs = 200;
const days = 35;

const screens = ['Schedule', 'Approvals', 'People', 'Timesheets', 'Settings'] as const;
type ScreenName = (typeof screens)[number];

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'manager-screens-'));
const dist = path.join(scratch, 'dist');
execFileSync(
  process.execPath,
  [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error', '--outDir', dist],
  { cwd: path.join(root, 'web') },
);

/** The API as the demo admin, or as a person of the tenant (the web tests' own helper). */
function apiOf(scheduler: Scheduler) {
  const callers = new Map<string, ReturnType<typeof apiAs>>();
  return async function call<T>(
    method: string,
    url: string,
    body?: unknown,
    as: { subject: string; role: 'admin' | 'employee' } = { subject: 'demo-admin', role: 'admin' },
  ): Promise<{ status: number; body: T }> {
    const key = `${as.role}:${as.subject}`;
    let caller = callers.get(key);
    if (!caller) {
      caller = apiAs(scheduler, as.subject, as.role);
      callers.set(key, caller);
    }
    return (await caller)<T>(method, url, body);
  };
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Monday of this week (UTC calendar), as YYYY-MM-DD. */
function thisMonday(): string {
  const today = new Date();
  const monday = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
  monday.setUTCDate(monday.getUTCDate() - ((monday.getUTCDay() + 6) % 7));
  return monday.toISOString().slice(0, 10);
}

/** Grows the demo tenant; answers how many of its shifts start in the week shown. */
async function grow(scheduler: Scheduler): Promise<number> {
  const api = apiOf(scheduler);
  const must = async <T>(method: string, url: string, body?: unknown, as?: Parameters<typeof api>[3]) => {
    const answer = await api<T>(method, url, body, as);
    if (answer.status >= 300)
      throw new Error(`${method} ${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const roles = await must<{ id: string }[]>('GET', '/roles');
  const roleIds = roles.map((role) => role.id);
  const subjects = Array.from({ length: peopleCount }, (_, i) => `bench-person-${i}`);
  const people: string[] = [];
  await inParallel(subjects, 6, async (subject) => {
    const i = Number(subject.split('-').pop());
    const user = await must<{ id: string }>('POST', '/users', {
      subject,
      name: `Person ${String(i).padStart(3, '0')}`,
      email: `${subject}@example.org`,
      role: 'employee',
      qualifications: roleIds,
    });
    people[i] = user.id;
  });
  const monday = thisMonday();
  const end = new Date(Date.parse(`${monday}T00:00:00Z`) + days * 86_400_000 - 2 * 3_600_000);
  const event = await must<{ id: string }>('POST', '/events', {
    name: 'Season',
    starts_at: `${monday}T00:00:00Z`,
    ends_at: end.toISOString(),
  });
  const perDay = Math.ceil(shiftCount / days);
  const starts = Array.from({ length: perDay }, (_, i) => i);
  await inParallel(starts, 4, async (i) => {
    const minutes = 6 * 60 + ((i * 5) % (14 * 60));
    const hhmm = (m: number) =>
      `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    await must('POST', `/events/${event.id}/shifts/bulk`, {
      name: `Post ${i + 1}`,
      start_time: hhmm(minutes),
      end_time: hhmm(minutes + 4 * 60),
      slots: [{ role_id: roleIds[i % roleIds.length], capacity: 2 }],
    });
  });
  await must('POST', '/shifts/publish', { event_id: event.id });
  await must('POST', `/events/${event.id}/publish`);
  // Seats in the week shown: one person per shift, spread so few overlap (a refusal is skipped).
  const week = await must<{ id: string; slots: { id: string }[] }[]>(
    'GET',
    `/shifts/plan?from=${monday}&to=${new Date(Date.parse(`${monday}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10)}&event_id=${event.id}`,
  );
  await inParallel(
    week.map((shift, j) => ({ shift, person: people[(j * 7) % people.length] as string })),
    6,
    async ({ shift, person }) => {
      const slot = shift.slots[0];
      if (slot) await api('POST', `/shifts/${shift.id}/slots/${slot.id}/assign`, { user_id: person });
    },
  );
  // Time off asked for by 50 people: the approvals inbox has work.
  await inParallel(subjects.slice(0, 50), 6, async (subject) => {
    await api(
      'POST',
      '/me/time-off',
      {
        starts_at: `${monday}T00:00:00Z`,
        ends_at: new Date(Date.parse(`${monday}T00:00:00Z`) + 21 * 86_400_000).toISOString(),
      },
      { subject, role: 'employee' },
    );
  });
  console.log(
    `  grown: ${people.length} more people, ${perDay * days} shifts (${week.length} in this week), 50 time-off requests`,
  );
  return week.length;
}

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/app/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Alex Admin, admin' }).click();
  await page.getByRole('navigation', { name: 'Manage' }).waitFor();
}

interface Answer {
  /** The first frame with the screen's heading and its content (a table, list, form or card). */
  answered: number;
  /** The first frame with nothing on the screen still "Loading…" (every card's details too). */
  complete: number;
}

/** From the click on a screen's link to its first answer and to its complete answer, in ms. */
async function click(page: Page, screen: ScreenName): Promise<Answer> {
  await page.evaluate(() => {
    const w = window as unknown as { clickedAt: number; answeredAt: number };
    w.answeredAt = 0;
    document.addEventListener(
      'click',
      () => {
        w.clickedAt = performance.now();
      },
      { capture: true, once: true },
    );
  });
  await page.getByRole('navigation', { name: 'Manage' }).getByRole('link', { name: screen }).click();
  const answered = await page.waitForFunction(
    (heading) => {
      const w = window as unknown as { clickedAt: number; answeredAt: number };
      const main = document.querySelector('main');
      if (!main || main.querySelector('h1')?.textContent !== heading) return false;
      const loading = main.textContent?.includes('Loading…');
      // Content shown (an empty inbox says so in a paragraph: then nothing is loading either).
      if (!w.answeredAt && (!loading || main.querySelector('table, ol, ul, article, form')))
        w.answeredAt = performance.now();
      if (loading) return false;
      return { answered: w.answeredAt - w.clickedAt, complete: performance.now() - w.clickedAt };
    },
    screen,
    { polling: 'raf', timeout: 120_000 },
  );
  return (await answered.jsonValue()) as Answer;
}

async function measureScreens(page: Page): Promise<Map<ScreenName, Answer[]>> {
  const times = new Map<ScreenName, Answer[]>(screens.map((screen) => [screen, []]));
  for (let round = 0; round < rounds; round++) {
    for (const screen of screens) times.get(screen)?.push(await click(page, screen));
  }
  return times;
}

interface Jank {
  frames: number;
  longestMs: number;
  blockingMs: number;
  renderMs: number;
}

/** Schedule opened on the busy week, with long animation frames observed meanwhile. */
async function weekGrid(page: Page, weekShifts: number): Promise<Jank> {
  await page.getByRole('navigation', { name: 'Manage' }).getByRole('link', { name: 'Approvals' }).click();
  await page.evaluate(() => {
    const seen: { duration: number }[] = [];
    (window as unknown as { frames_: typeof seen }).frames_ = seen;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) seen.push({ duration: entry.duration });
    }).observe({ type: 'long-animation-frame' });
  });
  const renderMs = (await click(page, 'Schedule')).complete;
  // Every card drawn (the grid draws a few hundred a frame), then two more frames, so the
  // frame that painted the last of them is reported.
  await page.waitForFunction(
    (count) => document.querySelectorAll('.shift-open').length >= count,
    weekShifts,
    {
      polling: 'raf',
      timeout: 120_000,
    },
  );
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(null)))),
  );
  const frames = (await page.evaluate(
    () => (window as unknown as { frames_: { duration: number }[] }).frames_,
  )) as { duration: number }[];
  return {
    frames: frames.length,
    longestMs: Math.max(0, ...frames.map((f) => f.duration)),
    blockingMs: frames.reduce((sum, f) => sum + Math.max(0, f.duration - 50), 0),
    renderMs,
  };
}

const scheduler = await spawnScheduler({ WEB_APP_DIR: dist });
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
  const page = await context.newPage();
  await signIn(page, scheduler.base);
  console.log(`manager screens, click to loaded, ${rounds} rounds each\n`);
  const demo = await measureScreens(page);
  const weekShifts = await grow(scheduler);
  await page.reload();
  await page.getByRole('navigation', { name: 'Manage' }).waitFor();
  const large = await measureScreens(page);
  const fmt = (ms: number) => `${ms.toFixed(0).padStart(5)} ms`;
  console.log(
    `\n  ${'screen'.padEnd(11)} ${'demo'.padStart(8)} ${'large'.padStart(8)} ${'worst'.padStart(8)}  large/demo  large/200 ms`,
  );
  for (const kind of ['answered', 'complete'] as const) {
    console.log(
      `  ${kind === 'answered' ? 'first answer (heading and content shown)' : 'complete (nothing still loading)'}`,
    );
    for (const screen of screens) {
      const a = median((demo.get(screen) ?? []).map((t) => t[kind]));
      const largeTimes = (large.get(screen) ?? []).map((t) => t[kind]);
      const b = median(largeTimes);
      console.log(
        `  ${screen.padEnd(11)} ${fmt(a)} ${fmt(b)} ${fmt(Math.max(...largeTimes))}  ${(b / a).toFixed(2).padStart(9)}x  ${(b / budgetMs).toFixed(2).padStart(10)}`,
      );
    }
  }
  const jank = await weekGrid(page, weekShifts);
  const shown = await page.getByRole('main').locator('.shift-open').count();
  console.log(
    `\n  week grid: ${shown} shifts shown, complete in ${jank.renderMs.toFixed(0)} ms; long animation frames (> 50 ms): ${jank.frames}, longest ${jank.longestMs.toFixed(0)} ms, blocking ${jank.blockingMs.toFixed(0)} ms`,
  );
  await context.close();
} finally {
  await browser.close();
  scheduler.child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  rmSync(scheduler.dataDir, { recursive: true, force: true });
}
