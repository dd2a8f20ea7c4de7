package main

import (
	_ "github.com/alecthomas/kong"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/prometheus/alertmanager/dispatch"
	_ "github.com/prometheus/alertmanager/inhibit"
	_ "github.com/prometheus/alertmanager/silence"
	_ "github.com/prometheus/alertmanager/nflog"
	_ "github.com/prometheus/alertmanager/provider/mem"
	_ "github.com/prometheus/alertmanager/config"
	_ "github.com/prometheus/alertmanager/template"
	_ "github.com/prometheus/alertmanager/notify"
	_ "github.com/prometheus/client_golang/api"
	_ "github.com/prometheus/client_golang/api/prometheus/v1"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/prometheus/promql/parser"
	_ "github.com/prometheus/prometheus/promql"
	_ "github.com/prometheus/prometheus/promql/promqltest"
	_ "github.com/prometheus/prometheus/rules"
	_ "github.com/prometheus/prometheus/model/rulefmt"
	_ "github.com/prometheus/prometheus/tsdb"
	_ "github.com/prometheus/prometheus/scrape"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/slack-go/slack"
	_ "go.yaml.in/yaml/v3"
)

func main() {}
