/**
 * Where `murmur login` keeps the key, and which key a command uses. The file is the user's
 * alone (0600 in a 0700 folder), written whole then renamed so a crash never leaves half a key.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/** What `murmur login` stores. */
export interface StoredConfig {
  apiKey?: string;
  /** Stored when login was told another Murmur than the default one. */
  baseUrl?: string;
}

/**
 * The config file: `$XDG_CONFIG_HOME/murmur/config.json`, else `%APPDATA%\murmur\config.json` on
 * Windows, else `~/.config/murmur/config.json` (macOS included, as most developer CLIs do).
 */
export function configFile(env: Record<string, string | undefined>, platform: string, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'murmur', 'config.json');
  if (platform === 'win32') return path.win32.join(env.APPDATA || path.win32.join(home, 'AppData', 'Roaming'), 'murmur', 'config.json');
  return path.join(home, '.config', 'murmur', 'config.json');
}

export async function readConfig(file: string): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    const { apiKey, baseUrl } = parsed as Record<string, unknown>;
    return { ...(typeof apiKey === 'string' && apiKey ? { apiKey } : {}), ...(typeof baseUrl === 'string' && baseUrl ? { baseUrl } : {}) };
  } catch {
    throw new CliError(`${file} is not a valid config file: run 'murmur logout', then 'murmur login'.`, EXIT.unexpected);
  }
}

/** Writes the config readable by its owner only (the folder too). */
export async function writeConfig(file: string, config: StoredConfig): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    await chmod(temp, 0o600);
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

/** Removes the config file; answers whether there was one. */
export async function removeConfig(file: string): Promise<boolean> {
  try {
    await rm(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

export type KeySource = 'flag' | 'env' | 'config';

/** The key a command uses: `--api-key`, then MURMUR_API_KEY, then the stored one (an empty value counts as unset). */
export function resolveApiKey(sources: { flag?: string | undefined; env?: string | undefined; stored?: string | undefined }): { key: string; from: KeySource } | undefined {
  if (sources.flag) return { key: sources.flag, from: 'flag' };
  if (sources.env) return { key: sources.env, from: 'env' };
  if (sources.stored) return { key: sources.stored, from: 'config' };
  return undefined;
}

/** The base URL a command uses: `--base-url`, then MURMUR_BASE_URL, then the stored one; undefined: the SDK's default. */
export function resolveBaseUrl(sources: { flag?: string | undefined; env?: string | undefined; stored?: string | undefined }): string | undefined {
  return sources.flag || sources.env || sources.stored || undefined;
}
