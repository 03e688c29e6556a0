import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { addDays } from '../../i18n/format.ts';
import { Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { type AdminKey, useText } from '../text.ts';
import { type AdminAction, useAdminAction } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';
import { AdminTable, UnseenHeader } from '../ui/table.tsx';
import { fromLocal } from '../ui/wall-time.ts';

type Form = Schemas['CustomerForm'];
type Field = Schemas['FormField'];
type Submission = Schemas['FormSubmission'];

const fieldTypes = ['text', 'textarea', 'email', 'tel', 'date', 'number', 'select'] as const;

interface FieldDraft {
  label: string;
  name: string;
  type: Field['type'];
  required: boolean;
  /** select only: the options, comma-separated. */
  options: string;
}

const newField = (): FieldDraft => ({ label: '', name: '', type: 'text', required: false, options: '' });

/** A key for a label when none was given: lowercase letters, digits and _. */
function keyFor(label: string): string {
  const key = label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '');
  return key || 'field';
}

/** Customer forms: list, create, open one's submissions and convert one into an event. */
export function CustomerForms() {
  const text = useText();
  const { api } = useApp();
  const action = useAdminAction();
  const [forms, reload] = useResource(() => expectData(api.GET('/api/v1/forms')), []);
  const [openId, setOpenId] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={forms} retry={reload}>
        {(list) => {
          const opened = list.find((f) => f.id === openId);
          return (
            <>
              {list.length === 0 ? (
                <p class="muted">{text('admin.empty')}</p>
              ) : (
                <AdminTable
                  caption={text('settings.forms')}
                  head={
                    <>
                      <th scope="col">{text('settings.formTitle')}</th>
                      <th scope="col">{text('settings.formAddress')}</th>
                      <th scope="col" class="number">
                        {text('settings.formFields')}
                      </th>
                      <UnseenHeader label={text('settings.actions')} />
                    </>
                  }
                >
                  {list.map((form) => (
                    <tr key={form.id}>
                      <th scope="row" id={`form-${form.id}`}>
                        {form.title}
                      </th>
                      <td>
                        <code>{`/api/v1/f/${form.slug}`}</code>
                      </td>
                      <td class="number">{form.fields.length}</td>
                      <td>
                        <button
                          type="button"
                          class="button"
                          aria-describedby={`form-${form.id}`}
                          aria-pressed={openId === form.id}
                          onClick={() => setOpenId(openId === form.id ? null : form.id)}
                        >
                          {text('settings.submissions')}
                        </button>
                      </td>
                    </tr>
                  ))}
                </AdminTable>
              )}
              {opened && <Submissions form={opened} action={action} />}
            </>
          );
        }}
      </Loaded>
      {creating ? (
        <CreateForm
          action={action}
          onDone={(created) => {
            setCreating(false);
            if (created) void reload();
          }}
        />
      ) : (
        <div class="actions">
          <button type="button" class="button" onClick={() => setCreating(true)}>
            {text('settings.createForm')}
          </button>
        </div>
      )}
    </>
  );
}

function CreateForm({ action, onDone }: { action: AdminAction; onDone: (created: boolean) => void }) {
  const text = useText();
  const { api } = useApp();
  const [title, setTitle] = useState('');
  const [slug, setSlug] = useState('');
  const [fields, setFields] = useState<FieldDraft[]>([newField()]);
  const change = (index: number, patch: Partial<FieldDraft>) =>
    setFields(fields.map((field, i) => (i === index ? { ...field, ...patch } : field)));
  return (
    <form
      class="form"
      aria-labelledby="create-form"
      onSubmit={(event) => {
        event.preventDefault();
        void action
          .run(async () => {
            const created = await expectData(
              api.POST('/api/v1/forms', {
                body: {
                  title,
                  ...(slug.trim() ? { slug: slug.trim() } : {}),
                  fields: fields.map((field) => ({
                    name: field.name.trim() || keyFor(field.label),
                    label: field.label,
                    type: field.type,
                    required: field.required,
                    ...(field.type === 'select'
                      ? {
                          options: field.options
                            .split(',')
                            .map((o) => o.trim())
                            .filter(Boolean),
                        }
                      : {}),
                  })),
                },
              }),
            );
            onDone(true);
            return text('settings.added', { name: created.title });
          })
          .then(() => undefined);
      }}
    >
      <h3 id="create-form">{text('settings.createForm')}</h3>
      <div class="settings-row">
        <InputField
          label={text('settings.formTitle')}
          type="text"
          required
          maxLength={200}
          value={title}
          onValue={setTitle}
        />
        <InputField
          label={text('settings.slug')}
          type="text"
          maxLength={80}
          aria-describedby="slug-hint"
          value={slug}
          onValue={setSlug}
        >
          <small id="slug-hint" class="muted">
            {text('settings.slugHint')}
          </small>
        </InputField>
      </div>
      {fields.map((field, index) => (
        <fieldset key={index} class="settings-field">
          <legend>{text('settings.fieldNumber', { n: index + 1 })}</legend>
          <div class="settings-row">
            <InputField
              label={text('settings.fieldLabel')}
              type="text"
              required
              maxLength={200}
              value={field.label}
              onValue={(value) => change(index, { label: value })}
            />
            <InputField
              label={text('settings.fieldKey')}
              type="text"
              placeholder={keyFor(field.label)}
              value={field.name}
              onValue={(value) => change(index, { name: value })}
            />
            <label class="field">
              <span>{text('settings.fieldType')}</span>
              <select
                value={field.type}
                onChange={(e) =>
                  change(index, { type: (e.target as HTMLSelectElement).value as Field['type'] })
                }
              >
                {fieldTypes.map((type) => (
                  <option key={type} value={type}>
                    {text(`settings.fieldType.${type}` as AdminKey)}
                  </option>
                ))}
              </select>
            </label>
            {field.type === 'select' && (
              <InputField
                label={text('settings.fieldOptions')}
                type="text"
                required
                value={field.options}
                onValue={(value) => change(index, { options: value })}
              />
            )}
          </div>
          <div class="settings-row">
            <label class="choice">
              <input
                type="checkbox"
                checked={field.required}
                onChange={(e) => change(index, { required: (e.target as HTMLInputElement).checked })}
              />
              <span>{text('settings.fieldRequired')}</span>
            </label>
            {fields.length > 1 && (
              <button
                type="button"
                class="button"
                onClick={() => setFields(fields.filter((_, i) => i !== index))}
              >
                {text('settings.removeField', { n: index + 1 })}
              </button>
            )}
          </div>
        </fieldset>
      ))}
      <div class="actions">
        <button type="button" class="button" onClick={() => setFields([...fields, newField()])}>
          {text('settings.addField')}
        </button>
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {text('settings.createForm')}
        </button>
        <button type="button" class="button" onClick={() => onDone(false)}>
          {text('admin.cancel')}
        </button>
      </div>
    </form>
  );
}

