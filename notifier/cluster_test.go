package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// peerTimeout is long enough for the first peer's notification log entry
// to reach the second by gossip (every 20ms here), short enough to keep
// the tests quick.
const peerTimeout = time.Second

// pair starts two notifiers with the same configuration, each with its
// own storage and gossip port, each listing the other as a peer. "a" is
// ordered first by name: it sends, "b" waits peerTimeout and checks the
// gossiped notification log.
type pair struct {
	a, b       *running
	regA, regB *prometheus.Registry
}

func startPair(t *testing.T, confText string) pair {
	t.Helper()
	addrA, addrB := testbin.FreeAddr(t), testbin.FreeAddr(t)
	peer := func(name, listen, other string) *ClusterOptions {
		return &ClusterOptions{
			ListenAddress:    listen,
			Peers:            []string{other},
			Name:             name,
			PeerTimeout:      peerTimeout,
			GossipInterval:   20 * time.Millisecond,
			PushPullInterval: 200 * time.Millisecond,
		}
	}
	p := pair{regA: prometheus.NewRegistry(), regB: prometheus.NewRegistry()}
	conf := mustConfig(t, confText)
	// Both bind their gossip ports before either joins the other.
	a := newLogged(t, Options{Config: conf, StoragePath: t.TempDir(), Registerer: p.regA, Cluster: peer("paged-a", addrA, addrB)})
	b := newLogged(t, Options{Config: conf, StoragePath: t.TempDir(), Registerer: p.regB, Cluster: peer("paged-b", addrB, addrA)})
	p.a, p.b = a.run(t), b.run(t)
	// Wait for both to settle, so that neither is held back by a later
	// start: from here on only the cluster wait orders them.
	waitUntil(t, "both peers joined and settled", func() bool {
		return p.a.peer.ClusterSize() == 2 && p.b.peer.ClusterSize() == 2 && p.a.peer.Ready() && p.b.peer.Ready()
	})
	return p
}

// logged is a Notifier built but not yet running, with its logs kept.
type logged struct {
	*Notifier
	logs *syncBuffer
}

func newLogged(t *testing.T, opts Options) logged {
	t.Helper()
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.ExternalURL = "http://paged.example:9095"
	n, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return logged{Notifier: n, logs: logs}
}

// run starts Run; stop (also run at cleanup) cancels it and waits.
func (l logged) run(t *testing.T) *running { return runNotifier(t, l.Notifier, l.logs) }

// waitUntil polls cond (cheap, in-process reads) until it holds. Gossip
// runs on real sockets, so synctest cannot drive this clock.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// metricValue sums the samples of a counter or gauge over all its label
// sets whose labels include the given name/value pairs.
func metricValue(reg *prometheus.Registry, name string, labelPairs ...string) float64 {
	v, err := testbin.GatherSum(reg, name, labelPairs...)
	if err != nil {
		return -1
	}
	return v
}

func webhookConf(sink *notifiertest.Sink) string {
	return fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
}

// The HA pair sends one notification per group, and the survivor keeps
// sending when the first peer stops.
func TestClusterOneNotificationPerGroup(t *testing.T) {
	sink := notifiertest.NewSink(t)
	p := startPair(t, webhookConf(sink))

	// Both instances evaluate the same rules, so both hand over the
	// same alert.
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	p.a.Notify(context.Background(), []*rules.Alert{a})
	p.b.Notify(context.Background(), []*rules.Alert{a})

	sink.Wait(t, 1, 15*time.Second)
	// b's first flush is over once it has waited its turn and checked the
	// notification log: had it not seen a's entry, it would have sent by
	// then.
	waitUntil(t, "b has flushed the group", func() bool {
		return metricValue(p.regB, "paged_notifier_group_flushes_total", "receiver", "hook") >= 1
	})
	reqs := sink.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d notifications for one group from the pair, want 1", len(reqs))
	}
	if got := payloadAlerts(t, reqs[0].Body); !slices.Equal(got, []string{"KVCacheSaturated/firing"}) {
		t.Errorf("notification alerts = %v", got)
	}
	if got := metricValue(p.regB, "alertmanager_notifications_total", "integration", "webhook"); got != 0 {
		t.Errorf("b sent %v notifications, want 0 (a sent first)", got)
	}
	if got := metricValue(p.regA, "alertmanager_peer_position"); got != 0 {
		t.Errorf("a's position = %v, want 0", got)
	}
	if got := metricValue(p.regB, "alertmanager_peer_position"); got != 1 {
		t.Errorf("b's position = %v, want 1", got)
	}

	// Either can die: stop a (the one that sends first); b sends alone.
	p.a.stop()
	waitUntil(t, "b sees a leave", func() bool {
		return metricValue(p.regB, "alertmanager_cluster_members") == 1
	})
	p.b.Notify(context.Background(), []*rules.Alert{firing("TTFTHigh", "instance", "vllm-0:8000")})
	reqs = sink.Wait(t, 2, 15*time.Second)
	if got := payloadAlerts(t, reqs[1].Body); !slices.Equal(got, []string{"TTFTHigh/firing"}) {
		t.Errorf("survivor's notification alerts = %v, want TTFTHigh/firing", got)
	}
}

