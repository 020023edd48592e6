package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Config is what every scenario needs; zero values take the defaults in the comments.
type Config struct {
	// URL is the server's base URL (http://host:port); GraphQL is URL + "/query".
	URL   string
	Token string
	// Clients is the number of concurrent clients (8).
	Clients int
	// Duration bounds a creates or reads run (10 s); Count, when positive, bounds a creates
	// run by the number of VMs instead.
	Duration time.Duration
	Count    int
	// Tenant, Region, Flavor and Image (optional) are the IDs creates use; empty ones are
	// discovered through the API (the first tenant and region, the smallest flavor, the
	// first ACTIVE image). Image "none" creates VMs without an image.
	Tenant, Region, Flavor, Image string
	// Rack and Floor are the IDs reads draw; empty: the first rack and its floor.
	Rack, Floor string
	// VMs is the number of VMs of the active scenario (1000); ActiveTimeout bounds the wait
	// for them (10 min).
	VMs           int
	ActiveTimeout time.Duration
	// Keep leaves the VMs a run created; otherwise they are deleted (force) at the end.
	Keep bool
	// PgbenchDSN, when set, makes creates replay the writes of a create with pgbench on that
	// database after the API run, for the same clients and duration.
	PgbenchDSN string
}

func (c Config) withDefaults() Config {
	if c.Clients <= 0 {
		c.Clients = 8
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.VMs <= 0 {
		c.VMs = 1000
	}
	if c.ActiveTimeout <= 0 {
		c.ActiveTimeout = 10 * time.Minute
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return c
}

// runner holds a run's API client and report.
type runner struct {
	cfg    Config
	api    *apiclient.Client
	http   *http.Client
	report *Report
	run    int64  // the run's random number
	prefix string // name prefix of every VM this run creates: loadtest-<run>-
}

func newRunner(ctx context.Context, scenario string, cfg Config) (*runner, error) {
	cfg = cfg.withDefaults()
	if cfg.URL == "" {
		return nil, errors.New("no server URL")
	}
	api, err := apiclient.New(cfg.URL, cfg.Token)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 4*cfg.Clients+16, 4*cfg.Clients+16
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	api.HTTP = hc
	api.UserAgent = "virtflow-loadtest"
	run, err := rand.Int(rand.Reader, big.NewInt(1e9))
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, api: api, http: hc, run: run.Int64(), prefix: fmt.Sprintf("loadtest-%d-", run.Int64()),
		report: &Report{Scenario: scenario, Started: time.Now(), Machine: machine(cfg.URL), Clients: cfg.Clients}}
	r.readyz(ctx)
	return r, nil
}

// readyz records the server's /readyz answer (JSON as is, otherwise its status and text).
//
// Like every request of the harness it goes to the server the operator named with -url, from
// the operator's machine, as the CLI's do: it is a client of the API, not the platform fetching
// an address a user gave it, so package egress (which refuses loopback and private targets,
// where a server under test usually is) does not apply. The body read is bounded.
func (r *runner) readyz(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.URL+"/readyz", nil)
	if err != nil {
		return
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.report.Machine.ReadyzText = "unreachable: " + err.Error()
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Valid(body) {
		r.report.Machine.Readyz = json.RawMessage(body)
		return
	}
	r.report.Machine.ReadyzText = fmt.Sprintf("HTTP %d %.200s", resp.StatusCode, strings.TrimSpace(string(body)))
}

func (r *runner) finish() *Report {
	r.report.Machine.LoadAfter = loadavg()
	return r.report
}

// codeOf names an error by its GraphQL extensions.code; TRANSPORT when the server gave no
// GraphQL answer, NO_CODE for a GraphQL error without a code.
func codeOf(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) {
		if c := e.Code(); c != "" {
			return c
		}
		if e.Status != 0 && e.Status != http.StatusOK && len(e.Errors) > 0 && strings.HasPrefix(e.Errors[0].Message, "HTTP ") {
			return fmt.Sprintf("HTTP_%d", e.Status)
		}
		return "NO_CODE"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "CANCELED"
	}
	return "TRANSPORT"
}

