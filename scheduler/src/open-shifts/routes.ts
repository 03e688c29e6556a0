import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, ok } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import {
  exampleOpenShift,
  OPEN_SHIFTS_DEFAULT_LIMIT,
  OPEN_SHIFTS_MAX_LIMIT,
  OpenShift,
  OpenShiftsQuery,
} from './schemas.ts';
import { getOpenShifts } from './service.ts';

export async function openShiftsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/me/open-shifts',
    {
      config: { access: 'member' },
      schema: {
        tags: ['assignments'],
        operationId: 'listMyOpenShifts',
        summary: 'The shifts you could claim a seat in now, earliest first, with their claimable slots',
        description: `Exactly the slots POST /shifts/{shift_id}/slots/{slot_id}/claim would give the caller now: a published shift of a published event that has not ended (one under way included); a slot with a free seat whose role the caller holds; no seat of the caller in the shift or overlapping it; no approved time off of the caller overlapping it. Each shift comes with its event, its place (the shift's location, else the event's; null when neither has one) and those slots only. from and to keep the shifts overlapping [from, to) as on GET /shifts; limit caps the shifts (1 to ${OPEN_SHIFTS_MAX_LIMIT}, ${OPEN_SHIFTS_DEFAULT_LIMIT} by default), the earliest kept. to at or before from, a malformed time or limit, or an unknown query parameter is 422.`,
        security: bearerSecurity,
        querystring: OpenShiftsQuery,
        response: {
          200: ok(Type.Array(OpenShift), 'The claimable shifts, by start', [exampleOpenShift]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => getOpenShifts(deps, identityOf(request), request.query),
  );
}
