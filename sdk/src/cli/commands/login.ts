/**
 * `murmur login` and `murmur logout`: the key, checked with GET /me before it is stored in the
 * user's config folder (0600), and removed again. A key is never printed, not even in part.
 */
import { Murmur } from '../../node-client.js';
import type { Command } from '../command.js';
import { readConfig, removeConfig, writeConfig } from '../config.js';
import { UsageError } from '../exit-codes.js';
import { readAll, readSecret } from '../prompt.js';

export const login: Command = {
  name: 'login',
  summary: 'Check an API key and store it for the next commands',
  arity: [0, 0],
  description:
    'Reads the key from --key, else from stdin (a prompt that does not echo on a terminal), checks it with Murmur, ' +
    'and stores it in $XDG_CONFIG_HOME/murmur/config.json (default ~/.config/murmur/config.json; %APPDATA%\\murmur on Windows), ' +
    'readable by you only. --api-key and MURMUR_API_KEY still win over the stored key. Create keys in the app under Settings → Developer.',
  options: {
    key: { type: 'string', value: 'KEY', description: 'The key (prefer stdin: a command line is seen by other processes)' },
  },
  example: 'pbpaste | murmur login',
  async run(ctx, input) {
    let key = input.string('key') ?? ctx.globals.apiKey;
    if (!key) key = ctx.stdin.isTTY ? await readSecret('API key (svc_…): ', ctx.stdin, ctx.out.stderr) : (await readAll(ctx.stdin)).split(/\r?\n/)[0];
    key = key?.trim();
    if (!key) throw new UsageError('no key: pass --key, or type or pipe it into stdin', input.command);
    const baseUrl = await ctx.baseUrl();
    const me = await new Murmur({ apiKey: key, ...(baseUrl ? { baseUrl } : {}) }).me();
    const stored = await readConfig(ctx.configFile);
    await writeConfig(ctx.configFile, { ...stored, apiKey: key, ...(baseUrl ? { baseUrl } : {}) });
    if (ctx.out.json) ctx.out.data({ object: 'login', user: { id: me.id, email: me.email }, config_file: ctx.configFile });
    else ctx.out.text(`Logged in as ${me.email}. The key is stored in ${ctx.configFile} (readable by you only).`);
    if (ctx.env.MURMUR_API_KEY) ctx.out.note('Note: MURMUR_API_KEY is set, and commands use it before the stored key.');
  },
};

export const logout: Command = {
  name: 'logout',
  summary: 'Remove the stored API key',
  arity: [0, 0],
  options: {},
  example: 'murmur logout',
  async run(ctx) {
    const removed = await removeConfig(ctx.configFile);
    if (ctx.out.json) ctx.out.data({ object: 'logout', removed, config_file: ctx.configFile });
    else ctx.out.text(removed ? `Logged out: removed ${ctx.configFile}.` : `Not logged in: there is no ${ctx.configFile}.`);
    if (ctx.env.MURMUR_API_KEY) ctx.out.note('Note: MURMUR_API_KEY is still set in your environment.');
  },
};
