import './settings.css';
import type { FunctionComponent } from 'preact';
import { type AdminKey, useText } from '../text.ts';
import { Disclosure } from '../ui/disclosure.tsx';
import { AuditLog } from './audit.tsx';
import { Locations, Roles } from './catalogues.tsx';
import { CustomerForms } from './forms.tsx';
import { DeadJobs } from './jobs.tsx';
import { TenantSettings } from './tenant.tsx';
import { Webhooks } from './webhooks.tsx';

/** The sections in the order they stand: the tenant's own settings first, open. */
const sections: readonly { id: string; title: AdminKey; Content: FunctionComponent }[] = [
  { id: 'tenant', title: 'settings.tenant', Content: TenantSettings },
  { id: 'roles', title: 'settings.roles', Content: Roles },
  { id: 'locations', title: 'settings.locations', Content: Locations },
  { id: 'forms', title: 'settings.forms', Content: CustomerForms },
  { id: 'webhooks', title: 'settings.webhooks', Content: Webhooks },
  { id: 'audit', title: 'settings.audit', Content: AuditLog },
  { id: 'jobs', title: 'settings.jobs', Content: DeadJobs },
];

/**
 * The tenant's settings and what the manager looks into now and then. Each section is a
 * disclosure: its content (and its reads) only once it is opened, so the page stays quick.
 */
export function Settings() {
  const text = useText();
  return (
    <div class="settings">
      <h1 tabIndex={-1}>{text('settings.heading')}</h1>
      {sections.map(({ id, title, Content }) => (
        <Disclosure key={id} id={id} title={text(title)} open={id === 'tenant'}>
          <Content />
        </Disclosure>
      ))}
    </div>
  );
}
