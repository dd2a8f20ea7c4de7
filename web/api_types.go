package web

import (
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"
)

// The JSON shapes below follow Prometheus's HTTP API for /api/v1/rules and
// /api/v1/alerts field for field, so tools that read Prometheus read paged.
// Stale is paged's addition: the alert keeps its last state because the
// datasource failed (DESIGN.md §6).

type apiResponse struct {
	Status    string `json:"status"`
	Data      any    `json:"data,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
	Error     string `json:"error,omitempty"`
}

type apiRuleDiscovery struct {
	Groups []*apiRuleGroup `json:"groups"`
}

type apiRuleGroup struct {
	Name           string    `json:"name"`
	File           string    `json:"file"`
	Rules          []any     `json:"rules"`
	Interval       float64   `json:"interval"`
	Limit          int       `json:"limit"`
	EvaluationTime float64   `json:"evaluationTime"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

type apiAlertingRule struct {
	State          string               `json:"state"`
	Name           string               `json:"name"`
	Query          string               `json:"query"`
	Duration       float64              `json:"duration"`
	KeepFiringFor  float64              `json:"keepFiringFor"`
	Labels         labels.Labels        `json:"labels"`
	Annotations    labels.Labels        `json:"annotations"`
	Alerts         []*apiAlert          `json:"alerts"`
	Health         promrules.RuleHealth `json:"health"`
	LastError      string               `json:"lastError,omitempty"`
	EvaluationTime float64              `json:"evaluationTime"`
	LastEvaluation time.Time            `json:"lastEvaluation"`
	Type           string               `json:"type"`
}

type apiRecordingRule struct {
	Name           string               `json:"name"`
	Query          string               `json:"query"`
	Labels         labels.Labels        `json:"labels"`
	Health         promrules.RuleHealth `json:"health"`
	LastError      string               `json:"lastError,omitempty"`
	EvaluationTime float64              `json:"evaluationTime"`
	LastEvaluation time.Time            `json:"lastEvaluation"`
	Type           string               `json:"type"`
}

type apiAlertDiscovery struct {
	Alerts []*apiAlert `json:"alerts"`
}

type apiAlert struct {
	Labels          labels.Labels `json:"labels"`
	Annotations     labels.Labels `json:"annotations"`
	State           string        `json:"state"`
	ActiveAt        *time.Time    `json:"activeAt,omitempty"`
	KeepFiringSince *time.Time    `json:"keepFiringSince,omitempty"`
	Value           string        `json:"value"`
	Stale           bool          `json:"stale"`
}

type apiConfig struct {
	YAML string `json:"yaml"`
}
