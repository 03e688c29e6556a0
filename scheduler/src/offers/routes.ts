import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import type { ErrorCode } from '../errors.ts';
import {
  bearerSecurity,
  bodyCodes,
  DecisionRequest,
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
  exampleOffer,
  exampleOfferCandidate,
  Offer,
  OfferCandidate,
  OfferListQuery,
  OfferRequest,
} from './schemas.ts';
import {
  acceptOffer,
  approveOffer,
  cancelOffer,
  getOfferCandidates,
  getOffers,
  offerSeat,
  rejectOffer,
} from './service.ts';

/** Who took the seat in the examples, and when it was decided. */
const exampleDecision = {
  taker: '3f2504e04f8941d39a0c0305e82c3302',
  decidedAt: '2026-11-03T10:00:00.000Z',
};

const moveCodes: ErrorCode[] = [
  ...pathIdCodes,
  'INVALID_STATE',
  'ALREADY_ASSIGNED',
  'NOT_QUALIFIED',
  'OVERLAPPING_ASSIGNMENT',
  'UNAVAILABLE',
];
const moveMessages = {
  NOT_FOUND: 'offer not found',
  INVALID_STATE: 'the offer is approved',
  ALREADY_ASSIGNED: 'the user already holds a seat in this shift',
  NOT_QUALIFIED: 'the user does not hold the role this slot needs',
  OVERLAPPING_ASSIGNMENT: 'the user is assigned to an overlapping shift',
  UNAVAILABLE: 'the user has approved time off overlapping the shift',
};
/** What a decision's body does, for both of an admin's decisions. */
const reasonRule =
  'The body is optional: none, {} or null decide without a reason; { "reason": "..." } (one line, 1 to 500 characters, trimmed; blank, longer, a line break or any other field is 422 naming it) is stored with the decision and returned as decision_reason; the notifications of the decision (to the taker and the giver) carry it.';
const reasonMessage = 'reason: must be one line of text, without control characters';
const moveRules =
  'The seat moves in one transaction: the same assignment in the same slot (capacity unchanged), checked by the database as a claim is (role, one seat per shift, no overlap, an active user, no approved time off, no recorded time).';

