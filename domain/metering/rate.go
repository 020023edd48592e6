package metering

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/price"
	"github.com/virtflow/virtflow/ent/reservationinterval"
)

// PriceKind is what a price list entry prices.
type PriceKind string

// The kinds of price list entries; Key says which flavor, policy, model or class.
const (
	// PriceFlavor is the price of a VM of flavor Key per hour; a flavor without one is priced
	// by its vCPUs and memory.
	PriceFlavor PriceKind = "FLAVOR"
	// PriceVCPU is the price of one vCPU-hour, Key SHARED or DEDICATED.
	PriceVCPU PriceKind = "VCPU"
	// PriceMemoryGB is the price of one GiB-hour of VM memory (Key empty).
	PriceMemoryGB PriceKind = "MEMORY_GB"
	// PriceHostModel multiplies the price of VMs placed on hosts of model Key (MultiplierPPM).
	PriceHostModel PriceKind = "HOST_MODEL"
	// PriceIOClass is added per hour to a VM whose flavor has IO limit class Key.
	PriceIOClass PriceKind = "IO_CLASS"
	// PriceVolumeGB is the price of one GiB-hour of a volume of type Key (HDD, SSD, NVME).
	PriceVolumeGB PriceKind = "VOLUME_GB"
	// PriceSnapshotGB is the price of one GiB-hour of snapshots (Key empty).
	PriceSnapshotGB PriceKind = "SNAPSHOT_GB"
	// PriceBackupGB is the price of one GiB-hour of backups (Key empty).
	PriceBackupGB PriceKind = "BACKUP_GB"
	// PriceIPAddress is the price of one address-hour (Key empty).
	PriceIPAddress PriceKind = "IP_ADDRESS"
	// PriceLoadBalancer is the price of one load-balancer-hour (Key empty).
	PriceLoadBalancer PriceKind = "LOAD_BALANCER"
	// PriceMachine is the price per hour of a whole machine of model Key taken by one VM.
	PriceMachine PriceKind = "MACHINE"
	// PriceMachineNUMANode is the price per hour of one NUMA node of a machine of model Key
	// taken by one VM.
	PriceMachineNUMANode PriceKind = "MACHINE_NUMA_NODE"
)

// Micro is one currency unit in the integer millionths every amount is kept in.
const Micro = 1_000_000

// denominator turns the rating's integer numerators into millionths of the currency:
// amounts are per hour (3600 s), memory is priced per GiB but reserved in MiB (1024) and
// host-model multipliers are in millionths (Micro).
var denominator = big.NewInt(3600 * 1024 * Micro)

// PriceEntry is one entry of the price list.
type PriceEntry struct {
	Kind          PriceKind
	Key           string
	EffectiveFrom time.Time
	// AmountMicro is per unit-hour, in millionths of Currency.
	AmountMicro int64
	// MultiplierPPM is a HOST_MODEL entry's multiplier, in millionths.
	MultiplierPPM int64
	Currency      string
}

type priceKey struct {
	kind PriceKind
	key  string
}

type pricePoint struct {
	from         int64 // Unix seconds
	amount, mult int64
}

// Prices is the price list as rating reads it: per kind and key, the entries ordered by the
// instant they take effect.
type Prices struct {
	byKey    map[priceKey][]pricePoint
	currency string
}

// DefaultCurrency is the currency of an empty price list.
const DefaultCurrency = "EUR"

// NewPrices builds the price list of entries.
func NewPrices(entries []PriceEntry) *Prices {
	p := &Prices{byKey: map[priceKey][]pricePoint{}, currency: DefaultCurrency}
	for _, e := range entries {
		k := priceKey{e.Kind, e.Key}
		p.byKey[k] = append(p.byKey[k], pricePoint{from: e.EffectiveFrom.Unix(), amount: e.AmountMicro, mult: e.MultiplierPPM})
		if e.Currency != "" {
			p.currency = e.Currency
		}
	}
	for _, pts := range p.byKey {
		sort.Slice(pts, func(i, j int) bool { return pts[i].from < pts[j].from })
	}
	return p
}

// Currency is the currency of the price list.
func (p *Prices) Currency() string { return p.currency }