// parallel runs work on n goroutines, each with its own recorders, and merges them.
func parallel(n int, names []string, work func(i int, rec map[string]*recorder)) map[string]*recorder {
	all := map[string]*recorder{}
	for _, name := range names {
		all[name] = newRecorder(name)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := map[string]*recorder{}
			for _, name := range names {
				own[name] = newRecorder(name)
			}
			work(i, own)
			mu.Lock()
			defer mu.Unlock()
			for name, rec := range own {
				all[name].merge(rec)
			}
		}()
	}
	wg.Wait()
	return all
}

// target is where creates go.
type target struct{ tenant, region, flavor, image string }

type idNode struct {
	Edges []struct {
		Node struct {
			ID       string `json:"id"`
			Vcpus    int    `json:"vcpus"`
			MemoryMB int    `json:"memoryMB"`
		} `json:"node"`
	} `json:"edges"`
}

// discover fills what the configuration leaves empty from the API.
func (r *runner) discover(ctx context.Context) (target, error) {
	t := target{tenant: r.cfg.Tenant, region: r.cfg.Region, flavor: r.cfg.Flavor, image: r.cfg.Image}
	var out struct {
		Tenants, Regions, Flavors, Images idNode
	}
	err := r.api.Do(ctx, `{ tenants(first: 1) { edges { node { id } } }
  regions(first: 1) { edges { node { id } } }
  flavors(first: 100) { edges { node { id vcpus memoryMB } } }
  images(first: 1, where: {status: ACTIVE}) { edges { node { id } } } }`, nil, &out)
	if err != nil {
		return t, fmt.Errorf("discover tenant, region, flavor and image: %w", err)
	}
	if t.tenant == "" && len(out.Tenants.Edges) > 0 {
		t.tenant = out.Tenants.Edges[0].Node.ID
	}
	if t.region == "" && len(out.Regions.Edges) > 0 {
		t.region = out.Regions.Edges[0].Node.ID
	}
	if t.flavor == "" {
		best := -1
		for i, e := range out.Flavors.Edges {
			b := out.Flavors.Edges[max(best, 0)].Node
			if best < 0 || e.Node.Vcpus < b.Vcpus || (e.Node.Vcpus == b.Vcpus && e.Node.MemoryMB < b.MemoryMB) {
				best = i
			}
		}
		if best >= 0 {
			t.flavor = out.Flavors.Edges[best].Node.ID
		}
	}
	if t.image == "" && len(out.Images.Edges) > 0 {
		t.image = out.Images.Edges[0].Node.ID
	}
	if t.tenant == "" || t.region == "" || t.flavor == "" {
		return t, fmt.Errorf("no tenant, region or flavor to create in (found %q, %q, %q): pass -tenant, -region and -flavor", t.tenant, t.region, t.flavor)
	}
	return t, nil
}

const createMutation = `mutation($input: CreateVirtualMachineInput!) { createVirtualMachine(input: $input) { id status } }`

// create creates one VM named r.prefix + n and returns its ID.
func (r *runner) create(ctx context.Context, t target, n int64) (string, error) {
	in := map[string]any{"name": fmt.Sprintf("%s%d", r.prefix, n), "tenantID": t.tenant, "regionID": t.region, "flavorID": t.flavor}
	if t.image != "" && t.image != "none" {
		in["imageID"] = t.image
	}
	var out struct {
		CreateVirtualMachine struct{ ID string }
	}
	if err := r.api.Do(ctx, createMutation, map[string]any{"input": in}, &out); err != nil {
		return "", err
	}
	return out.CreateVirtualMachine.ID, nil
}

// cleanup deletes (force) the VMs of this run unless Keep, at the run's clients.
func (r *runner) cleanup(ctx context.Context, ids []string) {
	r.report.Created = len(ids)
	if r.cfg.Keep {
		r.report.Kept = true
		return
	}
	var next, deleted, failed atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range r.cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				if err := r.delete(ctx, ids[i]); err != nil {
					failed.Add(1)
					mu.Lock()
					if r.report.CleanupError == "" {
						r.report.CleanupError = err.Error()
					}
					mu.Unlock()
					continue
				}
				deleted.Add(1)
			}
		}()
	}
	wg.Wait()
	r.report.Deleted, r.report.CleanupErrors = int(deleted.Load()), int(failed.Load())
}

