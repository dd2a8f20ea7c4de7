//go:build reliability

package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// The peers: Debian's Prometheus and Alertmanager, and vmalert from
// Debian's victoria-metrics, driven as real processes like paged.

// ---- names and versions ----

var (
	versionMu sync.Mutex
	versions  = map[string]string{}
)

var versionRE = regexp.MustCompile(`version ([0-9]+)\.([0-9]+)\.[0-9]+`)

// version returns "major.minor" of a binary, from its --version, or from
// the Debian package that holds it when the binary prints none (Debian's
// vmalert is built without a version).
func version(t *testing.T, name string) string {
	t.Helper()
	bin := testbin.Require(t, name)
	versionMu.Lock()
	defer versionMu.Unlock()
	if v, ok := versions[name]; ok {
		return v
	}
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	v := ""
	if m := versionRE.FindStringSubmatch(string(out)); m != nil {
		v = m[1] + "." + m[2]
	} else if pkg, err := exec.Command("dpkg-query", "-S", bin).Output(); err == nil {
		name, _, _ := strings.Cut(string(pkg), ":")
		if dv, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", name).Output(); err == nil {
			if m := regexp.MustCompile(`^([0-9]+)\.([0-9]+)`).FindStringSubmatch(string(dv)); m != nil {
				v = m[1] + "." + m[2]
			}
		}
	}
	if v == "" {
		v = "?"
	}
	versions[name] = v
	return v
}

// promAM is the system name of Prometheus evaluating its rules and
// sending to Alertmanager.
func promAM(t *testing.T) string {
	return fmt.Sprintf("Prometheus %s + Alertmanager %s", version(t, "prometheus"), version(t, "prometheus-alertmanager"))
}

// vmAM is the system name of vmalert querying Prometheus and sending to
// Alertmanager.
func vmAM(t *testing.T) string {
	testbin.Require(t, "vmalert")
	return fmt.Sprintf("vmalert + Alertmanager %s", version(t, "prometheus-alertmanager"))
}

// ---- Alertmanager ----

// alertmanager is Debian's Alertmanager on a fixed port and storage path,
// so that it can be killed and started again on the same state.
type alertmanager struct {
	t      *testing.T
	dir    string
	addr   string
	gossip string // cluster address, "" when not clustered
	args   []string
	p      *testbin.Process
}

// amConfig routes everything to webhooks, grouping by alertname and pod as
// paged's scenarios do.
func amConfig(hooks ...string) string {
	var b strings.Builder
	b.WriteString(`route:
  receiver: hooks
  group_by: [alertname, pod]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hooks
    webhook_configs:
`)
	for _, h := range hooks {
		fmt.Fprintf(&b, "      - url: %s\n        send_resolved: true\n", h)
	}
	return b.String()
}

// newAlertmanager writes config and prepares an Alertmanager; gossip and
// peers make it a cluster member (the peer timeout and gossip of paged's
// HA scenario). It is not started.
func newAlertmanager(t *testing.T, config, gossip string, peers ...string) *alertmanager {
	t.Helper()
	a := &alertmanager{t: t, dir: t.TempDir(), addr: testbin.FreeAddr(t), gossip: gossip}
	if err := os.WriteFile(filepath.Join(a.dir, "alertmanager.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	a.args = []string{
		"--config.file=" + filepath.Join(a.dir, "alertmanager.yml"),
		"--storage.path=" + a.dataDir(),
		"--web.listen-address=" + a.addr,
		"--log.level=info",
	}
	if gossip == "" {
		a.args = append(a.args, "--cluster.listen-address=")
	} else {
		a.args = append(a.args, "--cluster.listen-address="+gossip, "--cluster.advertise-address="+gossip,
			"--cluster.peer-timeout="+haPeerTimeout.String(), "--cluster.gossip-interval=100ms", "--cluster.pushpull-interval=1s")
		for _, p := range peers {
			a.args = append(a.args, "--cluster.peer="+p)
		}
	}
	return a
}

func (a *alertmanager) dataDir() string { return filepath.Join(a.dir, "data") }
func (a *alertmanager) url() string     { return "http://" + a.addr }

// start starts it and waits until it is ready.
func (a *alertmanager) start() {
	a.t.Helper()
	a.p = testbin.Start(a.t, testbin.Require(a.t, "prometheus-alertmanager"), a.dir, a.addr, "/-/ready", a.args...)
}

// launch starts it and reports whether it became ready within timeout,
// with what it printed.
func (a *alertmanager) launch(timeout time.Duration) (string, error) {
	a.t.Helper()
	var err error
	a.p, err = testbin.Launch(a.t, timeout, testbin.Require(a.t, "prometheus-alertmanager"), a.dir, a.addr, "/-/ready", a.args...)
	return a.p.Output(), err
}

// kill sends SIGKILL: Alertmanager writes its snapshots only every 15
// minutes and at shutdown, so what changed since is gone.
func (a *alertmanager) kill() { a.p.Kill() }

// stop shuts it down cleanly (it writes its snapshots).
func (a *alertmanager) stop() { a.p.Stop() }

func (a *alertmanager) metric(name string) float64 {
	v, _ := testbin.MetricSum(a.url(), name)
	return v
}

// ---- vmalert ----

// vmalert evaluates rules against a Prometheus-compatible datasource and
// sends to Alertmanagers.
type vmalert struct {
	p *testbin.Process
}

func startVMAlert(t *testing.T, rules, datasource string, interval time.Duration, notifiers []string, extra ...string) *vmalert {
	t.Helper()
	dir := t.TempDir()
	addr := testbin.FreeAddr(t)
	args := []string{
		"-rule=" + rules,
		"-datasource.url=" + datasource,
		"-evaluationInterval=" + interval.String(),
		"-httpListenAddr=" + addr,
		"-loggerLevel=WARN",
	}
	for _, n := range notifiers {
		args = append(args, "-notifier.url="+n)
	}
	args = append(args, extra...)
	return &vmalert{p: testbin.Start(t, testbin.Require(t, "vmalert"), dir, addr, "/health", args...)}
}

func (v *vmalert) url() string { return v.p.URL }

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