// LoadPrices reads the whole price list.
func LoadPrices(ctx context.Context, c *ent.Client) (*Prices, error) {
	rows, err := c.Price.Query().Order(price.ByEffectiveFrom()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the price list: %w", err)
	}
	entries := make([]PriceEntry, len(rows))
	for i, r := range rows {
		entries[i] = PriceEntry{Kind: PriceKind(r.Kind), Key: r.Key, EffectiveFrom: r.EffectiveFrom,
			AmountMicro: r.AmountMicro, MultiplierPPM: r.MultiplierPpm, Currency: r.Currency}
	}
	return NewPrices(entries), nil
}

// at is the entry of k in effect at t.
func (p *Prices) at(k priceKey, t int64) (pricePoint, bool) {
	pts := p.byKey[k]
	i := sort.Search(len(pts), func(i int) bool { return pts[i].from > t })
	if i == 0 {
		return pricePoint{}, false
	}
	return pts[i-1], true
}

func (p *Prices) amount(kind PriceKind, key string, t int64) int64 {
	pt, _ := p.at(priceKey{kind, key}, t)
	return pt.amount
}

// Row is one ledger interval as rating reads it: times in Unix seconds, End 0 while open.
type Row struct {
	Kind       Kind
	ResourceID int
	Name       string
	TenantID   int
	Region     string
	Flavor     string
	VCPUs      int64
	MemoryMB   int64
	CPUPolicy  string
	HostModel  string
	Exclusive  string
	IOClass    string
	Quantity   int64
	Start, End int64
}

// keys are the price list entries r's price depends on.
func (r *Row) keys() []priceKey {
	switch r.Kind {
	case KindVM:
		switch r.Exclusive {
		case "HOST":
			return []priceKey{{PriceMachine, r.HostModel}}
		case "NUMA_NODE":
			return []priceKey{{PriceMachineNUMANode, r.HostModel}}
		}
		return []priceKey{{PriceFlavor, r.Flavor}, {PriceVCPU, r.CPUPolicy}, {PriceMemoryGB, ""},
			{PriceHostModel, r.HostModel}, {PriceIOClass, r.IOClass}}
	case KindVolume:
		return []priceKey{{PriceVolumeGB, r.IOClass}}
	case KindSnapshot:
		return []priceKey{{PriceSnapshotGB, ""}}
	case KindBackup:
		return []priceKey{{PriceBackupGB, ""}}
	case KindIPAddress:
		return []priceKey{{PriceIPAddress, ""}}
	case KindLoadBalancer:
		return []priceKey{{PriceLoadBalancer, ""}}
	}
	return nil
}

// rate is what one second of r costs at t, over denominator.
func (p *Prices) rate(r *Row, t int64) *big.Int {
	unit := big.NewInt(1024 * Micro) // one unit-hour's amount over denominator, per second
	switch r.Kind {
	case KindVM:
		switch r.Exclusive {
		case "HOST":
			return unit.Mul(unit, big.NewInt(p.amount(PriceMachine, r.HostModel, t)))
		case "NUMA_NODE":
			return unit.Mul(unit, big.NewInt(p.amount(PriceMachineNUMANode, r.HostModel, t)))
		}
		var base *big.Int // per hour, ×1024
		if f, ok := p.at(priceKey{PriceFlavor, r.Flavor}, t); ok {
			base = big.NewInt(f.amount * 1024)
		} else {
			base = new(big.Int).Mul(big.NewInt(r.VCPUs*1024), big.NewInt(p.amount(PriceVCPU, r.CPUPolicy, t)))
			base.Add(base, new(big.Int).Mul(big.NewInt(r.MemoryMB), big.NewInt(p.amount(PriceMemoryGB, "", t))))
		}
		mult := int64(Micro)
		if m, ok := p.at(priceKey{PriceHostModel, r.HostModel}, t); ok {
			mult = m.mult
		}
		out := base.Mul(base, big.NewInt(mult))
		if r.IOClass != "" {
			out.Add(out, unit.Mul(unit, big.NewInt(p.amount(PriceIOClass, r.IOClass, t))))
		}
		return out
	case KindVolume:
		return unit.Mul(unit, big.NewInt(r.Quantity*p.amount(PriceVolumeGB, r.IOClass, t)))
	case KindSnapshot:
		return unit.Mul(unit, big.NewInt(r.Quantity*p.amount(PriceSnapshotGB, "", t)))
	case KindBackup:
		return unit.Mul(unit, big.NewInt(r.Quantity*p.amount(PriceBackupGB, "", t)))
	case KindIPAddress:
		return unit.Mul(unit, big.NewInt(p.amount(PriceIPAddress, "", t)))
	case KindLoadBalancer:
		return unit.Mul(unit, big.NewInt(p.amount(PriceLoadBalancer, "", t)))
	}
	return new(big.Int)
}