// A silence created through one peer's API mutes the alert on the other.
func TestClusterSilenceGossiped(t *testing.T) {
	sink := notifiertest.NewSink(t)
	p := startPair(t, webhookConf(sink))
	urlA, urlB := serveAPI(t, p.a.Notifier), serveAPI(t, p.b.Notifier)

	now := time.Now().UTC()
	body, _ := json.Marshal(map[string]any{
		"matchers":  []map[string]any{{"name": "alertname", "value": "QueueBacklog", "isRegex": false, "isEqual": true}},
		"startsAt":  now.Format(time.RFC3339),
		"endsAt":    now.Add(time.Hour).Format(time.RFC3339),
		"createdBy": "oncall",
		"comment":   "maintenance on vllm-0",
	})
	resp, err := http.Post(urlA+"/api/v2/silences", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST silence on a: %d %s", resp.StatusCode, created)
	}
	var sil struct {
		SilenceID string `json:"silenceID"`
	}
	if err := json.Unmarshal(created, &sil); err != nil || sil.SilenceID == "" {
		t.Fatalf("POST silence answer %s: %v", created, err)
	}
	waitUntil(t, "b has the silence", func() bool {
		return strings.Contains(getBody(t, urlB+"/api/v2/silences"), sil.SilenceID)
	})

	// Only b gets the alert: a cannot send it on b's behalf.
	p.b.Notify(context.Background(), []*rules.Alert{firing("QueueBacklog", "instance", "vllm-0:8000")})
	waitUntil(t, "b has flushed the group", func() bool {
		return metricValue(p.regB, "paged_notifier_group_flushes_total", "receiver", "hook") >= 1
	})
	if got := metricValue(p.regB, "alertmanager_notifications_suppressed_total", "reason", "silence"); got < 1 {
		t.Errorf("b suppressed %v notifications by silence, want >= 1", got)
	}
	if n := len(sink.Requests()); n != 0 {
		t.Fatalf("b sent %d notifications for an alert silenced on a, want 0", n)
	}
	alerts := getBody(t, urlB+"/api/v2/alerts")
	if !strings.Contains(alerts, sil.SilenceID) || !strings.Contains(alerts, `"suppressed"`) {
		t.Errorf("b's alert is not marked silenced by %s:\n%s", sil.SilenceID, alerts)
	}
}

