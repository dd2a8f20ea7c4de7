package notifier

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	amconfig "github.com/prometheus/alertmanager/config"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Config is the `notifier:` block of paged.yaml. The `route`,
// `inhibit_rules` and `time_intervals` keys are Alertmanager's, pasted
// unchanged from an alertmanager.yml and validated by Alertmanager's own
// config package; receivers are paged's (Slack Block Kit and webhooks).
type Config struct {
	Receivers     []Receiver
	Alertmanagers []AlertmanagerConfig
	// Templates are template files (globs) with extra definitions for the
	// Slack title/text templates, as in Alertmanager's `templates:`.
	Templates []string
	// SlackInteractivity, when set, turns the Slack messages' Acknowledge
	// and Silence buttons into actions paged applies (slack_actions.go);
	// nil keeps them links.
	SlackInteractivity *SlackInteractivity

	// am is the validated Alertmanager configuration holding route,
	// inhibit_rules and time intervals. Its receivers carry names only,
	// so it never holds a secret and may be shown by the status API.
	am *amconfig.Config
}

// Receiver is a named set of integrations, as in Alertmanager.
type Receiver struct {
	Name           string           `yaml:"name"`
	SlackConfigs   []*SlackConfig   `yaml:"slack_configs"`
	WebhookConfigs []*WebhookConfig `yaml:"webhook_configs"`
	// Upstream holds the receiver's other integrations (pagerduty_configs,
	// email_configs, msteamsv2_configs...), decoded by Alertmanager's
	// config package with its defaults and the notifier's global: block
	// applied (config_upstream.go). Its SlackConfigs and WebhookConfigs
	// are always empty.
	Upstream amconfig.Receiver `yaml:"-"`
}

// SlackConfig configures one Slack destination. Keys follow Alertmanager
// 0.32+ where they exist.
type SlackConfig struct {
	// Incoming-webhook mode.
	APIURL     commoncfg.Secret `yaml:"api_url"`
	APIURLFile string           `yaml:"api_url_file"`
	// Bot-token mode (Web API: chat.postMessage / chat.update).
	AppToken     commoncfg.Secret `yaml:"app_token"`
	AppTokenFile string           `yaml:"app_token_file"`
	AppURL       string           `yaml:"app_url"` // default https://slack.com/api/
	Channel      string           `yaml:"channel"`

	SendResolved  *bool `yaml:"send_resolved"`  // default true
	UpdateMessage *bool `yaml:"update_message"` // default true in bot-token mode
	ThreadReplies *bool `yaml:"thread_replies"` // default true in bot-token mode

	// Title and Text override the header and the top text; Go templates
	// over Alertmanager's template data, with its functions.
	Title string `yaml:"title"`
	Text  string `yaml:"text"`
	// KeyLabels are shown as fields for each alert; default: the labels
	// that are not common to the group, minus alertname and severity.
	KeyLabels []string `yaml:"key_labels"`
	// MaxAlerts is how many alerts the message lists before "+N more".
	MaxAlerts int `yaml:"max_alerts"`

	Timeout    model.Duration              `yaml:"timeout"`
	HTTPConfig *commoncfg.HTTPClientConfig `yaml:"http_config"`

	// AllowedUsers and AllowedUserGroups narrow who may act on this
	// destination's messages, beside slack_interactivity's own lists.
	AllowedUsers      []string `yaml:"allowed_users"`
	AllowedUserGroups []string `yaml:"allowed_user_groups"`
}

// BotMode reports whether the config uses a bot token (Web API).
func (c *SlackConfig) BotMode() bool { return c.AppToken != "" || c.AppTokenFile != "" }

