import { type Static, Type } from 'typebox';
import { examples, Nullable, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

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
    created_at: ReadOnlyTimestamp,
    updated_at: ReadOnlyTimestamp,
  },
  { title: 'PushSubscription', description: 'A browser of the caller that receives Web Push messages' },
);
export type PushSubscription = Static<typeof PushSubscription>;

export const examplePushSubscription: PushSubscription = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5aa0',
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  endpoint: 'https://push.example.net/wpush/v2/gAAAAABm',
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
