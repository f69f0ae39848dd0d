{{/*
Shared names, labels and decisions. Component templates are called with
(dict "root" $ "name" $name "c" $component).
*/}}

{{/* <namePrefix>-<component>: the names the Envoy config routes to. */}}
{{- define "murmur.fullname" -}}
{{- printf "%s-%s" .root.Values.namePrefix .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "murmur.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "murmur.labels" -}}
{{ include "murmur.selectorLabels" . }}
app.kubernetes.io/part-of: murmur
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image of a component: its own `image` when set, else <image.repository>/<target>:<tag>. */}}
{{- define "murmur.image" -}}
{{- $tag := .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- $own := .c.image | default dict -}}
{{- $repo := get $own "repository" | default (printf "%s/%s" .root.Values.image.repository .name) -}}
{{- printf "%s:%s" $repo (get $own "tag" | default $tag) -}}
{{- end -}}

{{- define "murmur.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default .Values.namePrefix -}}
{{- end -}}

{{/* The Secret holding DATABASE_URL, REDIS_URL and MURMUR_CURSOR_SECRET. */}}
{{- define "murmur.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" .Values.namePrefix) -}}
{{- end -}}

{{/* "true" when the services get a real Postgres (otherwise each pod embeds PGlite). */}}
{{- define "murmur.hasDatabase" -}}
{{- if .Values.secrets.existingSecret -}}
{{- if .Values.secrets.keys.databaseUrl }}true{{ end -}}
{{- else if .Values.secrets.databaseUrl }}true{{- end -}}
{{- end -}}

{{/* "true" when Redis is configured (otherwise caches and limits are in-process). */}}
{{- define "murmur.hasRedis" -}}
{{- if .Values.secrets.existingSecret -}}
{{- if .Values.secrets.keys.redisUrl }}true{{ end -}}
{{- else if .Values.secrets.redisUrl }}true{{- end -}}
{{- end -}}

{{/* host:port of a component's first Service port, as the other processes dial it. */}}
{{- define "murmur.address" -}}
{{- $port := first .c.ports -}}
{{- printf "%s:%v" (include "murmur.fullname" .) $port.servicePort -}}
{{- end -}}

{{/*
Refuses values that would deploy something broken: a stateful component scaled out on
per-pod storage, a NetworkPolicy naming a component that does not exist, TLS without a
certificate. Included once, by deployment.yaml.
*/}}
{{- define "murmur.validate" -}}
{{- $root := . -}}
{{- $hasDb := include "murmur.hasDatabase" . -}}
{{- $hasRedis := include "murmur.hasRedis" . -}}
{{- if and .Values.secrets.existingSecret (not .Values.secrets.keys.cursorSecret) -}}
{{- fail "secrets.keys.cursorSecret: the existing Secret must hold the page-cursor key (MURMUR_CURSOR_SECRET)" -}}
{{- end -}}
{{- if and .Values.secrets.existingSecret (not .Values.secrets.keys.webhookSecretKey) (get .Values.components.transcription "enabled") -}}
{{- fail "secrets.keys.webhookSecretKey: the existing Secret must hold the key sealing webhook signing secrets (MURMUR_WEBHOOK_SECRET_KEY)" -}}
{{- end -}}
{{- if and .Values.secrets.cursorSecret (lt (len .Values.secrets.cursorSecret) 16) -}}
{{- fail "secrets.cursorSecret: at least 16 characters" -}}
{{- end -}}
{{- range $name, $c := .Values.components -}}
{{- if $c.enabled -}}
{{- $scaled := or (gt (int $c.replicas) 1) $c.autoscaling.enabled -}}
{{- if and $c.database (not $hasDb) $scaled -}}
{{- fail (printf "components.%s: more than one replica needs a shared database: set secrets.databaseUrl or secrets.existingSecret (without one each pod embeds its own Postgres)" $name) -}}
{{- end -}}
{{- $s3Audio := eq (toString (get (default dict $c.env) "MURMUR_AUDIO_STORE")) "s3" -}}
{{- if and (get $c "audio") $scaled (not (get (get $c "audio" | default dict) "claimName")) (not $s3Audio) -}}
{{- fail (printf "components.%s.audio.claimName: more than one replica needs one audio volume they all mount (a ReadWriteMany PersistentVolumeClaim) or env MURMUR_AUDIO_STORE=s3 with MURMUR_S3_BUCKET; without either a job queued on one pod cannot run on another" $name) -}}
{{- end -}}
{{- if and (get (get $c.autoscaling "queue" | default dict) "enabled") (ne $name "transcription") -}}
{{- fail (printf "components.%s.autoscaling.queue: only transcription has a job queue to scale on" $name) -}}
{{- end -}}
{{- if and $c.redis (not $hasRedis) $scaled -}}
{{- fail (printf "components.%s: more than one replica needs Redis: set secrets.redisUrl or secrets.existingSecret (without it caches, limits and idempotency records are per pod)" $name) -}}
{{- end -}}
{{- if and (eq $c.kind "grpc") (not $c.addressEnv) -}}
{{- fail (printf "components.%s: a gRPC service needs addressEnv (the variable the others dial it by)" $name) -}}
{{- end -}}
{{- if and (ne $c.kind "envoy") (ne (len $c.ports) 1) -}}
{{- fail (printf "components.%s: a Murmur process listens on exactly one port" $name) -}}
{{- end -}}
{{- range $from := $c.networkPolicy.from -}}
{{- if not (hasKey $root.Values.components $from) -}}
{{- fail (printf "components.%s.networkPolicy.from: no component named %q" $name $from) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Envoy config: files/envoy.yaml, the one source (deploy/envoy/envoy.yaml links to it). */}}
{{- define "murmur.envoyConfig" -}}
{{- .Files.Get "files/envoy.yaml" -}}
{{- end -}}

{{/* The Secret with Envoy's certificate: the given one, or the chart's self-signed one. */}}
{{- define "murmur.envoyTlsSecret" -}}
{{- .Values.components.envoy.tls.secretName | default (printf "%s-envoy-tls" .Values.namePrefix) -}}
{{- end -}}

{{/*
The workloads with an identity (services/contract/src/workloads.ts; a chart test keeps the two
lists equal): the Murmur components, and the app (the admin CLI), which runs in no pod of the chart.
*/}}
{{- define "murmur.workloads" -}}
gateway auth billing library transcription conversion app
{{- end -}}

{{/* The Secret of one workload's private key (and its certificate). */}}
{{- define "murmur.identitySecret" -}}
{{- printf "%s-identity-%s" .root.Values.namePrefix .workload -}}
{{- end -}}

{{/* Where every Murmur process reads its key and the others' certificates (MURMUR_IDENTITY_DIR). */}}
{{- define "murmur.identityDir" -}}
/etc/murmur/identity
{{- end -}}
