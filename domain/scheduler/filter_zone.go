package scheduler

// ZonePolicy applies the policy's zone rules, per zone kind (POWER, RACK, NETWORK):
// AFFINITY keeps the group in the named zone, or else in the zone of its first VM;
// ANTI_AFFINITY puts no two VMs of the group in the same zone. The group's VMs already
// running (Request.GroupNodeIDs) come first and count like those placed in this
// decision. A node with no zone of a ruled kind is rejected.
type ZonePolicy struct{}

var _ Filter = (*ZonePolicy)(nil)

var (
	statusNoZone           = known("NO_ZONE", "node has no zone of a ruled kind")
	statusZoneAffinity     = known("ZONE_AFFINITY", "node is outside the group's zone")
	statusZoneAntiAffinity = known("ZONE_ANTI_AFFINITY", "zone already holds a VM of the group")
	statusBadZoneRule      = known("BAD_ZONE_RULE", "unknown zone rule mode")
)

// Name implements Filter.
func (ZonePolicy) Name() string { return "ZonePolicy" }

// zoneRuleC is a ZoneRule with zone ids instead of strings.
type zoneRuleC struct {
	kind  int // index.zone slot, -1 for an unknown kind
	mode  int8
	named bool
	want  int32 // AFFINITY: the zone id to stay in, 0 for any, -1 for none that exists
}

const (
	zoneModeBad int8 = iota
	zoneModeAffinity
	zoneModeAnti
)

// ZonePolicy's cached verdicts, per view.
const (
	zoneUnknown uint8 = iota
	zonePass
	zoneNo
	zoneAff
	zoneAnti
	zoneBad
)

var zoneStatus = [...]knownStatus{zoneNo: statusNoZone, zoneAff: statusZoneAffinity,
	zoneAnti: statusZoneAntiAffinity, zoneBad: statusBadZoneRule}

// prepareFilter compiles the rules to zone ids. Verdicts are cached per node: the
// group only grows, so a new VM can only change the verdict of the nodes that share one
// of its zones of an ANTI_AFFINITY kind, or of every node when it is the first VM and an
// AFFINITY rule follows it.
func (ZonePolicy) prepareFilter(a *attempt) bool {
	rules := a.st.Request.Policy.Zones
	if len(rules) == 0 {
		return false
	}
	a.zoneRules = a.zoneRules[:0]
	for _, r := range rules {
		rc := zoneRuleC{kind: zoneKind(r.Kind)}
		switch r.Mode {
		case ZoneAffinity:
			rc.mode = zoneModeAffinity
			if r.Zone != "" && rc.kind >= 0 {
				rc.named, rc.want = true, -1
				if id, ok := a.ix.zoneIDs[rc.kind][r.Zone]; ok {
					rc.want = id
				}
			}
		case ZoneAntiAffinity:
			rc.mode = zoneModeAnti
		}
		a.zoneRules = append(a.zoneRules, rc)
	}
	for k := range a.zoneBlk {
		a.zoneBlk[k] = grow(a.zoneBlk[k], a.ix.nzones[k]+1)
		clear(a.zoneBlk[k])
	}
	a.zoneSeen = 0
	a.zoneRes = grow(a.zoneRes, len(a.pos))
	clear(a.zoneRes)
	return true
}

// syncZones takes in the group's VMs placed since the last call.
func (a *attempt) syncZones() {
	st, zone := &a.st, &a.ix.zone
	for ; a.zoneSeen < st.members(); a.zoneSeen++ {
		p := st.memberPos(a.zoneSeen)
		for k := range a.zoneBlk {
			a.zoneBlk[k][zone[k][p]]++
		}
		follow := false
		for i := range a.zoneRules {
			if r := &a.zoneRules[i]; a.zoneSeen == 0 && r.mode == zoneModeAffinity && !r.named && r.kind >= 0 {
				r.want, follow = zone[r.kind][p], true
			}
		}
		if follow {
			clear(a.zoneRes)
			continue
		}
		var done [numZoneKinds]bool
		for _, r := range a.zoneRules {
			if r.mode != zoneModeAnti || r.kind < 0 || done[r.kind] {
				continue
			}
			done[r.kind] = true
			z := zone[r.kind][p]
			if z == 0 {
				continue
			}
			for _, q := range a.ix.inZone(r.kind, z) {
				if c := a.ix.local[q]; int(c) < len(a.pos) && a.pos[c] == q {
					a.zoneRes[c] = zoneUnknown
				}
			}
		}
	}
}

// zoneVerdict evaluates the rules for view c.
func (a *attempt) zoneVerdict(c int32) uint8 {
	p, zone := a.pos[c], &a.ix.zone
	for i := range a.zoneRules {
		r := &a.zoneRules[i]
		if r.kind < 0 {
			return zoneNo
		}
		z := zone[r.kind][p]
		if z == 0 {
			return zoneNo
		}
		switch r.mode {
		case zoneModeAffinity:
			if r.want != 0 && z != r.want {
				return zoneAff
			}
		case zoneModeAnti:
			if a.zoneBlk[r.kind][z] > 0 {
				return zoneAnti
			}
		default:
			return zoneBad
		}
	}
	return zonePass
}

func (ZonePolicy) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	a.syncZones()
	n := 0
	res := a.zoneRes
	for _, c := range cand {
		v := res[c]
		if v == zoneUnknown {
			v = a.zoneVerdict(c)
			res[c] = v
		}
		if v != zonePass {
			a.reject(c, fi, zoneStatus[v].id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

// stable is false: the verdict depends on the group.
func (ZonePolicy) stable() bool { return false }
