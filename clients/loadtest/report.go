package loadtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Machine is where and against what a run measured.
type Machine struct {
	Hostname   string          `json:"hostname"`
	CPUs       int             `json:"cpus"`
	GoVersion  string          `json:"goVersion"`
	OS         string          `json:"os"`
	ServerURL  string          `json:"serverURL"`
	LoadBefore string          `json:"loadBefore"` // 1, 5 and 15 min load averages from /proc/loadavg
	LoadAfter  string          `json:"loadAfter"`
	Readyz     json.RawMessage `json:"readyz,omitempty"` // the server's /readyz body when it is JSON
	ReadyzText string          `json:"readyzText,omitempty"`
}

// OpStats summarizes one operation's requests.
type OpStats struct {
	Name   string         `json:"name"`
	OK     int            `json:"ok"`
	Errors map[string]int `json:"errors,omitempty"` // by extensions.code (TRANSPORT: no GraphQL answer)
	// ErrorSamples holds the first message of each code in Errors.
	ErrorSamples map[string]string `json:"errorSamples,omitempty"`
	PerSecond    float64           `json:"perSecond"` // successful requests per second of the run
	P50MS        float64           `json:"p50ms"`
	P95MS        float64           `json:"p95ms"`
	P99MS        float64           `json:"p99ms"`
}

// Pgbench is the floor replayed beside a creates run.
type Pgbench struct {
	Skipped string  `json:"skipped,omitempty"` // why it did not run
	Clients int     `json:"clients,omitempty"`
	Seconds int     `json:"seconds,omitempty"`
	TPS     float64 `json:"tps,omitempty"`
	Ratio   float64 `json:"ratio,omitempty"` // creates/s ÷ pgbench tps
	Script  string  `json:"script,omitempty"`
}

// Report is one scenario's result.
type Report struct {
	Scenario string    `json:"scenario"`
	Started  time.Time `json:"started"`
	Machine  Machine   `json:"machine"`
	Clients  int       `json:"clients"`
	// ElapsedS is the measured phase's wall time in seconds.
	ElapsedS float64   `json:"elapsedS"`
	Ops      []OpStats `json:"ops"`
	// Active scenario: VMs created and the time from the first create to all ACTIVE.
	VMs          int     `json:"vms,omitempty"`
	CreatePhaseS float64 `json:"createPhaseS,omitempty"`
	AllActiveS   float64 `json:"allActiveS,omitempty"`
	// Phases (active scenario) is where each VM's time went, from the records' own
	// timestamps as the server wrote them (see Active).
	Phases        []Phase  `json:"phases,omitempty"`
	Pgbench       *Pgbench `json:"pgbench,omitempty"`
	Created       int      `json:"created,omitempty"`
	Deleted       int      `json:"deleted,omitempty"`
	Kept          bool     `json:"kept,omitempty"`
	CleanupErrors int      `json:"cleanupErrors,omitempty"`
	CleanupError  string   `json:"cleanupError,omitempty"` // the first of them
}

// Phase is one step of the VMs' way to ACTIVE over the run's VMs: the distribution of its
// duration per VM, and when the last VM finished it, from the run's first create.
type Phase struct {
	Name    string  `json:"name"`
	P50MS   float64 `json:"p50ms"`
	P95MS   float64 `json:"p95ms"`
	MaxMS   float64 `json:"maxms"`
	LastAtS float64 `json:"lastAtS"` // the last VM's end of this phase, seconds after the first create
}

// recorder collects latencies and errors of one operation from several goroutines'
// own recorders, merged at the end.
type recorder struct {
	name    string
	lat     []time.Duration
	errors  map[string]int
	samples map[string]string
}

func newRecorder(name string) *recorder {
	return &recorder{name: name, errors: map[string]int{}, samples: map[string]string{}}
}

func (r *recorder) add(d time.Duration, err error) {
	if err != nil {
		c := codeOf(err)
		r.errors[c]++
		if _, ok := r.samples[c]; !ok {
			r.samples[c] = err.Error()
		}
		return
	}
	r.lat = append(r.lat, d)
}

