'use strict';
// What no schema sees: selectors, references, security contexts, probes, images, termination
// grace, and the Envoy config against the chart's Services and ports.
const YAML = require('yaml');
const { dashboardErrors } = require('./dashboard');

// ── 5. what no schema sees ──────────────────────────────────────────────────────────────────────

const matches = (selector, labels) => Object.entries(selector || {}).every(([k, v]) => labels && labels[k] === v);
const hookOf = (o) => (o.metadata && o.metadata.annotations && o.metadata.annotations['helm.sh/hook']) || '';
const weightOf = (o) => Number((o.metadata && o.metadata.annotations && o.metadata.annotations['helm.sh/hook-weight']) || 0);

/** Pod specs of the workloads, with where they come from. */
function podsOf(objects) {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => ({ owner: o, spec: o.spec.template.spec, labels: o.spec.template.metadata.labels || {} }));
}

/**
 * Cross-object rules. `ctx`: { values, dockerTargets, envoyFile } — envoyFile is the chart's
 * files/envoy.yaml text.
 */
function checkInvariants(objects, ctx) {
  const errors = [];
  const err = (o, msg) => errors.push(`${o.kind} ${o.metadata && o.metadata.name}: ${msg}`);
  const byKind = (k) => objects.filter((o) => o.kind === k);
  const names = new Set();
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata.name}`;
    if (names.has(id)) err(o, 'rendered twice');
    names.add(id);
  }
  const deployments = byKind('Deployment');
  const services = byKind('Service');
  const secrets = byKind('Secret');
  const configMaps = byKind('ConfigMap');
  const values = ctx.values;
  // Secrets the values say exist outside the chart.
  const external = new Set([values.secrets.existingSecret, ...Object.values(values.components).map((c) => (c.tls ? c.tls.secretName : ''))].filter(Boolean));
  const podOf = (selector) => deployments.filter((d) => matches(selector, d.spec.template.metadata.labels));

  for (const { owner, spec } of podsOf(objects)) {
    const hook = hookOf(owner);
    const psc = spec.securityContext || {};
    if (!psc.seccompProfile || psc.seccompProfile.type !== 'RuntimeDefault') err(owner, 'pod seccompProfile is not RuntimeDefault');
    if (spec.automountServiceAccountToken !== false) err(owner, 'mounts a service account token it does not need');
    if (spec.serviceAccountName && !hook && values.serviceAccount.create && !objects.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === spec.serviceAccountName)) {
      err(owner, `serviceAccountName ${spec.serviceAccountName} is not rendered`);
    }
    const volumes = new Map((spec.volumes || []).map((v) => [v.name, v]));
    for (const v of volumes.values()) {
      if (v.secret) refSecret(owner, hook, v.secret.secretName, null);
      if (v.configMap && !configMaps.some((c) => c.metadata.name === v.configMap.name)) err(owner, `volume ${v.name}: no ConfigMap ${v.configMap.name}`);
    }
    for (const c of spec.containers) {
      const sc = c.securityContext || {};
      if (!(sc.runAsNonRoot === true || (psc.runAsNonRoot === true && sc.runAsNonRoot !== false))) err(owner, `${c.name}: may run as root`);
      if (sc.readOnlyRootFilesystem !== true) err(owner, `${c.name}: root filesystem is writable`);
      if (sc.allowPrivilegeEscalation !== false) err(owner, `${c.name}: privilege escalation allowed`);
      if (!(sc.capabilities && (sc.capabilities.drop || []).includes('ALL'))) err(owner, `${c.name}: capabilities not all dropped`);
      if (sc.privileged) err(owner, `${c.name}: privileged`);
      for (const kind of ['requests', 'limits']) {
        for (const r of ['cpu', 'memory']) if (!(c.resources && c.resources[kind] && c.resources[kind][r] !== undefined)) err(owner, `${c.name}: no ${r} ${kind}`);
      }
      for (const m of c.volumeMounts || []) if (!volumes.has(m.name)) err(owner, `${c.name}: mounts missing volume ${m.name}`);
      const env = c.env || [];
      const seenEnv = new Set();
      for (const e of env) {
        if (seenEnv.has(e.name)) err(owner, `${c.name}: env ${e.name} set twice`);
        seenEnv.add(e.name);
        const ref = e.valueFrom && e.valueFrom.secretKeyRef;
        if (ref) refSecret(owner, hook, ref.name, ref.key);
        if (/_ADDR$/.test(e.name) && e.name !== 'GRPC_LISTEN_ADDR' && e.name !== 'MURMUR_METRICS_ADDR' && typeof e.value === 'string') {
          const [host, port] = e.value.split(':');
          const svc = services.find((s) => s.metadata.name === host);
          if (!svc || !svc.spec.ports.some((p) => String(p.port) === port)) err(owner, `${c.name}: ${e.name}=${e.value} is no Service port`);
        }
        if (e.name === 'GRPC_LISTEN_ADDR' && !(c.ports || []).some((p) => e.value === `0.0.0.0:${p.containerPort}`)) err(owner, `${c.name}: GRPC_LISTEN_ADDR ${e.value} is not a container port`);
        if (e.name === 'MURMUR_METRICS_ADDR' && !(c.ports || []).some((p) => p.name === 'metrics' && e.value === `0.0.0.0:${p.containerPort}`)) {
          err(owner, `${c.name}: MURMUR_METRICS_ADDR ${e.value} is not its container port named metrics`);
        }
      }
      if (owner.kind === 'Deployment') {
        if (!c.readinessProbe || !c.livenessProbe) err(owner, `${c.name}: readiness and liveness probes required`);
        const grpcPort = (c.ports || []).find((p) => p.name === 'grpc');
        if (grpcPort) {
          for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe].filter(Boolean)) {
            if (!probe.grpc || probe.grpc.port !== grpcPort.containerPort) err(owner, `${c.name}: a gRPC server is probed natively (grpc: {port: ${grpcPort.containerPort}})`);
          }
        }
        for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe].filter(Boolean)) {
          const port = (probe.httpGet && probe.httpGet.port) || (probe.grpc && probe.grpc.port) || (probe.tcpSocket && probe.tcpSocket.port);
          const known = (c.ports || []).some((p) => p.containerPort === port || p.name === port);
          if (!known) err(owner, `${c.name}: probe port ${port} is not a container port`);
        }
      }
      const prefix = `${values.image.repository}/`;
      if (c.image.startsWith(prefix)) {
        const target = c.image.slice(prefix.length).split(':')[0];
        if (!ctx.dockerTargets.includes(target)) err(owner, `${c.name}: image ${c.image} is no target of the Dockerfile (${ctx.dockerTargets.join(', ')})`);
      }
    }
  }

  function refSecret(owner, hook, name, key) {
    if (external.has(name)) return;
    const s = secrets.find((x) => x.metadata.name === name);
    if (!s) return err(owner, `references Secret ${name}, which is neither rendered nor named in values`);
    if (hook && !(hookOf(s) && weightOf(s) < weightOf(owner))) err(owner, `a ${hook} hook needs Secret ${name} as an earlier hook (the release's objects do not exist yet)`);
    if (!hook && hookOf(s)) err(owner, `Secret ${name} is a hook, gone once the hooks ran`);
    if (key && !Object.keys({ ...(s.data || {}), ...(s.stringData || {}) }).includes(key)) err(owner, `Secret ${name} has no key ${key}`);
  }

  for (const s of services) {
    const pods = podOf(s.spec.selector);
    if (pods.length !== 1) {
      err(s, `selects ${pods.length} Deployments`);
      continue;
    }
    const ports = pods[0].spec.template.spec.containers.flatMap((c) => c.ports || []);
    for (const p of s.spec.ports) {
      if (!ports.some((cp) => cp.name === p.targetPort || cp.containerPort === p.targetPort)) err(s, `port ${p.name} targets ${p.targetPort}, no container port`);
    }
  }
  for (const h of byKind('HorizontalPodAutoscaler')) {
    const d = deployments.find((x) => x.metadata.name === h.spec.scaleTargetRef.name && h.spec.scaleTargetRef.kind === 'Deployment');
    if (!d) err(h, `scales ${h.spec.scaleTargetRef.name}, no Deployment`);
    else if (d.spec.replicas !== undefined) err(h, `Deployment ${d.metadata.name} also sets replicas (they would fight)`);
    if (h.spec.minReplicas > h.spec.maxReplicas) err(h, 'minReplicas > maxReplicas');
    if (d && (h.spec.metrics || []).some((m) => m.type === 'Resource')) {
      for (const c of d.spec.template.spec.containers) {
        for (const m of h.spec.metrics) if (m.type === 'Resource' && !(c.resources.requests || {})[m.resource.name]) err(h, `${c.name} has no ${m.resource.name} request to scale on`);
      }
    }
  }
  // KEDA's ScaledObject makes its own HPA: it must scale a real Deployment nothing else scales, and
  // every trigger's connectionFromEnv must be a variable of that Deployment's container.
  for (const o of byKind('ScaledObject')) {
    const ref = o.spec.scaleTargetRef;
    const d = deployments.find((x) => x.metadata.name === ref.name && (ref.kind || 'Deployment') === 'Deployment');
    if (!d) err(o, `scales ${ref.name}, no Deployment`);
    else if (d.spec.replicas !== undefined) err(o, `Deployment ${d.metadata.name} also sets replicas (they would fight)`);
    if (byKind('HorizontalPodAutoscaler').some((h) => h.spec.scaleTargetRef.name === ref.name)) err(o, `an HPA also scales ${ref.name} (they would fight)`);
    if ((o.spec.minReplicaCount ?? 0) > (o.spec.maxReplicaCount ?? 100)) err(o, 'minReplicaCount > maxReplicaCount');
    for (const t of o.spec.triggers) {
      const fromEnv = t.metadata && t.metadata.connectionFromEnv;
      if (d && fromEnv && !d.spec.template.spec.containers.some((c) => (c.env || []).some((e) => e.name === fromEnv))) err(o, `trigger ${t.name || t.type} reads ${fromEnv}, which ${d.metadata.name} does not set`);
      if (d && t.type === 'cpu') {
        for (const c of d.spec.template.spec.containers) if (!(c.resources.requests || {}).cpu) err(o, `${c.name} has no cpu request to scale on`);
      }
    }
  }
  for (const p of byKind('PodDisruptionBudget')) if (podOf(p.spec.selector.matchLabels).length !== 1) err(p, 'selects no single Deployment');
  for (const n of byKind('NetworkPolicy')) {
    const pods = podOf(n.spec.podSelector.matchLabels);
    if (pods.length !== 1) {
      err(n, 'selects no single Deployment');
      continue;
    }
    const ports = pods[0].spec.template.spec.containers.flatMap((c) => c.ports || []);
    for (const rule of n.spec.ingress || []) {
      for (const p of rule.ports || []) if (!ports.some((cp) => cp.name === p.port || cp.containerPort === p.port)) err(n, `port ${p.port} is no container port`);
      for (const from of rule.from || []) {
        if (from.podSelector && !from.namespaceSelector && podOf(from.podSelector.matchLabels).length === 0) err(n, `admits pods ${JSON.stringify(from.podSelector.matchLabels)}, which no Deployment has`);
      }
    }
  }
  for (const j of byKind('Job')) {
    if (hookOf(j) && !/pre-install/.test(hookOf(j))) err(j, 'a migration hook runs pre-install');
  }
  errors.push(...checkMetrics(objects, ctx));
  errors.push(...checkIdentities(objects, ctx));
  errors.push(...checkEnvoy(objects, ctx));
  errors.push(...checkTermination(objects, ctx));
  return errors;
}

