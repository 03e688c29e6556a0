import { X509Certificate } from 'node:crypto';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { lockDataDir } from '../../../common/src/data-dir-lock.ts';
import type { Alert } from '../alerts/alert.ts';
import { mailSender } from '../alerts/email.ts';
import { Outbox } from '../alerts/outbox.ts';
import { postWebhook } from '../alerts/webhook.ts';
import { type PublicKey, parsePublicKey } from '../crypto/signify.ts';
import { DecisionStore } from '../decisions/store.ts';
import { loadInventory } from '../inventory/collect.ts';
import { InventoryError, type InventoryFile } from '../inventory/config.ts';
import { ensureDir } from '../storage/durable-files.ts';
import { readRegularFile } from '../storage/regular-file.ts';
import { Appliance } from './appliance.ts';
import { FeedCache } from './cache.ts';
import { type ApplianceConfig, ConfigError, loadApplianceConfig } from './config.ts';
import { StateStore } from './state.ts';

/**
 * Everything the appliance needs before it starts, checked at once: the environment,
 * then the files it names (feed keys, inventory). A problem is a ConfigError naming the
 * variable, and the command exits 2 before doing anything.
 */
export async function readTrustedKeys(files: string[]): Promise<PublicKey[]> {
  return Promise.all(
    files.map(async (file) => {
      try {
        return parsePublicKey(await readRegularFile(file, 64 * 1024));
      } catch (error) {
        throw new ConfigError('ADVISORY_PUBLIC_KEYS', `${file}: ${(error as Error).message}`);
      }
    }),
  );
}

export async function readInventoryConfig(file: string): Promise<InventoryFile> {
  try {
    return await loadInventory(file);
  } catch (error) {
    if (error instanceof InventoryError) throw new ConfigError('ADVISORY_INVENTORY', error.message);
    throw error;
  }
}

/** ADVISORY_SMTP_CA_FILE read once, at start: a missing or wrong file stops start-up. */
export async function readSmtpAuthority(config: ApplianceConfig): Promise<ApplianceConfig> {
  const file = config.smtp?.caFile;
  if (!config.smtp || !file) return config;
  let ca: string;
  try {
    ca = await readRegularFile(file, 1024 * 1024);
    new X509Certificate(ca);
  } catch (error) {
    const problem = (error as NodeJS.ErrnoException).code?.startsWith('ERR_OSSL')
      ? 'no PEM certificate in it'
      : (error as Error).message;
    throw new ConfigError('ADVISORY_SMTP_CA_FILE', `${file}: ${problem}`);
  }
  return { ...config, smtp: { ...config.smtp, ca } };
}

/**
 * The appliance's log, on standard error: pino-pretty's readable lines when a person
 * watches (standard error is a terminal: `advisory run` in a shell, `npm start`), one
 * JSON object a line otherwise (journald, a container's log, a pipe), as the scheduler
 * does. Written synchronously: a line is out before the process goes on or ends.
 */
export function applianceLogger(
  level: ApplianceConfig['logLevel'],
  options: { terminal?: boolean } = {},
): Logger {
  const settings = { level, base: { service: 'advisory' } };
  if (options.terminal ?? process.stderr.isTTY === true) {
    return pino(
      settings,
      pretty({
        destination: 2,
        sync: true,
        colorize: process.stderr.hasColors?.() ?? false,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
      }),
    );
  }
  return pino(settings, pino.destination({ dest: 2, sync: true }));
}

/**
 * What start-up reads, once: the settings (ADVISORY_*) and the files they name (feed keys,
 * inventory, the mail CA). Everything after (opening the state directory, waiting for it,
 * the dashboard's list of trusted keys) works from this, never from the environment again:
 * a key file replaced while the daemon waits for the state directory changes nothing until
 * the next start.
 */
export interface Startup {
  config: ApplianceConfig;
  trustedKeys: PublicKey[];
  inventory: InventoryFile;
}

/** Reads the environment and the files it names, once; a problem names the setting (exit 2). */
export async function readStartup(env: NodeJS.ProcessEnv): Promise<Startup> {
  const config = await readSmtpAuthority(loadApplianceConfig(env));
  const trustedKeys = await readTrustedKeys(config.publicKeyFiles);
  const inventory = await readInventoryConfig(config.inventoryFile);
  return { config, trustedKeys, inventory };
}

export interface OpenOptions {
  /** What start-up read already (readStartup); read from `env` when absent. */
  startup?: Startup;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  readOnly?: boolean;
  now?: () => Date;
}

/**
 * The composition root: the one place the appliance's parts are made and wired. Opens the
 * state directory (locked for this process unless read-only), the remembered state, the
 * decision log, the outbox with its channels, and hands them to the appliance, which
 * re-verifies the cache. A damaged remembered state is an error (StateError), never a
 * silent fresh start; a failure after the lock was taken lets it go.
 */
export async function openAppliance(
  options: OpenOptions = {},
): Promise<{ appliance: Appliance; config: ApplianceConfig }> {
  const startup = options.startup ?? (await readStartup(options.env ?? process.env));
  const { config } = startup;
  const logger = options.logger ?? applianceLogger(config.logLevel);
  const readOnly = !!options.readOnly;
  await ensureStateDir(config.stateDir);
  const cacheRefused = await new FeedCache(config.feedCache).refusal(config.stateDir);
  if (cacheRefused) throw new ConfigError('ADVISORY_FEED_CACHE', cacheRefused);
  const release = readOnly ? null : await lockDataDir(config.stateDir);
  try {
    const state = new StateStore(config.stateDir);
    if (!readOnly) await state.clearTemporaries();
    const accepted = await state.accepted();
    const evaluation = await state.evaluation();
    const decisions = readOnly
      ? null
      : await DecisionStore.open(config.stateDir, options.now?.() ?? new Date());
    const outbox = new Outbox(`${config.stateDir}/outbox`, alertSenders(config), {
      ...config.alerts,
      logger,
      ...(options.now ? { now: options.now } : {}),
    });
    if (!readOnly) await outbox.recover();
    const appliance = await Appliance.assemble({
      config,
      options: {
        trustedKeys: startup.trustedKeys,
        inventory: startup.inventory,
        logger,
        ...(readOnly ? { readOnly: true } : {}),
        ...(options.now ? { now: options.now } : {}),
      },
      state,
      decisions,
      outbox,
      accepted,
      evaluation,
      release,
    });
    return { appliance, config };
  } catch (error) {
    await release?.();
    throw error;
  }
}

/** The state directory, made when missing; one that cannot be made names ADVISORY_STATE_DIR. */
async function ensureStateDir(dir: string): Promise<void> {
  try {
    await ensureDir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'not a directory'
        : code === 'EACCES'
          ? 'permission denied'
          : (error as Error).message;
    throw new ConfigError('ADVISORY_STATE_DIR', `${dir}: ${problem}`);
  }
}

/** The alert channels configured: the webhook, mail, both or none. */
function alertSenders(config: ApplianceConfig): ConstructorParameters<typeof Outbox>[1] {
  const senders: ConstructorParameters<typeof Outbox>[1] = {};
  const webhook = config.webhookUrl;
  if (webhook) senders.webhook = (alert: Alert) => postWebhook(webhook, alert);
  if (config.smtp) senders.email = mailSender(config.smtp);
  return senders;
}
