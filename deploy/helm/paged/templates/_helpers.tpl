{{- define "paged.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "paged.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "paged.labels" -}}
app.kubernetes.io/name: {{ include "paged.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "paged.selectorLabels" -}}
app.kubernetes.io/name: {{ include "paged.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "paged.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "paged.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* paged.yaml: the user's config with the cluster-dependent parts set. */}}
{{- define "paged.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "storage" (dict "path" "/data") -}}
{{- $web := default (dict) (get $cfg "web") -}}
{{- $_ := set $web "listen_address" (printf "0.0.0.0:%v" .Values.service.port) -}}
{{- if .Values.authTokenSecret.name -}}
{{- $_ := set $web "auth_token_file" "/etc/paged/secrets/token" -}}
{{- end -}}
{{- $_ := set $cfg "web" $web -}}
{{- if .Values.ha.enabled -}}
{{- $full := include "paged.fullname" . -}}
{{- $peers := list -}}
{{- range $i := until (int .Values.ha.replicas) -}}
{{- $peers = append $peers (printf "%s-%d.%s-gossip.%s.svc:%v" $full $i $full $.Release.Namespace $.Values.ha.gossipPort) -}}
{{- end -}}
{{- $_ := set $cfg "cluster" (dict "listen_address" (printf "0.0.0.0:%v" .Values.ha.gossipPort) "advertise_address" (printf "${POD_IP}:%v" .Values.ha.gossipPort) "peers" $peers "peer_timeout" .Values.ha.peerTimeout) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{- define "paged.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