/**
 * Metrics (docs/operations.md#metrics): a ServiceMonitor scrapes a port some Service of its
 * selection names; the dashboard's ConfigMap holds files/grafana-dashboard.json
 * as it is, which passes dashboardErrors.
 */
function checkMetrics(objects, ctx) {
  const errors = [];
  for (const sm of objects.filter((o) => o.kind === 'ServiceMonitor')) {
    const selected = objects.filter((o) => o.kind === 'Service' && matches(sm.spec.selector.matchLabels, o.metadata.labels));
    for (const ep of sm.spec.endpoints || []) {
      if (!selected.some((s) => s.spec.ports.some((p) => p.name === ep.port))) errors.push(`ServiceMonitor ${sm.metadata.name}: no Service it selects has a port ${ep.port}`);
    }
  }
  const dashboard = objects.find((o) => o.kind === 'ConfigMap' && o.data && typeof o.data['murmur.json'] === 'string');
  if (dashboard) {
    if (dashboard.data['murmur.json'].trim() !== String(ctx.dashboardFile || '').trim()) errors.push(`ConfigMap ${dashboard.metadata.name}: murmur.json differs from files/grafana-dashboard.json`);
    errors.push(...dashboardErrors(dashboard.data['murmur.json']).map((e) => `ConfigMap ${dashboard.metadata.name}: ${e}`));
  }
  return errors;
}