// WebhookConfig configures one webhook, with Alertmanager's keys plus
// HMAC signing and custom headers.
type WebhookConfig struct {
	URL            commoncfg.Secret  `yaml:"url"`
	URLFile        string            `yaml:"url_file"`
	SendResolved   *bool             `yaml:"send_resolved"` // default true
	HMACSecret     commoncfg.Secret  `yaml:"hmac_secret"`
	HMACSecretFile string            `yaml:"hmac_secret_file"`
	Headers        map[string]string `yaml:"headers"`
	MaxAlerts      uint64            `yaml:"max_alerts"`
	Timeout        model.Duration    `yaml:"timeout"`
	// MaxConcurrentRequests bounds the requests in flight to this
	// receiver; more wait for one to finish (0: DefaultWebhookMaxConcurrent).
	MaxConcurrentRequests int                         `yaml:"max_concurrent_requests"`
	HTTPConfig            *commoncfg.HTTPClientConfig `yaml:"http_config"`
}

// AlertmanagerConfig is an external Alertmanager that receives every
// alert over its API v2, next to paged's own routing.
type AlertmanagerConfig struct {
	URL        string                      `yaml:"url"`
	Timeout    model.Duration              `yaml:"timeout"`
	HTTPConfig *commoncfg.HTTPClientConfig `yaml:"http_config"`
}

// Defaults.
const (
	DefaultSlackAppURL    = "https://slack.com/api/"
	DefaultSlackTimeout   = 15 * time.Second
	DefaultWebhookTimeout = 10 * time.Second
	// DefaultWebhookMaxConcurrent is the default bound on requests in
	// flight to one webhook. An alert storm flushes thousands of groups
	// at once; past the bound they queue in paged instead of opening a
	// connection each. It is the number of idle connections per host the
	// HTTP client keeps (1,000), so a storm opens at most that many and
	// reuses them in the next one. A bound of 256 queued groups that an
	// idle connection could have taken: in bench/notifier, p50 above
	// Alertmanager's in 23 of 28 runs with 256, at or below it in 23 of
	// 26 with 1,000.
	DefaultWebhookMaxConcurrent = 1000
	DefaultSlackMaxAlerts       = 10
	defaultBlackhole            = "null"
)

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// PosError is a configuration problem at a line and column of paged.yaml.
type PosError struct {
	Line, Column int
	Msg          string
}

