import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Geocoder } from '../../src/geocoding/geocoder.ts';
import { createNominatimGeocoder } from '../../src/geocoding/nominatim.ts';
import { sendEndlessBody } from './endless-body.ts';

/**
 * A local server that answers like Nominatim's /search endpoint. The bodies replay the
 * documented `format=jsonv2` answer (https://nominatim.org/release-docs/latest/api/Search/):
 * an array of places whose `lat`/`lon` are decimal strings.
 */
export const brandenburgGate = [
  {
    place_id: 129711233,
    licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
    osm_type: 'way',
    osm_id: 518071791,
    lat: '52.5162699',
    lon: '13.3777034',
    category: 'tourism',
    type: 'attraction',
    place_rank: 30,
    importance: 0.6472816524771309,
    addresstype: 'tourism',
    name: 'Brandenburger Tor',
    display_name: 'Brandenburger Tor, 1, Pariser Platz, Mitte, Berlin, 10117, Deutschland',
    boundingbox: ['52.5161167', '52.5164231', '13.3775577', '13.3778512'],
  },
];

export type Behaviour = 'ok' | 'empty' | 'slow' | 'error' | 'garbage' | 'endless' | 'trickle';

export interface NominatimFake {
  url: URL;
  requests: URL[];
  userAgents: string[];
  behaviour: Behaviour;
  close(): Promise<void>;
}

/**
 * A geocoder for `fake` whose deadline suits what the fake does now: short where only the
 * deadline ends the answer (a server that is slow or trickles), and far from what a local
 * answer takes otherwise, so that a loaded machine cannot turn an answer into a timeout.
 */
export function fakeNominatimGeocoder(fake: Pick<NominatimFake, 'url' | 'behaviour'>): Geocoder {
  const withDeadline = (timeoutMs: number) =>
    createNominatimGeocoder({ baseUrl: fake.url, timeoutMs, userAgent: 'scheduler-test/1' });
  const short = withDeadline(300);
  const long = withDeadline(30_000);
  return {
    name: long.name,
    geocode: (address) =>
      (fake.behaviour === 'slow' || fake.behaviour === 'trickle' ? short : long).geocode(address),
  };
}

export async function startNominatimFake(): Promise<NominatimFake> {
  const fake: Omit<NominatimFake, 'url' | 'close'> = { requests: [], userAgents: [], behaviour: 'ok' };
  const server: Server = createServer((request: IncomingMessage, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    fake.requests.push(url);
    fake.userAgents.push(String(request.headers['user-agent']));
    if (url.pathname !== '/search') {
      response.writeHead(404).end();
      return;
    }
    switch (fake.behaviour) {
      case 'ok':
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(brandenburgGate));
        return;
      case 'empty':
        response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
        return;
      case 'error':
        response.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Service Unavailable</h1>');
        return;
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"lat": oops');
        return;
      case 'endless':
        sendEndlessBody(request, response, '[', `${JSON.stringify(brandenburgGate[0])},`.repeat(200));
        return;
      case 'trickle': {
        // Headers at once, then one byte a second: only a deadline on the body stops it.
        response.writeHead(200, { 'content-type': 'application/json' });
        const body = JSON.stringify(brandenburgGate);
        let sent = 0;
        const timer = setInterval(() => {
          if (sent < body.length) response.write(body[sent++] ?? '');
          else response.end();
        }, 1000);
        response.on('close', () => clearInterval(timer));
        return;
      }
      case 'slow': {
        const timer = setTimeout(
          () =>
            response
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify(brandenburgGate)),
          60_000,
        );
        response.on('close', () => clearTimeout(timer));
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: new URL(`http://127.0.0.1:${port}/`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as NominatimFake;
}
