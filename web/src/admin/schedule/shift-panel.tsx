import { useEffect, useMemo, useState } from 'preact/hooks';
import { expectData } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { InputField } from '../ui/field.tsx';
import { byId, personName } from '../ui/people.ts';
import { SelectField } from '../ui/select-field.tsx';
import { fromLocal, toLocal } from '../ui/wall-time.ts';
import type { Event, Role, SeatStore, Seats, Shift, User } from './data.ts';
import { ShiftFields } from './shift-form.tsx';

/**
 * One shift opened from the grid: who holds its seats (assign, unassign; a refusal in an
 * admin's words), its name and times (edit), split into pieces, delete (asked once more).
 */
export function ShiftDialog({
  shift,
  events,
  roles,
  users,
  store,
  onClose,
  onChanged,
}: {
  shift: Shift;
  events: readonly Event[];
  roles: readonly Role[];
  users: readonly User[];
  store: SeatStore;
  onClose: () => void;
  /** The shift changed or is gone: the week is read again; `done` says what happened. */
  onChanged: (done: string | undefined, closed: boolean) => void;
}) {
  const { api, format, timeZone } = useApp();
  const text = useText();
  const action = useAdminAction();
  const seats = store.seats.get(shift.id);
  const event = events.find((e) => e.id === shift.event_id);
  useEffect(() => void store.refresh([shift.id]), [shift.id]);
  return (
    <Dialog title={shift.name} onClose={onClose} wide>
      <p class="shift-facts">
        <span>{format.range(shift.starts_at, shift.ends_at)}</span> · <span>{event?.name}</span>{' '}
        <span class={shift.status === 'draft' ? 'chip chip-draft' : 'chip'}>
          {text(shift.status === 'draft' ? 'schedule.draft' : 'schedule.published')}
        </span>
      </p>
      <OutcomeMessage outcome={action.outcome} />
      <SeatsSection shift={shift} seats={seats} roles={roles} users={users} action={action} store={store} />
      <EditSection
        key={`${shift.id}${shift.starts_at}${shift.ends_at}${shift.name}`}
        shift={shift}
        timeZone={timeZone}
        action={action}
        onSaved={() => onChanged(text('schedule.saved'), false)}
      />
      <section aria-labelledby="split-heading">
        <h3 id="split-heading">{text('schedule.split')}</h3>
        <SplitForm
          action={action}
          run={async (n) => {
            const pieces = await expectData(
              api.POST('/api/v1/shifts/{id}/split/{n}', { params: { path: { id: shift.id, n: String(n) } } }),
            );
            onChanged(text('schedule.splitDone', { count: pieces.length }), true);
            return undefined;
          }}
        />
      </section>
      <section aria-labelledby="delete-heading">
        <h3 id="delete-heading">{text('schedule.deleteShift')}</h3>
        <DeleteShift
          action={action}
          run={async () => {
            await expectData(api.DELETE('/api/v1/shifts/{id}', { params: { path: { id: shift.id } } }));
            onChanged(text('schedule.deleted', { shift: shift.name }), true);
            return undefined;
          }}
        />
      </section>
    </Dialog>
  );
}

type Action = ReturnType<typeof useAdminAction>;

