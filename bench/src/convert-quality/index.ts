/**
 * `npm run bench -- convert-quality`: the local conversion engine on real meetings, scored
 * against what people wrote about them (issue 17). For every meeting of the evaluation set
 * (meetings.ts) it converts the transcript as `summary` and as `action_items`, in-process, and
 * scores the summary's plain text with ROUGE-1/2 against the annotator's summary (and AMI's
 * abstract when present) and the action items against AMI's (scoring.ts). Figures are reported
 * for the tuning part and the measured part separately; the targets apply to the measured part.
 *
 * Without the evaluation set the benchmark reports that it was skipped and how to fetch it.
 */
import { performance } from 'node:perf_hooks';
import { LocalEngine, renderArtifact, type ConversionEngine } from '@murmur/conversion';
import { machineInfo, type Benchmark, type BenchmarkReport } from '../benchmark';
import { DEFAULT_EVAL_DIR, loadMeetings, type Meeting, type Part } from './meetings';
import { rougeScores, scoreActions, totalActions, type ActionScore, type ActionTotals } from './scoring';

/** Issue 17's targets, on the measured part. */
export const QUALITY_TARGETS = { recall: 0.5, owner_accuracy: 0.7, items_over_reference_max: 2, rouge1: 0.3 };

/** What relative dates are read against: the AMI meetings were recorded in 2005. */
const REFERENCE_TIME = new Date('2005-06-01T09:00:00Z');

interface MeetingResult {
  id: string;
  part: Part;
  words: number;
  summary_words: number;
  rouge1: number;
  rouge2: number;
  abstract_rouge1: number | null;
  items: number;
  actions: ActionScore | null;
  ms: number;
}

interface PartResult {
  meetings: number;
  words_median: number;
  summary: { rouge1: number; rouge2: number; words_mean: number; reference_words_mean: number; abstract_rouge1: number | null };
  actions: ActionTotals | null;
  items_per_meeting: number;
}

const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const wordCount = (s: string) => s.split(/\s+/).filter(Boolean).length;

async function evaluate(engine: ConversionEngine, m: Meeting): Promise<MeetingResult> {
  const input = (kind: 'summary' | 'action_items') => ({ transcript: m.transcript, kind, instructions: '', referenceTime: REFERENCE_TIME, signal: new AbortController().signal });
  const started = performance.now();
  const summary = renderArtifact(await engine.convert(input('summary')), 'plain');
  const actionArtifact = await engine.convert(input('action_items'));
  const ms = performance.now() - started;
  if (actionArtifact.kind !== 'action_items') throw new Error(`${m.id}: action_items came back as ${actionArtifact.kind}`);
  const { rouge1, rouge2 } = rougeScores(summary, m.summary);
  return {
    id: m.id,
    part: m.part,
    words: m.words,
    summary_words: wordCount(summary),
    rouge1: round(rouge1),
    rouge2: round(rouge2),
    abstract_rouge1: m.abstract ? round(rougeScores(summary, m.abstract).rouge1) : null,
    items: actionArtifact.items.length,
    actions: m.actions ? scoreActions(m.actions, actionArtifact.items) : null,
    ms: Math.round(ms),
  };
}

function summarise(results: MeetingResult[], meetings: Meeting[]): PartResult {
  const words = results.map((r) => r.words).sort((a, b) => a - b);
  const withAbstract = results.filter((r) => r.abstract_rouge1 !== null);
  const scored = results.map((r) => r.actions).filter((a): a is ActionScore => a !== null);
  return {
    meetings: results.length,
    words_median: words[Math.floor(words.length / 2)] ?? 0,
    summary: {
      rouge1: round(mean(results.map((r) => r.rouge1))),
      rouge2: round(mean(results.map((r) => r.rouge2))),
      words_mean: Math.round(mean(results.map((r) => r.summary_words))),
      reference_words_mean: Math.round(mean(meetings.map((m) => wordCount(m.summary)))),
      abstract_rouge1: withAbstract.length > 0 ? round(mean(withAbstract.map((r) => r.abstract_rouge1!))) : null,
    },
    actions: scored.length > 0 ? totalActions(scored) : null,
    items_per_meeting: round(mean(results.map((r) => r.items)), 2),
  };
}

export async function runConvertQuality(dir: string, log: (line: string) => void): Promise<BenchmarkReport> {
  const meetings = loadMeetings(dir);
  const engine = new LocalEngine();
  const results: MeetingResult[] = [];
  for (const m of meetings) {
    results.push(await evaluate(engine, m));
    if (results.length % 10 === 0) log(`  ${results.length}/${meetings.length} meetings`);
  }
  const parts = Object.fromEntries(
    (['tune', 'measure'] as const).map((part) => [part, summarise(results.filter((r) => r.part === part), meetings.filter((m) => m.part === part))]),
  ) as Record<Part, PartResult>;
  const measured = parts.measure;
  const actions = measured.actions;
  const targets = {
    rouge1: measured.summary.rouge1 >= QUALITY_TARGETS.rouge1,
    recall: actions ? actions.recall >= QUALITY_TARGETS.recall : null,
    owner_accuracy: actions ? actions.owner_accuracy >= QUALITY_TARGETS.owner_accuracy : null,
    items_over_reference: actions ? actions.items_over_reference <= QUALITY_TARGETS.items_over_reference_max : null,
  };
  const result = {
    benchmark: 'convert-quality',
    timestamp: new Date().toISOString(),
    machine: machineInfo(),
    engine: engine.name,
    data: { dir, meetings: meetings.length, with_ami_actions: meetings.filter((m) => m.actions !== null).length },
    targets: QUALITY_TARGETS,
    parts,
    targets_met: targets,
    meetings: results,
  };
  const fmt = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : String(x));
  const row = (name: string, p: PartResult) => [
    name,
    String(p.meetings),
    fmt(p.summary.rouge1),
    fmt(p.summary.rouge2),
    fmt(p.actions?.recall),
    fmt(p.actions?.owner_accuracy),
    fmt(p.actions?.items_over_reference),
    String(p.items_per_meeting),
  ];
  const notes = [
    `targets on the measured part: ROUGE-1 ≥ ${QUALITY_TARGETS.rouge1}, recall ≥ ${QUALITY_TARGETS.recall}, owner accuracy ≥ ${QUALITY_TARGETS.owner_accuracy}, items ≤ ${QUALITY_TARGETS.items_over_reference_max}× the reference`,
  ];
  if (!actions) notes.push('action items unscored: the AMI abstractive annotations are not in the set (scripts/fetch-convert-eval.js --ami)');
  return {
    result,
    table: { headers: ['part', 'meetings', 'ROUGE-1', 'ROUGE-2', 'recall', 'owner acc.', 'items ÷ ref', 'items/meeting'], rows: [row('tune', parts.tune), row('measure', measured)] },
    notes,
    failures: [],
  };
}

export const convertQualityBench: Benchmark = {
  name: 'convert-quality',
  description: 'the local engine on public meeting transcripts against human references: action-item recall, owners, noise, summary ROUGE (issue 17)',
  async run(log) {
    const dir = process.env.BENCH_EVAL_DIR ?? DEFAULT_EVAL_DIR;
    try {
      return await runConvertQuality(dir, log);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (!/no evaluation set|no meetings/.test(reason)) throw err;
      return {
        result: { benchmark: 'convert-quality', timestamp: new Date().toISOString(), skipped: true, reason, targets_met: null },
        table: { headers: ['convert-quality'], rows: [['skipped']] },
        notes: [reason],
        failures: [],
      };
    }
  },
};
