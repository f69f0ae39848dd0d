/**
 * `npm run admin -- …`: the app's side of Murmur for operators and developers of the app —
 * users, API keys, credits, caps and demo content, over the services' internal RPCs. Never
 * exposed publicly. Service addresses come from the same *_ADDR variables as the services.
 */
import { parseArgs } from 'node:util';
import { MurmurError } from '@murmur/contract';
import { closeServiceClients, commonSchema, createServiceClients, loadConfig, serviceAddressSchema, storageSchema } from '@murmur/kit';
import { adminIdentity } from './identity';
import * as cmd from './commands';
import { appPublicUrl, appWebSchema } from '../web/config';

const USAGE = `Usage: npm run admin -- <command>
  users create --email E [--name N] [--plan free|pro|business]
  keys create --email E [--expires 30|90|365|never] [--name N] [--read-only | --scopes read|read,ai]
                                       (prints the key alone on the last line; a read-only key reads but
                                        is refused 403 insufficient_scope on AI calls and changes)
  keys list --email E
  keys revoke KEY_ID
  credits grant --email E --prepaid N
  credits set --email E [--monthly N] [--prepaid N]   (a support adjustment, recorded in the ledger)
  cap set --email E --cents N
  usage --email E
  seed --email E [--recordings N]
  webhooks secret --email E            (a new whsec_ signing secret, shown once, alone on the last line; the old one signs 24 h more)
  webhooks endpoint --email E --url U  (the default endpoint of the user's jobs; --url "" clears it)
  webhooks show --email E
  login --email E                      (a one-time sign-in link to the app's Settings pages, valid 15 minutes)`;