// delete deletes one VM (force), trying again up to five times over about three seconds
// on an error other than NOT_FOUND (which counts as deleted): a VM its agent is starting
// answers CONFLICT ("changed meanwhile; try again").
func (r *runner) delete(ctx context.Context, id string) error {
	var err error
	for attempt := range 5 {
		err = r.api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id, force: true) }`, map[string]any{"id": id}, nil)
		if err == nil || apiclient.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}

// Creates runs createVirtualMachine at cfg.Clients until cfg.Duration has passed or
// cfg.Count VMs were attempted, then (cfg.PgbenchDSN) the pgbench floor, then deletes what it
// created unless cfg.Keep.
func Creates(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(ctx, "creates", cfg)
	if err != nil {
		return nil, err
	}
	t, err := r.discover(ctx)
	if err != nil {
		return nil, err
	}
	var seq atomic.Int64
	var mu sync.Mutex
	var ids []string
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(r.cfg.Duration)
	began := time.Now()
	recs := parallel(r.cfg.Clients, []string{"createVirtualMachine"}, func(_ int, rec map[string]*recorder) {
		for runCtx.Err() == nil && (r.cfg.Count > 0 || time.Now().Before(deadline)) {
			n := seq.Add(1)
			if r.cfg.Count > 0 && n > int64(r.cfg.Count) {
				return
			}
			s := time.Now()
			id, err := r.create(runCtx, t, n)
			rec["createVirtualMachine"].add(time.Since(s), err)
			if err == nil {
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		}
	})
	elapsed := time.Since(began)
	r.report.ElapsedS = elapsed.Seconds()
	st := recs["createVirtualMachine"].stats(elapsed)
	r.report.Ops = []OpStats{st}
	r.report.Machine.LoadAfter = loadavg()
	if r.cfg.PgbenchDSN != "" {
		r.report.Pgbench = r.pgbench(ctx, t, ids, st.PerSecond, elapsed)
	}
	r.cleanup(ctx, ids)
	rep := r.finish()
	if st.OK == 0 {
		return rep, fmt.Errorf("no create succeeded: %s", errorsDetail(st))
	}
	return rep, nil
}

// Reads runs racks(first: 100), floorView and rackElevation in turn at cfg.Clients for
// cfg.Duration.
func Reads(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(ctx, "reads", cfg)
	if err != nil {
		return nil, err
	}
	rack, floor := r.cfg.Rack, r.cfg.Floor
	if rack == "" || floor == "" {
		var out struct {
			Racks struct {
				Edges []struct {
					Node struct {
						ID    string
						Floor struct{ ID string }
					}
				}
			}
		}
		if err := r.api.Do(ctx, `{ racks(first: 1) { edges { node { id floor { id } } } } }`, nil, &out); err != nil {
			return nil, fmt.Errorf("discover a rack: %w", err)
		}
		if len(out.Racks.Edges) == 0 {
			return nil, errors.New("no rack to draw: pass -rack and -floor")
		}
		if rack == "" {
			rack = out.Racks.Edges[0].Node.ID
		}
		if floor == "" {
			floor = out.Racks.Edges[0].Node.Floor.ID
		}
	}
	queries := []struct {
		name, doc string
		vars      map[string]any
	}{
		{"racks(first: 100)", `{ racks(first: 100) { totalCount edges { node { id name row position height status } } } }`, nil},
		{"floorView", `query($id: ID!) { floorView(id: $id) { id name racks { rack { id name } usedUnits freeUnits hosts } } }`, map[string]any{"id": floor}},
		{"rackElevation", `query($id: ID!) { rackElevation(id: $id) { rack { id name } usedUnits freeUnits units { unit frontDeviceID rearDeviceID } devices { id name } } }`, map[string]any{"id": rack}},
	}
	names := make([]string, len(queries))
	for i, q := range queries {
		names[i] = q.name
	}
	deadline := time.Now().Add(r.cfg.Duration)
	began := time.Now()
	recs := parallel(r.cfg.Clients, names, func(i int, rec map[string]*recorder) {
		for k := i; ctx.Err() == nil && time.Now().Before(deadline); k++ {
			q := queries[k%len(queries)]
			s := time.Now()
			var sink json.RawMessage
			err := r.api.Do(ctx, q.doc, q.vars, &sink)
			rec[q.name].add(time.Since(s), err)
		}
	})
	elapsed := time.Since(began)
	r.report.ElapsedS = elapsed.Seconds()
	total := newRecorder("all")
	ok := 0
	for _, name := range names {
		total.merge(recs[name])
		st := recs[name].stats(elapsed)
		ok += st.OK
		r.report.Ops = append(r.report.Ops, st)
	}
	r.report.Ops = append(r.report.Ops, total.stats(elapsed))
	rep := r.finish()
	if ok == 0 {
		return rep, errors.New("no read succeeded")
	}
	return rep, nil
}

// Active creates cfg.VMs VMs at cfg.Clients and measures the time from the first create to
// every one ACTIVE (polling their count every 100 ms), then deletes them unless cfg.Keep.
// Meant for a server started with --demo, whose simulated fleet runs the VMs.
func Active(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(ctx, "active", cfg)
	if err != nil {
		return nil, err
	}
	t, err := r.discover(ctx)
	if err != nil {
		return nil, err
	}
	var seq atomic.Int64
	var mu sync.Mutex
	var ids []string
	began := time.Now()
	recs := parallel(r.cfg.Clients, []string{"createVirtualMachine"}, func(_ int, rec map[string]*recorder) {
		for ctx.Err() == nil {
			n := seq.Add(1)
			if n > int64(r.cfg.VMs) {
				return
			}
			s := time.Now()
			id, err := r.create(ctx, t, n)
			rec["createVirtualMachine"].add(time.Since(s), err)
			if err == nil {
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		}
	})
	createPhase := time.Since(began)
	r.report.Ops = []OpStats{recs["createVirtualMachine"].stats(createPhase)}
	r.report.VMs, r.report.CreatePhaseS = len(ids), createPhase.Seconds()
	waitErr := r.waitActive(ctx, len(ids), began)
	r.report.ElapsedS = time.Since(began).Seconds()
	if waitErr == nil && len(ids) > 0 {
		if err := r.phases(ctx, began); err != nil {
			waitErr = fmt.Errorf("read the VMs' timestamps: %w", err)
		}
	}
	r.report.Machine.LoadAfter = loadavg()
	r.cleanup(ctx, ids)
	rep := r.finish()
	if waitErr != nil {
		return rep, waitErr
	}
	if len(ids) == 0 {
		return rep, fmt.Errorf("no create succeeded: %s", errorsDetail(rep.Ops[0]))
	}
	return rep, nil
}

// waitActive polls until want VMs of this run are ACTIVE; it fails when one is in ERROR or
// at cfg.ActiveTimeout.
func (r *runner) waitActive(ctx context.Context, want int, began time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ActiveTimeout)
	defer cancel()
	vars := map[string]any{"prefix": r.prefix}
	for {
		var out struct {
			Active struct{ TotalCount int }
			Failed struct {
				TotalCount int
				Edges      []struct {
					Node struct{ Name, StatusReason string }
				}
			}
		}
		err := r.api.Do(ctx, `query($prefix: String!) {
  active: virtualMachines(where: {nameHasPrefix: $prefix, status: ACTIVE}) { totalCount }
  failed: virtualMachines(first: 1, where: {nameHasPrefix: $prefix, status: ERROR}) { totalCount edges { node { name statusReason } } } }`, vars, &out)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("%d VMs not all ACTIVE after %v", want, r.cfg.ActiveTimeout)
		case err != nil:
			return fmt.Errorf("poll VM status: %w", err)
		case out.Failed.TotalCount > 0:
			e := out.Failed.Edges
			if len(e) > 0 {
				return fmt.Errorf("%d of %d VMs went to ERROR (%s: %s)", out.Failed.TotalCount, want, e[0].Node.Name, e[0].Node.StatusReason)
			}
			return fmt.Errorf("%d of %d VMs went to ERROR", out.Failed.TotalCount, want)
		case out.Active.TotalCount >= want:
			r.report.AllActiveS = time.Since(began).Seconds()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d VMs not all ACTIVE after %v (%d were)", want, r.cfg.ActiveTimeout, out.Active.TotalCount)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// phases reads, once every VM of the run is ACTIVE, the timestamps the server wrote on each
// and its first assignment, and reports the steps between them (Report.Phases):
//
//   - api: the create request from the client's start of the run to the VM's row
//     (createdAt; includes the wait of the clients queued behind the others);
//   - to node: createdAt → the node's assignment row (assignment createdAt: the outbox
//     task, its relay and queue, the worker's provisioning: address, config drive, image);
//   - on node: the assignment → ACTIVE (statusChangedAt: the agent's poll, define and start,
//     its report);
//   - create → ACTIVE: createdAt → statusChangedAt.
//
// The server's clock is assumed to be the client's (the harness runs beside the server);
// began is the client's start of the run.
func (r *runner) phases(ctx context.Context, began time.Time) error {
	type vmRow struct {
		CreatedAt, StatusChangedAt time.Time
		Assignments                struct {
			Edges []struct{ Node struct{ CreatedAt time.Time } }
		}
	}
	var rows []vmRow
	after := any(nil)
	for {
		var out struct {
			VirtualMachines struct {
				Edges    []struct{ Node vmRow }
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		err := r.api.Do(ctx, `query($prefix: String!, $after: Cursor) {
  virtualMachines(first: 100, after: $after, where: {nameHasPrefix: $prefix}) {
    edges { node { createdAt statusChangedAt assignments(first: 1, orderBy: {field: CREATED_AT, direction: ASC}) { edges { node { createdAt } } } } }
    pageInfo { hasNextPage endCursor } } }`, map[string]any{"prefix": r.prefix, "after": after}, &out)
		if err != nil {
			return err
		}
		for _, e := range out.VirtualMachines.Edges {
			rows = append(rows, e.Node)
		}
		if !out.VirtualMachines.PageInfo.HasNextPage {
			break
		}
		after = out.VirtualMachines.PageInfo.EndCursor
	}
	var api, toNode, onNode, total []time.Duration
	var lastAPI, lastNode, lastActive time.Time
	later := func(a, b time.Time) time.Time {
		if b.After(a) {
			return b
		}
		return a
	}
	for _, v := range rows {
		api = append(api, v.CreatedAt.Sub(began))
		total = append(total, v.StatusChangedAt.Sub(v.CreatedAt))
		lastAPI, lastActive = later(lastAPI, v.CreatedAt), later(lastActive, v.StatusChangedAt)
		if a := v.Assignments.Edges; len(a) > 0 {
			toNode = append(toNode, a[0].Node.CreatedAt.Sub(v.CreatedAt))
			onNode = append(onNode, v.StatusChangedAt.Sub(a[0].Node.CreatedAt))
			lastNode = later(lastNode, a[0].Node.CreatedAt)
		}
	}
	phase := func(name string, d []time.Duration, last time.Time) Phase {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		p := Phase{Name: name, P50MS: ms(quantile(d, 0.5)), P95MS: ms(quantile(d, 0.95)), MaxMS: ms(quantile(d, 1))}
		if !last.IsZero() {
			p.LastAtS = last.Sub(began).Seconds()
		}
		return p
	}
	r.report.Phases = []Phase{phase("api (run start → VM row)", api, lastAPI), phase("to node (VM row → assignment)", toNode, lastNode),
		phase("on node (assignment → ACTIVE)", onNode, lastActive), phase("create → ACTIVE (VM row → ACTIVE)", total, lastActive)}
	return nil
}

// errorsDetail names each error code with its count and first message.
func errorsDetail(o OpStats) string {
	parts := []string{}
	for _, c := range sortedKeys(o.Errors) {
		parts = append(parts, fmt.Sprintf("%s ×%d (%.300s)", c, o.Errors[c], o.ErrorSamples[c]))
	}
	return strings.Join(parts, "; ")
}
