// The public sources the benchmarks' evaluation sets come from, and how to take them: downloaded,
// or from a local copy when there is no network. Shared by scripts/fetch-convert-eval.js
// (convert-quality) and scripts/fetch-search-eval.js (search-quality), so each source is fetched
// one way only.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

/** QMSum (Zhong et al., NAACL 2021), MIT licence: its repository at the head of main. */
const QMSUM_TARBALL = 'https://codeload.github.com/Yale-LILY/QMSum/tar.gz/refs/heads/main';
/** QMSum's own split, kept by every set made from it: train and val are tuned on, test only measured. */
const QMSUM_PARTS = ['train', 'val', 'test'];

/** The value after `name` in `args` (`--qmsum DIR` → DIR), or undefined. */
function option(args, name) {
  return args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
}

/** Downloads `url` to `file`; `hint` says which flag takes a local copy instead. */
async function download(url, file, hint) {
  process.stdout.write(`downloading ${url} …\n`);
  const res = await fetch(url, { signal: AbortSignal.timeout(10 * 60_000) }).catch((err) => {
    throw new Error(`${url}: ${err.cause?.message ?? err.message} (no network? ${hint})`);
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
}

/** Copies the .json files of `fromDir` into `toDir`; answers how many. */
function copyJson(fromDir, toDir) {
  fs.mkdirSync(toDir, { recursive: true });
  const files = fs.readdirSync(fromDir).filter((f) => f.endsWith('.json'));
  for (const f of files) fs.copyFileSync(path.join(fromDir, f), path.join(toDir, f));
  return files.length;
}

/**
 * A folder holding QMSum's `data/<domain>/` (a clone, an unpacked tarball, or an archive of a
 * mirror): `local` when given, else the repository's tarball downloaded and unpacked into `tmp`,
 * only `data/<domain>/` taken from it.
 */
async function qmsumRepository(local, tmp, domain) {
  let repo;
  if (local) repo = path.resolve(local);
  else {
    const tarball = path.join(tmp, 'qmsum.tar.gz');
    await download(QMSUM_TARBALL, tarball, 'take a local copy of the QMSum repository with --qmsum DIR');
    execFileSync('tar', ['-xzf', tarball, '-C', tmp, '--wildcards', `*/data/${domain}/*`]);
    const root = fs.readdirSync(tmp).find((d) => d.startsWith('QMSum'));
    if (!root) throw new Error('the QMSum tarball held no QMSum folder');
    repo = path.join(tmp, root);
  }
  if (!fs.existsSync(path.join(repo, 'data', domain))) throw new Error(`${repo} has no data/${domain}: is it the QMSum repository?`);
  return repo;
}

/** QMSum's `data/<domain>/{train,val,test}/*.json` copied to `<out>/qmsum/{train,val,test}/`; answers the counts. */
function copyQmsumParts(repo, domain, out) {
  return QMSUM_PARTS.map((part) => `${part} ${copyJson(path.join(repo, 'data', domain, part), path.join(out, 'qmsum', part))}`).join(', ');
}

module.exports = { QMSUM_TARBALL, QMSUM_PARTS, option, download, copyJson, qmsumRepository, copyQmsumParts };