function SeatsSection({
  shift,
  seats,
  roles,
  users,
  action,
  store,
}: {
  shift: Shift;
  seats: Seats | undefined;
  roles: readonly Role[];
  users: readonly User[];
  action: Action;
  store: SeatStore;
}) {
  const { api } = useApp();
  const text = useText();
  const named = useMemo(() => byId(users), [users]);
  const people = useMemo(
    () =>
      users.filter((u) => u.active).sort((a, b) => personName(a, a.id).localeCompare(personName(b, b.id))),
    [users],
  );
  const [choice, setChoice] = useState<Record<string, string>>({});
  const refresh = () => store.refresh([shift.id]);
  return (
    <section aria-labelledby="seats-heading">
      <h3 id="seats-heading">{text('schedule.seats')}</h3>
      {!seats ? (
        <p class="muted">{text('admin.loading')}</p>
      ) : seats.slots.length === 0 ? (
        <p class="muted">{text('schedule.noSlots')}</p>
      ) : (
        <ul class="seat-list">
          {seats.slots.map((slot) => {
            const role = roles.find((r) => r.id === slot.role_id)?.name ?? '';
            const holders = seats.assignments.filter((a) => a.slot_id === slot.id);
            const picked = choice[slot.id] ?? '';
            const headingId = `slot-${slot.id}`;
            return (
              <li key={slot.id} class="seat">
                <h4 id={headingId}>
                  {role} · {text('schedule.fill', { filled: slot.filled_count, needed: slot.capacity })}
                </h4>
                {holders.length > 0 && (
                  <ul class="holders">
                    {holders.map((a) => {
                      const name = personName(named.get(a.user_id), a.user_id);
                      return (
                        <li key={a.id}>
                          <span>{name}</span>
                          <button
                            type="button"
                            class="button"
                            disabled={action.busy}
                            onClick={() =>
                              void action
                                .run(async () => {
                                  await expectData(
                                    api.DELETE('/api/v1/shifts/{shift_id}/assignments/{assignment_id}', {
                                      params: { path: { shift_id: shift.id, assignment_id: a.id } },
                                    }),
                                  );
                                  return text('schedule.unassigned', { person: name, role });
                                })
                                .then(refresh)
                            }
                          >
                            {text('schedule.unassign', { person: name })}
                          </button>
                        </li>
                      );
                    })}
                  </ul>
                )}
                <form
                  class="assign-form"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (!picked) return;
                    const name = personName(named.get(picked), picked);
                    void action
                      .run(async () => {
                        await expectData(
                          api.POST('/api/v1/shifts/{shift_id}/slots/{slot_id}/assign', {
                            params: { path: { shift_id: shift.id, slot_id: slot.id } },
                            body: { user_id: picked },
                          }),
                        );
                        return text('schedule.assigned', { person: name, role });
                      })
                      .then(refresh);
                  }}
                >
                  <SelectField
                    label={text('schedule.personFor', { role })}
                    value={picked}
                    onChange={(value) => setChoice({ ...choice, [slot.id]: value })}
                  >
                    <option value="">{text('schedule.choosePerson')}</option>
                    {people.map((u) => (
                      <option key={u.id} value={u.id}>
                        {personName(u, u.id)}
                      </option>
                    ))}
                  </SelectField>
                  <button
                    type="submit"
                    class="button"
                    aria-describedby={headingId}
                    disabled={action.busy || !picked}
                  >
                    {text('schedule.assign')}
                  </button>
                </form>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

function EditSection({
  shift,
  timeZone,
  action,
  onSaved,
}: {
  shift: Shift;
  timeZone: string;
  action: Action;
  onSaved: () => void;
}) {
  const { api } = useApp();
  const text = useText();
  const [name, setName] = useState(shift.name);
  const [start, setStart] = useState(toLocal(timeZone, shift.starts_at));
  const [end, setEnd] = useState(toLocal(timeZone, shift.ends_at));
  return (
    <section aria-labelledby="edit-heading">
      <h3 id="edit-heading">{text('schedule.editShift')}</h3>
      <form
        class="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          const starts_at = fromLocal(timeZone, start);
          const ends_at = fromLocal(timeZone, end);
          const timesChanged =
            Date.parse(starts_at) !== Date.parse(shift.starts_at) ||
            Date.parse(ends_at) !== Date.parse(shift.ends_at);
          void action.run(
            async () => {
              await expectData(
                api.PATCH('/api/v1/shifts/{id}', {
                  params: { path: { id: shift.id } },
                  body: { name: name.trim(), ...(timesChanged ? { starts_at, ends_at } : {}) },
                }),
              );
              onSaved();
              return text('schedule.saved');
            },
            timesChanged ? { INVALID_STATE: text('schedule.error.inUse') } : undefined,
          );
        }}
      >
        <ShiftFields name={name} start={start} end={end} onName={setName} onStart={setStart} onEnd={setEnd} />
        <div>
          <button type="submit" class="button" disabled={action.busy}>
            {text('schedule.saveShift')}
          </button>
        </div>
      </form>
    </section>
  );
}

function SplitForm({ action, run }: { action: Action; run: (n: number) => Promise<undefined> }) {
  const text = useText();
  const [pieces, setPieces] = useState(2);
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(() => run(pieces), { INVALID_STATE: text('schedule.error.inUse') });
      }}
    >
      <InputField
        label={text('schedule.pieces')}
        type="number"
        min={2}
        max={96}
        required
        value={pieces}
        onValue={(value) => setPieces(Number(value))}
      />
      <button type="submit" class="button" disabled={action.busy}>
        {text('schedule.splitButton')}
      </button>
    </form>
  );
}

function DeleteShift({ action, run }: { action: Action; run: () => Promise<undefined> }) {
  const text = useText();
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="button button-danger" onClick={() => setAsking(true)}>
        {text('schedule.deleteShift')}
      </button>
    );
  }
  return (
    <fieldset class="confirm">
      <legend>{text('schedule.deleteAsk')}</legend>
      <button
        type="button"
        class="button button-danger"
        disabled={action.busy}
        // biome-ignore lint/a11y/noAutofocus: the question just asked; the answer is the next step
        autoFocus
        onClick={() => void action.run(run, { INVALID_STATE: text('schedule.error.inUse') })}
      >
        {text('schedule.deleteConfirm')}
      </button>
      <button type="button" class="button" onClick={() => setAsking(false)}>
        {text('schedule.keep')}
      </button>
    </fieldset>
  );
}
