package scheduler

import (
	"math"
	"sync"
)

// chunk is how many candidate nodes go through the filters and scorers at a time: small
// enough for the working lists to stay in L1. A sampled round (Config.ScoreSampleRatio,
// Config.MaxNodesToScore) sizes its chunks by the feasible nodes it still misses
// (nextChunk), at least minChunk.
const chunk = 256

// minChunk is the smallest chunk of a sampled round (but for the cluster's last nodes):
// the chunks that finish a sample do not shrink to a node or two.
const minChunk = 32

// minSampled is the fewest feasible nodes a sampled round looks for (kube-scheduler's
// minFeasibleNodesToFind).
const minSampled = 100

// Outcomes of a node in a round, besides the index of the filter that rejected it.
const (
	resSkipped = -2 // not evaluated: sampling found enough feasible nodes first
	resPassed  = -1 // passed every filter and was scored
)

// attempt is the placement of a group in one cluster, VM by VM. Its buffers are pooled:
// a Decision never points into them.
//
// Nothing of it is initialised per node up front when the round samples: a view's
// entries (hot, and fresh and scored when incremental) are filled the first time a round
// of the attempt looks at it, which seen[c] == epoch records, and its result (res, sid)
// is valid only if the last round looked at it, which visitedAt[c] == roundEpoch
// records (read it through result). Without sampling every round looks at every node,
// so the views are filled up front and every result is valid.
type attempt struct {
	cluster *Cluster
	st      state
	ix      *index
	ci      *clusterInfo // the index's record of the cluster (nil when it has no nodes)
	pos     []int32      // positions in Snapshot.Nodes of the cluster's nodes (the index's)
	// hot is what the plugins read of each node, by its index in pos (a "view"):
	// allocations including the group's VMs placed so far, and capacities; compact and
	// pointer-free. The Snapshot itself is never written.
	hot []nodeHot

	// pooled: release returns the attempt to the pool.
	pooled bool
	// lazy: views are filled when first looked at (the rounds sample).
	lazy bool
	// epoch numbers the attempt among those this buffer served; seen[c] == epoch once
	// view c is filled. roundEpoch numbers the rounds likewise; visitedAt[c] ==
	// roundEpoch when the last round looked at view c. Both counters skip 0, and the
	// stamps are cleared when one wraps around.
	epoch, roundEpoch uint32
	seen, visitedAt   []uint32

	filters []Filter
	scorers []weighted
	sActive []bool // per scorer: prepared, not 0 everywhere
	// The filters and scorers that are not skipped for this request. Filters are split
	// into the stable prefix (a verdict that only changes when the node itself takes a
	// VM) and the rest; scorers into stable and the rest.
	fStable, fRest []int
	sOn            []int // every scorer that is not 0 everywhere, in order (for totals)
	sStable, sRest []int
	weights        []float64   // weights of sOn
	colsOn         [][]float64 // columns of sOn

	// incremental: later rounds of the group reuse stable verdicts and scores.
	incremental bool
	stableRes   []int32 // per view, valid when fresh: resPassed or a stable filter's index
	fresh       []bool
	scored      []bool // the stable scorers' columns are current

	// sample is how many feasible nodes a round looks for (all when >= len(pos));
	// start is where the next round starts looking, in visit: the order of the views
	// when sampling (the index's visitOrder), nil otherwise.
	sample, start int
	visit         []int32

	// Results of the last round (one VM), per view: res is resPassed or the rejecting
	// filter's index, with its status id in sid (an index of knownStatuses), for the
	// views the round looked at (see result); cols holds the scores, scorer-major
	// (cols[j*len(pos)+c]); totals the weighted sums.
	res    []int32
	sid    []uint16
	cols   []float64
	totals []float64
	cand   []int32
	need   []int32

	placements []Placement
	// reasons counts rejections per filter in the round that failed.
	reasons map[string]int

	// gen changes with every placement: per-round memos below are valid while their
	// stamp equals it.
	gen uint32

	// Data of the plugins (see their prepare methods).
	azLoads   []azLoad // per AZ id
	azMembers []int32  // the group's VMs per AZ id, counting azSeen members
	azSeen    int
	azScore   []float64 // SpreadAZ per AZ id
	azStamp   []uint32

	zoneRules []zoneRuleC
	zoneBlk   [numZoneKinds][]int32 // the group's VMs per zone id, counting zoneSeen members
	zoneSeen  int
	zoneRes   []uint8 // per view: ZonePolicy's cached verdict (zoneUnknown when stale)

	provOK   []bool         // per provider set: has the requested provider
	labelCnt [4][]int32     // per position: matched pairs of hardAff, hardExcl, softAff, softExcl
	labelTab [2][]float64   // soft label scores by matched count (softAff, softExcl)
	spread   [2]spreadState // label anti-affinity: hard, soft
	wantAZ   int32          // AvailabilityZone: the AZ id to stay in, -1 for none that exists
	nameOK   []bool         // per position: named by Policy.NodeNames

	hgVerdict []knownStatus // QuotaFit per dense host group
	hgStamp   []uint32
}

