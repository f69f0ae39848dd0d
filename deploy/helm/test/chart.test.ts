/**
 * The Helm chart, rendered offline by deploy/helm/render (Go text/template + sprig, strict) and
 * validated by deploy/helm/check.js against the Kubernetes schemas, unknown fields included —
 * for the real chart with its two value sets, and for broken copies that must fail.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  // The shapes below are read loosely: check.js has already validated them against the schemas.
  spec?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  data?: Record<string, string>;
  type?: string;
}
interface ChartResult {
  errors: string[];
  objects: K8sObject[];
  values: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}
interface CheckModule {
  APT_PACKAGES: string[];
  CHART: string;
  buildRenderer(): string;
  checkChart(opts: { binary: string; chartDir?: string; valueFiles?: string[] }): ChartResult;
  envoyLinkErrors(chartDir?: string): string[];
  GATEWAY_DRAIN_SECONDS: number;
  validateObject(obj: unknown): string[];
}
const check = require('../check.js') as CheckModule;
import { WORKLOADS } from '@murmur/contract';
import { loadTrustStore, loadWorkloadIdentity, TokenVerifier } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { JobStore, parseSecretKeys, TRANSCRIPTION_MIGRATIONS_DIR } from '@murmur/transcription';
const { servicesWithMigrations } = require('../../docker/migrate.js') as { servicesWithMigrations(): Array<{ name: string }> };

const REPO = path.resolve(__dirname, '..', '..', '..');
/** The live jobs of the transcription service's schema: what its "job queue depth" log line counts (queue-scaler.test.ts runs it). */
const TRANSCRIPTION_QUEUE_QUERY = "SELECT count(*) FROM transcription.jobs WHERE status IN ('queued', 'processing')";
const SERVICES = { auth: 50051, billing: 50052, library: 50053, transcription: 50054, conversion: 50055 } as const;
/** values.yaml metrics.port: every Murmur process's GET /metrics. */
const METRICS_PORT = 9464;

let binary = '';
let defaults: ChartResult;
let production: ChartResult;
const scratch: string[] = [];

beforeAll(() => {
  // No skip: without Go the suite fails here, with the apt-get line to run.
  binary = check.buildRenderer();
  defaults = check.checkChart({ binary });
  production = check.checkChart({ binary, valueFiles: ['values-production.yaml'] });
}, 120_000);

afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** A scratch copy of the chart, changed by `edit`, checked like the real one. */
function brokenCopy(edit: (dir: string) => void, valueFiles: string[] = []): ChartResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-chart-'));
  scratch.push(dir);
  fs.cpSync(check.CHART, dir, { recursive: true });
  edit(dir);
  return check.checkChart({ binary, chartDir: dir, valueFiles });
}
function replaceIn(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  fs.writeFileSync(file, text.replace(from, to));
}
const find = (r: ChartResult, kind: string, name: string): K8sObject => {
  const o = r.objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o;
};
const names = (r: ChartResult, kind: string): string[] => r.objects.filter((o) => o.kind === kind).map((o) => o.metadata.name).sort();
const container = (r: ChartResult, name: string) => find(r, 'Deployment', name).spec.template.spec.containers[0];
const envOf = (r: ChartResult, name: string): Record<string, unknown> =>
  Object.fromEntries((container(r, name).env as Array<{ name: string; value?: string; valueFrom?: unknown }>).map((e) => [e.name, e.value ?? e.valueFrom]));