func (e *PosError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

func posErr(n *yaml.Node, format string, args ...any) error {
	return &PosError{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// ParseConfig parses a `notifier:` block given as YAML text (mainly for
// tests and notify-test); positions are relative to text.
func ParseConfig(text []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	c := &Config{}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return c, c.Validate()
	}
	if err := c.UnmarshalYAML(doc.Content[0]); err != nil {
		return nil, err
	}
	return c, nil
}

// UnmarshalYAML implements yaml v3's Unmarshaler. All problems are
// collected, each with its line and column.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	*c = Config{}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return c.Validate()
	}
	if n.Kind != yaml.MappingNode {
		return posErr(n, "notifier: expected a mapping")
	}
	var errs []error
	var siNode *yaml.Node
	amKeys := map[string][2]*yaml.Node{}
	// Alertmanager's global block gives defaults to the receivers decoded
	// by Alertmanager's config package: read it first.
	var global *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "global" {
			g, err := decodeGlobal(k, v)
			if err != nil {
				errs = append(errs, err)
			}
			global = g
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "global":
		case "route", "inhibit_rules", "time_intervals", "mute_time_intervals":
			amKeys[k.Value] = [2]*yaml.Node{k, v}
		case "templates":
			if err := v.Decode(&c.Templates); err != nil {
				errs = append(errs, err)
			}
		case "receivers":
			errs = append(errs, c.decodeReceivers(v, global)...)
		case "slack_interactivity":
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				errs = append(errs, posErr(v, "slack_interactivity: expected a mapping"))
				continue
			}
			// Unknown keys and the values' problems are reported
			// together: a pasted block usually has both.
			si := &SlackInteractivity{}
			if err := unknownKeys(v, si); err != nil {
				errs = append(errs, err)
			}
			if err := v.Decode(si); err != nil {
				errs = append(errs, yamlPosErr(err, v))
				continue
			}
			if err := si.validate(v); err != nil {
				errs = append(errs, err)
				continue
			}
			c.SlackInteractivity, siNode = si, v
		case "alertmanagers":
			if v.Kind != yaml.SequenceNode && !isNull(v) {
				errs = append(errs, posErr(v, "alertmanagers: expected a list"))
				continue
			}
			for _, item := range v.Content {
				var am AlertmanagerConfig
				if err := decodeStrict(item, &am); err != nil {
					errs = append(errs, err)
					continue
				}
				if err := am.validate(); err != nil {
					errs = append(errs, posErr(item, "alertmanagers: %v", err))
					continue
				}
				c.Alertmanagers = append(c.Alertmanagers, am)
			}
		default:
			errs = append(errs, posErr(k, "notifier: unknown key %q", k.Value))
		}
	}
	if len(errs) == 0 && c.SlackInteractivity != nil && !c.hasBotSlack() {
		errs = append(errs, posErr(siNode, "slack_interactivity: no slack_configs entry has app_token: the buttons act on messages a bot posted and edits"))
	}
	if len(errs) == 0 {
		if err := c.loadAlertmanager(n, amKeys); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := c.Validate(); err != nil {
			errs = append(errs, posErr(n, "%v", err))
		}
	}
	return errors.Join(errs...)
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (c *Config) decodeReceivers(v, global *yaml.Node) []error {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return []error{posErr(v, "receivers: expected a list")}
	}
	var errs []error
	seen := map[string]bool{}
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			errs = append(errs, posErr(item, "receivers: expected a mapping"))
			continue
		}
		var r Receiver
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, val := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "name":
				if err := val.Decode(&r.Name); err != nil {
					errs = append(errs, err)
				}
			case "slack_configs":
				for _, sc := range val.Content {
					s := &SlackConfig{}
					if err := decodeStrict(sc, s); err != nil {
						errs = append(errs, err)
						continue
					}
					if err := s.validate(); err != nil {
						errs = append(errs, posErr(sc, "slack_configs: %v", err))
						continue
					}
					r.SlackConfigs = append(r.SlackConfigs, s)
				}
			case "webhook_configs":
				for _, wc := range val.Content {
					w := &WebhookConfig{}
					if err := decodeStrict(wc, w); err != nil {
						errs = append(errs, err)
						continue
					}
					if err := w.validate(); err != nil {
						errs = append(errs, posErr(wc, "webhook_configs: %v", err))
						continue
					}
					r.WebhookConfigs = append(r.WebhookConfigs, w)
				}
			default:
				if upstreamKeys()[k.Value] {
					errs = append(errs, decodeUpstream(&r, global, k, val)...)
				} else if strings.HasSuffix(k.Value, "_configs") {
					errs = append(errs, posErr(k, "receiver: %s is not a receiver type of Alertmanager %s", k.Value, AlertmanagerVersion))
				} else {
					errs = append(errs, posErr(k, "receiver: unknown key %q", k.Value))
				}
			}
		}
		switch {
		case r.Name == "":
			errs = append(errs, posErr(item, "receiver: name is required"))
		case seen[r.Name]:
			errs = append(errs, posErr(item, "receiver: duplicate name %q", r.Name))
		}
		seen[r.Name] = true
		c.Receivers = append(c.Receivers, r)
	}
	return errs
}

// decodeStrict decodes a mapping into the struct v, rejecting keys that v
// does not declare.
func decodeStrict(n *yaml.Node, v any) error {
	if n.Kind != yaml.MappingNode {
		return posErr(n, "expected a mapping")
	}
	if err := unknownKeys(n, v); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return yamlPosErr(err, n)
	}
	return nil
}

// unknownKeys reports the keys of the mapping n that the struct v does
// not declare, each at its position.
func unknownKeys(n *yaml.Node, v any) error {
	known := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		known[name] = true
	}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			errs = append(errs, posErr(k, "unknown key %q", k.Value))
		}
	}
	return errors.Join(errs...)
}