// nodeHot is a node's allocations as the scratch copy has them, with its capacities
// (64 bytes).
type nodeHot struct {
	memUsed, memCap, diskUsed, diskCap int64
	cpuUsed, cpuCap, dedFree           int64
	azID                               int32
	ready, schedulable                 bool
}

var attempts = sync.Pool{New: func() any { return new(attempt) }}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/8)
	}
	return s[:n]
}

// testNoIncremental is a test switch: re-evaluate everything every round.
var testNoIncremental bool

// tryCluster places as many VMs of the group as fit in cluster c, with attempt a (fresh
// from the pool, or new). Release the attempt when done with it.
func tryCluster(a *attempt, s *Snapshot, ix *index, r *Request, c clusterCandidate, filters []Filter, scorers []weighted, cfg *Config) *attempt {
	a.init(s, ix, r, c, filters, scorers, cfg)
	for range r.Count {
		best := a.round()
		if best < 0 {
			a.reasons = a.countRejections()
			break
		}
		a.placements = append(a.placements, Placement{NodeID: ix.ids[a.pos[best]], Total: a.totals[best]})
		a.place(int32(best))
	}
	return a
}

// pooledAttempt takes an attempt from the pool.
func pooledAttempt() *attempt {
	a := attempts.Get().(*attempt)
	a.pooled = true
	return a
}

// newAttempt readies the placement of the group in cluster c with an attempt from the
// pool.
func newAttempt(s *Snapshot, ix *index, r *Request, c clusterCandidate, filters []Filter, scorers []weighted, cfg *Config) *attempt {
	a := pooledAttempt()
	a.init(s, ix, r, c, filters, scorers, cfg)
	return a
}

// init readies the placement of the group in cluster c: the AZ loads, the prepared
// plugins, the sample and, unless the rounds sample, the nodes' scratch copy. Its work
// does not grow with the cluster's nodes when the rounds sample.
func (a *attempt) init(s *Snapshot, ix *index, r *Request, c clusterCandidate, filters []Filter, scorers []weighted, cfg *Config) {
	a.cluster, a.ix, a.pos = c.Cluster, ix, c.pos
	a.ci = ix.cluster(c.ID)
	a.st = state{Snapshot: s, Request: r, placed: a.st.placed[:0], group: a.st.group[:0], quota: a.st.quota[:0]}
	a.st.init()
	a.gen = 1
	a.azSeen, a.zoneSeen = 0, 0
	a.placements = make([]Placement, 0, min(r.Count, 64))
	a.reasons = nil

	k := len(a.pos)
	a.sample, a.start, a.visit = k, 0, nil
	if n := sampleSize(cfg, k); n < k {
		a.sample, a.visit = n, ix.visitOrder(a.ci)
	}
	a.lazy = a.sample < k
	a.incremental = r.Count > 1 && !testNoIncremental
	a.hot = grow(a.hot, k)
	a.res = grow(a.res, k)
	a.sid = grow(a.sid, k)
	a.totals = grow(a.totals, k)
	a.cols = grow(a.cols, k*len(scorers))
	a.cand = grow(a.cand, chunk)
	a.need = grow(a.need, chunk)
	if a.incremental {
		a.stableRes = grow(a.stableRes, k)
		a.fresh = grow(a.fresh, k)
		a.scored = grow(a.scored, k)
	}
	a.initAZLoads(s)
	if a.lazy {
		a.seen = grow(a.seen, k)
		a.visitedAt = grow(a.visitedAt, k)
		nextEpoch(&a.epoch, a.seen)
		nextEpoch(&a.roundEpoch, a.visitedAt) // no result is valid before the first round
	} else {
		a.initHot(s)
	}

	a.filters, a.fStable, a.fRest = filters, a.fStable[:0], a.fRest[:0]
	for i, f := range filters {
		switch {
		case !f.prepareFilter(a):
		case a.incremental && len(a.fRest) == 0 && f.stable():
			a.fStable = append(a.fStable, i)
		default:
			a.fRest = append(a.fRest, i)
		}
	}
	a.scorers, a.sActive = scorers, a.sActive[:0]
	a.sOn, a.sStable, a.sRest, a.weights, a.colsOn = a.sOn[:0], a.sStable[:0], a.sRest[:0], a.weights[:0], a.colsOn[:0]
	for j, w := range scorers {
		col := a.cols[j*k : (j+1)*k]
		// A scorer that gives every node 0 is not run, and adds nothing to totals (unless
		// its weight is not finite: then its zeros still count, so its column is cleared;
		// otherwise nothing reads it).
		active := w.prepareScorer(a)
		a.sActive = append(a.sActive, active)
		if !active {
			if !math.IsInf(w.weight, 0) && !math.IsNaN(w.weight) {
				continue
			}
			clear(col)
		}
		a.sOn, a.weights, a.colsOn = append(a.sOn, j), append(a.weights, w.weight), append(a.colsOn, col)
		switch {
		case !active:
		case a.incremental && w.stable():
			a.sStable = append(a.sStable, j)
		default:
			a.sRest = append(a.sRest, j)
		}
	}

	if a.lazy {
		a.start = sampleStart(a.azLoads, r, k)
	}
}

