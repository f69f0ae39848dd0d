/**
 * `npm run models -- fetch base.en [--sha256 <hex>] [--force]` and `npm run models -- list`:
 * downloads whisper.cpp models into MURMUR_MODELS_DIR (default ./models) from
 * MURMUR_MODELS_BASE_URL, with progress on stderr and checksums verified (see models.ts).
 * `npm run models -- fetch diarization [--force]` fetches the pinned speaker-diarization
 * files from sherpa-onnx's releases (MURMUR_SHERPA_RELEASES_URL; diarization/fetch-models.ts).
 * `npm run models -- fetch vad [--force]` fetches the pinned Silero VAD v5 that live streams of
 * the whisper and OpenAI engines need (live/silero-vad.ts).
 */
import { readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { loadConfig, z } from '@murmur/kit';
import { DEFAULT_MODELS_BASE_URL, fetchModel, KNOWN_MODELS } from './models';
import { fetchDiarizationModels, fetchPinnedModels, SHERPA_RELEASES_URL } from './diarization/fetch-models';
import { SILERO_VAD_DOWNLOAD, SILERO_VAD_FILE } from './live/silero-vad';
import { DIARIZATION_DOWNLOADS, diarizationModelsOf } from './diarization/models';

const schema = {
  MURMUR_MODELS_DIR: z.string().default('./models'),
  MURMUR_MODELS_BASE_URL: z.string().url().default(DEFAULT_MODELS_BASE_URL),
  /** sherpa-onnx's GitHub releases, or a mirror laid out the same way. */
  MURMUR_SHERPA_RELEASES_URL: z.string().url().default(SHERPA_RELEASES_URL),
};

/** The name that fetches the speaker-diarization models instead of a whisper model. */
const DIARIZATION = 'diarization';
/** The name that fetches the Silero VAD model of live streams. */
const VAD = 'vad';

const USAGE = `usage: npm run models -- fetch <name> [--sha256 <hex>] [--force]
       npm run models -- fetch diarization [--force]
       npm run models -- fetch vad [--force]
       npm run models -- list
names: ${Object.keys(KNOWN_MODELS).join(', ')} (or any ggml-<name>.bin on the server, with --sha256); diarization; vad`;

const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);

/** Progress as one rewritten line on a terminal, a line per 10% otherwise. */
function progressPrinter(file: string, out: NodeJS.WritableStream & { isTTY?: boolean }) {
  let lastDecile = -1;
  let lastDraw = 0;
  return (received: number, total: number | undefined) => {
    const pct = total ? Math.floor((received / total) * 100) : undefined;
    const line = `${file}  ${mib(received)}${total ? ` / ${mib(total)}` : ''} MiB${pct !== undefined ? `  ${pct}%` : ''}`;
    if (out.isTTY) {
      const now = Date.now();
      if (now - lastDraw < 100 && received !== total) return;
      lastDraw = now;
      out.write(`\r${line}`);
      if (received === total) out.write('\n');
    } else {
      const decile = pct !== undefined ? Math.floor(pct / 10) : Math.floor(received / (50 * 1024 * 1024));
      if (decile !== lastDecile) {
        lastDecile = decile;
        out.write(`${line}\n`);
      }
    }
  };
}