/**
 * Seconds the gateway needs between SIGTERM and SIGKILL: every open live stream (up to 4 h long)
 * gets its last `final`, then close 1012 (docs/live.md), and requests under way finish.
 */
const GATEWAY_DRAIN_SECONDS = 30;
/** Kubernetes' terminationGracePeriodSeconds when a pod sets none. */
const DEFAULT_GRACE_SECONDS = 30;

/**
 * Pod termination: the kubelet runs the preStop hook, then sends SIGTERM, and kills the pod once
 * terminationGracePeriodSeconds (counted from the start, preStop included) run out. So a preStop
 * sleep must end within the grace period, and the gateway (kind http) must have
 * GATEWAY_DRAIN_SECONDS left after it, or its streams are cut without their finals.
 */
function checkTermination(objects, ctx) {
  const errors = [];
  for (const d of objects.filter((o) => o.kind === 'Deployment')) {
    const spec = d.spec.template.spec;
    const grace = spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
    const component = (d.spec.template.metadata.labels || {})['app.kubernetes.io/component'];
    const kind = ((ctx.values.components || {})[component] || {}).kind;
    for (const c of spec.containers) {
      const preStop = (c.lifecycle || {}).preStop || {};
      const sleep = preStop.sleep ? Number(preStop.sleep.seconds) : 0;
      const where = `Deployment ${d.metadata.name}: ${c.name}`;
      if (sleep >= grace) errors.push(`${where}: its preStop sleeps ${sleep} s of a ${grace} s terminationGracePeriodSeconds; SIGTERM would come too late to drain`);
      else if (kind === 'http' && grace - sleep < GATEWAY_DRAIN_SECONDS) {
        errors.push(`${where}: terminationGracePeriodSeconds ${grace} leaves ${grace - sleep} s after the preStop; the gateway needs ${GATEWAY_DRAIN_SECONDS} s to drain its live streams (finals, then 1012)`);
      }
    }
  }
  return errors;
}

