import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Where the server may open connections for URLs that callers chose (push endpoints now,
 * webhooks later): public https hosts only. A caller who names a loopback, private,
 * link-local, carrier-grade NAT, unique-local, multicast, unspecified or otherwise
 * reserved address (in any spelling the URL parser accepts: `0x7f.1`, `2130706433` and
 * `[::ffff:127.0.0.1]` are all 127.0.0.1 once parsed), an internal name, or a user name
 * in the URL is refused when the URL is registered; the name is checked again when a
 * connection is made, against the addresses it resolves to then (DNS can change).
 *
 * The operator admits named hosts despite these rules with OUTBOUND_ALLOWED_HOSTS
 * (`host[:port]`, comma-separated): a self-hosted push service on a private network, or a
 * local test service. Only those hosts may be reached over plain http.
 */
export interface AllowedHost {
  /** As the URL parser writes it: lowercase, IPv6 in brackets. */
  host: string;
  /** null: any port. */
  port: number | null;
}

/** A destination the rules refuse; `reason` completes "endpoint: ...". */
export class DestinationRefused extends Error {
  override name = 'DestinationRefused';
  readonly code = 'EDESTINATIONREFUSED';
}

/** Top-level names that never lead to the public internet (RFC 6761, 6762, 8375, 9476; common private suffixes). */
const internalSuffixes = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'home.arpa',
  'arpa',
  'test',
  'example',
  'invalid',
  'onion',
  'alt',
];

const entryPattern = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/?#@[\]]+)(?::(\d{1,5}))?$/;

/** OUTBOUND_ALLOWED_HOSTS parsed; throws naming the first entry it cannot read. */
export function parseAllowedHosts(raw: string | undefined): AllowedHost[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((entry) => {
    const trimmed = entry.trim();
    const match = entryPattern.exec(trimmed);
    const port = match?.[2] === undefined ? null : Number(match[2]);
    let host: string | undefined;
    try {
      host = match?.[1] ? new URL(`http://${match[1]}`).hostname : undefined;
    } catch {
      host = undefined;
    }
    if (!host || (port !== null && (port < 1 || port > 65535))) {
      throw new Error(`"${trimmed}" is not a host or host:port`);
    }
    return { host, port };
  });
}

const defaultPort = (url: URL) => (url.port !== '' ? Number(url.port) : url.protocol === 'http:' ? 80 : 443);

/**
 * An address a public service may have: ipaddr.js's `unicast` range, IPv4-mapped IPv6
 * judged as IPv4. The deprecated IPv4-compatible block `::/96` (`::7f00:1`), which
 * ipaddr.js counts as unicast, is refused whole: no public service uses it, and a host
 * with an automatic tunnel would carry it to the IPv4 address it embeds.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // ipaddr.js reads the dotted `::8.8.8.8` as IPv4-mapped; the socket would not.
  const spelled = address.includes(':') ? canonicalIPv6(address) : address;
  if (spelled === undefined) return false;
  let parsed = ipaddr.parse(spelled);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

/** The WHATWG URL reader's spelling of an IPv6 address (hex groups only), or undefined. */
function canonicalIPv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

function isInternalName(hostname: string): boolean {
  const name = hostname.replace(/\.$/, '');
  if (!name.includes('.')) return true;
  return internalSuffixes.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

/** Resolves a name to all its addresses (dns.lookup by default; tests substitute a rebinding server). */
export type Resolver = (hostname: string) => LookupAddress[] | Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

export class OutboundPolicy {
  constructor(
    readonly allowedHosts: readonly AllowedHost[] = [],
    private readonly resolver?: Resolver,
  ) {}

  /** Listed by the operator: exempt from the address rules, plain http allowed. */
  admits(url: URL): boolean {
    const port = defaultPort(url);
    return this.allowedHosts.some((entry) => entry.host === url.hostname && (entry.port ?? port) === port);
  }

  /** Why `raw` may not be a destination (to complete "field: ..."), or null when it may. */
  refusal(raw: string): string | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'must be an absolute https URL';
    }
    const admitted = this.admits(url);
    if (url.protocol !== 'https:' && !(admitted && url.protocol === 'http:')) return 'must be an https URL';
    if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
    if (admitted) return null;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (ipaddr.isValid(host)) {
      return isPublicAddress(host)
        ? null
        : 'must name a public host (loopback, private, link-local and other reserved addresses are refused)';
    }
    if (isInternalName(host)) return 'must name a public host (internal and single-label names are refused)';
    return null;
  }

  /**
   * A DNS lookup for http(s).request that resolves as usual and fails with
   * DestinationRefused when any address found is not public, so that a name which
   * resolves to a private address now (rebinding, a changed record) is never connected
   * to. Hosts the operator admits are looked up without the check.
   */
  lookupFor(url: URL): typeof dnsLookup | undefined {
    const admitted = this.admits(url);
    if (admitted && !this.resolver) return undefined;
    const resolve = this.resolver ?? systemResolver;
    const lookup = (
      hostname: string,
      options: LookupOptions,
      callback: (
        error: NodeJS.ErrnoException | null,
        address: string | LookupAddress[],
        family?: number,
      ) => void,
    ) => {
      const checked = async (): Promise<LookupAddress[]> => {
        const addresses = await resolve(hostname);
        const refused = admitted ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
        if (refused) {
          throw new DestinationRefused(
            `${hostname} resolves to ${refused.address}, which is not a public address`,
          );
        }
        if (addresses.length === 0)
          throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
        return addresses;
      };
      checked().then(
        (addresses) => {
          const first = addresses[0] as LookupAddress;
          if (options.all) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, []),
      );
    };
    return lookup as typeof dnsLookup;
  }
}
