import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
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
import { CreateLocationRequest, exampleLocation, Location } from './schemas.ts';
import { createLocation, getLocations, removeLocation } from './service.ts';

export async function locationsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/locations',
    {
      config: { access: 'member' },
      schema: {
        tags: ['locations'],
        operationId: 'listLocations',
        description: 'Admins and employees of the tenant may read the locations.',
        summary: 'List the locations of the tenant, by name',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(Location), 'The locations of the caller tenant, by name', [exampleLocation]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getLocations(deps, identityOf(request)),
  );

  app.post(
    '/api/v1/locations',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['locations'],
        operationId: 'createLocation',
        description:
          'Admins only. With street and city present the server geocodes the address and fills lat and lng: city level from an offline gazetteer by default, or through a Nominatim-compatible service when one is configured. A geocoding failure leaves them null and never fails the request.',
        summary:
          'Create a location; with street and city the server fills lat and lng (null when geocoding fails)',
        security: bearerSecurity,
        body: CreateLocationRequest,
        response: {
          201: ok(Location, 'The created location, with coordinates when they were found', exampleLocation),
          ...errorResponses(bodyCodes),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createLocation(deps, identityOf(request), request.body)),
  );

  app.delete(
    '/api/v1/locations/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['locations'],
        operationId: 'deleteLocation',
        description: 'Admins only. Events and shifts at the location keep existing, without a location.',
        summary: 'Delete a location; events and shifts there keep existing without a location',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Deleted'),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'location not found' } }),
        },
      },
    },
    async (request, reply) => {
      await removeLocation(deps, identityOf(request), pathId(request.params.id, 'location'));
      return reply.code(204).send(null);
    },
  );
}