/**
 * Workload identities (docs/authorization.md#keys): every Murmur Deployment reads
 * MURMUR_IDENTITY_DIR from a volume holding its own private key — no other workload's — and every
 * workload's certificate; the app's key (the admin CLI's) is in no pod of the chart.
 */
function checkIdentities(objects, ctx) {
  const errors = [];
  const prefix = `${ctx.values.namePrefix}-`;
  const existing = ctx.values.identity && ctx.values.identity.existingSecret;
  const trust = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === `${prefix}identity-trust`);
  const workloads = existing ? null : Object.keys((trust && trust.data) || {}).map((k) => k.replace(/\.pub$/, ''));
  if (!existing && !trust) errors.push(`no ConfigMap ${prefix}identity-trust with the workloads' certificates`);
  for (const { owner, spec, labels } of podsOf(objects)) {
    for (const v of spec.volumes || []) {
      const sources = (v.projected && v.projected.sources) || [];
      const secrets = [v.secret && { name: v.secret.secretName, items: v.secret.items }, ...sources.map((x) => x.secret)].filter(Boolean);
      for (const sec of secrets) if (sec.name === `${prefix}identity-app`) errors.push(`${owner.kind} ${owner.metadata.name}: mounts the app's (admin) key`);
    }
    const component = labels['app.kubernetes.io/component'];
    const murmur = spec.containers.find((c) => !/envoy/.test(c.image));
    if (owner.kind !== 'Deployment' || !murmur) continue;
    const where = `Deployment ${owner.metadata.name}`;
    const dir = ((murmur.env || []).find((e) => e.name === 'MURMUR_IDENTITY_DIR') || {}).value;
    const mount = (murmur.volumeMounts || []).find((m) => m.mountPath === dir);
    const volume = mount && (spec.volumes || []).find((v) => v.name === mount.name);
    if (!dir || !volume || !volume.projected) {
      errors.push(`${where}: no MURMUR_IDENTITY_DIR mounted from a projected identity volume`);
      continue;
    }
    const files = [];
    for (const src of volume.projected.sources) {
      const items = (src.secret || src.configMap || {}).items;
      if (items) files.push(...items.map((i) => i.path));
      else if (src.configMap) {
        const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === src.configMap.name);
        files.push(...Object.keys((cm && cm.data) || {}));
      } else if (src.secret) errors.push(`${where}: mounts every key of Secret ${src.secret.name}; list its items`);
    }
    const keys = files.filter((f) => f.endsWith('.key'));
    if (keys.length !== 1 || keys[0] !== `${component}.key`) errors.push(`${where}: must hold exactly its own key ${component}.key, holds [${keys.join(', ')}]`);
    const pubs = files.filter((f) => f.endsWith('.pub')).map((f) => f.slice(0, -4));
    for (const w of workloads || pubs) if (!pubs.includes(w)) errors.push(`${where}: no certificate of workload ${w}`);
    if (!pubs.includes(component)) errors.push(`${where}: no certificate of its own workload ${component}`);
  }
  return errors;
}

