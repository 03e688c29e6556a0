import './people.css';
import { useRef, useState } from 'preact/hooks';
import { ApiError, expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { type Action, Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { type AdminText, useText } from '../text.ts';
import { Refusal, useAdminAction } from '../ui/action.ts';
import { AdminTable } from '../ui/table.tsx';
import { InviteForm, RoleChoice } from './invite.tsx';
import { upcomingSeats } from './seats.ts';

type Person = Schemas['UserDetail'];
type RoleFilter = 'all' | 'admin' | 'employee';
type StatusFilter = 'all' | 'active' | 'inactive';
/** The row whose panel is open below it, and which one. */
type Open = { id: string; panel: 'qualifications' | 'deactivate' } | null;

const nameOf = (person: Schemas['UserRecord'], text: AdminText) =>
  person.display_name ?? person.email ?? text('people.unnamed');

/** The tenant's admins and employees: invite, qualifications, deactivate and reactivate. */
export function People() {
  const { api } = useApp();
  const text = useText();
  const action = useAdminAction('people');
  const heading = useRef<HTMLHeadingElement>(null);
  const [inviting, setInviting] = useState(false);
  const [roleFilter, setRoleFilter] = useState<RoleFilter>('all');
  const [statusFilter, setStatusFilter] = useState<StatusFilter>('all');
  const [open, setOpen] = useState<Open>(null);
  const [resource, reload] = useResource(async () => {
    // The list carries each person's qualifications: two calls, however many people.
    const [people, roles] = await Promise.all([
      expectData(api.GET('/api/v1/users')),
      expectData(api.GET('/api/v1/roles')),
    ]);
    return { people, roles };
  }, []);

  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {text('people.heading')}
      </h1>
      <p class="muted">{text('people.lead')}</p>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={resource} retry={reload}>
        {({ people, roles }) => {
          const shown = people.filter(
            (person) =>
              (roleFilter === 'all' || person.role === roleFilter) &&
              (statusFilter === 'all' || person.active === (statusFilter === 'active')),
          );
          return (
            <>
              {inviting ? (
                <InviteForm
                  roles={roles}
                  action={action}
                  onCancel={() => setInviting(false)}
                  onDone={() => {
                    setInviting(false);
                    void reload();
                    heading.current?.focus();
                  }}
                />
              ) : (
                <p>
                  <button type="button" class="button button-primary" onClick={() => setInviting(true)}>
                    {text('people.invite')}
                  </button>
                </p>
              )}
              <fieldset class="people-filters">
                <legend class="visually-hidden">{text('people.filters')}</legend>
                <label class="field">
                  <span>{text('people.role')}</span>
                  <select
                    value={roleFilter}
                    onChange={(e) => setRoleFilter((e.target as HTMLSelectElement).value as RoleFilter)}
                  >
                    <option value="all">{text('people.allRoles')}</option>
                    <option value="admin">{text('people.role.admin')}</option>
                    <option value="employee">{text('people.role.employee')}</option>
                  </select>
                </label>
                <label class="field">
                  <span>{text('people.status')}</span>
                  <select
                    value={statusFilter}
                    onChange={(e) => setStatusFilter((e.target as HTMLSelectElement).value as StatusFilter)}
                  >
                    <option value="all">{text('people.allStatuses')}</option>
                    <option value="active">{text('people.active')}</option>
                    <option value="inactive">{text('people.inactive')}</option>
                  </select>
                </label>
                <p class="muted" aria-live="polite">
                  {text('people.shown', { shown: shown.length, total: people.length })}
                </p>
              </fieldset>
              {shown.length === 0 ? (
                <p class="empty">{text('people.none')}</p>
              ) : (
                <AdminTable
                  caption={text('people.heading')}
                  class="people-table"
                  head={
                    <>
                      <th scope="col">{text('people.name')}</th>
                      <th scope="col">{text('people.email')}</th>
                      <th scope="col">{text('people.role')}</th>
                      <th scope="col">{text('people.qualifications')}</th>
                      <th scope="col">{text('people.status')}</th>
                      <th scope="col">{text('people.actions')}</th>
                    </>
                  }
                >
                  {shown.map((person) => (
                    <PersonRows
                      key={person.id}
                      person={person}
                      roles={roles}
                      action={action}
                      open={open?.id === person.id ? open.panel : null}
                      setOpen={(panel) => setOpen(panel ? { id: person.id, panel } : null)}
                      reload={reload}
                    />
                  ))}
                </AdminTable>
              )}
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/** A person's row, and below it the panel open for them (qualifications, deactivation). */
function PersonRows({
  person,
  roles,
  action,
  open,
  setOpen,
  reload,
}: {
  person: Person;
  roles: Schemas['RoleDefinition'][];
  action: Action;
  open: 'qualifications' | 'deactivate' | null;
  setOpen: (panel: 'qualifications' | 'deactivate' | null) => void;
  reload: () => Promise<void>;
}) {
  const { api } = useApp();
  const text = useText();
  const name = nameOf(person, text);
  const nameId = `person-${person.id}`;
  const qualifications = person.qualifications.map((role) => role.name).join(', ');
  return (
    <>
      <tr>
        <th scope="row" id={nameId}>
          {name}
        </th>
        <td>{person.email ?? text('people.noEmail')}</td>
        <td>{text(`people.role.${person.role}`)}</td>
        <td>{qualifications || text('people.noQualifications')}</td>
        <td>
          <span class={person.active ? 'chip' : 'chip people-inactive'}>
            {text(person.active ? 'people.active' : 'people.inactive')}
          </span>
        </td>
        <td>
          <div class="people-actions">
            <button
              type="button"
              class="button"
              aria-describedby={nameId}
              aria-expanded={open === 'qualifications'}
              onClick={() => setOpen(open === 'qualifications' ? null : 'qualifications')}
            >
              {text('people.editQualifications')}
            </button>
            {person.active ? (
              <button
                type="button"
                class="button button-danger"
                aria-describedby={nameId}
                aria-expanded={open === 'deactivate'}
                onClick={() => setOpen(open === 'deactivate' ? null : 'deactivate')}
              >
                {text('people.deactivate')}
              </button>
            ) : (
              <button
                type="button"
                class="button"
                aria-describedby={nameId}
                disabled={action.busy}
                onClick={() =>
                  void action
                    .run(async () => {
                      await expectData(
                        api.PATCH('/api/v1/users/{id}', {
                          params: { path: { id: person.id } },
                          body: { active: true },
                        }),
                      );
                      return text('people.reactivated', { name });
                    })
                    .then(reload)
                }
              >
                {text('people.reactivate')}
              </button>
            )}
          </div>
        </td>
      </tr>
      {open && (
        <tr class="people-panel">
          <td colSpan={6}>
            {open === 'qualifications' ? (
              <QualificationsEditor
                person={person}
                name={name}
                roles={roles}
                action={action}
                onClose={() => setOpen(null)}
                reload={reload}
              />
            ) : (
              <DeactivatePanel
                person={person}
                name={name}
                action={action}
                onClose={() => setOpen(null)}
                reload={reload}
              />
            )}
          </td>
        </tr>
      )}
    </>
  );
}

interface PanelProps {
  person: Person;
  name: string;
  action: Action;
  onClose: () => void;
  reload: () => Promise<void>;
}

/** Grant and take back job roles: each change is one call, as the API has them. */
function QualificationsEditor({
  person,
  name,
  roles,
  action,
  onClose,
  reload,
}: PanelProps & { roles: Schemas['RoleDefinition'][] }) {
  const { api, t } = useApp();
  const text = useText();
  const before = person.qualifications.map((role) => role.id);
  const [held, setHeld] = useState<string[]>(before);
  return (
    <form
      class="people-form"
      onSubmit={(event) => {
        event.preventDefault();
        void action
          .run(async () => {
            const path = (role_id: string) => ({ params: { path: { id: person.id, role_id } } });
            const granted = held.filter((id) => !before.includes(id));
            const revoked = before.filter((id) => !held.includes(id));
            for (const id of granted)
              await expectData(api.POST('/api/v1/users/{id}/qualifications/{role_id}', path(id)));
            for (const id of revoked)
              await expectData(api.DELETE('/api/v1/users/{id}/qualifications/{role_id}', path(id)));
            return text('people.qualificationsSaved', { name });
          })
          .then((done) => {
            if (done) onClose();
            return reload();
          });
      }}
    >
      <RoleChoice
        legend={text('people.qualificationsOf', { name })}
        roles={roles}
        held={held}
        onChange={setHeld}
      />
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {text('admin.save')}
        </button>
        <button type="button" class="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

/** Before deactivating: the seats it frees, read from the API, and a second question. */
function DeactivatePanel({ person, name, action, onClose, reload }: PanelProps) {
  const { api, format, t } = useApp();
  const text = useText();
  const [seats, retry] = useResource(() => upcomingSeats(api, person.id), [person.id]);
  const headingId = `deactivate-${person.id}`;
  return (
    <section class="people-deactivate" aria-labelledby={headingId}>
      <h2 id={headingId}>{text('people.deactivateHeading', { name })}</h2>
      <Loaded resource={seats} retry={retry}>
        {(shifts) =>
          shifts.length === 0 ? (
            <p>{text('people.freesNothing', { name })}</p>
          ) : (
            <>
              <p>{text('people.frees')}</p>
              <ul class="people-seats">
                {shifts.map((shift) => (
                  <li key={shift.id}>
                    {shift.name}, {format.range(shift.starts_at, shift.ends_at)}
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </Loaded>
      <p>{text('people.deactivateWarning')}</p>
      <div class="actions">
        <button
          type="button"
          class="button button-danger"
          disabled={action.busy || seats.state !== 'ready'}
          onClick={() =>
            void action
              .run(async () => {
                try {
                  await expectData(
                    api.PATCH('/api/v1/users/{id}', {
                      params: { path: { id: person.id } },
                      body: { active: false },
                    }),
                  );
                } catch (error) {
                  // The one refusal of this route: an admin deactivating themselves.
                  if (error instanceof ApiError && error.problem.code === 'INVALID_STATE')
                    throw new Refusal(text('people.error.deactivateSelf'));
                  throw error;
                }
                return text('people.deactivated', { name });
              })
              .then((done) => {
                if (done) onClose();
                return reload();
              })
          }
        >
          {text('people.deactivateConfirm')}
        </button>
        <button type="button" class="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
      </div>
    </section>
  );
}
