import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { Event, exampleEvent } from '../events/schemas.ts';
import {
  bearerSecurity,
  bodyCodes,
  errorResponses,
  IdParams,
  NoBody,
  noContent,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import {
  ConvertSubmissionRequest,
  CreateFormRequest,
  CustomerForm,
  exampleForm,
  exampleSubmission,
  FormSubmission,
  SubmitFormRequest,
  UpdateFormRequest,
} from './schemas.ts';
import {
  changeForm,
  convertSubmission,
  createForm,
  getForm,
  getForms,
  getPublicForm,
  getSubmissions,
  removeForm,
  submitForm,
} from './service.ts';

const PathId = IdParams.properties.id;
const formMissing = { messages: { NOT_FOUND: 'form not found' } } as const;
const SlugParams = Type.Object({
  slug: Type.String({ maxLength: 100, description: 'The form’s slug', examples: ['catering-request'] }),
});
const slugPattern = /^[a-z0-9](?:[a-z0-9]|-(?!-)){1,78}[a-z0-9]$/;
/** A path slug that no form could have is the same 404 as an unknown one. */
const pathSlug = (raw: string) => {
  if (!slugPattern.test(raw)) throw notFound('form');
  return raw;
};
const publicCodes = errorResponses(['NOT_FOUND', 'URI_TOO_LONG'], {
  messages: { NOT_FOUND: 'form not found', FORBIDDEN: 'forbidden' },
});

export async function formsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/forms',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'listForms',
        summary: 'List the customer forms of the tenant, oldest first',
        description: 'Admins only. Every form of the tenant with its fields, oldest first.',
        security: bearerSecurity,
        response: { 200: ok(Type.Array(CustomerForm), 'The forms', [exampleForm]), ...errorResponses([]) },
      },
    },
    async (request) => getForms(deps, identityOf(request)),
  );

  app.post(
    '/api/v1/forms',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'createForm',
        summary: 'Create a customer form',
        description:
          'Admins only. Without a slug one is made from the title with a random tail. Field names are unique; select fields need options, other fields have none. customer_id pins the form to one customer (their customer claim as the identity provider issues it).',
        security: bearerSecurity,
        body: CreateFormRequest,
        response: {
          201: ok(CustomerForm, 'The form', exampleForm),
          ...errorResponses([...bodyCodes, 'DUPLICATE'], {
            messages: { DUPLICATE: 'a form with the slug "catering-request" already exists' },
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createForm(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/forms/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'getForm',
        summary: 'One customer form',
        description: 'Admins only. The form with its fields and pin; another tenant’s form is 404.',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(CustomerForm, 'The form', exampleForm),
          ...errorResponses(pathIdCodes, formMissing),
        },
      },
    },
    async (request) => getForm(deps, identityOf(request), pathId(request.params.id, 'form')),
  );

  app.patch(
    '/api/v1/forms/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'updateForm',
        summary: 'Change a customer form (partial)',
        description:
          'Admins only. Fields sent replace those stored; submissions already made keep their data. customer_id null unpins the form.',
        security: bearerSecurity,
        params: IdParams,
        body: UpdateFormRequest,
        response: {
          200: ok(CustomerForm, 'The form as changed', exampleForm),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'DUPLICATE'], formMissing),
        },
      },
    },
    async (request) => changeForm(deps, identityOf(request), pathId(request.params.id, 'form'), request.body),
  );

  app.delete(
    '/api/v1/forms/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'deleteForm',
        summary: 'Delete a customer form and its submissions',
        description:
          'Admins only. Events converted from its submissions stay (they lose their submission_id).',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: { 204: noContent('Deleted'), ...errorResponses(pathIdCodes, formMissing) },
      },
    },
    async (request, reply) => {
      await removeForm(deps, identityOf(request), pathId(request.params.id, 'form'));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/forms/:form_id/submissions',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'listFormSubmissions',
        summary: 'The submissions of a form, newest first',
        description: 'Admins only. event_id names the event a submission was converted into.',
        security: bearerSecurity,
        params: Type.Object({ form_id: PathId }),
        response: {
          200: ok(Type.Array(FormSubmission), 'The submissions', [exampleSubmission]),
          ...errorResponses(pathIdCodes, formMissing),
        },
      },
    },
    async (request) => getSubmissions(deps, identityOf(request), pathId(request.params.form_id, 'form')),
  );

  app.post(
    '/api/v1/forms/:form_id/submissions/:sub_id/convert',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['forms'],
        operationId: 'convertSubmission',
        summary: 'Turn a submission into a draft event',
        description:
          'Admins only. Creates a draft event (as POST /events would) that names the submission; a second convert of the same submission is 409 INVALID_STATE.',
        security: bearerSecurity,
        params: Type.Object({ form_id: PathId, sub_id: PathId }),
        body: ConvertSubmissionRequest,
        response: {
          201: ok(Event, 'The draft event', { ...exampleEvent, status: 'draft', published_at: null }),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'submission not found',
              INVALID_STATE: 'the submission was converted into an event already',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await convertSubmission(
            deps,
            identityOf(request),
            pathId(request.params.form_id, 'form'),
            pathId(request.params.sub_id, 'submission'),
            request.body,
          ),
        ),
  );

  app.get(
    '/api/v1/f/:slug',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['forms'],
        operationId: 'getPublicForm',
        summary: 'A form on the customer surface',
        description:
          'Any valid token. The slug is looked up across tenants; a caller of another tenant, or (for a pinned form) another customer, gets 403. Admins of the form’s tenant may open pinned forms.',
        security: bearerSecurity,
        params: SlugParams,
        response: { 200: ok(CustomerForm, 'The form', exampleForm), ...publicCodes },
      },
    },
    async (request) => getPublicForm(deps, identityOf(request), pathSlug(request.params.slug)),
  );

  app.post(
    '/api/v1/f/:slug/submit',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['forms'],
        operationId: 'submitForm',
        summary: 'Submit a form',
        description:
          'Any valid token, with the checks of GET /f/{slug}. At most FORM_SUBMIT_LIMIT submissions (10 by default) per client address and slug within FORM_SUBMIT_WINDOW_SECONDS (an hour), counted in this process; beyond that 429 with Retry-After. The data is checked against the form’s fields: 422 names the field; unknown fields are refused.',
        security: bearerSecurity,
        params: SlugParams,
        body: SubmitFormRequest,
        response: {
          201: ok(FormSubmission, 'The submission', exampleSubmission),
          ...errorResponses(['NOT_FOUND', 'URI_TOO_LONG', 'RATE_LIMITED', ...bodyCodes], {
            messages: {
              NOT_FOUND: 'form not found',
              VALIDATION_FAILED: 'data.email: must be an email address',
              RATE_LIMITED: 'too many submissions; try again in 1800 s',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await submitForm(
            deps,
            identityOf(request),
            pathSlug(request.params.slug),
            request.body,
            request.ip,
          ),
        ),
  );
}
