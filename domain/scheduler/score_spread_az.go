package scheduler

// SpreadAZ spreads across availability zones. Half the score rewards an AZ that holds
// few of the group's VMs (those already running, Request.GroupNodeIDs, and those placed
// so far); the other half rewards an AZ with a large share of its CPU free in the
// cluster, which spreads successive single-VM requests too.
type SpreadAZ struct{}

var _ Scorer = (*SpreadAZ)(nil)

// Name implements Scorer.
func (SpreadAZ) Name() string { return "SpreadAZ" }

// spreadAZ is the score of a node whose AZ holds same of the group's members VMs and
// has the fraction free of its CPU free.
func spreadAZ(same, members int, free float64) float64 {
	group := 1.0
	if members > 0 {
		group = 1 - float64(same)/float64(members)
	}
	return MaxScore * (group + free) / 2
}

// prepareScorer readies a score per AZ, computed once per placement.
func (SpreadAZ) prepareScorer(a *attempt) bool {
	n := len(a.ix.azNames)
	a.azMembers = grow(a.azMembers, n)
	clear(a.azMembers)
	a.azScore = grow(a.azScore, n)
	clear(a.azScore) // the explanation's table: nothing left from another decision
	a.azStamp = grow(a.azStamp, n)
	clear(a.azStamp)
	a.azSeen = 0
	return true
}

func (SpreadAZ) scoreBatch(a *attempt, cand []int32, out []float64) {
	st, azOf := &a.st, a.ix.az
	for ; a.azSeen < st.members(); a.azSeen++ {
		a.azMembers[azOf[st.memberPos(a.azSeen)]]++
	}
	hot, score := a.hot, a.azScore
	if len(score) <= 64 {
		// Few AZs: score them all once per placement.
		if len(score) > 0 && a.azStamp[0] != a.gen {
			for az := range score {
				score[az] = spreadAZ(int(a.azMembers[az]), st.members(), a.azLoads[az].free())
				a.azStamp[az] = a.gen
			}
		}
		for _, c := range cand {
			out[c] = score[hot[c].azID]
		}
		return
	}
	for _, c := range cand {
		az := hot[c].azID
		if a.azStamp[az] != a.gen {
			score[az] = spreadAZ(int(a.azMembers[az]), st.members(), a.azLoads[az].free())
			a.azStamp[az] = a.gen
		}
		out[c] = score[az]
	}
}

// scoreTable: a node's score is its AZ's.
func (SpreadAZ) scoreTable(a *attempt) ([]int32, []float64, bool) {
	return a.ix.az, a.azScore, true
}

// stable is false: the score depends on the group and the AZ load.
func (SpreadAZ) stable() bool { return false }
