{{/* Chart name, overridable. */}}
{{- define "logpipeline-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name: the release name when it already contains the chart name. */}}
{{- define "logpipeline-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "logpipeline-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "logpipeline-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: logpipeline
{{- end }}

{{/* Labels that select the operator pods (immutable once deployed). */}}
{{- define "logpipeline-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "logpipeline-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "logpipeline-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "logpipeline-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The leader-election Lease name. */}}
{{- define "logpipeline-operator.leaseName" -}}
{{- default (printf "%s-leader" (include "logpipeline-operator.fullname" .)) .Values.leaderElection.leaseName }}
{{- end }}

{{/* repository[:tag][@digest] with the tag defaulting to the chart's appVersion. */}}
{{- define "logpipeline-operator.imageRef" -}}
{{- $tag := default .root.Chart.AppVersion .image.tag }}
{{- if .image.digest }}
{{- printf "%s@%s" .image.repository .image.digest }}
{{- else }}
{{- printf "%s:%s" .image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The operator's RBAC rules on the objects it reconciles; shared by the ClusterRole and the
per-namespace Roles so both modes grant exactly the same verbs.
*/}}
{{- define "logpipeline-operator.reconcileRules" -}}
- apiGroups: ["logpipeline.io"]
  resources: ["logpipelines"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["logpipeline.io"]
  resources: ["logpipelines/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["logpipeline.io"]
  resources: ["logpipelines/finalizers"]
  verbs: ["update"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["apps"]
  resources: ["deployments/scale"]
  verbs: ["get", "update", "patch"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# The syslog receiver (spec.ingest.syslog): its Service and CPU autoscaler.
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch"]
# Worker pod statuses (restarts, termination messages) explain WorkersReady and Stalled.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}
