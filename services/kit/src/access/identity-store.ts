/**
 * `npm start`'s key store: every workload's key pair on one machine, laid out so that no process
 * is pointed at a folder holding another's private key (docs/authorization.md#keys):
 *
 *   <root>/              0700   MURMUR_IDENTITY_DIR of the launcher and the admin CLI (default MURMUR_DATA_DIR/identity)
 *     public/            0755   every <workload>.pub: the one folder every process is pointed at
 *     private/           0700   <workload>.key of the gateway and the five services (0600): read by
 *                                the launcher only, which hands each child its own on descriptor 3
 *     admin/             0700   app.key (0600): the app's key, the only one with the admin role:
 *                                the admin CLI's, the launcher's first-run seeding and the app's pages
 *
 * Earlier versions kept every `<workload>.key` and `.pub` directly in <root>; the launcher (and the
 * admin CLI) move such a store into this layout, keeping every key.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateWorkloadKeyPair } from './identity-keys';
import { WORKLOADS, type Workload } from '@murmur/contract';

export interface IdentityStore {
  root: string;
  /** Every workload's public key: the trust folder of every process. */
  publicDir: string;
  /** Where `workload`'s private key is kept. */
  keyFile(workload: Workload): string;
  /** Where `workload`'s public key is kept. */
  publicFile(workload: Workload): string;
}

const PUBLIC = 'public';
/** The folder of each workload's private key: the app's (admin) apart from the others'. */
const privateDirOf = (w: Workload) => (w === 'app' ? 'admin' : 'private');

/** The paths of the store at `root` (nothing is read or made). */
export function identityStoreAt(root: string): IdentityStore {
  return {
    root,
    publicDir: join(root, PUBLIC),
    keyFile: (w) => join(root, privateDirOf(w), `${w}.key`),
    publicFile: (w) => join(root, PUBLIC, `${w}.pub`),
  };
}

/** Whether `dir` is a key store of `npm start` in this layout. */
export function isIdentityStore(dir: string): boolean {
  return existsSync(join(dir, PUBLIC)) && statSync(join(dir, PUBLIC)).isDirectory();
}

/** `<workload>.key` and `.pub` files directly in `dir` (the earlier layout). */
function flatFilesIn(dir: string): string[] {
  return readdirSync(dir).filter((f) => WORKLOADS.some((w) => f === `${w}.key` || f === `${w}.pub`));
}

/**
 * Whether `dir` is a store of an earlier `npm start` (private keys of several workloads side by
 * side), or one whose move into this layout stopped half-way. A folder with one private key and
 * the public keys (the chart's layout, an admin pod's) is not one.
 */
export function isFlatIdentityStore(dir: string): boolean {
  if (!existsSync(dir)) return false;
  const flat = flatFilesIn(dir);
  if (isIdentityStore(dir)) return flat.length > 0;
  return flat.filter((f) => f.endsWith('.key')).length > 1;
}

function ensureDir(dir: string, mode: number): void {
  mkdirSync(dir, { recursive: true, mode });
  chmodSync(dir, mode);
}

/** Owner-only folders and private keys, whatever an umask or a copy made of them. */
function tightenModes(store: IdentityStore): void {
  ensureDir(store.root, 0o700);
  ensureDir(store.publicDir, 0o755);
  for (const w of WORKLOADS) {
    ensureDir(join(store.root, privateDirOf(w)), 0o700);
    if (existsSync(store.keyFile(w))) chmodSync(store.keyFile(w), 0o600);
  }
}

/**
 * Moves a store of an earlier `npm start` (every `<workload>.key` and `.pub` in `root`) into the
 * layout above, keeping every key. Returns the workloads whose files moved; nothing when `root`
 * is not such a store. A key already at its new place beside an old one is a conflict for a
 * person to settle, never overwritten.
 */
export function migrateIdentityStore(root: string): Workload[] {
  if (!isFlatIdentityStore(root)) return [];
  const store = identityStoreAt(root);
  tightenModes(store);
  const moved: Workload[] = [];
  for (const w of WORKLOADS) {
    for (const [from, to] of [
      [join(root, `${w}.key`), store.keyFile(w)],
      [join(root, `${w}.pub`), store.publicFile(w)],
    ] as const) {
      if (!existsSync(from)) continue;
      if (existsSync(to)) throw new Error(`both ${from} and ${to} exist: keep the one that belongs to the other and remove it from ${root}`);
      renameSync(from, to);
      if (!moved.includes(w)) moved.push(w);
    }
  }
  tightenModes(store);
  return moved;
}

/**
 * The store at `root`, ready for `npm start`: an earlier layout moved, a key pair made for every
 * workload that has none (Ed25519), folders and private keys owner-only.
 */
export function prepareIdentityStore(root: string): { store: IdentityStore; made: Workload[]; moved: Workload[] } {
  const moved = migrateIdentityStore(root);
  const store = identityStoreAt(root);
  tightenModes(store);
  const made: Workload[] = [];
  for (const w of WORKLOADS) {
    if (existsSync(store.keyFile(w)) && existsSync(store.publicFile(w))) continue;
    const pair = generateWorkloadKeyPair();
    writeFileSync(store.keyFile(w), pair.privatePem, { mode: 0o600 });
    chmodSync(store.keyFile(w), 0o600);
    writeFileSync(store.publicFile(w), pair.publicPem, { mode: 0o644 });
    made.push(w);
  }
  return { store, made, moved };
}