describe('the chart as shipped', () => {
  it('renders strictly and validates against the Kubernetes schemas with the default values', () => {
    expect(defaults.errors).toEqual([]);
    expect(defaults.objects.length).toBeGreaterThan(25);
  });

  it('renders strictly and validates with values-production.yaml', () => {
    expect(production.errors).toEqual([]);
  });

  it('keeps one Envoy config: deploy/envoy/envoy.yaml links to files/envoy.yaml', () => {
    expect(check.envoyLinkErrors()).toEqual([]);
  });

  it('runs every deployable from one template, as the Services Envoy routes to', () => {
    const all = ['envoy', 'gateway', ...Object.keys(SERVICES)].map((n) => `murmur-${n}`).sort();
    for (const r of [defaults, production]) {
      expect(names(r, 'Deployment')).toEqual(all);
      expect(names(r, 'PodDisruptionBudget')).toEqual(all);
      expect(names(r, 'NetworkPolicy')).toEqual(all);
      for (const [svc, port] of Object.entries(SERVICES)) {
        // Its gRPC port, and its metrics (values metrics.port).
        expect(find(r, 'Service', `murmur-${svc}`).spec.ports.map((p: { port: number }) => p.port)).toEqual([port, METRICS_PORT]);
        expect(find(r, 'Service', `murmur-${svc}`).spec.clusterIP).toBe('None');
      }
      expect(find(r, 'Service', 'murmur-gateway').spec.ports[0].port).toBe(8080);
    }
  });

  it('probes gRPC services natively, the gateway on /healthz and Envoy on its /ready', () => {
    for (const [svc, port] of Object.entries(SERVICES)) {
      const c = container(defaults, `murmur-${svc}`);
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) expect(probe.grpc).toEqual({ port });
    }
    expect(container(defaults, 'murmur-gateway').readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container(defaults, 'murmur-envoy').readinessProbe.httpGet).toEqual({ path: '/ready', port: 'probes' });
  });

  it('gives the gateway 30 s after its preStop to drain live streams (finals, then 1012) before the kubelet kills it', () => {
    const drain = (r: ChartResult) => {
      const spec = find(r, 'Deployment', 'murmur-gateway').spec.template.spec;
      const preStop = spec.containers[0].lifecycle?.preStop;
      return { grace: spec.terminationGracePeriodSeconds, preStop, afterPreStop: spec.terminationGracePeriodSeconds - (preStop?.sleep?.seconds ?? 0) };
    };
    expect(check.GATEWAY_DRAIN_SECONDS).toBe(30);
    expect(drain(defaults)).toEqual({ grace: 60, preStop: undefined, afterPreStop: 60 });
    // Production first lets the Service stop sending it new connections.
    expect(drain(production)).toEqual({ grace: 60, preStop: { sleep: { seconds: 5 } }, afterPreStop: 55 });
    for (const r of [defaults, production]) expect(drain(r).afterPreStop).toBeGreaterThanOrEqual(check.GATEWAY_DRAIN_SECONDS);
  });

  it('wires each process to the others through murmur-<svc>:<port> and listens on 0.0.0.0', () => {
    const env = envOf(defaults, 'murmur-conversion');
    expect(env).toMatchObject({ AUTH_ADDR: 'murmur-auth:50051', BILLING_ADDR: 'murmur-billing:50052', LIBRARY_ADDR: 'murmur-library:50053', GRPC_LISTEN_ADDR: '0.0.0.0:50055' });
    expect(envOf(defaults, 'murmur-gateway')).toMatchObject({ PORT: '8080', HOST: '0.0.0.0', TRANSCRIPTION_ADDR: 'murmur-transcription:50054' });
  });

  it('gives the database to exactly the services that have migrations, from the Secret', () => {
    const withDb = Object.entries(production.values.components as Record<string, { database: boolean }>)
      .filter(([, c]) => c.database)
      .map(([n]) => n)
      .sort();
    expect(withDb).toEqual(servicesWithMigrations().map((s) => s.name));
    for (const svc of withDb) {
      expect(envOf(production, `murmur-${svc}`).DATABASE_URL).toEqual({ secretKeyRef: { name: 'murmur-production', key: 'DATABASE_URL' } });
      expect(envOf(production, `murmur-${svc}`).MURMUR_CURSOR_SECRET).toEqual({ secretKeyRef: { name: 'murmur-production', key: 'MURMUR_CURSOR_SECRET' } });
      // Without a database (defaults) they embed PGlite in an emptyDir.
      expect(envOf(defaults, `murmur-${svc}`).MURMUR_DATA_DIR).toBe('/data');
    }
    // The key sealing webhook signing secrets: transcription's alone, from the Secret; by default one the chart generated.
    expect(envOf(production, 'murmur-transcription').MURMUR_WEBHOOK_SECRET_KEY).toEqual({ secretKeyRef: { name: 'murmur-production', key: 'MURMUR_WEBHOOK_SECRET_KEY' } });
    expect(envOf(production, 'murmur-transcription').REDIS_URL).toEqual({ secretKeyRef: { name: 'murmur-production', key: 'REDIS_URL' } });
    for (const other of ['gateway', 'auth', 'billing', 'library', 'conversion']) expect(envOf(production, `murmur-${other}`).MURMUR_WEBHOOK_SECRET_KEY).toBeUndefined();
    const generated = Buffer.from(find(defaults, 'Secret', 'murmur-secrets').data!.MURMUR_WEBHOOK_SECRET_KEY!, 'base64').toString('utf8');
    expect(parseSecretKeys(generated)).toHaveLength(1);
    // Queued jobs' audio: the production claim every replica mounts; a pod's own volume by default.
    expect(envOf(production, 'murmur-transcription').MURMUR_AUDIO_DIR).toBe('/var/lib/murmur/audio');
    const volumes = (r: ChartResult) => find(r, 'Deployment', 'murmur-transcription').spec.template.spec.volumes.find((v: { name: string }) => v.name === 'audio');
    expect(volumes(production)).toEqual({ name: 'audio', persistentVolumeClaim: { claimName: 'murmur-transcription-audio' } });
    expect(volumes(defaults)).toEqual({ name: 'audio', emptyDir: { sizeLimit: '20Gi' } });
    expect(envOf(production, 'murmur-gateway').REDIS_URL).toEqual({ secretKeyRef: { name: 'murmur-production', key: 'REDIS_URL' } });
    expect(envOf(production, 'murmur-gateway').OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
  });

  it('autoscales the gateway on CPU with autoscaling/v2, and transcription on its job queue with KEDA', () => {
    expect(names(production, 'HorizontalPodAutoscaler')).toEqual(['murmur-gateway']);
    expect(find(production, 'Deployment', 'murmur-gateway').spec.replicas).toBeUndefined();
    expect(find(production, 'HorizontalPodAutoscaler', 'murmur-gateway').apiVersion).toBe('autoscaling/v2');
    expect(names(production, 'ScaledObject')).toEqual(['murmur-transcription']);
    expect(find(production, 'Deployment', 'murmur-transcription').spec.replicas).toBeUndefined();
    const scaled = find(production, 'ScaledObject', 'murmur-transcription').spec;
    expect(scaled).toMatchObject({ scaleTargetRef: { kind: 'Deployment', name: 'murmur-transcription' }, minReplicaCount: 2, maxReplicaCount: 30, pollingInterval: 15 });
    expect(scaled.advanced.horizontalPodAutoscalerConfig.behavior).toEqual({ scaleDown: { stabilizationWindowSeconds: 900 } });
    const [jobs, cpu] = scaled.triggers;
    expect(jobs).toMatchObject({ type: 'postgresql', metadata: { connectionFromEnv: 'DATABASE_URL', query: TRANSCRIPTION_QUEUE_QUERY, activationTargetQueryValue: '0' } });
    // One replica per MURMUR_JOB_CONCURRENCY live jobs: none waits while a replica could take it.
    expect(jobs.metadata.targetQueryValue).toBe(envOf(production, 'murmur-transcription').MURMUR_JOB_CONCURRENCY);
    expect(cpu).toEqual({ type: 'cpu', metricType: 'Utilization', metadata: { value: '60' } });
    // Off by default (KEDA is not in every cluster): no ScaledObject, and the HPA when enabled.
    expect(names(defaults, 'ScaledObject')).toEqual([]);
  });

  it('migrates in a pre-install/pre-upgrade Job whose Secret exists before it', () => {
    const job = find(production, 'Job', 'murmur-migrate');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].image).toBe('registry.example.com/murmur/migrate:0.1.0');
    // With the chart's own Secret the Job gets a hook Secret of an earlier weight.
    const own = check.checkChart({ binary, valueFiles: [writeValues({ secrets: { databaseUrl: 'postgres://u:p@db:5432/murmur', redisUrl: 'redis://r:6379' } })] });
    expect(own.errors).toEqual([]);
    const hookSecret = find(own, 'Secret', 'murmur-migrate');
    expect(hookSecret.metadata.annotations?.['helm.sh/hook-weight']).toBe('-5');
    expect(find(own, 'Job', 'murmur-migrate').spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name).toBe('murmur-migrate');
    // No database, nothing to migrate: each pod migrates its embedded one.
    expect(names(defaults, 'Job')).toEqual([]);
  });

  it('admits to each service only Envoy, the gateway and the services that call it', () => {
    const from = (r: ChartResult, n: string) =>
      (find(r, 'NetworkPolicy', `murmur-${n}`).spec.ingress[0].from ?? []).map((f: { podSelector: { matchLabels: Record<string, string> } }) => f.podSelector.matchLabels['app.kubernetes.io/component']).sort();
    // Every service asks auth to verify the key of a caller who sends one (VerifyKey).
    expect(from(defaults, 'auth')).toEqual(['billing', 'conversion', 'envoy', 'gateway', 'library', 'transcription']);
    expect(from(defaults, 'billing')).toEqual(['conversion', 'envoy', 'gateway', 'transcription']);
    // conversion stores artifacts; a completed transcription job saves its recording.
    expect(from(defaults, 'library')).toEqual(['conversion', 'envoy', 'gateway', 'transcription']);
    expect(from(defaults, 'gateway')).toEqual(['envoy']);
    expect(from(defaults, 'envoy')).toEqual([]);
  });

  it("gives every Murmur pod its own workload key and every workload's certificate, and no pod the app's key", () => {
    const trust = find(defaults, 'ConfigMap', 'murmur-identity-trust').data!;
    expect(Object.keys(trust).sort()).toEqual(WORKLOADS.map((w) => `${w}.pub`).sort());
    for (const name of ['gateway', ...Object.keys(SERVICES)]) {
      const spec = find(defaults, 'Deployment', `murmur-${name}`).spec.template.spec;
      expect(envOf(defaults, `murmur-${name}`).MURMUR_IDENTITY_DIR).toBe('/etc/murmur/identity');
      const sources = spec.volumes.find((v: { name: string }) => v.name === 'identity').projected.sources;
      expect(sources).toEqual([
        { configMap: { name: 'murmur-identity-trust' } },
        { secret: { name: `murmur-identity-${name}`, items: [{ key: `${name}.key`, path: `${name}.key` }] } },
      ]);
    }
    const mounted = defaults.objects.flatMap((o) => (o.spec?.template?.spec?.volumes ?? []) as Array<{ projected?: { sources: Array<{ secret?: { name: string } }> } }>);
    expect(mounted.flatMap((v) => v.projected?.sources ?? []).filter((x) => x.secret?.name === 'murmur-identity-app')).toEqual([]);
    expect(find(defaults, 'Secret', 'murmur-identity-app').data!['app.key']).toBeDefined();
  });

  it('makes keys our services accept: a pod\'s identity folder, as mounted, loads, and its tokens verify against the rendered certificates', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-chart-identity-'));
    scratch.push(dir);
    // The gateway pod's /etc/murmur/identity: every certificate and its own key.
    for (const [file, pem] of Object.entries(find(defaults, 'ConfigMap', 'murmur-identity-trust').data!)) fs.writeFileSync(path.join(dir, file), pem);
    const gatewayKey = Buffer.from(find(defaults, 'Secret', 'murmur-identity-gateway').data!['gateway.key']!, 'base64').toString('utf8');
    fs.writeFileSync(path.join(dir, 'gateway.key'), gatewayKey, { mode: 0o600 });
    const gateway = loadWorkloadIdentity({ MURMUR_DATA_DIR: '/data', MURMUR_IDENTITY_DIR: dir }, 'gateway');
    const token = await gateway.minter.workloadToken('library');
    fs.rmSync(path.join(dir, 'gateway.key'));
    expect(await new TokenVerifier('library', loadTrustStore(dir, 'library')).workloadToken(token)).toEqual({ workload: 'gateway', roles: [] });
  });

  it('takes every identity from identity.existingSecret when given, each pod still with its own key only', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ identity: { existingSecret: 'murmur-identities' } })] });
    expect(r.errors).toEqual([]);
    expect(names(r, 'Secret').filter((n) => n.startsWith('murmur-identity'))).toEqual([]);
    const items = find(r, 'Deployment', 'murmur-billing').spec.template.spec.volumes.find((v: { name: string }) => v.name === 'identity').projected.sources[0].secret.items;
    expect(items.map((i: { path: string }) => i.path).filter((p: string) => p.endsWith('.key'))).toEqual(['billing.key']);
    expect(items.map((i: { path: string }) => i.path).filter((p: string) => p.endsWith('.pub')).sort()).toEqual(WORKLOADS.map((w) => `${w}.pub`).sort());
  });

  it("serves every Murmur process's metrics on a port of its own, on its Service and past its NetworkPolicy; Envoy's on none", () => {
    for (const r of [defaults, production]) {
      for (const name of ['gateway', ...Object.keys(SERVICES)]) {
        expect(container(r, `murmur-${name}`).ports).toContainEqual({ name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' });
        expect(envOf(r, `murmur-${name}`).MURMUR_METRICS_ADDR).toBe(`0.0.0.0:${METRICS_PORT}`);
        expect(find(r, 'Service', `murmur-${name}`).spec.ports).toContainEqual({ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics', protocol: 'TCP', appProtocol: 'http' });
        const rules = find(r, 'NetworkPolicy', `murmur-${name}`).spec.ingress;
        expect(rules[1].ports).toEqual([{ port: 'metrics', protocol: 'TCP' }]);
        // The API's rule does not open the metrics port to the API's callers.
        expect(rules[0].ports.map((p: { port: string }) => p.port)).not.toContain('metrics');
      }
      expect(container(r, 'murmur-envoy').ports.map((p: { name: string }) => p.name)).not.toContain('metrics');
      expect(envOf(r, 'murmur-envoy').MURMUR_METRICS_ADDR).toBeUndefined();
    }
    expect(find(defaults, 'NetworkPolicy', 'murmur-billing').spec.ingress[1].from).toBeUndefined();
    expect(find(production, 'NetworkPolicy', 'murmur-billing').spec.ingress[1].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
  });

  it('renders the ServiceMonitor and the Grafana dashboard only when enabled (production), the dashboard as files/grafana-dashboard.json', () => {
    expect(names(defaults, 'ServiceMonitor')).toEqual([]);
    expect(defaults.objects.some((o) => o.kind === 'ConfigMap' && o.data?.['murmur.json'])).toBe(false);
    const sm = find(production, 'ServiceMonitor', 'murmur');
    expect(sm.metadata.labels).toMatchObject({ release: 'monitoring' });
    expect(sm.spec).toMatchObject({ selector: { matchLabels: { 'app.kubernetes.io/name': 'murmur', 'app.kubernetes.io/instance': 'murmur' } }, namespaceSelector: { matchNames: ['murmur'] } });
    expect(sm.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s' }]);
    const dashboard = find(production, 'ConfigMap', 'murmur-dashboard');
    expect(dashboard.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(dashboard.metadata.annotations).toEqual({ grafana_folder: 'Murmur' });
    expect(JSON.parse(dashboard.data!['murmur.json']!)).toEqual(JSON.parse(fs.readFileSync(path.join(check.CHART, 'files', 'grafana-dashboard.json'), 'utf8')));
  });

  it('exposes only HTTPS on the load balancer in production, with the given certificate', () => {
    expect(find(production, 'Service', 'murmur-envoy-public').spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }]);
    const volumes = find(production, 'Deployment', 'murmur-envoy').spec.template.spec.volumes;
    expect(volumes.find((v: { name: string }) => v.name === 'envoy-tls').secret.secretName).toBe('murmur-edge-tls');
    expect(find(defaults, 'Secret', 'murmur-envoy-tls').type).toBe('kubernetes.io/tls');
  });

  it('runs every pod non-root on a read-only root filesystem with nothing privileged', () => {
    for (const d of production.objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')) {
      const spec = d.spec.template.spec;
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.containers[0].securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
      expect(spec.volumes.find((v: { name: string }) => v.name === 'tmp').emptyDir).toBeDefined();
    }
  });
});

function writeValues(values: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-values-'));
  scratch.push(dir);
  const file = path.join(dir, 'values.yaml');
  fs.writeFileSync(file, JSON.stringify(values)); // JSON is YAML
  return file;
}

describe('the queue scaler’s query', () => {
  // Run on the service's real schema (Postgres in CI, the embedded one otherwise), in a test
  // schema of its own: the count KEDA scales on must be the jobs the service has live.
  it('counts the queued and processing jobs of the transcription service, as its depth gauge does', async () => {
    const db = await openTestDatabase('transcription', TRANSCRIPTION_MIGRATIONS_DIR, process.env.DATABASE_URL || undefined, ['_queue']);
    try {
      const query = find(production, 'ScaledObject', 'murmur-transcription').spec.triggers[0].metadata.query as string;
      expect(query).toContain(' transcription.jobs ');
      const mine = query.replace(' transcription.jobs ', ` ${db.schema}.jobs `);
      const statuses = ['queued', 'queued', 'queued', 'processing', 'processing', 'completed', 'failed', 'canceled'];
      for (const [i, status] of statuses.entries()) {
        await db.query(
          `INSERT INTO jobs (id, owner_id, idempotency_key, status, upload_bytes, duration_seconds, reservation_id, credits_reserved)
           VALUES ($1, 'usr_scaler', $1, $2, 1000, 60, $3, 1)`,
          [`trn_scaler${i}`, status, `rsv_scaler${i}`],
        );
      }
      const [row] = await db.query<{ count: string }>(mine);
      const depth = await new JobStore(db).depth();
      expect(Number(row!.count)).toBe(5);
      expect(Number(row!.count)).toBe(depth.queued + depth.processing);
    } finally {
      await db.close();
    }
  });
});

describe('broken charts fail the check', () => {
  it('fails the render when a template reads a value that is not there', () => {
    const r = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/pdb.yaml'), '$c.pdb.maxUnavailable', '$c.pdb.maxUnavailabl'));
    expect(r.errors.join('\n')).toMatch(/render: .*pdb\.yaml.*map has no entry for key "maxUnavailabl"/);
  });

  it('refuses more than one transcription replica without one audio volume they all mount', () => {
    const db = { secrets: { databaseUrl: 'postgres://u:p@db:5432/murmur', redisUrl: 'redis://redis:6379' } };
    const scaled = check.checkChart({ binary, valueFiles: [writeValues({ ...db, components: { transcription: { replicas: 2 } } })] });
    expect(scaled.errors.join('\n')).toMatch(/components\.transcription\.audio\.claimName: more than one replica needs one audio volume/);
    const shared = check.checkChart({
      binary,
      valueFiles: [writeValues({ ...db, components: { transcription: { replicas: 2, audio: { claimName: 'audio', mountPath: '/var/lib/murmur/audio', sizeLimit: '20Gi' } } } })],
    });
    expect(shared.errors).toEqual([]);
    const bucket = check.checkChart({
      binary,
      valueFiles: [writeValues({ ...db, components: { transcription: { replicas: 2, env: { MURMUR_AUDIO_STORE: 's3', MURMUR_S3_BUCKET: 'murmur-audio' } } } })],
    });
    expect(bucket.errors).toEqual([]);
  });

  it('fails when NOTES.txt, which helm install prints, reads a value that is not there', () => {
    const r = brokenCopy((dir) => fs.appendFileSync(path.join(dir, 'templates/NOTES.txt'), '{{ .Values.components.gateway.url }}\n'));
    expect(r.errors.join('\n')).toMatch(/NOTES\.txt.*map has no entry for key "url"/);
  });

  it('fails the render when a value is null (Helm would print "<no value>")', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ otel: { endpoint: 'http://c:4318', protocol: null } })] });
    expect(r.errors.join('\n')).toMatch(/render: .*map has no entry for key "protocol"|values\.otel: must have required property 'protocol'/);
  });

  it('fails validation on a field Kubernetes does not know', () => {
    const r = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/deployment.yaml'), '          imagePullPolicy:', '          imagePullPolcy: Always\n          imagePullPolicy:'));
    expect(r.errors.some((e) => /Deployment murmur-gateway: \/spec\/template\/spec\/containers\/0\/imagePullPolcy: unknown field/.test(e))).toBe(true);
  });

  it('fails on a value of the wrong type, in the values schema and again in the Kubernetes schema', () => {
    const two = writeValues({ components: { library: { replicas: 'two' } } });
    expect(check.checkChart({ binary, valueFiles: [two] }).errors).toContain('values.components.library.replicas: must be integer');
    // Without values.schema.json, the rendered Deployment itself is refused.
    const r = brokenCopy((dir) => fs.rmSync(path.join(dir, 'values.schema.json')), [two]);
    expect(r.errors.some((e) => /Deployment murmur-library: \/spec\/replicas must be integer/.test(e))).toBe(true);
  });

  it('refuses a misspelt value key', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ components: { gateway: { replica: 2 } } })] });
    expect(r.errors).toContain('values.components.gateway: must NOT have additional properties (replica)');
  });

  it('refuses scaling a service out on per-pod storage', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ components: { billing: { replicas: 3 } } })] });
    expect(r.errors.join('\n')).toMatch(/components\.billing: more than one replica needs a shared database/);
  });

  it('refuses queue scaling on a component without a job queue, and a ScaledObject field KEDA does not know', () => {
    const db = { secrets: { databaseUrl: 'postgres://u:p@db:5432/murmur' } };
    const queue = { enabled: true, jobsPerReplica: 2, pollingIntervalSeconds: 15 };
    const r = check.checkChart({ binary, valueFiles: [writeValues({ ...db, components: { billing: { autoscaling: { enabled: true, queue } } } })] });
    expect(r.errors.join('\n')).toMatch(/components\.billing\.autoscaling\.queue: only transcription has a job queue/);
    const typo = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/scaledobject.yaml'), '  pollingInterval:', '  pollingIntervall:'), ['values-production.yaml']);
    expect(typo.errors.join('\n')).toMatch(/ScaledObject murmur-transcription.*\/spec\/pollingIntervall: unknown field/);
    const noEnv = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/scaledobject.yaml'), 'connectionFromEnv: DATABASE_URL', 'connectionFromEnv: PG_URL'), ['values-production.yaml']);
    expect(noEnv.errors.join('\n')).toMatch(/trigger live-jobs reads PG_URL, which murmur-transcription does not set/);
  });

  it('refuses a gateway grace period that leaves it less than its drain after the preStop', () => {
    const gateway = (grace: number, sleep: number) =>
      check.checkChart({ binary, valueFiles: [writeValues({ components: { gateway: { terminationGracePeriodSeconds: grace, lifecycle: { preStop: { sleep: { seconds: sleep } } } } } })] }).errors;
    expect(gateway(30, 5)).toEqual([
      'Deployment murmur-gateway: gateway: terminationGracePeriodSeconds 30 leaves 25 s after the preStop; the gateway needs 30 s to drain its live streams (finals, then 1012)',
    ]);
    expect(gateway(35, 5)).toEqual([]);
  });

  it('refuses a preStop that sleeps through the grace period', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ components: { auth: { terminationGracePeriodSeconds: 10, lifecycle: { preStop: { sleep: { seconds: 10 } } } } } })] });
    expect(r.errors).toEqual(['Deployment murmur-auth: auth: its preStop sleeps 10 s of a 10 s terminationGracePeriodSeconds; SIGTERM would come too late to drain']);
  });

  it('refuses a NetworkPolicy naming a component that does not exist', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ components: { auth: { networkPolicy: { from: ['envoy', 'gatewy'] } } } })] });
    expect(r.errors.join('\n')).toMatch(/components\.auth\.networkPolicy\.from: no component named "gatewy"/);
  });

  it('notices an Envoy cluster routing to a port no Service has', () => {
    const r = brokenCopy((dir) => replaceIn(path.join(dir, 'files/envoy.yaml'), 'address: murmur-billing, port_value: 50052', 'address: murmur-billing, port_value: 50059'));
    expect(r.errors).toContain('Envoy cluster murmur-billing routes to murmur-billing:50059, not a port of Service murmur-billing');
  });

  it('notices a ServiceMonitor scraping a port no Service has, and one with a field its CRD does not know', () => {
    const port = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/servicemonitor.yaml'), '    - port: metrics', '    - port: metric'), ['values-production.yaml']);
    expect(port.errors).toContainEqual(expect.stringMatching(/ServiceMonitor murmur: no Service it selects has a port metric/));
    const typo = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/servicemonitor.yaml'), '      scheme: http', '      schema: http'), ['values-production.yaml']);
    expect(typo.errors).toContainEqual(expect.stringMatching(/ServiceMonitor murmur: .*schema: unknown field/));
  });

  it('notices a dashboard that reads a metric no Murmur process exports, or that is not JSON', () => {
    const foreign = brokenCopy((dir) => replaceIn(path.join(dir, 'files/grafana-dashboard.json'), 'rate(murmur_webhook_attempts_total', 'rate(webhook_attempts_total'), ['values-production.yaml']);
    expect(foreign.errors).toContainEqual(expect.stringMatching(/murmur-dashboard: the dashboard reads webhook_attempts_total/));
    const broken = brokenCopy((dir) => fs.appendFileSync(path.join(dir, 'files/grafana-dashboard.json'), '}'), ['values-production.yaml']);
    expect(broken.errors).toContainEqual(expect.stringMatching(/murmur-dashboard: the dashboard is not JSON/));
  });

  it('notices MURMUR_METRICS_ADDR on a port the container does not name metrics', () => {
    const r = brokenCopy((dir) => replaceIn(path.join(dir, 'templates/deployment.yaml'), 'value: {{ printf "0.0.0.0:%v" $root.Values.metrics.port | quote }}', 'value: "0.0.0.0:9465"'));
    expect(r.errors).toContainEqual(expect.stringMatching(/murmur-gateway: gateway: MURMUR_METRICS_ADDR 0.0.0.0:9465 is not its container port named metrics/));
  });

  it('notices an Envoy probe on a port Envoy does not listen on', () => {
    const r = brokenCopy((dir) => replaceIn(path.join(dir, 'values.yaml'), '{ name: probes, containerPort: 9902, servicePort: 0 }', '{ name: probes, containerPort: 9901, servicePort: 0 }'));
    expect(r.errors.join('\n')).toMatch(/Envoy container port probes \(9901\) is no listener on 0\.0\.0\.0/);
  });

  it('notices a migration hook reading a Secret that does not exist yet at pre-install', () => {
    const r = brokenCopy(
      (dir) => replaceIn(path.join(dir, 'templates/job-migrate.yaml'), '{{- $secretName := .Values.secrets.existingSecret | default (printf "%s-migrate" .Values.namePrefix) }}', '{{- $secretName := include "murmur.secretName" . }}'),
      [writeValues({ secrets: { databaseUrl: 'postgres://u:p@db:5432/murmur' } })],
    );
    expect(r.errors.join('\n')).toMatch(/Job murmur-migrate: a pre-install,pre-upgrade hook needs Secret murmur-secrets as an earlier hook/);
  });

  it('notices a container that may write its root filesystem', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ containerSecurityContext: { readOnlyRootFilesystem: false } })] });
    expect(r.errors.join('\n')).toMatch(/Deployment murmur-auth: auth: root filesystem is writable/);
  });

  it("notices a pod that holds another workload's key", () => {
    const r = brokenCopy((dir) =>
      replaceIn(path.join(dir, 'templates/deployment.yaml'), "- { key: {{ printf \"%s.key\" $name }}, path: {{ printf \"%s.key\" $name }} }\n              {{- end }}", "- { key: {{ printf \"%s.key\" $name }}, path: {{ printf \"%s.key\" $name }} }\n                    - { key: auth.key, path: auth.key }\n              {{- end }}"),
    );
    expect(r.errors.join('\n')).toMatch(/Deployment murmur-gateway: must hold exactly its own key gateway\.key, holds \[gateway\.key, auth\.key\]/);
  });

  it("notices a pod that mounts the app's admin key", () => {
    const r = check.checkChart({
      binary,
      valueFiles: [writeValues({ components: { library: { extraVolumes: [{ name: 'admin', secret: { secretName: 'murmur-identity-app' } }] } } })],
    });
    expect(r.errors.join('\n')).toMatch(/Deployment murmur-library: mounts the app's \(admin\) key/);
  });

  it('notices an image that is no target of the Dockerfile', () => {
    const r = check.checkChart({ binary, valueFiles: [writeValues({ components: { library: { image: { repository: 'murmur/librarian' } } } })] });
    expect(r.errors.join('\n')).toMatch(/image murmur\/librarian:0\.1\.0 is no target of the Dockerfile/);
  });
});