// cuts are the instants in (s, e) where a price of r changes.
func (p *Prices) cuts(r *Row, s, e int64) []int64 {
	var out []int64
	for _, k := range r.keys() {
		for _, pt := range p.byKey[k] {
			if pt.from > s && pt.from < e {
				out = append(out, pt.from)
			}
		}
	}
	return out
}

// GroupBy is a dimension usage lines are grouped by.
type GroupBy string

// The dimensions of usage lines; lines are always apart by resource kind.
const (
	GroupResource GroupBy = "RESOURCE"
	GroupFlavor   GroupBy = "FLAVOR"
	GroupRegion   GroupBy = "REGION"
	GroupDay      GroupBy = "DAY"
)

// Line is one line of a usage report: what the resources of one kind and group reserved
// and cost.
type Line struct {
	// Key is the group's values joined by " / " (resource name, flavor, region, UTC day), in
	// the order asked; empty without grouping.
	Key string
	// Resource is the resource's id when grouped by RESOURCE, else 0.
	Resource int
	Kind     Kind
	// Seconds is the reserved resource-seconds.
	Seconds int64
	// UnitSeconds is Seconds times the units reserved (GiB for volumes, 1 otherwise).
	UnitSeconds int64
	// AmountMicro is the cost, rounded once, half up, to the millionth.
	AmountMicro int64
	Currency    string
	numerator   big.Int
	small       int64 // the part of numerator still in int64
}

// Report is the usage of a tenant over a time range.
type Report struct {
	Lines      []Line
	TotalMicro int64
	Currency   string
}

// Rate rates rows over [from, to) (Unix seconds; an open row runs until now), grouped by
// groupBy.
func Rate(p *Prices, rows []Row, from, to, now int64, groupBy []GroupBy) *Report {
	type gk struct {
		kind Kind
		key  string
		id   int
	}
	lines := map[gk]*Line{}
	byDay := slices.Index(groupBy, GroupDay)
	byResource := slices.Contains(groupBy, GroupResource)
	days := map[int64]string{} // UTC day names, formatted once
	parts := make([]string, len(groupBy))
	var buf, priceCuts []int64
	tmp := new(big.Int)
	for i := range rows {
		r := &rows[i]
		s, e := max(r.Start, from), r.End
		if e == 0 {
			e = now
		}
		e = min(e, to)
		if e <= s {
			continue
		}
		priceCuts = append(priceCuts[:0], p.cuts(r, s, e)...)
		slices.Sort(priceCuts)
		buf = append(append(buf[:0], s, e), priceCuts...)
		if byDay >= 0 {
			for d := (s/86400 + 1) * 86400; d < e; d += 86400 {
				buf = append(buf, d)
			}
		}
		slices.Sort(buf)
		buf = slices.Compact(buf)
		groupParts(r, groupBy, parts)
		key := strings.Join(parts, " / ")
		var rate *big.Int
		var rate64 int64
		var fits bool
		next := 0 // the next price cut
		for j := 0; j+1 < len(buf); j++ {
			a, b := buf[j], buf[j+1]
			// The rate changes only where a price does.
			if rate == nil || next < len(priceCuts) && a >= priceCuts[next] {
				for next < len(priceCuts) && priceCuts[next] <= a {
					next++
				}
				rate = p.rate(r, a)
				rate64, fits = rate.Int64(), rate.IsInt64() && rate.Sign() >= 0
			}
			if byDay >= 0 {
				d := a / 86400
				name, ok := days[d]
				if !ok {
					name = time.Unix(d*86400, 0).UTC().Format(time.DateOnly)
					days[d] = name
				}
				parts[byDay] = name
				key = strings.Join(parts, " / ")
			}
			k := gk{kind: r.Kind, key: key}
			if byResource {
				k.id = r.ResourceID
			}
			l := lines[k]
			if l == nil {
				l = &Line{Key: k.key, Resource: k.id, Kind: k.kind, Currency: p.currency}
				lines[k] = l
			}
			sec := b - a
			l.Seconds += sec
			l.UnitSeconds += sec * r.Quantity
			// Exact either way: int64 while the products fit, math/big beyond.
			if hi, lo := bits.Mul64(uint64(rate64), uint64(sec)); fits && hi == 0 && lo <= math.MaxInt64 && l.small <= math.MaxInt64-int64(lo) {
				l.small += int64(lo)
			} else {
				l.numerator.Add(&l.numerator, tmp.Mul(rate, big.NewInt(sec)))
			}
		}
	}
	sorted := make([]*Line, 0, len(lines))
	for _, l := range lines {
		if l.numerator.Sign() == 0 {
			l.AmountMicro = roundInt64(l.small)
		} else {
			l.numerator.Add(&l.numerator, big.NewInt(l.small))
			l.AmountMicro = roundMicro(&l.numerator)
		}
		sorted = append(sorted, l)
	}
	slices.SortFunc(sorted, func(a, b *Line) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return a.Resource - b.Resource
	})
	rep := &Report{Currency: p.currency, Lines: make([]Line, len(sorted))}
	for i, l := range sorted {
		rep.TotalMicro += l.AmountMicro
		rep.Lines[i] = *l
	}
	return rep
}

