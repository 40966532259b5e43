{{/* The chart name (app.kubernetes.io/name), at most 63 characters. */}}
{{- define "signalr-autoscaler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: fullnameOverride, else the release name when it contains the chart name, else
"<release>-<chart>"; at most 63 characters (a DNS label).
*/}}
{{- define "signalr-autoscaler.fullname" -}}
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

{{/* Labels of every object: the app's name, Helm's own labels and commonLabels. */}}
{{- define "signalr-autoscaler.labels" -}}
app.kubernetes.io/name: {{ include "signalr-autoscaler.name" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of the operator's objects (Deployment, pods, Service, PodDisruptionBudget, monitors). */}}
{{- define "signalr-autoscaler.operatorLabels" -}}
{{ include "signalr-autoscaler.labels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Selector of the operator's pods. */}}
{{- define "signalr-autoscaler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "signalr-autoscaler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* metadata.annotations of every object: commonAnnotations merged over the given dict. */}}
{{- define "signalr-autoscaler.annotations" -}}
{{- $all := merge (deepCopy .annotations) (deepCopy .root.Values.commonAnnotations) }}
{{- with $all -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "signalr-autoscaler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "signalr-autoscaler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "signalr-autoscaler.leaseName" -}}
{{- default (include "signalr-autoscaler.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{/* repository:tag, or repository@digest; the tag defaults to the chart's appVersion. */}}
{{- define "signalr-autoscaler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The tenancy map as the file the operator reads (--tenancy-file). */}}
{{- define "signalr-autoscaler.tenancyFile" -}}
{{ toYaml (dict "namespaces" .Values.tenancy.namespaces) }}
{{- end }}
