import './timesheets.css';
import { useEffect, useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { addDays, dateIn } from '../../i18n/format.ts';
import { ActionButton, Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { type AdminAction, useAdminAction } from '../ui/action.ts';
import { InputField, TextAreaField } from '../ui/field.tsx';
import { MoreButton, usePages } from '../ui/pages.tsx';
import { byId, personName } from '../ui/people.ts';
import { AdminTable, UnseenHeader } from '../ui/table.tsx';
import { fromLocal, toLocal } from '../ui/wall-time.ts';
import {
  confirmEntry,
  type Delimiter,
  ENTRIES_PAGE,
  exportPayroll,
  loadAllEntries,
  loadEntriesPage,
  offerDownload,
  seatsAround,
} from './calls.ts';

type User = Schemas['UserRecord'];
type Entry = Schemas['TimeEntry'];

/**
 * The entry being corrected: its recorded (or clocked) times, and its shift when known (an
 * entry still clocked in is proposed to end with it).
 */
interface Correction {
  entry: Entry;
  shift?: { starts_at: string; ends_at: string };
}

/**
 * Recorded time: the clocked time waiting for confirmation (confirm as clocked, or correct
 * and confirm), record or correct the time of a seat on a recent shift, the entries,
 * everyone's overtime balance, payouts and the payroll export of a month.
 */
export function Timesheets() {
  const text = useText();
  const { api } = useApp();
  const action = useAdminAction('timesheets');
  // Every change moves entries and balances: both are read again after one.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  const [correction, setCorrection] = useState<Correction | null>(null);
  const [users, reloadUsers] = useResource(() => expectData(api.GET('/api/v1/users')), []);
  return (
    <>
      <h1 tabIndex={-1}>{text('timesheets.heading')}</h1>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={users} retry={reloadUsers}>
        {(list) => {
          const people = byId(list);
          return (
            <div class="timesheets">
              <ToConfirm
                action={action}
                people={people}
                version={version}
                onConfirmed={changed}
                onCorrect={(entry, shift) => setCorrection({ entry, ...(shift ? { shift } : {}) })}
              />
              <RecordTime
                action={action}
                people={people}
                correction={correction}
                onDone={() => {
                  setCorrection(null);
                  changed();
                }}
                onCancel={() => setCorrection(null)}
              />
              <Entries people={people} version={version} onCorrect={(entry) => setCorrection({ entry })} />
              <Balances version={version} />
              <Payout action={action} people={list} onDone={changed} />
              <Export action={action} />
            </div>
          );
        }}
      </Loaded>
    </>
  );
}

/**
 * The time employees clocked, waiting for a manager: who, which shift, what was clocked;
 * `Confirm` books it as clocked, `Correct` opens the form above the entries with it.
 */
function ToConfirm({
  action,
  people,
  version,
  onConfirmed,
  onCorrect,
}: {
  action: AdminAction;
  people: Map<string, User>;
  version: number;
  onConfirmed: () => void;
  onCorrect: (entry: Entry, shift?: { starts_at: string; ends_at: string }) => void;
}) {
  const text = useText();
  const { api, format } = useApp();
  const [waiting, reload] = useResource(async () => {
    const entries = await loadAllEntries(api, { status: 'proposed' });
    const byPerson = new Map<string, string[]>();
    for (const entry of entries)
      byPerson.set(entry.user_id, [...(byPerson.get(entry.user_id) ?? []), entry.started_at]);
    const seats = await seatsAround(
      api,
      [...byPerson].map(([userId, instants]) => ({ userId, instants })),
    );
    return entries.map((entry) => ({ entry, shift: seats.get(entry.shift_assignment_id)?.shift }));
  }, [version]);
  const name = (id: string) => personName(people.get(id), id);
  return (
    <section aria-labelledby="to-confirm" class="timesheets-section">
      <h2 id="to-confirm">{text('timesheets.toConfirm')}</h2>
      <Loaded resource={waiting} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('timesheets.nothingToConfirm')}</p>
          ) : (
            <div class="timesheets-scroll">
              <AdminTable
                caption={text('timesheets.toConfirm')}
                head={
                  <>
                    <th scope="col">{text('timesheets.person')}</th>
                    <th scope="col">{text('timesheets.shiftTime')}</th>
                    <th scope="col">{text('timesheets.clocked')}</th>
                    <UnseenHeader label={text('timesheets.actions')} />
                  </>
                }
              >
                {list.map(({ entry, shift }) => (
                  <tr key={entry.id}>
                    <th scope="row" id={`clocked-${entry.id}`}>
                      {name(entry.user_id)}
                    </th>
                    <td>{shift ? `${shift.name}, ${format.range(shift.starts_at, shift.ends_at)}` : '—'}</td>
                    <td>
                      {entry.ended_at === null
                        ? text('timesheets.clockedFrom', { time: format.dateTime(entry.started_at) })
                        : format.range(entry.started_at, entry.ended_at)}
                    </td>
                    <td>
                      <div class="timesheets-actions">
                        <button
                          type="button"
                          class="button button-primary"
                          aria-describedby={`clocked-${entry.id}`}
                          disabled={action.busy}
                          onClick={() =>
                            void action.run(
                              async () => {
                                await confirmEntry(api, entry.id);
                                onConfirmed();
                                return text('timesheets.confirmed', { name: name(entry.user_id) });
                              },
                              // Confirming as clocked needs an end: the API's 422 for an open entry.
                              entry.ended_at === null
                                ? { VALIDATION_FAILED: text('timesheets.error.openEntry') }
                                : undefined,
                            )
                          }
                        >
                          {text('timesheets.confirm')}
                        </button>
                        <button
                          type="button"
                          class="button"
                          aria-describedby={`clocked-${entry.id}`}
                          onClick={() => onCorrect(entry, shift)}
                        >
                          {text('timesheets.correct')}
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </AdminTable>
            </div>
          )
        }
      </Loaded>
    </section>
  );
}

function RecordTime({
  action,
  people,
  correction,
  onDone,
  onCancel,
}: {
  action: AdminAction;
  people: Map<string, User>;
  correction: Correction | null;
  onDone: () => void;
  onCancel: () => void;
}) {
  const text = useText();
  const { api, timeZone, format } = useApp();
  const today = dateIn(timeZone, new Date());
  const [from, setFrom] = useState(addDays(today, -28));
  const [until, setUntil] = useState(today);
  const [shiftId, setShiftId] = useState('');
  const [assignmentId, setAssignmentId] = useState('');
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [pause, setPause] = useState('0');

  // The shifts of the period (a date is that day's 00:00 in the tenant's zone; until is inclusive).
  const [shifts, reloadShifts] = useResource(
    async () =>
      from && until && until >= from
        ? expectData(api.GET('/api/v1/shifts', { params: { query: { from, to: addDays(until, 1) } } }))
        : [],
    [from, until],
  );
  const [seats, reloadSeats] = useResource(
    async () =>
      shiftId
        ? expectData(
            api.GET('/api/v1/shifts/{shift_id}/assignments', { params: { path: { shift_id: shiftId } } }),
          )
        : [],
    [shiftId],
  );

  const shiftList = shifts.state === 'ready' ? shifts.data : [];
  const chosen = shiftList.find((s) => s.id === shiftId);

  // A shift chosen: its times are the proposal; a correction: the recorded ones.
  useEffect(() => {
    if (chosen) {
      setStart(toLocal(timeZone, chosen.starts_at));
      setEnd(toLocal(timeZone, chosen.ends_at));
      setPause('0');
    }
  }, [chosen?.id]);
  useEffect(() => {
    if (correction) {
      setStart(toLocal(timeZone, correction.entry.started_at));
      setEnd(
        toLocal(
          timeZone,
          correction.entry.ended_at ?? correction.shift?.ends_at ?? correction.entry.started_at,
        ),
      );
      setPause(String(correction.entry.break_minutes));
      document.getElementById('record-time-form')?.focus();
    }
  }, [correction]);
  useEffect(() => {
    if (seats.state === 'ready') setAssignmentId(seats.data[0]?.id ?? '');
  }, [seats]);

  const seat = correction ? correction.entry.shift_assignment_id : assignmentId;
  // A clocked entry is confirmed with the corrections; a recorded one is recorded again.
  const confirming = correction?.entry.status === 'proposed';
  const heading = confirming ? 'timesheets.confirmHeading' : 'timesheets.correctHeading';
  const who = correction
    ? personName(people.get(correction.entry.user_id), correction.entry.user_id)
    : personName(
        people.get(
          seats.state === 'ready' ? (seats.data.find((a) => a.id === assignmentId)?.user_id ?? '') : '',
        ),
        '',
      );

  return (
    <section aria-labelledby="record-time" class="timesheets-section">
      <h2 id="record-time">{text('timesheets.record')}</h2>
      {!correction && (
        <fieldset class="timesheets-row">
          <legend>{text('timesheets.period')}</legend>
          <InputField label={text('timesheets.shiftsFrom')} type="date" value={from} onValue={setFrom} />
          <InputField
            label={text('timesheets.shiftsUntil')}
            type="date"
            value={until}
            min={from}
            onValue={setUntil}
          />
        </fieldset>
      )}
      <form
        id="record-time-form"
        tabIndex={-1}
        class="form"
        aria-label={correction ? text(heading, { name: who }) : text('timesheets.record')}
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              if (correction && confirming) {
                await confirmEntry(api, correction.entry.id, {
                  started_at: fromLocal(timeZone, start),
                  ended_at: fromLocal(timeZone, end),
                  break_minutes: Number(pause || '0'),
                });
                onDone();
                return text('timesheets.confirmed', { name: who });
              }
              const result = await api.POST('/api/v1/time-tracking/entries', {
                body: {
                  shift_assignment_id: seat,
                  started_at: fromLocal(timeZone, start),
                  ended_at: fromLocal(timeZone, end),
                  break_minutes: Number(pause || '0'),
                },
              });
              await expectData(Promise.resolve(result));
              onDone();
              return text(result.response.status === 201 ? 'timesheets.recorded' : 'timesheets.corrected', {
                name: who,
              });
            })
            .then(() => reloadShifts());
        }}
      >
        {correction ? (
          <h3>{text(heading, { name: who })}</h3>
        ) : (
          <>
            <Loaded resource={shifts} retry={reloadShifts}>
              {(list) =>
                list.length === 0 ? (
                  <p class="muted">{text('timesheets.noShifts')}</p>
                ) : (
                  <label class="field">
                    <span>{text('timesheets.shift')}</span>
                    <select
                      required
                      value={shiftId}
                      onChange={(e) => setShiftId((e.target as HTMLSelectElement).value)}
                    >
                      <option value="">{text('timesheets.chooseShift')}</option>
                      {list.map((shift) => (
                        <option key={shift.id} value={shift.id}>
                          {`${shift.name}, ${format.range(shift.starts_at, shift.ends_at)}`}
                        </option>
                      ))}
                    </select>
                  </label>
                )
              }
            </Loaded>
            {shiftId && (
              <Loaded resource={seats} retry={reloadSeats}>
                {(list) =>
                  list.length === 0 ? (
                    <p class="muted">{text('timesheets.noSeats')}</p>
                  ) : (
                    <label class="field">
                      <span>{text('timesheets.person')}</span>
                      <select
                        required
                        value={assignmentId}
                        onChange={(e) => setAssignmentId((e.target as HTMLSelectElement).value)}
                      >
                        {list.map((a) => (
                          <option key={a.id} value={a.id}>
                            {personName(people.get(a.user_id), a.user_id)}
                          </option>
                        ))}
                      </select>
                    </label>
                  )
                }
              </Loaded>
            )}
          </>
        )}
        <div class="timesheets-row">
          <InputField
            label={text('timesheets.start')}
            type="datetime-local"
            required
            value={start}
            onValue={setStart}
          />
          <InputField
            label={text('timesheets.end')}
            type="datetime-local"
            required
            value={end}
            min={start}
            onValue={setEnd}
          />
          <InputField
            label={text('timesheets.break')}
            type="number"
            min={0}
            max={10080}
            step={1}
            value={pause}
            onValue={setPause}
          />
        </div>
        <p class="muted">{text('timesheets.zone', { zone: timeZone })}</p>
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy || !seat}>
            {confirming
              ? text('timesheets.confirmCorrected')
              : correction
                ? text('timesheets.saveCorrection')
                : text('timesheets.recordButton')}
          </button>
          {correction && (
            <button type="button" class="button" onClick={onCancel}>
              {text('admin.cancel')}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

function Entries({
  people,
  version,
  onCorrect,
}: {
  people: Map<string, User>;
  version: number;
  onCorrect: (entry: Entry) => void;
}) {
  const text = useText();
  const { api, format } = useApp();
  const [userId, setUserId] = useState('');
  const pages = usePages((after?: string) => loadEntriesPage(api, { userId, after }), [userId, version]);
  const name = (id: string) => personName(people.get(id), id);
  return (
    <section aria-labelledby="entries" class="timesheets-section">
      <h2 id="entries">{text('timesheets.entries')}</h2>
      <label class="field timesheets-filter">
        <span>{text('timesheets.filterPerson')}</span>
        <select value={userId} onChange={(e) => setUserId((e.target as HTMLSelectElement).value)}>
          <option value="">{text('timesheets.everyone')}</option>
          {[...people.values()].map((user) => (
            <option key={user.id} value={user.id}>
              {name(user.id)}
            </option>
          ))}
        </select>
      </label>
      <Loaded resource={pages.first} retry={pages.reload}>
        {(page) => {
          const shown = pages.joined(page);
          const { entries } = shown;
          if (entries.length === 0) return <p class="muted">{text('timesheets.noEntries')}</p>;
          return (
            <>
              <div class="timesheets-scroll">
                <AdminTable
                  caption={text('timesheets.entries')}
                  head={
                    <>
                      <th scope="col">{text('timesheets.person')}</th>
                      <th scope="col">{text('timesheets.worked')}</th>
                      <th scope="col" class="number">
                        {text('timesheets.break')}
                      </th>
                      <th scope="col" class="number">
                        {text('timesheets.workedMinutes')}
                      </th>
                      <th scope="col" class="number">
                        {text('timesheets.scheduled')}
                      </th>
                      <th scope="col" class="number">
                        {text('timesheets.overtime')}
                      </th>
                      <th scope="col">{text('timesheets.status')}</th>
                      <UnseenHeader label={text('timesheets.actions')} />
                    </>
                  }
                >
                  {entries.map((entry) => (
                    <tr key={entry.id}>
                      <th scope="row" id={`entry-${entry.id}`}>
                        {name(entry.user_id)}
                      </th>
                      <td>
                        {entry.ended_at === null
                          ? format.dateTime(entry.started_at)
                          : format.range(entry.started_at, entry.ended_at)}
                      </td>
                      <td class="number">{format.minutes(entry.break_minutes)}</td>
                      <td class="number">
                        {entry.worked_minutes === null ? '' : format.minutes(entry.worked_minutes)}
                      </td>
                      <td class="number">{format.minutes(entry.scheduled_minutes)}</td>
                      <td class="number">
                        {entry.overtime_minutes === null ? '' : format.minutes(entry.overtime_minutes)}
                      </td>
                      <td>{text(`timesheets.status.${entry.status}`)}</td>
                      <td>
                        <button
                          type="button"
                          class="button"
                          aria-describedby={`entry-${entry.id}`}
                          onClick={() => onCorrect(entry)}
                        >
                          {text('timesheets.correct')}
                        </button>
                      </td>
                    </tr>
                  ))}
                </AdminTable>
              </div>
              <MoreButton
                pages={pages}
                shown={shown}
                label={text('timesheets.more', { count: ENTRIES_PAGE })}
              />
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

function Balances({ version }: { version: number }) {
  const text = useText();
  const { api, format } = useApp();
  const [balances, reload] = useResource(
    () => expectData(api.GET('/api/v1/time-tracking/balances')),
    [version],
  );
  return (
    <section aria-labelledby="balances" class="timesheets-section">
      <h2 id="balances">{text('timesheets.balances')}</h2>
      <Loaded resource={balances} retry={reload}>
        {(list) => (
          <AdminTable
            caption={text('timesheets.balances')}
            head={
              <>
                <th scope="col">{text('timesheets.person')}</th>
                <th scope="col" class="number">
                  {text('timesheets.balance')}
                </th>
                <th scope="col">{text('timesheets.lastChange')}</th>
              </>
            }
          >
            {list.map((balance) => (
              <tr key={balance.user_id}>
                <th scope="row">{balance.name ?? text('timesheets.noName')}</th>
                <td class="number">{format.minutes(balance.balance_minutes)}</td>
                <td>{balance.updated_at ? format.dateTime(balance.updated_at) : '—'}</td>
              </tr>
            ))}
          </AdminTable>
        )}
      </Loaded>
    </section>
  );
}

function Payout({ action, people, onDone }: { action: AdminAction; people: User[]; onDone: () => void }) {
  const text = useText();
  const { api, format } = useApp();
  const [userId, setUserId] = useState('');
  const [minutes, setMinutes] = useState('');
  const [note, setNote] = useState('');
  return (
    <section aria-labelledby="payout" class="timesheets-section">
      <h2 id="payout">{text('timesheets.payout')}</h2>
      <form
        class="form"
        aria-labelledby="payout"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const paid = await expectData(
              api.POST('/api/v1/time-tracking/payouts', {
                body: {
                  user_id: userId,
                  minutes: Number(minutes),
                  note: note.trim() === '' ? null : note.trim(),
                },
              }),
            );
            setMinutes('');
            setNote('');
            onDone();
            return text('timesheets.paid', {
              minutes: format.minutes(paid.minutes),
              name: personName(
                people.find((u) => u.id === paid.user_id),
                paid.user_id,
              ),
            });
          });
        }}
      >
        <div class="timesheets-row">
          <label class="field">
            <span>{text('timesheets.person')}</span>
            <select
              required
              value={userId}
              onChange={(e) => setUserId((e.target as HTMLSelectElement).value)}
            >
              <option value="">{text('timesheets.choosePerson')}</option>
              {people.map((user) => (
                <option key={user.id} value={user.id}>
                  {personName(user, user.id)}
                </option>
              ))}
            </select>
          </label>
          <InputField
            label={text('timesheets.minutes')}
            type="number"
            required
            min={1}
            step={1}
            value={minutes}
            onValue={setMinutes}
          />
        </div>
        <TextAreaField
          label={text('timesheets.note')}
          maxLength={2000}
          rows={2}
          value={note}
          onValue={setNote}
        />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {text('timesheets.payoutButton')}
          </button>
        </div>
      </form>
    </section>
  );
}

const delimiters: Delimiter[] = ['comma', 'semicolon', 'tab'];

function Export({ action }: { action: AdminAction }) {
  const text = useText();
  const { api, timeZone, language } = useApp();
  const [month, setMonth] = useState(dateIn(timeZone, new Date()).slice(0, 7));
  // German spreadsheets read semicolons (and decimal commas, the API's default with them).
  const [delimiter, setDelimiter] = useState<Delimiter>(language === 'de' ? 'semicolon' : 'comma');
  return (
    <section aria-labelledby="export" class="timesheets-section">
      <h2 id="export">{text('timesheets.export')}</h2>
      <div class="timesheets-row">
        <InputField label={text('timesheets.month')} type="month" required value={month} onValue={setMonth} />
        <label class="field">
          <span>{text('timesheets.delimiter')}</span>
          <select
            value={delimiter}
            onChange={(e) => setDelimiter((e.target as HTMLSelectElement).value as Delimiter)}
          >
            {delimiters.map((d) => (
              <option key={d} value={d}>
                {text(`timesheets.delimiter.${d}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted">{text('timesheets.exportHint')}</p>
      <div class="actions">
        <ActionButton
          action={action}
          variant="primary"
          run={async () => {
            const { file, name } = await exportPayroll(api, { month, delimiter });
            offerDownload(file, name);
            return text('timesheets.exported', { name });
          }}
        >
          {text('timesheets.exportButton')}
        </ActionButton>
      </div>
    </section>
  );
}
