import path from 'node:path';
import { RE2JS } from 're2js';
import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { InputProblem } from '../errors.ts';
import { parseYaml, YamlError } from '../storage/yaml.ts';
import { DurationError } from '../time/durations.ts';
import { parseInstant } from '../time/instants.ts';
import { DEFAULT_TIMEOUT_MS, requestTimeoutOf, timeoutOf } from './adapters/limits.ts';
import type { Asset } from './asset.ts';

/**
 * The inventory file (ADVISORY_INVENTORY): the assets listed in it (the generic adapter,
 * inline) and the sources that report more (`sources`): a Proxmox VE API, a Nextcloud
 * `occ` command or Nextcloud's OCS API, another YAML or JSON file of assets, an HTTP
 * endpoint. All local: the appliance sends nothing about them anywhere else.
 *
 *   assets:
 *     - name: cache
 *       products: { redis: "7.4.3", debian: "13.6" }
 *       facts: { last_restore_test: "2026-05-02" }
 *   sources:
 *     - { type: proxmox, name: pve, url: "https://pve.lan:8006", token_id: "advisory@pve!ro",
 *         token_secret_file: /etc/advisory/pve.secret, fingerprint: "AB:CD:..." }
 *     - { type: nextcloud, name: cloud, command: [sudo, -u, www-data, php, /var/www/nextcloud/occ] }
 *     - { type: nextcloud-api, name: cloud2, url: "https://cloud.lan", user: advisory,
 *         app_password_file: /etc/advisory/nextcloud.secret }
 *     - { type: file, name: lab, path: lab-assets.json }
 *     - { type: http, name: gitea, url: "http://git.lan/api/v1/version", product: gitea, json_pointer: /version }
 */
const Name = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$' });
const ProductKey = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' });
const FactKey = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' });
const Products = Type.Record(ProductKey, Type.String({ minLength: 1, maxLength: 100 }), {
  additionalProperties: false,
});
const Facts = Type.Record(FactKey, Type.String({ maxLength: 200 }), { additionalProperties: false });
const Timeout = Type.String({ pattern: '^[1-9][0-9]{0,5}[sm]$' });
/** The API sources' bounds: each request's deadline and how many are open at once. */
const Bounds = {
  request_timeout: Type.Optional(Timeout),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
};

export const AssetEntry = Type.Object(
  { name: Name, products: Products, facts: Type.Optional(Facts) },
  { additionalProperties: false },
);

/** Shared by every source: extra products and facts given to each of its assets. */
const Common = {
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
  timeout: Type.Optional(Timeout),
  products: Type.Optional(Products),
  facts: Type.Optional(Facts),
};

export const ProxmoxSource = Type.Object(
  {
    type: Type.Literal('proxmox'),
    ...Common,
    ...Bounds,
    url: Type.String({ pattern: '^https://' }),
    /** `USER@REALM!TOKENID` */
    token_id: Type.String({ pattern: '^[^\\s@!=]+@[^\\s@!=]+![^\\s@!=]+$' }),
    token_secret_file: Type.String({ minLength: 1 }),
    /** A PEM file with the CA (or the self-signed certificate) to trust. */
    ca_file: Type.Optional(Type.String({ minLength: 1 })),
    /** Or the SHA-256 fingerprint of the host's certificate (`AB:CD:...`, as Proxmox shows it). */
    fingerprint: Type.Optional(Type.String({ pattern: '^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$' })),
  },
  { additionalProperties: false },
);

export const NextcloudSource = Type.Object(
  {
    type: Type.Literal('nextcloud'),
    ...Common,
    /** The occ command as argv (no shell): e.g. [sudo, -u, www-data, php, /var/www/nextcloud/occ]. */
    command: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false },
);

/**
 * Nextcloud over HTTPS: `status.php` and the provisioning API's app list, as an admin
 * user with an app password (read from a file, never written in the inventory).
 */
export const NextcloudApiSource = Type.Object(
  {
    type: Type.Literal('nextcloud-api'),
    ...Common,
    ...Bounds,
    /** Where Nextcloud is served, e.g. https://cloud.lan or https://example.org/nextcloud */
    url: Type.String({ pattern: '^https://' }),
    /** The admin account the app password belongs to (Nextcloud's user id characters). */
    user: Type.String({ pattern: "^[A-Za-z0-9 _.@'-]{1,64}$" }),
    app_password_file: Type.String({ minLength: 1 }),
    ca_file: Type.Optional(Type.String({ minLength: 1 })),
    fingerprint: Type.Optional(Type.String({ pattern: '^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$' })),
  },
  { additionalProperties: false },
);