// The API's status names the cluster and its members.
func TestClusterStatus(t *testing.T) {
	sink := notifiertest.NewSink(t)
	p := startPair(t, webhookConf(sink))
	url := serveAPI(t, p.b.Notifier)
	var st struct {
		Cluster struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Peers  []struct {
				Name    string `json:"name"`
				Address string `json:"address"`
			} `json:"peers"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(getBody(t, url+"/api/v2/status")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Cluster.Name != "paged-b" {
		t.Errorf("cluster name = %q, want paged-b", st.Cluster.Name)
	}
	var names []string
	for _, peer := range st.Cluster.Peers {
		names = append(names, peer.Name)
	}
	if !slices.Equal(names, []string{"paged-a", "paged-b"}) {
		t.Errorf("cluster peers = %v, want [paged-a paged-b]", names)
	}
	if st.Cluster.Status != "ready" && st.Cluster.Status != "settling" {
		t.Errorf("cluster status = %q", st.Cluster.Status)
	}
}

// Without a cluster the status says so.
func TestClusterDisabledStatus(t *testing.T) {
	n := start(t, fmt.Sprintf(tinyRoute, "hook")+"receivers: [{name: hook}]\n", Options{})
	if body := getBody(t, serveAPI(t, n.Notifier)+"/api/v2/status"); !strings.Contains(body, `"status":"disabled"`) {
		t.Errorf("status without a cluster:\n%s", body)
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts ClusterOptions
		want string
	}{
		{ClusterOptions{ListenAddress: "127.0.0.1"}, `cluster listen address: expected host:port, got "127.0.0.1"`},
		{ClusterOptions{ListenAddress: "127.0.0.1:9094", Peers: []string{"b:99999"}}, `cluster peers[0]: invalid port in "b:99999"`},
		{ClusterOptions{ListenAddress: "127.0.0.1:9094", PeerTimeout: -time.Second}, "cluster peer timeout: must not be negative"},
	} {
		err := tc.opts.Validate()
		if err == nil || err.Error() != tc.want {
			t.Errorf("Validate(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	c := ClusterOptions{ListenAddress: "0.0.0.0:9094", PushPullInterval: time.Minute}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.PeerTimeout != 15*time.Second || c.GossipInterval != 200*time.Millisecond || c.SettleTimeout != time.Minute {
		t.Errorf("defaults not filled: %+v", c)
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// The Slack message a group posted is kept in its notification log entry,
// which is gossiped: when the peer that posted it is gone, the survivor
// edits that same message when the group resolves.
func TestClusterSlackThreadSurvivesFailover(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	p := startPair(t, slackBotConfig(s, ""))
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	p.a.Notify(context.Background(), []*rules.Alert{a})
	p.b.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 15*time.Second)[0]
	if post.Method != "chat.postMessage" || post.TS == "" {
		t.Fatalf("first call = %+v, want a posted message", post)
	}
	waitUntil(t, "b has flushed the group", func() bool {
		return metricValue(p.regB, "paged_notifier_group_flushes_total", "receiver", "oncall") >= 1
	})
	if n := len(s.Calls()); n != 1 {
		t.Fatalf("the pair made %d Slack calls for one group, want 1: %+v", n, s.Calls())
	}

	p.a.stop()
	waitUntil(t, "b sees a leave", func() bool {
		return metricValue(p.regB, "alertmanager_cluster_members") == 1
	})
	p.b.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls := s.WaitCalls(t, 2, 15*time.Second)
	if upd := calls[1]; upd.Method != "chat.update" || upd.TS != post.TS {
		t.Fatalf("survivor's call = %+v, want chat.update of a's message %s", upd, post.TS)
	}
}

// A notification log entry a peer received by gossip is on that peer's
// disk: restarted alone (killed, the sender gone too), it still knows the
// group was notified and does not notify it again.
func TestClusterGossipedEntrySurvivesRestart(t *testing.T) {
	sink := notifiertest.NewSink(t)
	conf := webhookConf(sink)
	p := startPair(t, conf)
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	p.a.Notify(context.Background(), []*rules.Alert{a})
	sink.Wait(t, 1, 15*time.Second)
	waitUntil(t, "b has a's entry by gossip", func() bool { return nflogEntries(p.b.Notifier) == 1 })
	if got := metricValue(p.regB, "alertmanager_notifications_total", "integration", "webhook"); got != 0 {
		t.Fatalf("b sent %v notifications, want 0: its entry must come from a", got)
	}
	p.a.stop()

	// b is never stopped (as if killed); a new notifier on its storage,
	// outside the cluster, so nothing reaches it by gossip.
	reg := prometheus.NewRegistry()
	b2 := newLogged(t, Options{Config: mustConfig(t, conf), StoragePath: p.b.opts.StoragePath, Registerer: reg}).run(t)
	if got := nflogEntries(b2.Notifier); got != 1 {
		t.Fatalf("restarted peer has %d notification log entries, want a's 1", got)
	}
	b2.Notify(context.Background(), []*rules.Alert{a})
	waitUntil(t, "the restarted peer has flushed the group", func() bool {
		return metricValue(reg, "paged_notifier_group_flushes_total", "receiver", "hook") >= 1
	})
	if n := len(sink.Requests()); n != 1 {
		t.Fatalf("%d notifications for the group, want 1: the restarted peer sent it again", n)
	}
}
