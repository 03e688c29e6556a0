import './approvals.css';
import { useRef, useState } from 'preact/hooks';
import { ApiError, expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { type Action, Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { Refusal, useAdminAction } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';

type Offer = Schemas['Offer'];
type TimeOff = Schemas['TimeOff'];
type Item = { kind: 'offer'; at: string; offer: Offer } | { kind: 'timeOff'; at: string; timeOff: TimeOff };

/** A person's name as the admin reads it, from the tenant's users. */
type NameOf = (userId: string | null) => string;

/**
 * One inbox for what waits for an admin: offers a colleague has taken (`accepted`: the seat
 * moves once approved) and time off requested, oldest first, each with what it changes.
 */
export function Approvals() {
  const { api } = useApp();
  const text = useText();
  const action = useAdminAction();
  const heading = useRef<HTMLHeadingElement>(null);
  const [resource, reload] = useResource(async () => {
    const [users, offers, timeOff, balances, roles] = await Promise.all([
      expectData(api.GET('/api/v1/users')),
      expectData(api.GET('/api/v1/offers', { params: { query: { status: 'accepted', limit: '500' } } })),
      expectData(api.GET('/api/v1/time-off', { params: { query: { status: 'requested', limit: '500' } } })),
      balancesOf(),
      expectData(api.GET('/api/v1/roles')),
    ]);
    const items: Item[] = [
      ...offers.map((offer): Item => ({ kind: 'offer', at: offer.created_at, offer })),
      ...timeOff.map((request): Item => ({ kind: 'timeOff', at: request.created_at, timeOff: request })),
    ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    const names = new Map(users.map((user) => [user.id, user.display_name ?? user.email ?? '']));
    return { items, names, balances, roles: new Map(roles.map((role) => [role.id, role.name])) };
  }, []);

  /**
   * Everyone's overtime balance in one read (each time-off card shows its person's), or
   * null while the tenant does not track time (404).
   */
  async function balancesOf(): Promise<Map<string, number> | null> {
    try {
      const all = await expectData(api.GET('/api/v1/time-tracking/balances'));
      return new Map(all.map((balance) => [balance.user_id, balance.balance_minutes]));
    } catch (error) {
      if (error instanceof ApiError && error.problem.status === 404) return null;
      throw error;
    }
  }

  /**
   * After a decision the item leaves: keep the keyboard on the screen first (the button
   * that was pressed disappears with the re-read), then read the inbox again.
   */
  const decided = async (done: boolean) => {
    if (done) heading.current?.focus();
    await reload();
  };

  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {text('approvals.heading')}
      </h1>
      <p class="muted">{text('approvals.lead')}</p>
      <OutcomeMessage outcome={action.outcome} />
      <section aria-labelledby="approvals-inbox">
        <h2 id="approvals-inbox" class="visually-hidden">
          {text('approvals.inbox')}
        </h2>
        <Loaded resource={resource} retry={reload}>
          {({ items, names, balances, roles }) => {
            const nameOf: NameOf = (id) =>
              id === null ? text('approvals.nobody') : names.get(id) || text('approvals.unnamed');
            if (items.length === 0) return <p class="empty">{text('approvals.empty')}</p>;
            return (
              <>
                <p class="muted">{text('approvals.count', { count: items.length })}</p>
                <ol class="cards approvals">
                  {items.map((item) =>
                    item.kind === 'offer' ? (
                      <li key={item.offer.id}>
                        <OfferCard
                          offer={item.offer}
                          roles={roles}
                          nameOf={nameOf}
                          action={action}
                          then={decided}
                        />
                      </li>
                    ) : (
                      <li key={item.timeOff.id}>
                        <TimeOffCard
                          timeOff={item.timeOff}
                          balance={balances === null ? null : (balances.get(item.timeOff.user_id) ?? 0)}
                          nameOf={nameOf}
                          action={action}
                          then={decided}
                        />
                      </li>
                    ),
                  )}
                </ol>
              </>
            );
          }}
        </Loaded>
      </section>
    </>
  );
}

interface CardProps {
  nameOf: NameOf;
  action: Action;
  /** After a decision, with whether it was taken. */
  then: (done: boolean) => unknown;
}

function OfferCard({
  offer,
  roles,
  nameOf,
  action,
  then,
}: CardProps & { offer: Offer; roles: ReadonlyMap<string, string> }) {
  const { api, format } = useApp();
  const text = useText();
  const [impact, reload] = useResource(async () => {
    const path = { params: { path: { id: offer.shift_id } } };
    const shift = await api.GET('/api/v1/shifts/{id}', path);
    if (!shift.data) return null;
    const [slots, seats] = await Promise.all([
      expectData(api.GET('/api/v1/shifts/{id}/slots', path)),
      expectData(
        api.GET('/api/v1/shifts/{shift_id}/assignments', { params: { path: { shift_id: offer.shift_id } } }),
      ),
    ]);
    const seat = seats.find((s) => s.id === offer.assignment_id);
    const slot = slots.find((s) => s.id === seat?.slot_id);
    return {
      shift: shift.data,
      role: (slot && roles.get(slot.role_id)) ?? null,
      filled: slots.reduce((sum, s) => sum + s.filled_count, 0),
      needed: slots.reduce((sum, s) => sum + s.capacity, 0),
    };
  }, [offer.id]);
  const from = nameOf(offer.from_user_id);
  const to = nameOf(offer.accepted_by);
  const id = `offer-${offer.id}`;
  const shiftName = impact.state === 'ready' && impact.data ? impact.data.shift.name : '';
  const when =
    impact.state === 'ready' && impact.data
      ? format.range(impact.data.shift.starts_at, impact.data.shift.ends_at)
      : '';
  const call = { params: { path: { id: offer.id } } };
  return (
    <article class="card approval" aria-labelledby={id}>
      <h3 id={id}>{text('approvals.offerHeading', { from, to })}</h3>
      <p class="muted">{text('approvals.asked', { time: format.dateTime(offer.created_at) })}</p>
      <dl class="approval-facts">
        <dt>{text('approvals.gives')}</dt>
        <dd>{from}</dd>
        <dt>{text('approvals.takes')}</dt>
        <dd>{to}</dd>
      </dl>
      <Loaded resource={impact} retry={reload}>
        {(found) =>
          found === null ? (
            <p>{text('approvals.shiftGone')}</p>
          ) : (
            <dl class="approval-facts">
              <dt>{text('approvals.shift')}</dt>
              <dd>
                {found.shift.name}, {format.range(found.shift.starts_at, found.shift.ends_at)}
              </dd>
              {found.role && (
                <>
                  <dt>{text('approvals.seat')}</dt>
                  <dd>{found.role}</dd>
                </>
              )}
              <dt>{text('approvals.coverage')}</dt>
              <dd>{text('approvals.coverageValue', { filled: found.filled, needed: found.needed })}</dd>
            </dl>
          )
        }
      </Loaded>
      <Decision
        action={action}
        then={then}
        describedBy={id}
        approve={async () => {
          await expectData(api.POST('/api/v1/offers/{id}/approve', call));
          return text('approvals.approvedOffer', { shift: `${shiftName} ${when}`.trim(), from, to });
        }}
        reject={async (reason) => {
          await expectData(api.POST('/api/v1/offers/{id}/reject', { ...call, body: reasonBody(reason) }));
          return text('approvals.rejectedOffer', { shift: `${shiftName} ${when}`.trim(), from });
        }}
      />
    </article>
  );
}

function TimeOffCard({
  timeOff,
  balance,
  nameOf,
  action,
  then,
}: CardProps & { timeOff: TimeOff; balance: number | null }) {
  const { api, format } = useApp();
  const text = useText();
  const [impact, reload] = useResource(async () => {
    // The person's seats overlapping the span, read for them in one call.
    const seats = await expectData(
      api.GET('/api/v1/users/{id}/assignments', {
        params: {
          path: { id: timeOff.user_id },
          query: { from: timeOff.starts_at, to: timeOff.ends_at },
        },
      }),
    );
    return { seats: seats.map((seat) => seat.shift), balance };
  }, [timeOff.id, balance]);

  const name = nameOf(timeOff.user_id);
  // Whole days: the last one is the day before `ends_at` (its start, exclusive).
  const first = format.day(timeOff.starts_at);
  const last = format.day(new Date(Date.parse(timeOff.ends_at) - 1));
  const span = first === last ? first : `${first} – ${last}`;
  const id = `time-off-${timeOff.id}`;
  const call = { params: { path: { id: timeOff.id } } };
  return (
    <article class="card approval" aria-labelledby={id}>
      <h3 id={id}>{text('approvals.timeOffHeading', { name })}</h3>
      <p class="muted">{text('approvals.requested', { time: format.dateTime(timeOff.created_at) })}</p>
      <dl class="approval-facts">
        <dt>{text('approvals.when')}</dt>
        <dd>{span}</dd>
        <dt>{text('approvals.theirReason')}</dt>
        <dd>{timeOff.reason ?? text('approvals.noReason')}</dd>
      </dl>
      <Loaded resource={impact} retry={reload}>
        {({ seats, balance }) => (
          <dl class="approval-facts">
            <dt>{text('approvals.seatsThen')}</dt>
            <dd>
              {seats.length === 0 ? (
                text('approvals.noSeats')
              ) : (
                <ul class="approval-seats">
                  {seats.map((shift) => (
                    <li key={shift.id}>
                      {shift.name}, {format.range(shift.starts_at, shift.ends_at)}
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>{text('approvals.balance')}</dt>
            <dd>{balance === null ? text('approvals.noTracking') : format.minutes(balance)}</dd>
          </dl>
        )}
      </Loaded>
      <Decision
        action={action}
        then={then}
        describedBy={id}
        approve={async () => {
          try {
            await expectData(api.POST('/api/v1/time-off/{id}/approve', call));
          } catch (error) {
            if (error instanceof ApiError && error.problem.code === 'OVERLAPPING_ASSIGNMENT')
              throw new Refusal(text('approvals.overlap', { name }));
            throw error;
          }
          return text('approvals.approvedTimeOff', { name, span });
        }}
        reject={async (reason) => {
          await expectData(api.POST('/api/v1/time-off/{id}/reject', { ...call, body: reasonBody(reason) }));
          return text('approvals.rejectedTimeOff', { name, span });
        }}
      />
    </article>
  );
}

/** The body of a decision: the reason the admin typed, trimmed; none when they typed nothing. */
const reasonBody = (reason: string) => (reason.trim() === '' ? {} : { reason: reason.trim() });

/**
 * Approve at once; reject after a second step with a reason field. The reason goes with
 * the rejection (one line, as the API takes it): the person reads it on their request, or
 * in the notification of a handover.
 */
function Decision({
  action,
  then,
  describedBy,
  approve,
  reject,
}: {
  action: Action;
  then: (done: boolean) => unknown;
  describedBy: string;
  approve: () => Promise<string>;
  reject: (reason: string) => Promise<string>;
}) {
  const text = useText();
  const { t } = useApp();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const reasonId = `${describedBy}-reason`;
  if (!rejecting) {
    return (
      <div class="actions">
        <button
          type="button"
          class="button button-primary"
          aria-describedby={describedBy}
          disabled={action.busy}
          onClick={() => void action.run(approve).then(then)}
        >
          {text('approvals.approve')}
        </button>
        <button
          type="button"
          class="button button-danger"
          aria-describedby={describedBy}
          disabled={action.busy}
          onClick={() => setRejecting(true)}
        >
          {text('approvals.reject')}
        </button>
      </div>
    );
  }
  return (
    <form
      class="form approval-reject"
      aria-labelledby={`${reasonId}-legend`}
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(() => reject(reason)).then(then);
      }}
    >
      <h4 id={`${reasonId}-legend`}>{text('approvals.rejectForm')}</h4>
      <InputField
        label={text('approvals.rejectReason')}
        type="text"
        maxLength={500}
        value={reason}
        aria-describedby={`${reasonId}-hint`}
        onValue={setReason}
      />
      <p id={`${reasonId}-hint`} class="muted">
        {text('approvals.rejectHint')}
      </p>
      <div class="actions">
        <button type="submit" class="button button-danger" disabled={action.busy}>
          {text('approvals.confirmReject')}
        </button>
        <button type="button" class="button" onClick={() => setRejecting(false)}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
