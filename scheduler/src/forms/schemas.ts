import { type Static, Type } from 'typebox';
import { maxDescriptionLength } from '../events/schemas.ts';
import {
  examples,
  Id,
  MultiLine,
  Nullable,
  OneLine,
  PartialUpdate,
  ReadOnlyId,
  ReadOnlyTimestamp,
} from '../http/schemas.ts';

export const fieldTypes = ['text', 'email', 'tel', 'date', 'number', 'textarea', 'select'] as const;

export const FormField = Type.Object(
  {
    name: Type.String({
      pattern: '^[a-z][a-z0-9_]{0,62}$',
      description: 'Key in the submitted data: lowercase letters, digits and _, starting with a letter',
    }),
    label: OneLine({ minLength: 1, maxLength: 200, description: 'What the customer reads' }),
    type: Type.Enum(fieldTypes, {
      type: 'string',
      description:
        'text (one line, up to 1,000 characters), textarea (up to 10,000), email, tel, date (YYYY-MM-DD), number, select (one of options)',
    }),
    required: Type.Optional(Type.Boolean({ default: false, description: 'false when absent' })),
    options: Type.Optional(
      Type.Array(OneLine({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: 'select only: the values to choose from',
      }),
    ),
  },
  { title: 'FormField', additionalProperties: false },
);
export type FormField = Static<typeof FormField>;

const Fields = Type.Array(FormField, {
  minItems: 1,
  maxItems: 50,
  description: 'Names unique within the form',
});
const Title = OneLine({ minLength: 1, maxLength: 200, description: 'Trimmed; not blank; one line' });
const Slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9]|-(?!-)){1,78}[a-z0-9]$',
  description:
    'Lowercase letters, digits and single inner hyphens, 3 to 80 characters; unique across all tenants',
});
const CustomerClaim = Nullable(
  OneLine({
    minLength: 1,
    maxLength: 255,
    description:
      'Pins the form to one customer: the value of the customer claim exactly as the identity provider puts it in their token',
  }),
);

export const CustomerForm = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    slug: Type.String({ description: 'The public address: /api/v1/f/{slug}' }),
    title: Type.String(),
    fields: Type.Array(FormField),
    customer_id: CustomerClaim,
    created_at: ReadOnlyTimestamp,
    updated_at: ReadOnlyTimestamp,
  },
  { title: 'CustomerForm' },
);
export type CustomerForm = Static<typeof CustomerForm>;

export const exampleForm: CustomerForm = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a90',
  tenant_id: examples.tenantId,
  slug: 'catering-request',
  title: 'Catering request',
  fields: [
    { name: 'contact', label: 'Your name', type: 'text', required: true },
    { name: 'email', label: 'Email', type: 'email', required: true },
    { name: 'date', label: 'Date of the event', type: 'date', required: true },
    { name: 'guests', label: 'Guests', type: 'number', required: false },
    { name: 'menu', label: 'Menu', type: 'select', required: true, options: ['Buffet', 'Seated dinner'] },
  ],
  customer_id: null,
  created_at: examples.createdAt,
  updated_at: examples.createdAt,
};

export const CreateFormRequest = Type.Object(
  {
    title: Title,
    slug: Type.Optional(Slug),
    fields: Fields,
    customer_id: Type.Optional(CustomerClaim),
  },
  {
    title: 'CreateFormRequest',
    additionalProperties: false,
    examples: [{ title: exampleForm.title, fields: exampleForm.fields }],
  },
);
export type CreateFormRequest = Static<typeof CreateFormRequest>;

export const UpdateFormRequest = PartialUpdate(
  {
    title: Type.Optional(Title),
    slug: Type.Optional(Slug),
    fields: Type.Optional(Fields),
    customer_id: Type.Optional(CustomerClaim),
  },
  {
    title: 'UpdateFormRequest',
    description:
      'A partial update: at least one field; fields left out keep their values, customer_id null unpins the form. Stored submissions keep their data.',
    examples: [{ title: 'Catering request (2027)' }],
  },
);
export type UpdateFormRequest = Static<typeof UpdateFormRequest>;

export const FormSubmission = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    form_id: ReadOnlyId,
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'The submitted values by field name' }),
    customer_id: Nullable(
      Type.String({ description: 'The submitter’s customer claim, as the token carried it' }),
    ),
    event_id: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'The event it was converted into' }),
    ),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'FormSubmission' },
);
export type FormSubmission = Static<typeof FormSubmission>;

export const exampleSubmission: FormSubmission = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a91',
  tenant_id: examples.tenantId,
  form_id: exampleForm.id,
  data: { contact: 'Dana Fox', email: 'dana@example.com', date: '2027-06-12', guests: 80, menu: 'Buffet' },
  customer_id: 'cust-4711',
  event_id: null,
  created_at: examples.createdAt,
};

export const SubmitFormRequest = Type.Object(
  {
    data: Type.Record(Type.String({ maxLength: 63 }), Type.Unknown(), {
      maxProperties: 50,
      description: 'A value per field name; checked against the form’s fields (unknown names refused)',
    }),
  },
  {
    title: 'SubmitFormRequest',
    additionalProperties: false,
    examples: [{ data: exampleSubmission.data }],
  },
);
export type SubmitFormRequest = Static<typeof SubmitFormRequest>;

export const ConvertSubmissionRequest = Type.Object(
  {
    name: OneLine({ minLength: 1, maxLength: 200, description: 'The event name; trimmed' }),
    starts_at: Type.String({
      format: 'date-time',
      description: 'RFC 3339 with an offset up to ±15:59, stored in UTC',
    }),
    ends_at: Type.String({ format: 'date-time', description: 'After starts_at' }),
    location_id: Type.Optional(Nullable(Type.String({ ...Id, description: 'A location of the tenant' }))),
    description: Type.Optional(
      Nullable(
        MultiLine({
          maxLength: maxDescriptionLength,
          description:
            "Absent: the submitted answers, one per line under the form's labels (cut at 5,000 characters, saying so); null: no description",
        }),
      ),
    ),
  },
  {
    title: 'ConvertSubmissionRequest',
    additionalProperties: false,
    examples: [
      { name: 'Fox wedding catering', starts_at: '2027-06-12T15:00:00Z', ends_at: '2027-06-13T01:00:00Z' },
    ],
  },
);
export type ConvertSubmissionRequest = Static<typeof ConvertSubmissionRequest>;