var yamlLineRe = regexp.MustCompile(`line (\d+): `)

// yamlPosErr rewrites yaml v3's "line N: msg" into our "N:C: msg" form.
func yamlPosErr(err error, n *yaml.Node) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []error
		for _, m := range te.Errors {
			if loc := yamlLineRe.FindStringSubmatchIndex(m); loc != nil {
				line, _ := strconv.Atoi(m[loc[2]:loc[3]])
				errs = append(errs, &PosError{Line: line, Column: valueColumn(n, line), Msg: m[loc[1]:]})
				continue
			}
			errs = append(errs, posErr(n, "%s", m))
		}
		return errors.Join(errs...)
	}
	// Secrets decode through prometheus/common types whose errors never
	// echo the value; other errors are positioned at the block.
	return posErr(n, "%v", err)
}

// valueColumn is the column of the value on line within n, the node yaml
// names by its line only in a type error; 1 when none is found.
func valueColumn(n *yaml.Node, line int) int {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Line == line && v.Kind != yaml.MappingNode {
				return v.Column
			}
			if c := valueColumn(n.Content[i+1], line); c != 1 {
				return c
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if c.Line == line && c.Kind == yaml.ScalarNode {
				return c.Column
			}
			if col := valueColumn(c, line); col != 1 {
				return col
			}
		}
	}
	// An alias is not followed: it may point at its own ancestor.
	return 1
}

func (s *SlackConfig) validate() error {
	webhook := s.APIURL != "" || s.APIURLFile != ""
	switch {
	case s.APIURL != "" && s.APIURLFile != "":
		return errors.New("at most one of api_url and api_url_file")
	case s.AppToken != "" && s.AppTokenFile != "":
		return errors.New("at most one of app_token and app_token_file")
	case webhook && s.BotMode():
		return errors.New("api_url (incoming webhook) and app_token (bot token) are exclusive; use app_url to change the Web API base")
	case !webhook && !s.BotMode():
		return errors.New("one of api_url, api_url_file, app_token or app_token_file is required")
	case s.BotMode() && s.Channel == "":
		return errors.New("channel is required with app_token")
	case s.MaxAlerts < 0:
		return errors.New("max_alerts must not be negative")
	case (len(s.AllowedUsers) > 0 || len(s.AllowedUserGroups) > 0) && !s.BotMode():
		return errors.New("allowed_users and allowed_user_groups need app_token: only a bot's messages have buttons that act")
	}
	if err := checkSlackIDs("allowed_users", s.AllowedUsers, slackUserID); err != nil {
		return err
	}
	if err := checkSlackIDs("allowed_user_groups", s.AllowedUserGroups, slackGroupID); err != nil {
		return err
	}
	if s.APIURL != "" {
		if err := checkURL(string(s.APIURL)); err != nil {
			return fmt.Errorf("api_url: %w", err)
		}
	}
	if s.AppURL != "" {
		if err := checkURL(s.AppURL); err != nil {
			return fmt.Errorf("app_url: %w", err)
		}
	}
	if s.HTTPConfig != nil {
		if err := s.HTTPConfig.Validate(); err != nil {
			return fmt.Errorf("http_config: %w", err)
		}
	}
	return nil
}

func (w *WebhookConfig) validate() error {
	switch {
	case w.URL == "" && w.URLFile == "":
		return errors.New("one of url or url_file is required")
	case w.URL != "" && w.URLFile != "":
		return errors.New("at most one of url and url_file")
	case w.HMACSecret != "" && w.HMACSecretFile != "":
		return errors.New("at most one of hmac_secret and hmac_secret_file")
	case w.MaxConcurrentRequests < 0:
		return errors.New("max_concurrent_requests must not be negative")
	}
	if w.URL != "" {
		if err := checkURL(string(w.URL)); err != nil {
			return fmt.Errorf("url: %w", err)
		}
	}
	for k := range w.Headers {
		if strings.EqualFold(k, "Content-Type") || strings.EqualFold(k, signatureHeader) {
			return fmt.Errorf("headers: %s is set by paged", k)
		}
	}
	if w.HTTPConfig != nil {
		if err := w.HTTPConfig.Validate(); err != nil {
			return fmt.Errorf("http_config: %w", err)
		}
	}
	return nil
}

