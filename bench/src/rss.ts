/**
 * Resident memory of benchmark processes from /proc: VmRSS sampled on an interval, and the
 * kernel's own peak (VmHWM), which is exact whatever the sampling misses. The peak is reset
 * before a measurement by writing 5 to /proc/<pid>/clear_refs (Linux ≥ 4.0; our own children).
 */
import * as fs from 'node:fs';

/** Decimal megabytes, as the project counts sizes (500 MB = 500,000,000 bytes). */
const MB = 1_000_000;

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM, …), or undefined when unreadable. */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resets the process's VmHWM to its current RSS; false when the kernel refused. */
export function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface RssReport {
  /** RSS when sampling started, MB (10^6 bytes). */
  start_rss_mb: number;
  /** Highest sampled VmRSS, MB. */
  peak_sampled_rss_mb: number;
  /** VmHWM at the end, MB: the exact peak since the reset (or since the process started when the reset failed). */
  vm_hwm_mb: number;
  /** max(peak_sampled_rss_mb, vm_hwm_mb): what the target is checked against. */
  peak_mb: number;
  /** Whether VmHWM was reset at the start (else it may include earlier peaks). */
  hwm_reset: boolean;
  samples: number;
}

const mb = (bytes: number | undefined) => Math.round(((bytes ?? 0) / MB) * 10) / 10;

/** Samples VmRSS of named processes every `intervalMs` between start() and stop(). */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly peak = new Map<string, number>();
  private readonly start0 = new Map<string, number>();
  private readonly reset = new Map<string, boolean>();
  private count = 0;

  constructor(
    private readonly pids: Record<string, number>,
    private readonly intervalMs = 50,
  ) {}

  start(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      this.reset.set(name, resetPeak(pid));
      const rss = statusBytes(pid, 'VmRSS') ?? 0;
      this.start0.set(name, rss);
      this.peak.set(name, rss);
    }
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  private sample(): void {
    this.count += 1;
    for (const [name, pid] of Object.entries(this.pids)) {
      const rss = statusBytes(pid, 'VmRSS');
      if (rss !== undefined && rss > (this.peak.get(name) ?? 0)) this.peak.set(name, rss);
    }
  }

  stop(): Record<string, RssReport> {
    clearInterval(this.timer);
    this.sample();
    const out: Record<string, RssReport> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const sampled = mb(this.peak.get(name));
      const hwm = mb(statusBytes(pid, 'VmHWM'));
      out[name] = {
        start_rss_mb: mb(this.start0.get(name)),
        peak_sampled_rss_mb: sampled,
        vm_hwm_mb: hwm,
        peak_mb: Math.max(sampled, hwm),
        hwm_reset: this.reset.get(name) ?? false,
        samples: this.count,
      };
    }
    return out;
  }
}

/** Every descendant of `pid` (children of any of its threads, theirs, …), from /proc/<pid>/task/<tid>/children. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let children = '';
      try {
        children = fs.readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(' ').filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(pid);
  return out;
}

/**
 * Proportional set size of a process in bytes (/proc/<pid>/smaps_rollup): its private pages plus
 * its share of pages mapped by others too (the same model files in every recognizer), so the PSS
 * of several processes adds up to what they really hold, where their RSS would count shared pages
 * once per process.
 */
export function pssBytes(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
