package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pagedhq/paged/history"
)

// historyClient reads a running paged's GET /api/v1/history; it answers
// history.Query as a *history.Store does, so that paged history and
// paged report read a paged and a storage directory alike.
type historyClient struct {
	base   string
	client *http.Client
}

func newHistoryClient(base string) *historyClient {
	return &historyClient{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: time.Minute}}
}

func (c *historyClient) Query(ctx context.Context, q history.Query) (history.Page, error) {
	v := url.Values{}
	if !q.Start.IsZero() {
		v.Set("start", q.Start.UTC().Format(time.RFC3339Nano))
	}
	if !q.End.IsZero() {
		v.Set("end", q.End.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", fmt.Sprint(q.Limit))
	}
	if q.Alertname != "" {
		v.Set("alertname", q.Alertname)
	}
	if len(q.Types) > 0 {
		v.Set("type", strings.Join(q.Types, ","))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	for _, set := range q.Matchers {
		parts := make([]string, len(set))
		for i, m := range set {
			parts[i] = m.String()
		}
		v.Add("match[]", "{"+strings.Join(parts, ",")+"}")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v1/history?"+v.Encode(), nil)
	if err != nil {
		return history.Page{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return history.Page{}, err
	}
	defer resp.Body.Close()
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Events []history.Event `json:"events"`
			Next   string          `json:"next"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return history.Page{}, fmt.Errorf("%s: %s: %w", c.base, resp.Status, err)
	}
	if answer.Status != "success" {
		return history.Page{}, fmt.Errorf("%s: %s: %s", c.base, resp.Status, answer.Error)
	}
	return history.Page{Events: answer.Data.Events, Next: answer.Data.Next}, nil
}
