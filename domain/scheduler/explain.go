package scheduler

import "slices"

// Explanation records how every node of the chosen cluster fared in the last round of a
// decision (the last VM placed, or with AllowPartial the one that did not fit): the
// filter that rejected it, or its score from each scorer and their weighted total. It is
// a handful of flat arrays, whatever the number of nodes; At and Nodes turn it into
// NodeResults (a map per scored node) on demand.
type Explanation struct {
	// Scorers names the weighted scorers in the order Score takes them.
	Scorers []string

	ids     []int   // node IDs by position in Snapshot.Nodes (the index's, read-only)
	pos     []int32 // positions of the nodes explained (the index's, read-only)
	res     []int32 // resSkipped, resPassed, or the index of the rejecting filter
	sid     []uint16
	filters []string    // filter names by index
	scores  [][]float64 // per scorer, per node; nil when 0 for every node or coded
	coded   []codedColumn
	on      []int     // the scorers that count in totals, in order
	weights []float64 // their weights
}

// codedColumn is a scorer's column stored as table[keys[position]]: SpreadAZ (key: the
// AZ) and the soft label scorers (key: matched pairs) give few distinct scores.
type codedColumn struct {
	keys  []int32 // by position in Snapshot.Nodes
	table []float64
}

// tableScorer is a scorer whose scores in the last round were table[keys[p]] for
// every node position p it scored. Keys that are shared are read-only (the index's) and
// need no copy.
type tableScorer interface {
	scoreTable(a *attempt) (keys []int32, table []float64, shared bool)
}

// Len is the number of nodes explained.
func (e *Explanation) Len() int { return len(e.pos) }

// NodeID returns the ID of the i-th node explained.
func (e *Explanation) NodeID(i int) int { return e.ids[e.pos[i]] }

// Skipped reports whether the i-th node was not evaluated: with Config.MaxNodesToScore
// or Config.ScoreSampleRatio the round stopped once it had found enough feasible nodes.
func (e *Explanation) Skipped(i int) bool { return e.res[i] == resSkipped }

// Rejected returns the filter that rejected the i-th node and why; ok is false when the
// node passed every filter (or was skipped).
func (e *Explanation) Rejected(i int) (filter string, st Status, ok bool) {
	f := e.res[i]
	if f < 0 {
		return "", Pass, false
	}
	return e.filters[f], knownStatuses[e.sid[i]], true
}

// Score returns scorer j's (Scorers[j]) score of the i-th node, 0 unless it was scored.
func (e *Explanation) Score(i, j int) float64 {
	switch {
	case e.res[i] != resPassed:
		return 0
	case e.scores[j] != nil:
		return e.scores[j][i]
	case e.coded[j].table != nil:
		return e.coded[j].table[e.coded[j].keys[e.pos[i]]]
	}
	return 0
}

// Total returns the weighted total of the i-th node, 0 unless it was scored.
func (e *Explanation) Total(i int) float64 {
	if e.res[i] != resPassed {
		return 0
	}
	t := 0.0 // as attempt.score adds it up
	for n, j := range e.on {
		t += float64(e.weights[n] * e.Score(i, j))
	}
	return t
}

// At returns the i-th node's explanation as a NodeResult.
func (e *Explanation) At(i int) NodeResult {
	nr := NodeResult{NodeID: e.NodeID(i)}
	switch e.res[i] {
	case resSkipped:
		nr.Skipped = true
	case resPassed:
		nr.Scores = make(map[string]float64, len(e.Scorers))
		for j, name := range e.Scorers {
			nr.Scores[name] = e.Score(i, j)
		}
		nr.Total = e.Total(i)
	default:
		var st Status
		nr.Rejected, st, _ = e.Rejected(i)
		nr.Code, nr.Reason = st.Code, st.Reason
	}
	return nr
}

// Nodes returns every node's explanation, in the order of Snapshot.Nodes (what
// Decision.Nodes holds unless Config.CompactExplain).
func (e *Explanation) Nodes() []NodeResult {
	out := make([]NodeResult, e.Len())
	for i := range out {
		out[i] = e.At(i)
	}
	return out
}

// explanation copies the last round's results out of the attempt's pooled buffers:
// a few flat copies, nothing allocated per node. The nodes the round did not look at are
// recorded as skipped; what the buffers hold for them, the statuses of the nodes not
// rejected and the dense scores of the nodes not scored are left out (zeros), so the
// explanation only depends on the inputs.
func (a *attempt) explanation() *Explanation {
	k := len(a.pos)
	e := &Explanation{
		Scorers: make([]string, len(a.scorers)),
		ids:     a.ix.ids,
		pos:     a.pos,
		res:     make([]int32, k),
		sid:     make([]uint16, k),
		filters: make([]string, len(a.filters)),
		scores:  make([][]float64, len(a.scorers)),
		coded:   make([]codedColumn, len(a.scorers)),
		on:      slices.Clone(a.sOn),
		weights: slices.Clone(a.weights),
	}
	for j, s := range a.scorers {
		e.Scorers[j] = s.Name()
	}
	for i, f := range a.filters {
		e.filters[i] = f.Name()
	}
	dense := 0
	for _, j := range a.sOn {
		if ts, ok := a.scorers[j].Scorer.(tableScorer); ok && a.sActive[j] {
			keys, table, shared := ts.scoreTable(a)
			if !shared {
				keys = slices.Clone(keys)
			}
			e.coded[j] = codedColumn{keys, slices.Clone(table)}
		} else {
			dense++
		}
	}
	var denseBuf, fromBuf [8][]float64
	denseCols, from := denseBuf[:0], fromBuf[:0]
	cols := make([]float64, dense*k) // one allocation for every dense column
	for _, j := range a.sOn {
		if e.coded[j].table == nil {
			i := len(denseCols)
			e.scores[j] = cols[i*k : (i+1)*k : (i+1)*k]
			denseCols, from = append(denseCols, e.scores[j]), append(from, a.cols[j*k:(j+1)*k])
		}
	}
	if a.lazy {
		// Most nodes were not looked at: copy what the round found, node by node.
		for c := range e.res {
			r := a.result(int32(c))
			e.res[c] = r
			switch {
			case r == resPassed:
				for i, col := range denseCols {
					col[c] = from[i][c]
				}
			case r >= 0:
				e.sid[c] = a.sid[c]
			}
		}
		return e
	}
	// Every node was looked at: copy wholesale, then clear what was not scored.
	copy(e.res, a.res[:k])
	for i, col := range denseCols {
		copy(col, from[i])
	}
	for c, r := range e.res {
		if r == resPassed {
			continue
		}
		if r >= 0 {
			e.sid[c] = a.sid[c]
		}
		for _, col := range denseCols {
			col[c] = 0
		}
	}
	return e
}

// rejections joins the explanations of failed attempts, one per cluster tried, into
// one. The round that failed in a cluster rejected every node, so only the rejections
// are kept. Nil when there are none.
func rejections(parts []*Explanation) *Explanation {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	e := &Explanation{Scorers: parts[0].Scorers, ids: parts[0].ids, filters: parts[0].filters,
		scores: make([][]float64, len(parts[0].Scorers)), coded: make([]codedColumn, len(parts[0].Scorers))}
	for _, p := range parts {
		e.pos = append(e.pos, p.pos...)
		e.res = append(e.res, p.res...)
		e.sid = append(e.sid, p.sid...)
	}
	return e
}