export async function offersRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/assignments/:id/offer',
    {
      config: { access: 'member' },
      schema: {
        tags: ['offers'],
        operationId: 'offerAssignment',
        summary: 'Offer a seat to a colleague, or to every qualified one',
        description:
          'An employee offers their own seat, an admin anyone’s; either before the shift starts (409 INVALID_STATE after). With to_user_id only that admin or employee may take it; without, any colleague who holds the slot’s role and has no overlapping assignment. A seat with recorded time cannot be offered (409 INVALID_STATE); a seat with an open or accepted offer already is 409 DUPLICATE. The offer expires when the shift starts. Another’s seat is 404 to an employee.',
        security: bearerSecurity,
        params: IdParams,
        body: OfferRequest,
        response: {
          201: ok(Offer, 'The offer, open', exampleOffer),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE', 'DUPLICATE'], {
            messages: {
              NOT_FOUND: 'assignment not found',
              INVALID_STATE: 'the shift has started',
              DUPLICATE: 'this assignment already has an open offer',
              VALIDATION_FAILED: 'to_user_id: no such admin or employee in this tenant',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await offerSeat(
            deps,
            identityOf(request),
            pathId(request.params.id, 'assignment'),
            request.body ?? {},
          ),
        ),
  );

  app.get(
    '/api/v1/assignments/:id/offer-candidates',
    {
      config: { access: 'member' },
      schema: {
        tags: ['offers'],
        operationId: 'listOfferCandidates',
        summary: 'The colleagues who could take a seat if it were offered to them alone',
        description:
          'For the seat’s holder (an employee: their own seat, of a shift they may see; anyone else’s is 404) or an admin: the active admins and employees, the holder left out, who could accept a direct offer of it now, by the rules of an accept: they hold the slot’s role, hold no seat in the shift and none overlapping it, and have no approved time off overlapping it (requested time off does not count); employees only when the shift and its event are published. By name (a user without one last), then id. As for an offer: 409 INVALID_STATE once the shift has started or when time was recorded for the seat. Pass a candidate’s id as to_user_id to POST /assignments/{id}/offer.',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(Type.Array(OfferCandidate), 'Who could take the seat, by name', [exampleOfferCandidate]),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: { NOT_FOUND: 'assignment not found', INVALID_STATE: 'the shift has started' },
          }),
        },
      },
    },
    async (request) => getOfferCandidates(deps, identityOf(request), pathId(request.params.id, 'assignment')),
  );

  app.get(
    '/api/v1/offers',
    {
      config: { access: 'member' },
      schema: {
        tags: ['offers'],
        operationId: 'listOffers',
        summary: 'Offers, newest first, a page at a time',
        description:
          'Admins read every offer of the tenant. Employees read the offers they made or took, and the open ones they could take: not their own, open to anyone or made to them, of a published shift, for a slot whose role they hold, with no assignment of theirs overlapping it. status keeps one status (expired: the shift started before the offer was taken or decided). Pages: at most limit offers (100 by default); pass the id of the last one as after for the next page; a shorter page is the last.',
        security: bearerSecurity,
        querystring: OfferListQuery,
        response: {
          200: ok(Type.Array(Offer), 'The offers, newest first', [exampleOffer]),
          ...errorResponses(['VALIDATION_FAILED'], {
            messages: { VALIDATION_FAILED: 'after: no such offer' },
          }),
        },
      },
    },
    async (request) => getOffers(deps, identityOf(request), request.query),
  );

  app.post(
    '/api/v1/offers/:id/accept',
    {
      config: { access: 'member' },
      schema: {
        tags: ['offers'],
        operationId: 'acceptOffer',
        summary: 'Take an offered seat',
        description: `A colleague takes an open offer: not their own, open to anyone or made to them. ${moveRules} With the tenant setting offers_need_approval on, the offer only becomes accepted and waits for an admin (the taker’s standing is checked now and again at approval). Of concurrent accepts one wins; the others are 409 INVALID_STATE. An offer made to someone else, or of a shift the employee may not see, is 404 to them.`,
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          200: ok(Offer, 'The offer, approved (the seat moved) or accepted (waiting for an admin)', {
            ...exampleOffer,
            status: 'approved',
            accepted_by: exampleDecision.taker,
            decided_at: exampleDecision.decidedAt,
            decided_by: exampleDecision.taker,
          }),
          ...errorResponses(moveCodes, { messages: moveMessages }),
        },
      },
    },
    async (request) => acceptOffer(deps, identityOf(request), pathId(request.params.id, 'offer')),
  );

  app.post(
    '/api/v1/offers/:id/approve',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['offers'],
        operationId: 'approveOffer',
        summary: 'Approve the move of an accepted offer',
        description: `Admins only, for an offer in status accepted (anything else is 409 INVALID_STATE). ${moveRules} What became impossible since it was accepted is refused with its own 409. ${reasonRule}`,
        security: bearerSecurity,
        params: IdParams,
        body: DecisionRequest,
        response: {
          200: ok(Offer, 'The offer, approved: the seat moved', {
            ...exampleOffer,
            status: 'approved',
            accepted_by: exampleDecision.taker,
            decided_at: exampleDecision.decidedAt,
            decided_by: exampleOffer.from_user_id,
          }),
          ...errorResponses([...moveCodes, ...bodyCodes], {
            messages: { ...moveMessages, VALIDATION_FAILED: reasonMessage },
          }),
        },
      },
    },
    async (request) =>
      approveOffer(deps, identityOf(request), pathId(request.params.id, 'offer'), request.body),
  );

  app.post(
    '/api/v1/offers/:id/reject',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['offers'],
        operationId: 'rejectOffer',
        summary: 'Refuse the move of an accepted offer',
        description: `Admins only, for an offer in status accepted (anything else is 409 INVALID_STATE). Final: the giver keeps the seat and may offer it again. ${reasonRule}`,
        security: bearerSecurity,
        params: IdParams,
        body: DecisionRequest,
        response: {
          200: ok(Offer, 'The offer, rejected', {
            ...exampleOffer,
            status: 'rejected',
            accepted_by: exampleDecision.taker,
            decided_at: exampleDecision.decidedAt,
            decided_by: exampleOffer.from_user_id,
            decision_reason: 'The shift needs someone who knows the till',
          }),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'offer not found',
              VALIDATION_FAILED: reasonMessage,
              INVALID_STATE: 'the offer is open, not accepted',
            },
          }),
        },
      },
    },
    async (request) =>
      rejectOffer(deps, identityOf(request), pathId(request.params.id, 'offer'), request.body),
  );

  app.delete(
    '/api/v1/offers/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['offers'],
        operationId: 'cancelOffer',
        summary: 'Withdraw an offer',
        description:
          'The giver or an admin withdraws an offer while it is open or accepted; it stays on the list as cancelled. Any other status is 409 INVALID_STATE; another’s offer, or one of a shift the employee may not see, is 404 to them.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('The offer is cancelled'),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: { NOT_FOUND: 'offer not found', INVALID_STATE: 'the offer is approved' },
          }),
        },
      },
    },
    async (request, reply) => {
      await cancelOffer(deps, identityOf(request), pathId(request.params.id, 'offer'));
      return reply.code(204).send(null);
    },
  );
}
