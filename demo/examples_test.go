package demo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestExampleConfigs loads the example paged.yaml files with the daemon's
// own loader (what `paged check-config` runs).
func TestExampleConfigs(t *testing.T) {
	examples := filepath.Join(testbin.RepoRoot(t), "examples")

	t.Run("demo", func(t *testing.T) {
		cfg, err := config.Load(filepath.Join(examples, "demo.yaml"), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Datasource.Type != config.DatasourceEmbedded || len(cfg.Datasource.Embedded.ScrapeConfigs) != 1 {
			t.Fatalf("datasource %+v", cfg.Datasource)
		}
		sc := cfg.Datasource.Embedded.ScrapeConfigs[0]
		if sc.JobName != "vllm" || config.StaticTargets(sc)[0] != "127.0.0.1:8000" {
			t.Errorf("scrape config %+v: the pack selects job=\"vllm\"", sc)
		}
		if cfg.Datasource.Embedded.ScrapeInterval != time.Second || cfg.Global.EvaluationInterval != time.Second {
			t.Errorf("scrape %s, evaluation %s: want 1s each", cfg.Datasource.Embedded.ScrapeInterval, cfg.Global.EvaluationInterval)
		}
		// The built-in vllm pack as written, and the built-in runbooks:
		// nothing the file names lives on disk.
		if len(cfg.RuleFilePaths) != 0 || len(cfg.Packs) != 1 || cfg.Packs[0].Rendered.Source != "pack:vllm" || !cfg.Packs[0].Overrides.Empty() {
			t.Errorf("rule files %v, packs %+v", cfg.RuleFilePaths, cfg.Packs)
		}
		if cfg.Web.RunbooksDir != "" || cfg.RunbookBaseURL != nil || cfg.NotifierConfig == nil {
			t.Errorf("runbooks %q, runbook base %v, notifier %v", cfg.Web.RunbooksDir, cfg.RunbookBaseURL, cfg.NotifierConfig)
		}
		// The demo's values replace the defaults.
		cfg, err = config.Load(filepath.Join(examples, "demo.yaml"), env(map[string]string{
			EnvTarget: "127.0.0.1:1234", EnvListen: "127.0.0.1:4321", EnvStorage: "/tmp/x", EnvWebhookURL: "http://127.0.0.1:5/alerts",
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := config.StaticTargets(cfg.Datasource.Embedded.ScrapeConfigs[0])[0]; got != "127.0.0.1:1234" {
			t.Errorf("target %q", got)
		}
		if cfg.Web.ListenAddress != "127.0.0.1:4321" || cfg.Global.ExternalURL.String() != "http://127.0.0.1:4321" || cfg.Storage.Path != "/tmp/x" {
			t.Errorf("listen %q, external %q, storage %q", cfg.Web.ListenAddress, cfg.Global.ExternalURL, cfg.Storage.Path)
		}
	})

	t.Run("embedded", func(t *testing.T) {
		path := filepath.Join(examples, "embedded.yaml")
		secret := "https://hooks.slack.com/services/T0/B0/s3cr3t"
		cfg, err := config.Load(path, env(map[string]string{"SLACK_WEBHOOK_URL": secret}))
		if err != nil {
			t.Fatal(err)
		}
		sc := cfg.Datasource.Embedded.ScrapeConfigs
		if cfg.Datasource.Type != config.DatasourceEmbedded || len(sc) != 1 || sc[0].JobName != "vllm" || config.StaticTargets(sc[0])[0] != "127.0.0.1:8000" {
			t.Errorf("datasource %+v", cfg.Datasource)
		}
		if r := cfg.NotifierConfig.Receivers; len(r) != 1 || len(r[0].SlackConfigs) != 1 || string(r[0].SlackConfigs[0].APIURL) != secret {
			t.Errorf("receivers %+v", r)
		}
		// Without the variable: a problem naming it, never a value.
		_, err = config.Load(path, env(nil))
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "SLACK_WEBHOOK_URL is not set") {
			t.Errorf("without SLACK_WEBHOOK_URL: %v", err)
		}
	})

	t.Run("production", func(t *testing.T) {
		path := filepath.Join(examples, "production.yaml")
		secrets := t.TempDir()
		files := []string{"slack-bot-token", "webhook-hmac", "web-token"}
		// Without the secret files, each missing one is a problem naming it.
		_, err := config.Load(path, env(map[string]string{"PAGED_SECRETS_DIR": secrets}))
		for _, f := range files {
			if err == nil || !strings.Contains(err.Error(), filepath.Join(secrets, f)) {
				t.Errorf("missing %s: %v", f, err)
			}
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(secrets, f), []byte("s3cr3t-"+f+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := config.Load(path, env(map[string]string{"PAGED_SECRETS_DIR": secrets}))
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.Web.AuthRequired() {
			t.Error("production example leaves the mutating endpoints open")
		}
		if cfg.Datasource.Type != config.DatasourcePrometheus || cfg.Datasource.Prometheus.URL == nil {
			t.Errorf("datasource %+v", cfg.Datasource)
		}
		var bot, hmac bool
		for _, r := range cfg.NotifierConfig.Receivers {
			for _, s := range r.SlackConfigs {
				bot = bot || (s.BotMode() && s.AppTokenFile != "" && s.Channel != "")
			}
			for _, w := range r.WebhookConfigs {
				hmac = hmac || w.HMACSecretFile != ""
			}
		}
		if !bot || !hmac {
			t.Errorf("want a Slack bot token from a file (%v) and a webhook signed with HMAC (%v)", bot, hmac)
		}
		// The built-in packs, with the production overrides.
		if len(cfg.Packs) != 2 || cfg.Packs[0].Rendered.Source != "pack:vllm" || cfg.Packs[0].Overrides.Selector != `{job="vllm-prod"}` || cfg.Packs[1].Rendered.Source != "pack:dcgm" {
			t.Errorf("packs %+v", cfg.Packs)
		}
	})
}