function intArg(value: string | undefined, name: string): number {
  if (value === undefined || !/^\d+$/.test(value)) throw new MurmurError('invalid_request', `--${name} must be a whole number.`, { param: name });
  return Number(value);
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new MurmurError('invalid_request', `--${name} is required.`, { param: name });
  return value;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      plan: { type: 'string' },
      expires: { type: 'string', default: '90' },
      'read-only': { type: 'boolean', default: false },
      scopes: { type: 'string' },
      prepaid: { type: 'string' },
      monthly: { type: 'string' },
      cents: { type: 'string' },
      url: { type: 'string' },
      recordings: { type: 'string', default: '25' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, arg] = positionals;
  if (values.help || !group) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema, ...appWebSchema });
  const clients = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: adminIdentity(cfg) });
  try {
    const what = `${group} ${action ?? ''}`.trim();
    switch (what) {
      case 'users create': {
        const user = await cmd.createUser(clients, need(values.email, 'email'), values.name ?? '', values.plan);
        console.log(`created user ${user.id} <${user.email}>${values.plan ? ` on plan ${values.plan}` : ''}`);
        break;
      }
      case 'keys create': {
        const scopes = cmd.keyScopesOf(values.scopes, values['read-only'] === true);
        const res = await cmd.createKey(clients, need(values.email, 'email'), values.expires ?? '90', values.name, scopes);
        const k = res.apiKey!;
        console.log(`created ${cmd.keyAccessOf(k.scopes)} key ${k.id} (${k.hint}, scopes ${k.scopes.join(' ')}), expires ${k.expiresAt ? k.expiresAt.toISOString() : 'never'}`);
        console.log('The key is shown once; store it now:');
        console.log(res.key);
        break;
      }
      case 'keys list': {
        for (const k of await cmd.listKeys(clients, need(values.email, 'email'))) {
          const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : k.expiresAt && k.expiresAt <= new Date() ? 'expired' : 'active';
          console.log(
            [k.id, k.hint, k.name, state, cmd.keyAccessOf(k.scopes), `expires ${k.expiresAt?.toISOString() ?? 'never'}`, `last used ${k.lastUsedAt?.toISOString() ?? 'never'}`].join('\t'),
          );
        }
        break;
      }
      case 'keys revoke': {
        const k = await cmd.revokeKey(clients, need(arg, 'KEY_ID'));
        console.log(`revoked ${k?.id} (${k?.hint})`);
        break;
      }
      case 'credits grant': {
        const u = await cmd.grantCredits(clients, need(values.email, 'email'), intArg(values.prepaid, 'prepaid'));
        console.log(`prepaid credits now ${u?.prepaidCreditsRemaining}`);
        break;
      }
      case 'credits set': {
        const u = await cmd.setCredits(
          clients,
          need(values.email, 'email'),
          values.monthly === undefined ? undefined : intArg(values.monthly, 'monthly'),
          values.prepaid === undefined ? undefined : intArg(values.prepaid, 'prepaid'),
        );
        console.log(`monthly credits now ${u?.monthlyCreditsRemaining}, prepaid credits now ${u?.prepaidCreditsRemaining}`);
        break;
      }
      case 'usage': {
        const u = await cmd.usageOf(clients, need(values.email, 'email'));
        if (!u) throw new MurmurError('internal_error');
        const rows: Array<[string, string]> = [
          ['plan', `${u.plan?.id} (${u.plan?.monthlyCredits} credits a month, ${u.plan?.rateLimitPerMinute} AI requests a minute)`],
          ['monthly credits', `${u.monthlyCreditsRemaining} left of ${u.plan?.monthlyCredits}, reset ${u.periodEnd?.toISOString()}`],
          ['prepaid credits', String(u.prepaidCreditsRemaining)],
          ['held by running calls', String(u.creditsReserved)],
          ['spending', `${u.spendCents} of ${u.spendingCapCents} cents this period`],
          ['this period', `${u.creditsUsed} credits used, ${u.transcriptions} transcriptions (${u.transcriptionSeconds} s), ${u.conversions} conversions`],
          ['rate limit', `${u.rateLimit?.remaining} of ${u.rateLimit?.limit} left in the ${u.rateLimit?.windowSeconds} s window`],
        ];
        for (const [k, v] of rows) console.log(`${k.padEnd(22)} ${v}`);
        break;
      }
      case 'cap set': {
        const u = await cmd.setCap(clients, need(values.email, 'email'), intArg(values.cents, 'cents'));
        console.log(`spending cap now ${u?.spendingCapCents} cents`);
        break;
      }
      case 'seed': {
        const r = await cmd.seed(clients, need(values.email, 'email'), intArg(values.recordings, 'recordings'));
        console.log(`seeded ${r.recordings} recordings, ${r.artifacts} artifacts, ${r.folders} folders, ${r.knowledgeBases} knowledge bases, ${r.threads} threads`);
        break;
      }
      case 'webhooks secret': {
        const { secret, settings } = await cmd.rotateWebhookSecret(clients, need(values.email, 'email'));
        if (settings?.previousValidUntil) console.log(`the previous secret also signs until ${settings.previousValidUntil.toISOString()}`);
        console.log('webhook signing secret (shown once; keep it in your receiver):');
        console.log(secret);
        break;
      }
      case 'webhooks endpoint': {
        if (values.url === undefined) throw new MurmurError('invalid_request', '--url is required ("" clears it).', { param: 'url' });
        const s = await cmd.setWebhookEndpoint(clients, need(values.email, 'email'), values.url);
        console.log(s?.defaultUrl ? `default endpoint ${s.defaultUrl}` : 'no default endpoint');
        break;
      }
      case 'webhooks show': {
        const s = await cmd.webhookSettings(clients, need(values.email, 'email'));
        console.log(`secret            ${s?.hasSecret ? s.secretHint : 'none (webhooks secret makes one)'}`);
        console.log(`previous secret   ${s?.previousValidUntil ? `signs until ${s.previousValidUntil.toISOString()}` : 'none'}`);
        console.log(`default endpoint  ${s?.defaultUrl || 'none'}`);
        break;
      }
      case 'login': {
        const { link, expiresAt } = await cmd.signInLinkFor(clients, need(values.email, 'email'), appPublicUrl(cfg));
        console.log(`sign-in link for ${values.email} (works once, until ${expiresAt?.toISOString()}):`);
        console.log(link);
        break;
      }
      default:
        console.error(`Unknown command "${what}".\n${USAGE}`);
        return 2;
    }
    return 0;
  } catch (err) {
    if (err instanceof MurmurError) {
      console.error(`error: ${err.code}: ${err.message}${err.code === 'service_unavailable' ? ' (is `npm start` running?)' : ''}`);
      return 1;
    }
    throw err;
  } finally {
    closeServiceClients(clients);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);
