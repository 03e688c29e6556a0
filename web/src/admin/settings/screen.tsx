import './settings.css';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type AdminKey, useText } from '../text.ts';
import { AuditLog } from './audit.tsx';
import { Locations, Roles } from './catalogues.tsx';
import { CustomerForms } from './forms.tsx';
import { DeadJobs } from './jobs.tsx';
import { TenantSettings } from './tenant.tsx';
import { Webhooks } from './webhooks.tsx';

/**
 * The tenant's settings and what the manager looks into now and then. Each section is a
 * disclosure: its content (and its reads) only once it is opened, so the page stays quick.
 */
export function Settings() {
  const text = useText();
  return (
    <div class="settings">
      <h1 tabIndex={-1}>{text('settings.heading')}</h1>
      <Section id="tenant" title="settings.tenant" open>
        <TenantSettings />
      </Section>
      <Section id="roles" title="settings.roles">
        <Roles />
      </Section>
      <Section id="locations" title="settings.locations">
        <Locations />
      </Section>
      <Section id="forms" title="settings.forms">
        <CustomerForms />
      </Section>
      <Section id="webhooks" title="settings.webhooks">
        <Webhooks />
      </Section>
      <Section id="audit" title="settings.audit">
        <AuditLog />
      </Section>
      <Section id="jobs" title="settings.jobs">
        <DeadJobs />
      </Section>
    </div>
  );
}

function Section({
  id,
  title,
  open = false,
  children,
}: {
  id: string;
  title: AdminKey;
  open?: boolean;
  children: ComponentChildren;
}) {
  const text = useText();
  const [expanded, setExpanded] = useState(open);
  return (
    <section class="settings-section" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>
        <button
          type="button"
          class="settings-toggle"
          aria-expanded={expanded}
          aria-controls={`${id}-panel`}
          onClick={() => setExpanded(!expanded)}
        >
          {text(title)}
        </button>
      </h2>
      <div id={`${id}-panel`} hidden={!expanded}>
        {expanded && children}
      </div>
    </section>
  );
}
