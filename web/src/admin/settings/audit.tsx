import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { addDays } from '../../i18n/format.ts';
import { Loaded } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { InputField } from '../ui/field.tsx';
import { MoreButton, usePages } from '../ui/pages.tsx';
import { byId, personName } from '../ui/people.ts';
import { AdminTable } from '../ui/table.tsx';

type Entry = Schemas['AuditEntry'];

interface Filters {
  from: string;
  to: string;
  actor: string;
  target: string;
}

const PAGE = 50;
const none: Filters = { from: '', to: '', actor: '', target: '' };

/** The fields a change touched, from its before and after. */
function changedFields(entry: Entry): string {
  const changes = entry.changes as {
    before?: Partial<Record<string, unknown>>;
    after?: Partial<Record<string, unknown>>;
  };
  return [...new Set([...Object.keys(changes.before ?? {}), ...Object.keys(changes.after ?? {})])].join(', ');
}

/** The audit log, newest first, filtered by period, person and record, a page at a time. */
export function AuditLog() {
  const text = useText();
  const { api, format } = useApp();
  const [draft, setDraft] = useState<Filters>(none);
  const [filters, setFilters] = useState<Filters>(none);
  const page = (after?: string) =>
    expectData(
      api.GET('/api/v1/audit-log', {
        params: {
          query: {
            // Dates are whole days of the tenant's zone; "to" is inclusive here.
            ...(filters.from ? { from: filters.from } : {}),
            ...(filters.to ? { to: addDays(filters.to, 1) } : {}),
            ...(filters.actor ? { actor_id: filters.actor } : {}),
            ...(filters.target.trim() ? { target_id: filters.target.trim() } : {}),
            ...(after ? { after } : {}),
            limit: String(PAGE),
          },
        },
      }),
    ).then((entries) => ({ entries, last: entries.length < PAGE }));
  const [users, reloadUsers] = useResource(() => expectData(api.GET('/api/v1/users')), []);
  const pages = usePages(page, [filters]);
  return (
    <Loaded resource={users} retry={reloadUsers}>
      {(people) => {
        const names = byId(people);
        return (
          <>
            <form
              class="form"
              aria-labelledby="audit-filters"
              onSubmit={(event) => {
                event.preventDefault();
                setFilters({ ...draft });
              }}
            >
              <h3 id="audit-filters">{text('settings.filters')}</h3>
              <div class="settings-row">
                <InputField
                  label={text('settings.from')}
                  type="date"
                  value={draft.from}
                  onValue={(value) => setDraft({ ...draft, from: value })}
                />
                <InputField
                  label={text('settings.to')}
                  type="date"
                  value={draft.to}
                  min={draft.from}
                  onValue={(value) => setDraft({ ...draft, to: value })}
                />
                <label class="field">
                  <span>{text('settings.actor')}</span>
                  <select
                    value={draft.actor}
                    onChange={(e) => setDraft({ ...draft, actor: (e.target as HTMLSelectElement).value })}
                  >
                    <option value="">{text('settings.anyone')}</option>
                    {people.map((user) => (
                      <option key={user.id} value={user.id}>
                        {personName(user, user.id)}
                      </option>
                    ))}
                  </select>
                </label>
                <InputField
                  label={text('settings.target')}
                  type="text"
                  maxLength={36}
                  value={draft.target}
                  onValue={(value) => setDraft({ ...draft, target: value })}
                />
              </div>
              <div class="actions">
                <button type="submit" class="button button-primary">
                  {text('settings.apply')}
                </button>
                <button
                  type="button"
                  class="button"
                  onClick={() => {
                    setDraft(none);
                    setFilters(none);
                  }}
                >
                  {text('settings.clear')}
                </button>
              </div>
            </form>
            <Loaded resource={pages.first} retry={pages.reload}>
              {(firstPage) => {
                const shown = pages.joined(firstPage);
                const { entries } = shown;
                if (entries.length === 0) return <p class="muted">{text('settings.noAudit')}</p>;
                return (
                  <>
                    <div class="settings-scroll">
                      <AdminTable
                        caption={text('settings.audit')}
                        class="settings-audit"
                        head={
                          <>
                            <th scope="col">{text('settings.when')}</th>
                            <th scope="col">{text('settings.who')}</th>
                            <th scope="col">{text('settings.action')}</th>
                            <th scope="col">{text('settings.record')}</th>
                            <th scope="col">{text('settings.fields')}</th>
                          </>
                        }
                      >
                        {entries.map((entry) => (
                          <tr key={entry.id}>
                            <td>{format.dateTime(entry.at)}</td>
                            <td>
                              {entry.actor_user_id
                                ? personName(names.get(entry.actor_user_id), entry.actor_user_id)
                                : text('settings.system')}
                            </td>
                            <td>{entry.action}</td>
                            <td>
                              {entry.target_type}
                              <code>{entry.target_id}</code>
                            </td>
                            <td>{changedFields(entry)}</td>
                          </tr>
                        ))}
                      </AdminTable>
                    </div>
                    <MoreButton pages={pages} shown={shown} label={text('settings.older', { count: PAGE })} />
                  </>
                );
              }}
            </Loaded>
          </>
        );
      }}
    </Loaded>
  );
}