/** An answer as text. */
function answer(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The event a submission proposes: the name from an answer that names the occasion (else
 * the form's title), whole days from its first and last date answers.
 */
function proposal(form: Form, submission: Submission): { name: string; start: string; end: string } {
  const data = submission.data as Partial<Record<string, unknown>>;
  const naming = form.fields.find(
    (f) =>
      (f.type === 'text' || f.type === 'textarea') &&
      /name|event|title|occasion|anlass|veranstaltung/i.test(`${f.name} ${f.label}`),
  );
  const named = naming ? answer(data[naming.name]).trim() : '';
  const dates = form.fields
    .filter((f) => f.type === 'date')
    .map((f) => answer(data[f.name]))
    .filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d));
  const first = dates[0];
  const last = dates[dates.length - 1];
  return {
    name: named || form.title,
    start: first ? `${first}T00:00` : '',
    end: last ? `${addDays(last, 1)}T00:00` : '',
  };
}

function Submissions({ form, action }: { form: Form; action: AdminAction }) {
  const text = useText();
  const { api, format } = useApp();
  const [submissions, reload] = useResource(
    () =>
      expectData(api.GET('/api/v1/forms/{form_id}/submissions', { params: { path: { form_id: form.id } } })),
    [form.id],
  );
  const [converting, setConverting] = useState<string | null>(null);
  return (
    <section aria-labelledby="submissions" class="settings-sub">
      <h3 id="submissions">{text('settings.submissionsOf', { title: form.title })}</h3>
      <Loaded resource={submissions} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('settings.noSubmissions')}</p>
          ) : (
            <ul class="cards">
              {list.map((submission) => (
                <li key={submission.id} class="card">
                  <p class="shift-time" id={`submission-${submission.id}`}>
                    {text('settings.submittedAt', { time: format.dateTime(submission.created_at) })}
                  </p>
                  <dl class="settings-answers">
                    {form.fields.map((field) => (
                      <div key={field.name}>
                        <dt>{field.label}</dt>
                        <dd>{answer((submission.data as Partial<Record<string, unknown>>)[field.name])}</dd>
                      </div>
                    ))}
                  </dl>
                  {submission.event_id ? (
                    <p>
                      <span class="chip">{text('settings.converted')}</span>
                    </p>
                  ) : converting === submission.id ? (
                    <Convert
                      form={form}
                      submission={submission}
                      action={action}
                      onDone={(converted) => {
                        setConverting(null);
                        if (converted) void reload();
                      }}
                    />
                  ) : (
                    <button
                      type="button"
                      class="button"
                      aria-describedby={`submission-${submission.id}`}
                      onClick={() => setConverting(submission.id)}
                    >
                      {text('settings.convert')}
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

function Convert({
  form,
  submission,
  action,
  onDone,
}: {
  form: Form;
  submission: Submission;
  action: AdminAction;
  onDone: (converted: boolean) => void;
}) {
  const text = useText();
  const { api, timeZone } = useApp();
  const proposed = proposal(form, submission);
  const [name, setName] = useState(proposed.name);
  const [start, setStart] = useState(proposed.start);
  const [end, setEnd] = useState(proposed.end);
  const heading = `convert-${submission.id}`;
  return (
    <form
      class="form"
      aria-labelledby={heading}
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const created = await expectData(
            api.POST('/api/v1/forms/{form_id}/submissions/{sub_id}/convert', {
              params: { path: { form_id: form.id, sub_id: submission.id } },
              body: { name, starts_at: fromLocal(timeZone, start), ends_at: fromLocal(timeZone, end) },
            }),
          );
          onDone(true);
          return text('settings.convertedTo', { name: created.name });
        });
      }}
    >
      <h4 id={heading}>{text('settings.convertHeading')}</h4>
      <InputField
        label={text('settings.eventName')}
        type="text"
        required
        maxLength={200}
        value={name}
        onValue={setName}
      />
      <div class="settings-row">
        <InputField
          label={text('settings.eventStart')}
          type="datetime-local"
          required
          value={start}
          onValue={setStart}
        />
        <InputField
          label={text('settings.eventEnd')}
          type="datetime-local"
          required
          min={start}
          value={end}
          onValue={setEnd}
        />
      </div>
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {text('settings.convertButton')}
        </button>
        <button type="button" class="button" onClick={() => onDone(false)}>
          {text('admin.cancel')}
        </button>
      </div>
    </form>
  );
}