func (a *AlertmanagerConfig) validate() error {
	if a.URL == "" {
		return errors.New("url is required")
	}
	if err := checkURL(a.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if a.HTTPConfig != nil {
		if err := a.HTTPConfig.Validate(); err != nil {
			return fmt.Errorf("http_config: %w", err)
		}
	}
	return nil
}

// checkURL validates an absolute http(s) URL without ever echoing it:
// webhook URLs are secrets.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("scheme must be http or https")
	}
	if u.Host == "" {
		return errors.New("host is missing")
	}
	return nil
}

// loadAlertmanager builds an alertmanager.yml from the route, inhibit and
// time interval nodes plus the receiver names, and lets Alertmanager's
// config package parse and validate it. Alertmanager parses with yaml v2,
// so the nodes are re-encoded; errors are mapped back to the lines and
// columns of paged.yaml.
func (c *Config) loadAlertmanager(block *yaml.Node, keys map[string][2]*yaml.Node) error {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		doc.Content = append(doc.Content, str(k), v)
	}
	for _, k := range []string{"route", "inhibit_rules", "time_intervals", "mute_time_intervals"} {
		if kv, ok := keys[k]; ok {
			add(k, kv[1])
		}
	}
	names := &yaml.Node{Kind: yaml.SequenceNode}
	for _, r := range c.Receivers {
		names.Content = append(names.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("name"), str(r.Name),
		}})
	}
	if _, ok := keys["route"]; !ok {
		// Without a route, everything goes to the only receiver, or nowhere.
		recv := defaultBlackhole
		switch len(c.Receivers) {
		case 0:
			names.Content = append(names.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				str("name"), str(defaultBlackhole),
			}})
		case 1:
			recv = c.Receivers[0].Name
		default:
			return posErr(block, "notifier: route is required with more than one receiver")
		}
		add("route", &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("receiver"), str(recv),
		}})
	}
	add("receivers", names)

	if kv, ok := keys["route"]; ok {
		if err := checkRouteShape(kv[1]); err != nil {
			return err
		}
	}
	text, err := yaml.Marshal(doc)
	if err != nil {
		return posErr(block, "notifier: %v", err)
	}
	lines := lineMap(doc, text)
	am, err := loadAM(string(text))
	if err != nil {
		return mapAMError(err, lines, keys, block)
	}
	c.am = am
	return nil
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// loadAM is amconfig.Load, with a panic in its checks turned into an error.
func loadAM(text string) (c *amconfig.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("invalid route or receivers (alertmanager config: %v)", r)
		}
	}()
	return amconfig.Load(text)
}

// checkRouteShape rejects what Alertmanager's config would crash on: a
// route or child route that is not a mapping (e.g. "routes: [null]").
func checkRouteShape(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return posErr(n, "route: expected a mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "routes" {
			continue
		}
		v := n.Content[i+1]
		if isNull(v) {
			continue
		}
		if v.Kind != yaml.SequenceNode {
			return posErr(v, "routes: expected a list")
		}
		for _, child := range v.Content {
			if err := checkRouteShape(child); err != nil {
				return err
			}
		}
	}
	return nil
}

// lineMap maps each line of the re-encoded text to the original node
// that starts on it, by walking the original tree and the tree parsed
// back from text in parallel.
func lineMap(orig *yaml.Node, text []byte) map[int]*yaml.Node {
	var back yaml.Node
	m := map[int]*yaml.Node{}
	if yaml.Unmarshal(text, &back) != nil || len(back.Content) == 0 {
		return m
	}
	var walk func(o, b *yaml.Node)
	walk = func(o, b *yaml.Node) {
		if o == nil || b == nil {
			return
		}
		if _, ok := m[b.Line]; !ok && o.Line > 0 {
			m[b.Line] = o
		}
		for i := 0; i < len(o.Content) && i < len(b.Content); i++ {
			walk(o.Content[i], b.Content[i])
		}
	}
	walk(orig, back.Content[0])
	return m
}

