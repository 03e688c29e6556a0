import { expectData } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { Loaded } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { AdminTable } from '../ui/table.tsx';

/** Background jobs given up (Web Push and webhook deliveries), newest first, with why. */
export function DeadJobs() {
  const text = useText();
  const { api, format } = useApp();
  const [jobs, reload] = useResource(
    () => expectData(api.GET('/api/v1/jobs', { params: { query: { status: 'dead' } } })),
    [],
  );
  return (
    <Loaded resource={jobs} retry={reload}>
      {(list) =>
        list.length === 0 ? (
          <p class="muted">{text('settings.noDeadJobs')}</p>
        ) : (
          <div class="settings-scroll">
            <AdminTable
              caption={text('settings.jobs')}
              head={
                <>
                  <th scope="col">{text('settings.givenUp')}</th>
                  <th scope="col">{text('settings.kind')}</th>
                  <th scope="col">{text('settings.key')}</th>
                  <th scope="col" class="number">
                    {text('settings.tries')}
                  </th>
                  <th scope="col">{text('settings.lastError')}</th>
                </>
              }
            >
              {list.map((job) => (
                <tr key={job.id}>
                  <td>{job.finished_at ? format.dateTime(job.finished_at) : '—'}</td>
                  <td>{job.kind}</td>
                  <td>
                    <code>{job.key}</code>
                  </td>
                  <td class="number">{`${job.attempts} / ${job.max_attempts}`}</td>
                  <td>{job.last_error ?? ''}</td>
                </tr>
              ))}
            </AdminTable>
          </div>
        )
      }
    </Loaded>
  );
}
