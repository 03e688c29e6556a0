import { X509Certificate } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { type PublicKey, parsePublicKey } from '../crypto/signify.ts';
import { loadInventory } from '../inventory/collect.ts';
import { InventoryError, type InventoryFile } from '../inventory/config.ts';
import { readRegularFile } from '../storage/regular-file.ts';
import { Appliance } from './appliance.ts';
import { type ApplianceConfig, ConfigError, loadApplianceConfig } from './config.ts';

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

export function applianceLogger(level: ApplianceConfig['logLevel']): Logger {
  return pino({ level, base: { service: 'advisory' } }, pino.destination({ dest: 2, sync: true }));
}

export async function openAppliance(
  options: { env?: NodeJS.ProcessEnv; logger?: Logger; readOnly?: boolean; now?: () => Date } = {},
): Promise<{ appliance: Appliance; config: ApplianceConfig }> {
  const config = await readSmtpAuthority(loadApplianceConfig(options.env ?? process.env));
  const trustedKeys = await readTrustedKeys(config.publicKeyFiles);
  const inventory = await readInventoryConfig(config.inventoryFile);
  const appliance = await Appliance.open(config, {
    trustedKeys,
    inventory,
    logger: options.logger ?? applianceLogger(config.logLevel),
    ...(options.readOnly ? { readOnly: true } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return { appliance, config };
}