var amLineRe = regexp.MustCompile(`line (\d+): `)

func mapAMError(err error, lines map[int]*yaml.Node, keys map[string][2]*yaml.Node, block *yaml.Node) error {
	msg := err.Error()
	// yaml v2 errors: "yaml: unmarshal errors:\n  line 3: ..." (one or more).
	if locs := amLineRe.FindAllStringSubmatchIndex(msg, -1); locs != nil {
		var errs []error
		for i, loc := range locs {
			end := len(msg)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			line, _ := strconv.Atoi(msg[loc[2]:loc[3]])
			text := strings.TrimSpace(msg[loc[1]:end])
			if n, ok := lines[line]; ok {
				errs = append(errs, posErr(n, "%s", text))
			} else {
				errs = append(errs, posErr(block, "%s", text))
			}
		}
		return errors.Join(errs...)
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	// Errors from Alertmanager's UnmarshalYAML methods carry no position:
	// point at the value they quote, else at the block they concern.
	if n := quotedScalar(msg, keys); n != nil {
		return posErr(n, "%s", msg)
	}
	at := block
	for _, k := range []string{"inhibit", "time interval", "route"} {
		if strings.Contains(msg, k) {
			name := map[string]string{"inhibit": "inhibit_rules", "time interval": "time_intervals", "route": "route"}[k]
			if kv, ok := keys[name]; ok {
				at = kv[0]
			}
			break
		}
	}
	if at == block {
		if kv, ok := keys["route"]; ok {
			at = kv[0]
		}
	}
	return posErr(at, "%s", msg)
}

// quotedScalar finds the scalar whose value an error message quotes.
func quotedScalar(msg string, keys map[string][2]*yaml.Node) *yaml.Node {
	var found *yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if found != nil || n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode && len(n.Value) >= 2 &&
			(strings.Contains(msg, strconv.Quote(n.Value)) || strings.Contains(msg, "`"+n.Value+"`")) {
			found = n
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, k := range []string{"route", "inhibit_rules", "time_intervals", "mute_time_intervals"} {
		if kv, ok := keys[k]; ok {
			walk(kv[1])
		}
	}
	return found
}

// Validate checks cross-references and fills defaults. UnmarshalYAML calls
// it; call it yourself for a Config built in Go.
func (c *Config) Validate() error {
	if c.am == nil {
		// A Config built in Go or an empty block: route to the only
		// receiver, or nowhere.
		var doc yaml.Node
		if err := doc.Encode(map[string]any{}); err != nil {
			return err
		}
		if err := c.loadAlertmanager(&doc, map[string][2]*yaml.Node{}); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for _, r := range c.Receivers {
		names[r.Name] = true
	}
	for _, r := range c.am.Receivers {
		if !names[r.Name] && r.Name != defaultBlackhole {
			return fmt.Errorf("receiver %q is not defined", r.Name)
		}
	}
	return nil
}

func (c *Config) hasBotSlack() bool {
	for _, r := range c.Receivers {
		for _, s := range r.SlackConfigs {
			if s.BotMode() {
				return true
			}
		}
	}
	return false
}

// Alertmanager returns the Alertmanager view of the configuration (route,
// inhibit rules, time intervals; receivers by name only).
func (c *Config) Alertmanager() *amconfig.Config { return c.am }

// Receiver returns the receiver with the given name.
func (c *Config) Receiver(name string) (*Receiver, bool) {
	for i := range c.Receivers {
		if c.Receivers[i].Name == name {
			return &c.Receivers[i], true
		}
	}
	return nil, false
}
