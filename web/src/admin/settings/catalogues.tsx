import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { ActionButton, Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';
import { AdminTable, UnseenHeader } from '../ui/table.tsx';

/** Job roles: what qualifications grant and slots require. List, add, delete. */
export function Roles() {
  const text = useText();
  const { api } = useApp();
  const action = useAdminAction();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [roles, reload] = useResource(() => expectData(api.GET('/api/v1/roles')), []);
  return (
    <>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={roles} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('admin.empty')}</p>
          ) : (
            <AdminTable
              caption={text('settings.roles')}
              head={
                <>
                  <th scope="col">{text('settings.name')}</th>
                  <th scope="col">{text('settings.description')}</th>
                  <UnseenHeader label={text('settings.actions')} />
                </>
              }
            >
              {list.map((role) => (
                <tr key={role.id}>
                  <th scope="row" id={`role-${role.id}`}>
                    {role.name}
                  </th>
                  <td>{role.description ?? ''}</td>
                  <td>
                    <DeleteButton
                      describedBy={`role-${role.id}`}
                      action={action}
                      then={reload}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/roles/{id}', { params: { path: { id: role.id } } }),
                        );
                        return text('settings.deleted', { name: role.name });
                      }}
                      words={{ INVALID_STATE: text('settings.roleInUse', { name: role.name }) }}
                    />
                  </td>
                </tr>
              ))}
            </AdminTable>
          )
        }
      </Loaded>
      <form
        class="form"
        aria-labelledby="add-role"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              const role = await expectData(
                api.POST('/api/v1/roles', {
                  body: { name, description: description.trim() === '' ? null : description },
                }),
              );
              setName('');
              setDescription('');
              return text('settings.added', { name: role.name });
            })
            .then(() => reload());
        }}
      >
        <h3 id="add-role">{text('settings.addRole')}</h3>
        <div class="settings-row">
          <InputField
            label={text('settings.name')}
            type="text"
            required
            maxLength={100}
            value={name}
            onValue={setName}
          />
          <InputField
            label={text('settings.description')}
            type="text"
            maxLength={2000}
            value={description}
            onValue={setDescription}
          />
        </div>
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {text('settings.addRole')}
          </button>
        </div>
      </form>
    </>
  );
}

/** A delete button of a row; the row's name describes it. */
export function DeleteButton({
  describedBy,
  action,
  run,
  then,
  words,
}: {
  describedBy: string;
  action: ReturnType<typeof useAdminAction>;
  run: () => Promise<string | undefined>;
  then: () => unknown;
  words?: Partial<Record<string, string>>;
}) {
  const text = useText();
  return (
    <ActionButton
      action={{ ...action, run: (act) => action.run(act, words) }}
      variant="danger"
      describedBy={describedBy}
      run={run}
      then={then}
    >
      {text('admin.delete')}
    </ActionButton>
  );
}

function address(location: Schemas['Location']): string {
  const town = [location.postal_code, location.city].filter(Boolean).join(' ');
  return [location.street, town, location.country].filter(Boolean).join(', ');
}

const addressFields = ['street', 'postal_code', 'city', 'country'] as const;

/** Locations: where shifts take place. List, add with an address, delete. */
export function Locations() {
  const text = useText();
  const { api } = useApp();
  const action = useAdminAction();
  const empty = { name: '', street: '', postal_code: '', city: '', country: '' };
  const [draft, setDraft] = useState(empty);
  const [locations, reload] = useResource(() => expectData(api.GET('/api/v1/locations')), []);
  const optional = (value: string) => (value.trim() === '' ? null : value);
  return (
    <>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={locations} retry={reload}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">{text('admin.empty')}</p>
          ) : (
            <AdminTable
              caption={text('settings.locations')}
              head={
                <>
                  <th scope="col">{text('settings.name')}</th>
                  <th scope="col">{text('settings.address')}</th>
                  <UnseenHeader label={text('settings.actions')} />
                </>
              }
            >
              {list.map((location) => (
                <tr key={location.id}>
                  <th scope="row" id={`location-${location.id}`}>
                    {location.name}
                  </th>
                  <td>{address(location)}</td>
                  <td>
                    <DeleteButton
                      describedBy={`location-${location.id}`}
                      action={action}
                      then={reload}
                      run={async () => {
                        await expectData(
                          api.DELETE('/api/v1/locations/{id}', { params: { path: { id: location.id } } }),
                        );
                        return text('settings.deleted', { name: location.name });
                      }}
                    />
                  </td>
                </tr>
              ))}
            </AdminTable>
          )
        }
      </Loaded>
      <form
        class="form"
        aria-labelledby="add-location"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              const location = await expectData(
                api.POST('/api/v1/locations', {
                  body: {
                    name: draft.name,
                    street: optional(draft.street),
                    postal_code: optional(draft.postal_code),
                    city: optional(draft.city),
                    country: optional(draft.country),
                  },
                }),
              );
              setDraft(empty);
              return text('settings.added', { name: location.name });
            })
            .then(() => reload());
        }}
      >
        <h3 id="add-location">{text('settings.addLocation')}</h3>
        <div class="settings-row">
          <InputField
            label={text('settings.name')}
            type="text"
            required
            maxLength={200}
            value={draft.name}
            onValue={(value) => setDraft({ ...draft, name: value })}
          />
          {addressFields.map((field) => (
            <InputField
              key={field}
              label={text(`settings.${field}`)}
              type="text"
              maxLength={field === 'postal_code' ? 32 : 300}
              autoComplete={
                {
                  street: 'street-address',
                  postal_code: 'postal-code',
                  city: 'address-level2',
                  country: 'country',
                }[field]
              }
              value={draft[field]}
              onValue={(value) => setDraft({ ...draft, [field]: value })}
            />
          ))}
        </div>
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {text('settings.addLocation')}
          </button>
        </div>
      </form>
    </>
  );
}
