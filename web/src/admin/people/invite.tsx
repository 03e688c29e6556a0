import { useState } from 'preact/hooks';
import { ApiError, expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import type { Action } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { Refusal } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';

/**
 * Pre-provisions a person (`POST /users`): the subject their identity provider will put in
 * the token, so their first sign-in lands on this record with its role and qualifications.
 */
export function InviteForm({
  roles,
  action,
  onDone,
  onCancel,
}: {
  roles: Schemas['RoleDefinition'][];
  action: Action;
  onDone: () => unknown;
  onCancel: () => void;
}) {
  const { api, t } = useApp();
  const text = useText();
  const [subject, setSubject] = useState('');
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'employee' | 'admin'>('employee');
  const [held, setHeld] = useState<string[]>([]);
  const value = (e: Event) => (e.target as HTMLInputElement).value;
  return (
    <form
      class="form people-form"
      aria-labelledby="invite-heading"
      onSubmit={(event) => {
        event.preventDefault();
        void action
          .run(async () => {
            try {
              await expectData(
                api.POST('/api/v1/users', {
                  body: {
                    subject: subject.trim(),
                    name: name.trim(),
                    email: email.trim() === '' ? null : email.trim(),
                    role,
                    qualifications: held,
                  },
                }),
              );
            } catch (error) {
              if (error instanceof ApiError && error.problem.code === 'DUPLICATE')
                throw new Refusal(text('people.error.DUPLICATE'));
              throw error;
            }
            return text('people.invited', { name: name.trim() });
          })
          .then((done) => {
            if (done) onDone();
          });
      }}
    >
      <h2 id="invite-heading">{text('people.inviteHeading')}</h2>
      <div class="people-fields">
        <InputField
          label={text('people.subject')}
          type="text"
          required
          maxLength={255}
          value={subject}
          aria-describedby="invite-subject-hint"
          onValue={setSubject}
        >
          <small id="invite-subject-hint" class="muted">
            {text('people.subjectHint')}
          </small>
        </InputField>
        <InputField
          label={text('people.name')}
          type="text"
          required
          maxLength={200}
          value={name}
          onValue={setName}
        />
        <InputField
          label={text('people.email')}
          type="email"
          maxLength={320}
          value={email}
          onValue={setEmail}
        />
        <label class="field">
          <span>{text('people.role')}</span>
          <select value={role} onChange={(e) => setRole(value(e) === 'admin' ? 'admin' : 'employee')}>
            <option value="employee">{text('people.role.employee')}</option>
            <option value="admin">{text('people.role.admin')}</option>
          </select>
        </label>
      </div>
      <RoleChoice legend={text('people.qualifications')} roles={roles} held={held} onChange={setHeld} />
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {text('people.invite')}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

/** One checkbox per job role of the tenant: the roles someone may work as. */
export function RoleChoice({
  legend,
  roles,
  held,
  onChange,
}: {
  legend: string;
  roles: Schemas['RoleDefinition'][];
  held: readonly string[];
  onChange: (next: string[]) => void;
}) {
  const text = useText();
  return (
    <fieldset class="people-roles">
      <legend>{legend}</legend>
      {roles.length === 0 ? (
        <p class="muted">{text('people.noRoles')}</p>
      ) : (
        roles.map((role) => (
          <label key={role.id} class="choice">
            <input
              type="checkbox"
              checked={held.includes(role.id)}
              onChange={(e) => {
                const on = (e.target as HTMLInputElement).checked;
                onChange(on ? [...held, role.id] : held.filter((id) => id !== role.id));
              }}
            />
            <span>{role.name}</span>
          </label>
        ))
      )}
    </fieldset>
  );
}
