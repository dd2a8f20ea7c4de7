{{- define "paged.podTemplate" -}}
metadata:
  labels:
    {{- include "paged.selectorLabels" . | nindent 4 }}
  annotations:
    checksum/config: {{ include "paged.config" . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "paged.serviceAccountName" . }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: paged
      image: {{ include "paged.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - run
        - --config=/etc/paged/paged.yaml
        {{- range .Values.extraArgs }}
        - {{ . | quote }}
        {{- end }}
      env:
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        {{- range .Values.secretEnv }}
        - name: {{ .name }}
          valueFrom:
            secretKeyRef: {name: {{ .secretName | quote }}, key: {{ .key | quote }}}
        {{- end }}
        {{- with .Values.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - {name: http, containerPort: {{ .Values.service.port }}, protocol: TCP}
        {{- if .Values.ha.enabled }}
        - {name: gossip-tcp, containerPort: {{ .Values.ha.gossipPort }}, protocol: TCP}
        - {name: gossip-udp, containerPort: {{ .Values.ha.gossipPort }}, protocol: UDP}
        {{- end }}
      livenessProbe:
        httpGet: {path: /-/healthy, port: http}
        periodSeconds: 30
      readinessProbe:
        httpGet: {path: /-/ready, port: http}
        periodSeconds: 10
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - {name: config, mountPath: /etc/paged/paged.yaml, subPath: paged.yaml, readOnly: true}
        - {name: data, mountPath: /data}
        - {name: tmp, mountPath: /tmp}
        {{- if .Values.authTokenSecret.name }}
        - {name: token, mountPath: /etc/paged/secrets, readOnly: true}
        {{- end }}
  volumes:
    - name: config
      configMap: {name: {{ include "paged.fullname" . }}}
    - name: tmp
      emptyDir: {}
    {{- if .Values.authTokenSecret.name }}
    - name: token
      secret:
        secretName: {{ .Values.authTokenSecret.name }}
        items: [{key: {{ .Values.authTokenSecret.key }}, path: token}]
    {{- end }}
    {{- if not .Values.ha.enabled }}
    - name: data
      {{- if .Values.persistence.enabled }}
      persistentVolumeClaim: {claimName: {{ include "paged.fullname" . }}}
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