/** Runs the CLI; returns the exit code (tests call it directly). */
export async function runModelsCli(argv: string[], env: NodeJS.ProcessEnv = process.env, stderr: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr): Promise<number> {
  const cfg = loadConfig(schema, env);
  const [command, ...rest] = argv;
  try {
    if (command === 'list') {
      let names: string[] = [];
      try {
        names = (await readdir(cfg.MURMUR_MODELS_DIR)).filter((n) => n.endsWith('.bin'));
      } catch {
        // no folder yet: nothing installed
      }
      stderr.write(`models in ${path.resolve(cfg.MURMUR_MODELS_DIR)}:\n`);
      for (const n of names) stderr.write(`  ${n}  ${mib((await stat(path.join(cfg.MURMUR_MODELS_DIR, n))).size)} MiB\n`);
      if (names.length === 0) stderr.write('  (none)\n');
      stderr.write(`fetchable: ${Object.entries(KNOWN_MODELS).map(([n, m]) => `${n} (${m.size})`).join(', ')}\n`);
      const diarization = diarizationModelsOf(cfg.MURMUR_MODELS_DIR);
      const vad = await stat(path.join(cfg.MURMUR_MODELS_DIR, SILERO_VAD_FILE)).then(() => true, () => false);
      stderr.write(`vad (live streams of whisper/openai): ${vad ? 'installed' : `missing ${SILERO_VAD_FILE} (fetch vad, ${mib(SILERO_VAD_DOWNLOAD.bytes)} MiB)`}\n`);
      stderr.write(`diarization: ${'missing' in diarization ? `missing ${diarization.missing.join(', ')} (fetch diarization, ${mib(DIARIZATION_DOWNLOADS.reduce((n, d) => n + d.bytes, 0))} MiB)` : 'installed'}\n`);
      return 0;
    }
    if (command !== 'fetch') {
      stderr.write(`${USAGE}\n`);
      return 2;
    }
    let name: string | undefined;
    let sha256: string | undefined;
    let force = false;
    for (let i = 0; i < rest.length; i++) {
      const arg = rest[i]!;
      if (arg === '--sha256') sha256 = rest[++i];
      else if (arg.startsWith('--sha256=')) sha256 = arg.slice('--sha256='.length);
      else if (arg === '--force') force = true;
      else if (!arg.startsWith('-') && !name) name = arg;
      else {
        stderr.write(`unknown argument ${arg}\n${USAGE}\n`);
        return 2;
      }
    }
    if (!name) {
      stderr.write(`${USAGE}\n`);
      return 2;
    }
    if (name === VAD) {
      if (sha256 !== undefined) {
        stderr.write(`--sha256 does not apply to vad: its file is pinned (src/live/silero-vad.ts)\n`);
        return 2;
      }
      const printVad = progressPrinter(SILERO_VAD_FILE, stderr);
      stderr.write(`fetching the Silero VAD model into ${path.resolve(cfg.MURMUR_MODELS_DIR)}\n`);
      const [f] = await fetchPinnedModels([SILERO_VAD_DOWNLOAD], { dir: cfg.MURMUR_MODELS_DIR, force, onProgress: (_file, received, total) => printVad(received, total) });
      if (f) stderr.write(f.alreadyPresent ? `${f.file} is already there (use --force to download it again)\n` : `saved ${f.file} (${mib(f.bytes)} MiB; sha256 verified)\n`);
      return 0;
    }
    if (name === DIARIZATION) {
      if (sha256 !== undefined) {
        stderr.write(`--sha256 does not apply to diarization: its files are pinned (src/diarization/models.ts)\n`);
        return 2;
      }
      stderr.write(`fetching the diarization models from ${cfg.MURMUR_SHERPA_RELEASES_URL} into ${path.resolve(cfg.MURMUR_MODELS_DIR)}\n`);
      const printers = new Map<string, ReturnType<typeof progressPrinter>>();
      const files = await fetchDiarizationModels({
        dir: cfg.MURMUR_MODELS_DIR,
        releasesUrl: cfg.MURMUR_SHERPA_RELEASES_URL,
        force,
        onProgress: (file, received, total) => {
          if (!printers.has(file)) printers.set(file, progressPrinter(file, stderr));
          printers.get(file)!(received, total);
        },
      });
      for (const f of files) {
        stderr.write(f.alreadyPresent ? `${f.file} is already there (use --force to download it again)\n` : `saved ${f.file} (${mib(f.bytes)} MiB; checksums verified)\n`);
      }
      return 0;
    }
    const file = name.startsWith('ggml-') ? name : `ggml-${name}.bin`;
    stderr.write(`fetching ${file} from ${cfg.MURMUR_MODELS_BASE_URL} into ${path.resolve(cfg.MURMUR_MODELS_DIR)}\n`);
    const result = await fetchModel({
      name,
      dir: cfg.MURMUR_MODELS_DIR,
      baseUrl: cfg.MURMUR_MODELS_BASE_URL,
      force,
      ...(sha256 !== undefined ? { sha256 } : {}),
      onProgress: progressPrinter(file, stderr),
    });
    if (result.alreadyPresent) stderr.write(`${result.path} is already there (use --force to download it again)\n`);
    else stderr.write(`saved ${result.path} (${mib(result.bytes)} MiB; verified ${result.verified.join(', ')})\n`);
    return 0;
  } catch (err) {
    stderr.write(`models: ${(err as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  runModelsCli(process.argv.slice(2)).then((code) => process.exit(code));
}