// roundInt64 is roundMicro for a numerator that is a non-negative int64.
func roundInt64(num int64) int64 {
	d := denominator.Int64()
	q, m := num/d, num%d
	if 2*m >= d {
		q++
	}
	return q
}

// roundMicro is numerator/denominator rounded half up (away from zero) to an integer.
func roundMicro(num *big.Int) int64 {
	q, m := new(big.Int).QuoRem(num, denominator, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(denominator) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// groupParts writes r's values of the dimensions of groupBy into parts (the day is left to
// the caller: it changes along the interval).
func groupParts(r *Row, groupBy []GroupBy, parts []string) {
	for i, g := range groupBy {
		switch g {
		case GroupResource:
			parts[i] = r.Name
		case GroupFlavor:
			parts[i] = r.Flavor
			if r.Kind == KindVolume {
				parts[i] = r.IOClass
			}
		case GroupRegion:
			parts[i] = r.Region
		}
	}
}

// Usage is the usage report of a tenant over [from, to) as the viewer in ctx may read it
// (the ledger's rows are filtered by the authorization policy: a tenant admin reads only
// their tenants' rows, an operator every tenant's), rated with the current price list;
// running intervals count until now.
func Usage(ctx context.Context, c *ent.Client, tenantID int, from, to, now time.Time, groupBy []GroupBy) (*Report, error) {
	prices, err := LoadPrices(ctx, c)
	if err != nil {
		return nil, err
	}
	rows, err := Rows(ctx, c, tenantID, from, to)
	if err != nil {
		return nil, err
	}
	return Rate(prices, rows, At(from).Unix(), At(to).Unix(), At(now).Unix(), groupBy), nil
}

// Rows reads the tenant's ledger intervals that overlap [from, to).
func Rows(ctx context.Context, c *ent.Client, tenantID int, from, to time.Time) ([]Row, error) {
	ivs, err := c.ReservationInterval.Query().Where(
		reservationinterval.TenantID(tenantID),
		reservationinterval.StartedAtLT(to),
		reservationinterval.Or(reservationinterval.EndedAtIsNil(), reservationinterval.EndedAtGT(from)),
	).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the ledger of tenant %d: %w", tenantID, err)
	}
	out := make([]Row, len(ivs))
	for i, iv := range ivs {
		out[i] = RowOf(iv)
	}
	return out, nil
}

// RowOf is the rating's view of a ledger interval.
func RowOf(iv *ent.ReservationInterval) Row {
	r := Row{Kind: Kind(iv.Kind), ResourceID: iv.ResourceID, Name: iv.ResourceName, TenantID: iv.TenantID,
		Region: iv.Region, Flavor: iv.Flavor, VCPUs: int64(iv.Vcpus), MemoryMB: iv.MemoryMB, CPUPolicy: iv.CPUPolicy,
		HostModel: iv.HostModel, Exclusive: iv.Exclusive, IOClass: iv.IoClass, Quantity: iv.Quantity,
		Start: iv.StartedAt.Unix()}
	if iv.EndedAt != nil {
		r.End = iv.EndedAt.Unix()
	}
	return r
}
