#!/usr/bin/env node
// Builds the evaluation set of `npm run bench -- search-quality` (issue 34) in a git-ignored
// folder: public meetings with questions people asked of them and the turns that answer each.
// Nothing of it is committed; its licence travels with it in SOURCES.md.
//
//   node scripts/fetch-search-eval.js                 # download QMSum
//   node scripts/fetch-search-eval.js --qmsum DIR     # from a local copy of its repository
//   --out DIR                                         # default bench/data/search-quality (or BENCH_SEARCH_EVAL_DIR)
//
// Source: QMSum (MIT), every domain, data/ALL/{train,val,test}/*.json — product-design (AMI),
// academic (ICSI) and parliamentary committee meetings as speaker turns, each with
// `specific_query_list`: a question, its answer, and the inclusive turn ranges that hold it
// (`relevant_text_span`). QMSum's own split is kept: train and val are tuned on, test only measured.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { QMSUM_TARBALL, option, copyQmsumParts, qmsumRepository } = require('./eval-sources');

const args = process.argv.slice(2);
const out = path.resolve(option(args, '--out') ?? process.env.BENCH_SEARCH_EVAL_DIR ?? path.join(__dirname, '..', 'bench', 'data', 'search-quality'));

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-eval-'));
  try {
    fs.mkdirSync(out, { recursive: true });
    const repo = await qmsumRepository(option(args, '--qmsum'), tmp, 'ALL');
    process.stdout.write(`QMSum meetings (all domains): ${copyQmsumParts(repo, 'ALL', out)}\n`);
    fs.writeFileSync(
      path.join(out, 'SOURCES.md'),
      ['# search-quality evaluation set (not committed)', '', `- qmsum/: QMSum (Zhong et al., NAACL 2021), data/ALL, MIT licence — ${QMSUM_TARBALL}`, ''].join('\n'),
    );
    process.stdout.write(`evaluation set in ${out}\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`fetch-search-eval: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