/** The Envoy config against the objects: routes to real Services, listens where probed/exposed. */
function checkEnvoy(objects, ctx) {
  const errors = [];
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.data && typeof o.data['envoy.yaml'] === 'string');
  const envoy = objects.find((o) => o.kind === 'Deployment' && o.spec.template.spec.containers.some((c) => /envoy/.test(c.image)));
  if (!cm || !envoy) return cm || envoy ? ['the Envoy Deployment and its ConfigMap come together'] : [];
  if (cm.data['envoy.yaml'] !== ctx.envoyFile) errors.push('ConfigMap envoy.yaml differs from files/envoy.yaml');
  let cfg;
  try {
    cfg = YAML.parse(cm.data['envoy.yaml'], { version: '1.1', uniqueKeys: true });
  } catch (e) {
    return [`envoy.yaml is not YAML: ${e.message}`];
  }
  const admin = cfg.admin && cfg.admin.address && cfg.admin.address.socket_address;
  if (!admin || admin.address !== '127.0.0.1') errors.push('Envoy admin must listen on 127.0.0.1 only');
  const listeners = ((cfg.static_resources || {}).listeners || []).map((l) => ({ name: l.name, ...(l.address || {}).socket_address, l }));
  const container = envoy.spec.template.spec.containers[0];
  const open = (port) => listeners.some((l) => Number(l.port_value) === Number(port) && (l.address === '0.0.0.0' || l.address === '::'));
  for (const p of container.ports || []) if (!open(p.containerPort)) errors.push(`Envoy container port ${p.name} (${p.containerPort}) is no listener on 0.0.0.0 in envoy.yaml`);
  for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe].filter(Boolean)) {
    const port = probe.httpGet ? probe.httpGet.port : probe.tcpSocket ? probe.tcpSocket.port : undefined;
    const num = typeof port === 'string' ? ((container.ports || []).find((p) => p.name === port) || {}).containerPort : port;
    if (port !== undefined && !open(num)) errors.push(`Envoy probe port ${port} is no listener on 0.0.0.0 in envoy.yaml (admin is loopback-only; the kubelet cannot reach it)`);
  }
  // Files the config reads (certificates) must be mounted.
  const mounts = (container.volumeMounts || []).map((m) => m.mountPath.replace(/\/$/, ''));
  const files = [];
  JSON.stringify(cfg, (k, v) => (k === 'filename' && typeof v === 'string' ? (files.push(v), v) : v));
  for (const f of files) if (!mounts.some((m) => f.startsWith(`${m}/`))) errors.push(`envoy.yaml reads ${f}, which no volume provides`);
  const argv = container.args || [];
  const cfgPath = argv[argv.indexOf('--config-path') + 1] || argv[argv.indexOf('-c') + 1];
  if (!cfgPath || !mounts.some((m) => cfgPath === `${m}/envoy.yaml`)) errors.push(`Envoy's --config-path ${cfgPath} is not the mounted envoy.yaml`);
  // The overload manager's heap ceiling must fit the memory limit.
  const heap = ((cfg.overload_manager || {}).resource_monitors || []).map((m) => m.typed_config && m.typed_config.max_heap_size_bytes).find(Boolean);
  const limit = bytes(((container.resources || {}).limits || {}).memory);
  if (heap && limit !== undefined && Number(heap) > limit) errors.push(`envoy.yaml's max_heap_size_bytes ${heap} exceeds the container's memory limit`);
  const prefix = `${ctx.values.namePrefix}-`;
  const services = objects.filter((o) => o.kind === 'Service');
  for (const c of (cfg.static_resources || {}).clusters || []) {
    for (const ep of ((c.load_assignment || {}).endpoints || []).flatMap((e) => e.lb_endpoints || [])) {
      const sa = ep.endpoint && ep.endpoint.address && ep.endpoint.address.socket_address;
      if (!sa || !String(sa.address).startsWith(prefix)) continue;
      const host = String(sa.address).split('.')[0];
      const svc = services.find((s) => s.metadata.name === host);
      if (!svc) errors.push(`Envoy cluster ${c.name} routes to ${sa.address}, no Service`);
      else if (!svc.spec.ports.some((p) => Number(p.port) === Number(sa.port_value))) errors.push(`Envoy cluster ${c.name} routes to ${sa.address}:${sa.port_value}, not a port of Service ${host}`);
    }
  }
  return errors;
}

/** A Kubernetes memory quantity in bytes (binary and decimal suffixes). */
function bytes(q) {
  if (q === undefined) return undefined;
  const m = /^([0-9.]+)([KMGTE]i?)?$/.exec(String(q));
  if (!m) return undefined;
  const units = { K: 1e3, M: 1e6, G: 1e9, T: 1e12, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Ei: 2 ** 60 };
  return Number(m[1]) * (m[2] ? units[m[2]] : 1);
}

module.exports = { checkInvariants, GATEWAY_DRAIN_SECONDS };