// sampleSize is how many feasible nodes a round looks for in a cluster of k nodes: k
// (all) unless Config.ScoreSampleRatio or Config.MaxNodesToScore is set.
func sampleSize(cfg *Config, k int) int {
	n := k
	if ratio := cfg.ScoreSampleRatio; ratio > 0 && ratio < 1 {
		n = max(int(math.Ceil(ratio*float64(k))), min(minSampled, k))
	}
	if m := cfg.MaxNodesToScore; m > 0 {
		n = min(n, m)
	}
	return n
}

// nextEpoch moves an epoch counter on, for a new attempt or round. When it wraps around,
// every stamp (the whole array, which later grows may reslice) is cleared and the
// counter restarts at 1, so that no stamp left from before equals it.
func nextEpoch(epoch *uint32, stamps []uint32) {
	if *epoch++; *epoch == 0 {
		clear(stamps[:cap(stamps)])
		*epoch = 1
	}
}

// initAZLoads fills a.azLoads with the cluster's CPU per AZ, kept by the index.
func (a *attempt) initAZLoads(s *Snapshot) {
	ix := a.ix
	a.azLoads = grow(a.azLoads, len(ix.azNames))
	for i := range a.azLoads {
		a.azLoads[i] = azLoad{name: ix.azNames[i]}
	}
	if a.ci == nil {
		return
	}
	for _, z := range ix.azCPU(s, a.ci) {
		l := &a.azLoads[z.az]
		l.capacity, l.used = z.capacity, z.used
	}
}

// initHot reads every node of the cluster's allocations and capacities afresh into
// a.hot (when every round looks at every node anyway), and readies the incremental
// memos.
func (a *attempt) initHot(s *Snapshot) {
	nodes, azOf, hot := s.Nodes, a.ix.az, a.hot
	for c, p := range a.pos {
		n := &nodes[p]
		// Field by field: a composite literal goes through the stack, and reading it back
		// in wide moves stalls store forwarding.
		h := &hot[c]
		h.memUsed, h.memCap, h.diskUsed, h.diskCap = n.MemoryAllocatedMB, n.MemoryMB, n.DiskAllocatedGB, n.DiskGB
		h.cpuUsed, h.cpuCap, h.dedFree = int64(n.CPUAllocated), int64(n.CPUCapacity), int64(n.DedicatedCoresFree)
		h.azID, h.ready, h.schedulable = azOf[p], n.Ready, n.Schedulable
	}
	if a.incremental {
		clear(a.fresh)
		clear(a.scored)
	}
}

// load fills view c (lazy attempts): its allocations and capacities from the snapshot,
// and stale incremental memos.
func (a *attempt) load(c int32) {
	p := a.pos[c]
	n, h := &a.st.Snapshot.Nodes[p], &a.hot[c]
	h.memUsed, h.memCap, h.diskUsed, h.diskCap = n.MemoryAllocatedMB, n.MemoryMB, n.DiskAllocatedGB, n.DiskGB
	h.cpuUsed, h.cpuCap, h.dedFree = int64(n.CPUAllocated), int64(n.CPUCapacity), int64(n.DedicatedCoresFree)
	h.azID, h.ready, h.schedulable = a.ix.az[p], n.Ready, n.Schedulable
	if a.incremental {
		a.fresh[c], a.scored[c] = false, false
	}
	a.seen[c] = a.epoch
}