export const FileSource = Type.Object(
  { type: Type.Literal('file'), ...Common, path: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const HttpSourceConfig = Type.Object(
  {
    type: Type.Literal('http'),
    ...Common,
    url: Type.String({ pattern: '^https?://' }),
    product: ProductKey,
    /** RFC 6901 pointer into a JSON answer, e.g. /version */
    json_pointer: Type.Optional(Type.String({ pattern: '^(/[^/]*)*$' })),
    /** Or a regular expression whose first group is the version. */
    regex: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    ca_file: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const SourceConfig = Type.Union([
  ProxmoxSource,
  NextcloudSource,
  NextcloudApiSource,
  FileSource,
  HttpSourceConfig,
]);

export const InventoryFile = Type.Object(
  {
    assets: Type.Optional(Type.Array(AssetEntry)),
    sources: Type.Optional(Type.Array(SourceConfig)),
  },
  { additionalProperties: false },
);

export type InventoryFile = Static<typeof InventoryFile>;
export type SourceConfig = Static<typeof SourceConfig>;
export type ProxmoxSource = Static<typeof ProxmoxSource>;
export type NextcloudSource = Static<typeof NextcloudSource>;
export type NextcloudApiSource = Static<typeof NextcloudApiSource>;
export type FileSource = Static<typeof FileSource>;
export type HttpSourceConfig = Static<typeof HttpSourceConfig>;

export class InventoryError extends InputProblem {
  override name = 'InventoryError';
}

const fileValidator = Compile(InventoryFile);
/** Per type, so a mistake in a source is named in that source's terms, not the union's. */
const sourceValidators = {
  proxmox: Compile(ProxmoxSource),
  nextcloud: Compile(NextcloudSource),
  'nextcloud-api': Compile(NextcloudApiSource),
  file: Compile(FileSource),
  http: Compile(HttpSourceConfig),
} as const;
const assetsValidator = Compile(
  Type.Object({ assets: Type.Array(AssetEntry) }, { additionalProperties: false }),
);

/**
 * What `additionalProperties: false` says of a name it does not take ("schema is false"),
 * in an operator's words: a misspelt setting, or a product or fact key of the wrong form.
 */
const NOT_ALLOWED = 'is not allowed (no such setting, or a name not of the allowed form)';

function firstError(
  validator: {
    Errors(value: unknown): Iterable<{ keyword: string; instancePath: string; message: string }>;
  },
  value: unknown,
  what: string,
): never {
  const [first] = [...validator.Errors(value)];
  const message = first?.keyword === 'boolean' ? NOT_ALLOWED : (first?.message ?? 'is invalid');
  throw new InventoryError(`${what}: ${first?.instancePath || 'document'} ${message}`);
}

/** A fact that looks like a date must be a real one: a typo never silently becomes "never done". */
function checkFacts(facts: Record<string, string> | undefined, where: string): void {
  for (const [name, value] of Object.entries(facts ?? {})) {
    if (/^\d{4}-\d{2}-\d{2}/.test(value) && !parseInstant(value))
      throw new InventoryError(
        `${where}: fact ${name} "${value}" is not a real date (YYYY-MM-DD or RFC 3339)`,
      );
  }
}

function parseDocument(text: string, what: string): unknown {
  try {
    return parseYaml(text, 4 * 1024 * 1024);
  } catch (error) {
    if (error instanceof YamlError)
      throw new InventoryError(`${what}${error.line ? ` line ${error.line}` : ''}: ${error.message}`);
    throw error;
  }
}

/** Turns checked entries into assets of `source`; names must be unique. */
export function assetsOf(entries: Static<typeof AssetEntry>[], source: string, what: string): Asset[] {
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    if (seen.has(entry.name)) throw new InventoryError(`${what}: asset ${entry.name} is listed twice`);
    seen.add(entry.name);
    checkFacts(entry.facts, `${what}: /assets/${index}`);
    return {
      name: entry.name,
      source,
      products: { ...entry.products },
      facts: { ...entry.facts },
      status: 'ok',
    };
  });
}

/**
 * What an adapter reported, held to the inventory file's own rules (name characters and
 * length, product and fact keys, version length, unique names): a Proxmox, Nextcloud or
 * HTTP answer is outside input like the file, and the dashboard, the terminal and the log
 * rely on those rules. A breach fails the source, with the reason, like any other error.
 */
export function checkReported(assets: Asset[], source: string): Asset[] {
  const entries = assets.map((a) => ({
    name: a.name,
    products: a.products,
    ...(Object.keys(a.facts).length ? { facts: a.facts } : {}),
  }));
  const value = { assets: entries };
  if (!assetsValidator.Check(value)) firstError(assetsValidator, value, `source ${source} reported`);
  assetsOf(entries, source, `source ${source} reported`);
  return assets;
}

/** The inventory file (YAML or JSON), checked whole: a mistake names its place. */
export function parseInventoryFile(text: string, what = 'inventory'): InventoryFile {
  const value = parseDocument(text, what);
  const sources = (value as { sources?: unknown } | null)?.sources;
  if (Array.isArray(sources)) {
    sources.forEach((source: unknown, index) => {
      const type = (source as { type?: unknown } | null)?.type;
      // Own keys only: a `type` such as toString names no source, not Object's method.
      const validator =
        typeof type === 'string' && Object.hasOwn(sourceValidators, type)
          ? sourceValidators[type as keyof typeof sourceValidators]
          : undefined;
      if (validator && !validator.Check(source)) firstError(validator, source, `${what}: /sources/${index}`);
    });
  }
  if (!fileValidator.Check(value)) firstError(fileValidator, value, what);
  const names = new Set<string>();
  value.sources?.forEach((source, index) => {
    if (names.has(source.name))
      throw new InventoryError(`${what}: /sources/${index}: source name ${source.name} is used twice`);
    names.add(source.name);
    checkFacts(source.facts, `${what}: /sources/${index}`);
    const timeoutMs = checkTimeout(
      () => timeoutOf(source, DEFAULT_TIMEOUT_MS),
      `${what}: /sources/${index}: timeout`,
    );
    if ((source.type === 'proxmox' || source.type === 'nextcloud-api') && source.request_timeout) {
      const where = `${what}: /sources/${index}: request_timeout`;
      const requestMs = checkTimeout(() => requestTimeoutOf(source, timeoutMs), where);
      if (requestMs > timeoutMs)
        throw new InventoryError(
          `${where} ${source.request_timeout} is longer than the source's timeout ${source.timeout ?? '30s (the default)'}`,
        );
    }
    if (
      (source.type === 'proxmox' || source.type === 'nextcloud-api') &&
      source.ca_file &&
      source.fingerprint
    )
      throw new InventoryError(`${what}: /sources/${index}: give ca_file or fingerprint, not both`);
    if (source.type === 'http') {
      if ((source.json_pointer === undefined) === (source.regex === undefined))
        throw new InventoryError(`${what}: /sources/${index}: give json_pointer or regex (one of them)`);
      if (source.regex !== undefined && regexGroups(source.regex) < 1)
        throw new InventoryError(
          `${what}: /sources/${index}: regex must be a valid regular expression (RE2 syntax: no backreferences or lookaround) whose first group captures the version`,
        );
    }
  });
  assetsOf(value.assets ?? [], 'inventory', what);
  return value;
}

/** A duration setting read, its error named as `where` says. */
function checkTimeout(read: () => number, where: string): number {
  try {
    return read();
  } catch (error) {
    if (error instanceof DurationError) throw new InventoryError(`${where} ${error.message}`);
    throw error;
  }
}

/** A plain file of assets (`{assets: [...]}`, YAML or JSON): the `file` source and the CLI's --inventory. */
export function parseAssetsFile(text: string, source: string, what: string): Asset[] {
  const value = parseDocument(text, what);
  if (!assetsValidator.Check(value)) firstError(assetsValidator, value, what);
  return assetsOf(value.assets, source, what);
}

/**
 * How many capturing groups a regular expression has; -1 when it is not one. The syntax is
 * RE2's (no backreferences or lookaround), as the adapter matches with RE2JS: linear time
 * whatever the answer, so a hostile or broken service cannot stall the daemon.
 */
function regexGroups(source: string): number {
  try {
    return RE2JS.compile(source).groupCount();
  } catch {
    return -1;
  }
}

/** A path in the inventory file, relative to the file. */
export const resolveFrom = (inventoryFile: string, file: string) =>
  path.resolve(path.dirname(inventoryFile), file);