describe('the strict Kubernetes validation', () => {
  const deployment = () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x', labels: { 'any-label': 'is fine' } },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', readinessProbe: { grpc: { port: 1 } } }] } },
    },
  });

  it('accepts a valid object with free-form maps', () => {
    expect(check.validateObject(deployment())).toEqual([]);
  });

  it('rejects unknown fields at any depth, which the models alone accept', () => {
    const d = deployment() as ReturnType<typeof deployment> & { spec: { extra?: number; template: { spec: { containers: Array<Record<string, unknown>> } } } };
    d.spec.extra = 1;
    (d.spec.template.spec.containers[0]!.readinessProbe as Record<string, unknown>).grcp = {};
    expect(check.validateObject(d)).toEqual(['/spec/extra: unknown field', '/spec/template/spec/containers/0/readinessProbe/grcp: unknown field']);
  });

  it('rejects bad enums and missing required fields', () => {
    const d = deployment();
    (d.spec.template.spec.containers[0] as Record<string, unknown>).imagePullPolicy = 'Sometimes';
    delete (d.spec as Partial<typeof d.spec>).selector;
    const errors = check.validateObject(d).join('\n');
    expect(errors).toMatch(/imagePullPolicy must be equal to one of the allowed values/);
    expect(errors).toMatch(/\/spec must have required property selector/);
  });

  it('fails naming the Debian packages when Go is not installed', () => {
    const script = `try { require(${JSON.stringify(require.resolve('../check.js'))}).buildRenderer(); } catch (e) { process.stdout.write(e.message); }`;
    const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, PATH: '/nonexistent' }, encoding: 'utf8' });
    expect(out).toContain('golang-go');
    expect(out).toContain(`apt-get install -y ${check.APT_PACKAGES.join(' ')}`);
    expect(check.APT_PACKAGES).toEqual(['golang-go', 'golang-github-masterminds-sprig-dev', 'golang-gopkg-yaml.v3-dev']);
  });
});
