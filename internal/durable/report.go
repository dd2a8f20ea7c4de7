package durable

import (
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reporter collects what went wrong with the state files under one root
// (storage.path): corrupt files moved aside, and files that cannot be
// written. It counts both in metrics and logs them with the full path.
// A nil *Reporter discards everything.
type Reporter struct {
	root   string
	logger *slog.Logger

	corruptions   *prometheus.CounterVec
	writeFailures *prometheus.CounterVec

	mu      sync.Mutex
	failing map[string]WriteFailure // by file, relative to root
	logs    []*Log                  // for the write statistics
}

// WriteFailure is a state file that paged cannot write at the moment.
type WriteFailure struct {
	File  string // relative to the root
	Since time.Time
	Err   string
}

// NewReporter makes a Reporter for the state files under root. It
// registers paged_state_corruptions_total and
// paged_state_write_failures_total on reg (when not nil).
func NewReporter(root string, logger *slog.Logger, reg prometheus.Registerer) *Reporter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Reporter{
		root:   root,
		logger: logger,
		corruptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_state_corruptions_total",
			Help: "State files that could not be read or parsed and were moved aside, by file (relative to storage.path).",
		}, []string{"file"}),
		writeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_state_write_failures_total",
			Help: "Failed writes of state files, by file (relative to storage.path); the state is kept in memory and the write retried.",
		}, []string{"file"}),
		failing: map[string]WriteFailure{},
	}
	if reg != nil {
		reg.MustRegister(r.corruptions, r.writeFailures, statsCollector{r})
	}
	return r
}

// track adds a Log to the write statistics.
func (r *Reporter) track(l *Log) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.logs = append(r.logs, l)
	r.mu.Unlock()
}

func (r *Reporter) untrack(l *Log) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.logs {
		if x == l {
			r.logs = append(r.logs[:i], r.logs[i+1:]...)
			return
		}
	}
}

var (
	fsyncsDesc = prometheus.NewDesc("paged_state_fsyncs_total",
		"fsyncs of state segments, by file; records appended together share one.", []string{"file"}, nil)
	recordsDesc = prometheus.NewDesc("paged_state_records_total",
		"Records appended to state segments, by file.", []string{"file"}, nil)
	bytesDesc = prometheus.NewDesc("paged_state_written_bytes_total",
		"Bytes appended to state segments, by file.", []string{"file"}, nil)
	snapshotsDesc = prometheus.NewDesc("paged_state_snapshots_total",
		"State snapshots written since start (compactions and recoveries), by file.", []string{"file"}, nil)
)

// statsCollector exports the Stats of the tracked logs.
type statsCollector struct{ r *Reporter }

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- fsyncsDesc
	ch <- recordsDesc
	ch <- bytesDesc
	ch <- snapshotsDesc
}

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.Lock()
	logs := append([]*Log(nil), c.r.logs...)
	c.r.mu.Unlock()
	for _, l := range logs {
		st, f := l.Stats(), c.r.Rel(l.opts.Path)
		ch <- prometheus.MustNewConstMetric(fsyncsDesc, prometheus.CounterValue, float64(st.Fsyncs), f)
		ch <- prometheus.MustNewConstMetric(recordsDesc, prometheus.CounterValue, float64(st.Records), f)
		ch <- prometheus.MustNewConstMetric(bytesDesc, prometheus.CounterValue, float64(st.Bytes), f)
		ch <- prometheus.MustNewConstMetric(snapshotsDesc, prometheus.CounterValue, float64(st.Snapshots), f)
	}
}

// Rel returns path relative to the root, with forward slashes.
func (r *Reporter) Rel(path string) string {
	if r == nil || r.root == "" {
		return filepath.ToSlash(filepath.Base(path))
	}
	rel, err := filepath.Rel(r.root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// Corrupted records that path could not be used (reason) and was moved to
// movedTo ("" when it could not be moved either).
func (r *Reporter) Corrupted(path, movedTo string, reason error) {
	if r == nil {
		return
	}
	r.corruptions.WithLabelValues(r.Rel(path)).Inc()
	r.logger.Error("state file unreadable, moved aside; paged goes on with what it could read",
		"file", absPath(path), "moved_to", absPath(movedTo), "reason", reason)
}

// WriteFailed records a failed write of path; the caller keeps the state
// in memory and retries.
func (r *Reporter) WriteFailed(path string, err error, now time.Time) {
	if r == nil {
		return
	}
	rel := r.Rel(path)
	r.writeFailures.WithLabelValues(rel).Inc()
	r.mu.Lock()
	_, was := r.failing[rel]
	if !was {
		r.failing[rel] = WriteFailure{File: rel, Since: now, Err: err.Error()}
	}
	r.mu.Unlock()
	if !was {
		r.logger.Error("writing state failed; state is kept in memory and the write retried", "file", absPath(path), "err", err)
	}
}

// WriteRecovered records that path was written again after a failure.
func (r *Reporter) WriteRecovered(path string) {
	if r == nil {
		return
	}
	rel := r.Rel(path)
	r.mu.Lock()
	f, was := r.failing[rel]
	delete(r.failing, rel)
	r.mu.Unlock()
	if was {
		r.logger.Info("state written again", "file", path, "failing_since", f.Since)
	}
}

// absPath is path made absolute for logs ("" stays "").
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// Failing returns the files that cannot be written now, sorted.
func (r *Reporter) Failing() []WriteFailure {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]WriteFailure, 0, len(r.failing))
	for _, f := range r.failing {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// MovedFile is a state file that was moved aside.
type MovedFile struct {
	File    string    // the original file, relative to the root
	MovedTo string    // the file now holding its content, relative to the root
	At      time.Time // when it was moved aside (from its name)
}

// MovedAside lists the files under the root (two levels deep) that were
// moved aside after since, oldest first. They stay listed until they are
// removed or renamed: that is how an operator acknowledges them.
func (r *Reporter) MovedAside(since time.Time) []MovedFile {
	if r == nil || r.root == "" {
		return nil
	}
	var out []MovedFile
	_ = filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != r.root && strings.Count(r.Rel(p), "/") >= 1 {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		i := strings.LastIndex(name, CorruptSuffix)
		if i <= 0 {
			return nil
		}
		stamp := name[i+len(CorruptSuffix):]
		if j := strings.IndexByte(stamp, '-'); j >= 0 {
			stamp = stamp[:j]
		}
		sec, err := strconv.ParseInt(stamp, 10, 64)
		if err != nil {
			return nil
		}
		at := time.Unix(sec, 0)
		if at.Before(since) {
			return nil
		}
		orig := filepath.Join(filepath.Dir(p), name[:i])
		out = append(out, MovedFile{File: r.Rel(orig), MovedTo: r.Rel(p), At: at})
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].MovedTo < out[j].MovedTo
	})
	return out
}