// result is view c's outcome in the last round: resPassed, the index of the filter that
// rejected it (its status in a.sid[c]), or resSkipped when the round did not look at it.
func (a *attempt) result(c int32) int32 {
	if a.lazy && a.visitedAt[c] != a.roundEpoch {
		return resSkipped
	}
	return a.res[c]
}

// sampleStart derives where sampling starts from the cluster's allocations and the
// request, so Schedule stays a pure function while consecutive decisions (the snapshot
// updated in between) look at different nodes, like kube-scheduler's rotating
// nextStartNodeIndex.
func sampleStart(loads []azLoad, r *Request, k int) int {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		h ^= x
		h *= 1099511628211
	}
	for _, l := range loads {
		mix(uint64(l.used))
	}
	mix(uint64(r.TenantID))
	mix(uint64(r.Flavor.VCPUs))
	mix(uint64(r.Flavor.MemoryMB))
	h ^= h >> 29
	return int(h % uint64(k))
}

// release returns the attempt's buffers to the pool (if it came from there).
func (a *attempt) release() {
	a.cluster, a.ix, a.ci, a.pos, a.visit, a.filters, a.scorers, a.placements = nil, nil, nil, nil, nil, nil, nil, nil
	a.st.Snapshot, a.st.Request = nil, nil
	if a.pooled {
		a.pooled = false
		attempts.Put(a)
	}
}

// reject records that filter fi refused view c with a known status. It is kept out
// of the batch loops, where rejections are the exception.
//
//go:noinline
func (a *attempt) reject(c int32, fi int, id uint16) {
	a.res[c] = int32(fi)
	a.sid[c] = id
}

// place records the next VM of the group on view c: its allocations, the tenant's
// quota use and the AZ load.
func (a *attempt) place(c int32) {
	if a.lazy && a.seen[c] != a.epoch {
		a.load(c)
	}
	f, h := a.st.Request.Flavor, &a.hot[c]
	h.cpuUsed += int64(f.VCPUs)
	h.memUsed += f.MemoryMB
	h.diskUsed += f.DiskGB
	if f.Dedicated {
		h.dedFree -= int64(f.VCPUs)
	}
	a.azLoads[h.azID].used += f.VCPUs
	p := a.pos[c]
	a.st.placed = append(a.st.placed, p)
	a.st.useQuota(a.st.Snapshot.Nodes[p].HostGroupID)
	a.gen++
	if a.incremental {
		a.fresh[c], a.scored[c] = false, false
	}
}

// round evaluates the nodes for the next VM and returns the index of the best, or -1.
// Ties go to the lowest node ID. Nodes go through the filter chain a chunk at a time,
// each filter over the whole chunk; survivors are scored likewise. With sampling, the
// round looks at the views in the interleaved order a.visit, from a.start on, and
// stops once enough feasible nodes were found.
func (a *attempt) round() int {
	k := len(a.pos)
	if a.lazy {
		nextEpoch(&a.roundEpoch, a.visitedAt)
	}
	best, bestTotal, bestID := -1, 0.0, 0
	ids, pos, visit := a.ix.ids, a.pos, a.visit
	found, visited := 0, 0
	for visited < k && found < a.sample {
		n := min(chunk, k-visited)
		if a.lazy {
			n = min(nextChunk(a.sample-found, found, visited), k-visited)
		}
		cand := a.cand[:n]
		i := a.start + visited
		if i >= k {
			i -= k
		}
		if a.lazy {
			seen, visitedAt, epoch, round := a.seen, a.visitedAt, a.epoch, a.roundEpoch
			for j := range cand {
				c := visit[i]
				if seen[c] != epoch {
					a.load(c)
				}
				cand[j] = c
				a.res[c], visitedAt[c] = resPassed, round
				if i++; i == k {
					i = 0
				}
			}
		} else {
			for j := range cand {
				cand[j] = int32(i)
				a.res[i] = resPassed
				if i++; i == k {
					i = 0
				}
			}
		}
		visited += n
		if cand = a.filter(cand); len(cand) == 0 {
			continue
		}
		found += len(cand)
		a.score(cand)
		totals := a.totals
		for _, c := range cand {
			t := totals[c]
			if best < 0 || t > bestTotal || (t == bestTotal && ids[pos[c]] < bestID) {
				best, bestTotal, bestID = int(c), t, ids[pos[c]]
			}
		}
	}
	if a.lazy {
		a.start = (a.start + visited) % k
	}
	return best
}

