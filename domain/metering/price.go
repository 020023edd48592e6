package metering

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/price"
)

// ParseAmount reads a decimal amount ("0.0125", "12") as millionths, exactly: more than six
// decimals, a sign or anything but digits and one point is an error.
func ParseAmount(s string) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if (whole == "" && frac == "") || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 12 {
		return 0, fmt.Errorf("%q is not an amount with at most 6 decimals", s)
	}
	v, ok := new(big.Int).SetString("0"+whole+frac+strings.Repeat("0", 6-len(frac)), 10)
	if !ok {
		return 0, fmt.Errorf("%q is not an amount", s)
	}
	return v.Int64(), nil
}

// FormatMicro writes millionths as a decimal with six places: 1500000 is "1.500000".
func FormatMicro(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%06d", sign, v/Micro, v%Micro)
}

// FormatUnitHours writes unit-seconds as unit-hours with six places, exactly rounded half up.
func FormatUnitHours(unitSeconds int64) string {
	num := new(big.Int).Mul(big.NewInt(unitSeconds), big.NewInt(Micro*1024*Micro))
	return FormatMicro(roundMicro(num))
}

// keyless are the kinds whose entries have no key.
var keyless = map[PriceKind]bool{PriceMemoryGB: true, PriceIPAddress: true, PriceLoadBalancer: true}

// AddPrice adds an entry to the price list as the viewer in ctx (operators may: ent
// privacy decides). Entries are never edited: a new price is a new entry from its
// effective instant on (second-exact). An entry effective in a month already invoiced is a
// correction: the difference becomes an adjustment on the next invoice. Every entry must be
// in the price list's one currency.
func AddPrice(ctx context.Context, c *ent.Client, e PriceEntry) (*ent.Price, error) {
	if err := price.KindValidator(price.Kind(e.Kind)); err != nil {
		return nil, apierr.Validation("kind", "unknown price kind %q", e.Kind)
	}
	switch {
	case keyless[e.Kind] && e.Key != "":
		return nil, apierr.Validation("key", "%s prices have no key", e.Kind)
	case !keyless[e.Kind] && e.Key == "":
		return nil, apierr.Validation("key", "%s prices need a key (%s)", e.Kind, keyHint(e.Kind))
	case e.Kind == PriceVCPU && e.Key != "SHARED" && e.Key != "DEDICATED":
		return nil, apierr.Validation("key", "VCPU prices are keyed SHARED or DEDICATED")
	case e.AmountMicro < 0:
		return nil, apierr.Validation("amount", "a price is not negative")
	case e.Kind == PriceHostModel && e.MultiplierPPM <= 0:
		return nil, apierr.Validation("multiplier", "a HOST_MODEL entry needs a positive multiplier")
	case e.Kind != PriceHostModel && e.MultiplierPPM != 0 && e.MultiplierPPM != Micro:
		return nil, apierr.Validation("multiplier", "only HOST_MODEL entries have a multiplier")
	case e.EffectiveFrom.IsZero():
		return nil, apierr.Validation("effectiveFrom", "say when the price takes effect")
	}
	if e.Currency == "" {
		e.Currency = DefaultCurrency
	}
	if other, err := c.Price.Query().Where(price.CurrencyNEQ(e.Currency)).First(ctx); err == nil {
		return nil, apierr.Validation("currency", "the price list is in %s, not %s", other.Currency, e.Currency)
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	if e.MultiplierPPM == 0 {
		e.MultiplierPPM = Micro
	}
	return c.Price.Create().SetKind(price.Kind(e.Kind)).SetKey(e.Key).SetEffectiveFrom(At(e.EffectiveFrom)).
		SetAmountMicro(e.AmountMicro).SetMultiplierPpm(e.MultiplierPPM).SetCurrency(e.Currency).Save(ctx)
}

func keyHint(k PriceKind) string {
	switch k {
	case PriceFlavor:
		return "a flavor name"
	case PriceHostModel, PriceMachine, PriceMachineNUMANode:
		return "a host model"
	case PriceIOClass:
		return "an IO class such as iops=500,mbps=100,net=1000"
	case PriceVolumeGB:
		return "a volume type: HDD, SSD or NVME"
	}
	return "SHARED or DEDICATED"
}

// PriceList is the whole price list, past and future entries, ordered by kind,
// key and instant.
func PriceList(ctx context.Context, c *ent.Client) ([]*ent.Price, error) {
	return c.Price.Query().Order(ent.Asc(price.FieldKind, price.FieldKey, price.FieldEffectiveFrom)).All(ctx)
}