func (r *recorder) merge(o *recorder) {
	r.lat = append(r.lat, o.lat...)
	for k, v := range o.errors {
		r.errors[k] += v
	}
	for k, v := range o.samples {
		if _, ok := r.samples[k]; !ok {
			r.samples[k] = v
		}
	}
}

func (r *recorder) stats(elapsed time.Duration) OpStats {
	s := OpStats{Name: r.name, OK: len(r.lat)}
	if len(r.errors) > 0 {
		s.Errors, s.ErrorSamples = r.errors, r.samples
	}
	if elapsed > 0 {
		s.PerSecond = float64(len(r.lat)) / elapsed.Seconds()
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	s.P50MS, s.P95MS, s.P99MS = ms(quantile(r.lat, 0.50)), ms(quantile(r.lat, 0.95)), ms(quantile(r.lat, 0.99))
	return s
}

// quantile of sorted durations by the nearest-rank method; 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadavg returns the first three fields of /proc/loadavg, "unknown" where there is none.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func machine(url string) Machine {
	h, _ := os.Hostname()
	return Machine{Hostname: h, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		ServerURL: url, LoadBefore: loadavg()}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// WriteTable writes the report as aligned text tables.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	m := r.Machine
	fmt.Fprintf(tw, "scenario\t%s\n", r.Scenario)
	fmt.Fprintf(tw, "started\t%s\n", r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "server\t%s\n", m.ServerURL)
	fmt.Fprintf(tw, "machine\t%s, %d CPUs, %s, %s\n", m.Hostname, m.CPUs, m.OS, m.GoVersion)
	fmt.Fprintf(tw, "load before / after\t%s / %s\n", m.LoadBefore, m.LoadAfter)
	switch {
	case len(m.Readyz) > 0:
		fmt.Fprintf(tw, "readyz\t%s\n", compact(m.Readyz))
	case m.ReadyzText != "":
		fmt.Fprintf(tw, "readyz\t%s\n", m.ReadyzText)
	}
	fmt.Fprintf(tw, "clients\t%d\n", r.Clients)
	fmt.Fprintf(tw, "elapsed\t%.2f s\n", r.ElapsedS)
	if r.VMs > 0 {
		fmt.Fprintf(tw, "VMs\t%d\n", r.VMs)
		fmt.Fprintf(tw, "create phase\t%.2f s\n", r.CreatePhaseS)
		fmt.Fprintf(tw, "create → all ACTIVE\t%.2f s\n", r.AllActiveS)
	}
	if len(r.Phases) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "phase (per VM)\tp50 ms\tp95 ms\tmax ms\tlast done at s")
		for _, p := range r.Phases {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.2f\n", p.Name, p.P50MS, p.P95MS, p.MaxMS, p.LastAtS)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "operation\tok\treq/s\tp50 ms\tp95 ms\tp99 ms\terrors")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%s\n", o.Name, o.OK, o.PerSecond, o.P50MS, o.P95MS, o.P99MS, errorsText(o.Errors))
	}
	for _, o := range r.Ops {
		for _, c := range sortedKeys(o.ErrorSamples) {
			fmt.Fprintf(tw, "%s %s\te.g. %.300s\n", o.Name, c, o.ErrorSamples[c])
		}
	}
	if p := r.Pgbench; p != nil {
		fmt.Fprintln(tw)
		if p.Skipped != "" {
			fmt.Fprintf(tw, "pgbench\tskipped: %s\n", p.Skipped)
		} else {
			fmt.Fprintf(tw, "pgbench\t%.1f tps (%d clients, %d s, %s)\n", p.TPS, p.Clients, p.Seconds, p.Script)
			fmt.Fprintf(tw, "creates/s ÷ pgbench tps\t%.2f×\n", p.Ratio)
		}
	}
	if r.Created > 0 || r.Kept {
		fmt.Fprintln(tw)
		if r.Kept {
			fmt.Fprintf(tw, "cleanup\tkept %d VMs (-keep)\n", r.Created)
		} else {
			fmt.Fprintf(tw, "cleanup\tdeleted %d of %d VMs created, %d errors\n", r.Deleted, r.Created, r.CleanupErrors)
			if r.CleanupError != "" {
				fmt.Fprintf(tw, "cleanup error\te.g. %.300s\n", r.CleanupError)
			}
		}
	}
	return tw.Flush()
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func errorsText(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