// nextChunk is how many nodes the next chunk of a sampled round looks at, when need
// feasible nodes are still missing and found were found among the visited looked at so
// far: as many as should yield need at the rate so far (need itself at first, as if all
// were feasible, and a whole chunk while none was), at least minChunk, at most chunk.
func nextChunk(need, found, visited int) int {
	n := need
	switch {
	case visited == 0:
	case found == 0:
		n = chunk
	default:
		n = (need*visited + found - 1) / found
	}
	return min(max(n, minChunk), chunk)
}

// filter runs the chain over a chunk and returns the survivors. Stable verdicts of
// earlier rounds are reused for nodes that took no VM since.
func (a *attempt) filter(cand []int32) []int32 {
	if len(a.fStable) > 0 {
		need := a.need[:0]
		for _, c := range cand {
			if !a.fresh[c] {
				need = append(need, c)
			}
		}
		for _, fi := range a.fStable {
			if need = a.filters[fi].filterBatch(a, fi, need); len(need) == 0 {
				break
			}
		}
		out := cand[:0]
		for _, c := range cand {
			if !a.fresh[c] {
				a.fresh[c], a.stableRes[c] = true, a.result(c)
			}
			if r := a.stableRes[c]; r != resPassed {
				a.res[c] = r // its status is still the one recorded then
				continue
			}
			out = append(out, c)
		}
		cand = out
	}
	for _, fi := range a.fRest {
		if cand = a.filters[fi].filterBatch(a, fi, cand); len(cand) == 0 {
			break
		}
	}
	return cand
}

// score fills the columns of the feasible nodes of a chunk and their totals.
func (a *attempt) score(cand []int32) {
	k := len(a.pos)
	if len(a.sStable) > 0 {
		need := a.need[:0]
		for _, c := range cand {
			if !a.scored[c] {
				need = append(need, c)
				a.scored[c] = true
			}
		}
		if len(need) > 0 {
			for _, j := range a.sStable {
				a.scorers[j].scoreBatch(a, need, a.cols[j*k:(j+1)*k])
			}
		}
	}
	for _, j := range a.sRest {
		a.scorers[j].scoreBatch(a, cand, a.cols[j*k:(j+1)*k])
	}
	// The weighted sum, scorer by scorer in name order. float64() keeps each product
	// rounded (no fused multiply-add on any platform), so Explanation.Total recomputes
	// exactly the same sum.
	totals, w, cols := a.totals, a.weights, a.colsOn
	switch len(cols) {
	case 0:
		for _, c := range cand {
			totals[c] = 0
		}
	case 3:
		c0, c1, c2 := cols[0], cols[1], cols[2]
		for _, c := range cand {
			t := 0.0
			t += float64(w[0] * c0[c])
			t += float64(w[1] * c1[c])
			t += float64(w[2] * c2[c])
			totals[c] = t
		}
	case 4:
		c0, c1, c2, c3 := cols[0], cols[1], cols[2], cols[3]
		for _, c := range cand {
			t := 0.0
			t += float64(w[0] * c0[c])
			t += float64(w[1] * c1[c])
			t += float64(w[2] * c2[c])
			t += float64(w[3] * c3[c])
			totals[c] = t
		}
	default:
		for _, c := range cand {
			t := 0.0
			for i, col := range cols {
				t += float64(w[i] * col[c])
			}
			totals[c] = t
		}
	}
}

// countRejections counts the last round's rejections per filter name.
func (a *attempt) countRejections() map[string]int {
	out := map[string]int{}
	for c := range a.pos {
		if j := a.result(int32(c)); j >= 0 {
			out[a.filters[j].Name()]++
		}
	}
	return out
}

// decision is the attempt's outcome, explained unless cfg is Quiet.
func (a *attempt) decision(cfg *Config) Decision {
	d := Decision{
		ClusterID:  a.cluster.ID,
		Placements: a.placements,
		Unplaced:   a.st.Request.Count - len(a.placements),
	}
	if cfg.Quiet {
		return d
	}
	d.Explanation = a.explanation()
	if !cfg.CompactExplain {
		d.Nodes = d.Explanation.Nodes()
	}
	return d
}

// Slots of attempt.labelCnt.
const (
	labelHardAff = iota
	labelHardExcl
	labelSoftAff
	labelSoftExcl
)

// countLabels counts, per node position, how many of the pairs the node carries.
func (a *attempt) countLabels(slot int, want []labelPair) {
	s := a.st.Snapshot
	cnt := grow(a.labelCnt[slot], len(s.Nodes))
	clear(cnt)
	for _, p := range want {
		for _, pos := range a.ix.withLabel(s, p) {
			cnt[pos]++
		}
	}
	a.labelCnt[slot] = cnt
}
