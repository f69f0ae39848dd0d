#!/usr/bin/env node
// Builds the evaluation set of `npm run bench -- convert-quality` (issue 17) in a git-ignored
// folder: public meeting transcripts with references written by people. Nothing of it is
// committed; its licences travel with it in SOURCES.md.
//
//   node scripts/fetch-convert-eval.js                    # download both sources
//   node scripts/fetch-convert-eval.js --qmsum DIR        # QMSum from a local copy of its repository
//   node scripts/fetch-convert-eval.js --ami DIR          # AMI annotations from a local ami_public_manual_1.6.2
//   node scripts/fetch-convert-eval.js --ami-zip FILE     # … or from its zip
//   --out DIR                                             # default bench/data/convert-quality (or BENCH_EVAL_DIR)
//   --no-ami                                              # summaries only (no action-item references)
//
// Sources:
// - QMSum (MIT): its product-design meetings, data/Product/{train,val,test}/*.json — the AMI
//   corpus's scenario meetings as role-labelled turns, each with an annotator's summary of the
//   whole meeting. QMSum's own split is kept: train and val are tuned on, test only measured.
// - The AMI Meeting Corpus manual annotations 1.6.2 (CC BY 4.0): abstractive/*.abssumm.xml, whose
//   <actions> section lists each meeting's action items and <abstract> summarises it.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { QMSUM_TARBALL, option: optionOf, download, copyQmsumParts, qmsumRepository } = require('./eval-sources');

const AMI_ZIP = 'https://groups.inf.ed.ac.uk/ami/AMICorpusAnnotations/ami_public_manual_1.6.2.zip';

const args = process.argv.slice(2);
const option = (name) => optionOf(args, name);
const out = path.resolve(option('--out') ?? process.env.BENCH_EVAL_DIR ?? path.join(__dirname, '..', 'bench', 'data', 'convert-quality'));

/** AMI's abstractive summaries from an unpacked ami_public_manual_1.6.2 folder. */
function takeAmi(dir) {
  const from = path.join(dir, 'abstractive');
  if (!fs.existsSync(from)) throw new Error(`${dir} has no abstractive/: is it ami_public_manual_1.6.2?`);
  const to = path.join(out, 'ami', 'abstractive');
  fs.mkdirSync(to, { recursive: true });
  const files = fs.readdirSync(from).filter((f) => f.endsWith('.abssumm.xml'));
  for (const f of files) fs.copyFileSync(path.join(from, f), path.join(to, f));
  process.stdout.write(`AMI abstractive summaries: ${files.length}\n`);
}

function unzipAmi(zip, tmp) {
  const dir = path.join(tmp, 'ami');
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('unzip', ['-q', '-o', zip, 'abstractive/*', '-d', dir]);
  takeAmi(dir);
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-eval-'));
  try {
    fs.mkdirSync(out, { recursive: true });
    const repo = await qmsumRepository(option('--qmsum'), tmp, 'Product');
    process.stdout.write(`QMSum product meetings: ${copyQmsumParts(repo, 'Product', out)}\n`);
    if (!args.includes('--no-ami')) {
      const amiDir = option('--ami');
      const amiZip = option('--ami-zip');
      if (amiDir) takeAmi(path.resolve(amiDir));
      else if (amiZip) unzipAmi(path.resolve(amiZip), tmp);
      else {
        const zip = path.join(tmp, 'ami.zip');
        await download(AMI_ZIP, zip, 'take local copies with --qmsum / --ami');
        unzipAmi(zip, tmp);
      }
    }
    fs.writeFileSync(
      path.join(out, 'SOURCES.md'),
      [
        '# convert-quality evaluation set (not committed)',
        '',
        `- qmsum/: QMSum (Zhong et al., NAACL 2021), MIT licence — ${QMSUM_TARBALL}`,
        `- ami/: AMI Meeting Corpus manual annotations 1.6.2, CC BY 4.0 — ${AMI_ZIP}`,
        '',
      ].join('\n'),
    );
    process.stdout.write(`evaluation set in ${out}\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`fetch-convert-eval: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
