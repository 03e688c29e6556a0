import { type Static, Type } from 'typebox';
import { examples, Nullable, OneLine, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

const base64url = (description: string, length: number) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]+={0,2}$', minLength: length, maxLength: length + 4, description });

/** The browser's PushSubscription, as `JSON.stringify(subscription)` gives it. */
export const RegisterPushRequest = Type.Object(
  {
    endpoint: Type.String({
      format: 'uri',
      maxLength: 2048,
      description: 'The push service URL the browser was given; https',
    }),
    expirationTime: Type.Optional(Nullable(Type.Number({ description: 'Ignored; browsers send null' }))),
    label: Type.Optional(
      Nullable(
        OneLine({
          minLength: 1,
          maxLength: 100,
          description:
            'A name for this browser the person recognises (Anna’s phone); trimmed; omitted on a re-registration: the name it had; null clears it',
        }),
      ),
    ),
    keys: Type.Object(
      {
        p256dh: base64url('The browser’s P-256 public key (65 bytes, base64url)', 87),
        auth: base64url('The 16-byte authentication secret (base64url)', 22),
      },
      { additionalProperties: false },
    ),
  },
  {
    title: 'RegisterPushRequest',
    additionalProperties: false,
    examples: [
      {
        endpoint: 'https://push.example.net/wpush/v2/gAAAAABm',
        expirationTime: null,
        keys: {
          p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
          auth: 'tBHItJI5svbpez7KI4CCXg',
        },
      },
    ],
  },
);
export type RegisterPushRequest = Static<typeof RegisterPushRequest>;

export const PushSubscription = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    user_id: ReadOnlyId,
    endpoint: Type.String(),
    label: Nullable(Type.String({ description: 'The name given at registration, or null' })),
    user_agent: Nullable(
      Type.String({
        description:
          'The User-Agent the browser registered with (cut to 512 characters), to tell browsers apart where no label was given; null when it sent none',
      }),
    ),
    created_at: Type.String({ ...ReadOnlyTimestamp, description: 'When this browser was first registered' }),
    updated_at: Type.String({
      ...ReadOnlyTimestamp,
      description: 'When it was registered or refreshed last',
    }),
  },
  { title: 'PushSubscription', description: 'A browser of the caller that receives Web Push messages' },
);
export type PushSubscription = Static<typeof PushSubscription>;

export const examplePushSubscription: PushSubscription = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5aa0',
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  endpoint: 'https://push.example.net/wpush/v2/gAAAAABm',
  label: 'Work phone',
  user_agent: 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0',
  created_at: examples.createdAt,
  updated_at: examples.createdAt,
};

export const VapidPublicKey = Type.Object(
  {
    public_key: Type.String({
      description:
        'The tenant’s VAPID public key: uncompressed P-256 point, base64url (applicationServerKey)',
    }),
  },
  { title: 'VapidPublicKey' },
);
export type VapidPublicKey = Static<typeof VapidPublicKey>;
