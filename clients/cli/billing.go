package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// runUsage prints a tenant's usage over a time range (the usage query): one line per
// resource kind and group, and the total.
func runUsage(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant name or id (required)")
	now := time.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	from := fs.String("from", month.Format(time.RFC3339), "start (RFC 3339), default the month's first instant")
	to := fs.String("to", now.Truncate(time.Second).Format(time.RFC3339), "end (RFC 3339), default now")
	groupBy := fs.String("group-by", "RESOURCE", "comma-separated: RESOURCE, FLAVOR, REGION, DAY (empty: by kind only)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("usage --tenant ID [--from TIME] [--to TIME] [--group-by RESOURCE,DAY]")
	}
	f, err := time.Parse(time.RFC3339, *from)
	if err != nil {
		return usagef("--from: %v", err)
	}
	t, err := time.Parse(time.RFC3339, *to)
	if err != nil {
		return usagef("--to: %v", err)
	}
	var gb []apiclient.UsageGroupBy
	for _, g := range strings.Split(*groupBy, ",") {
		if g = strings.ToUpper(strings.TrimSpace(g)); g != "" {
			gb = append(gb, apiclient.UsageGroupBy(g))
		}
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	tid, err := a.ref(ctx, c, "tenant", *tenant)
	if err != nil {
		return err
	}
	r, err := apiclient.Usage(ctx, c, tid, f, t, gb)
	if err != nil {
		return err
	}
	if a.output != "table" {
		return a.show(r.Usage, nil)
	}
	if err := a.show(r.Usage.Lines, []string{"kind", "key", "resourceID", "seconds", "quantity", "amount", "currency"}); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "total %s %s\n", r.Usage.Total.Amount, r.Usage.Total.Currency)
	return nil
}

// runInvoices lists a tenant's invoices (DRAFT and FINAL), newest first.
func runInvoices(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("invoices", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant name or id (required)")
	first := fs.Int("first", 12, "at most this many invoices")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("invoices --tenant ID [--first N]")
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	tid, err := a.ref(ctx, c, "tenant", *tenant)
	if err != nil {
		return err
	}
	r, err := apiclient.Invoices(ctx, c, tid, first)
	if err != nil {
		return err
	}
	if a.output != "table" {
		return a.show(r.Invoices, nil)
	}
	for _, e := range r.Invoices.Edges {
		inv := e.Node
		fmt.Fprintf(a.io.Stdout, "%s %-5s %s %s (%d lines, %d adjustments)\n", inv.Period, inv.Status, inv.Total.Amount,
			inv.Total.Currency, len(inv.Lines), len(inv.Adjustments))
		for _, adj := range inv.Adjustments {
			fmt.Fprintf(a.io.Stdout, "  adjustment for %s: %s (%s)\n", adj.Period, adj.Amount, adj.Reason)
		}
	}
	return nil
}

// runPrices lists the price list or adds an entry to it (operators).
func runPrices(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("prices list | prices add --kind KIND [--key KEY] --amount DECIMAL [--multiplier DECIMAL] [--from TIME]")
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	columns := []string{"id", "kind", "key", "effectiveFrom", "amount", "multiplier", "currency"}
	switch args[0] {
	case "list":
		r, err := apiclient.PriceList(ctx, c)
		if err != nil {
			return err
		}
		return a.show(r.PriceList, columns)
	case "add":
		fs := flag.NewFlagSet("prices add", flag.ContinueOnError)
		kind := fs.String("kind", "", "FLAVOR, VCPU, MEMORY_GB, HOST_MODEL, IO_CLASS, VOLUME_GB, IP_ADDRESS, LOAD_BALANCER, MACHINE, MACHINE_NUMA_NODE")
		key := fs.String("key", "", "flavor name, SHARED/DEDICATED, host model, IO class or volume type")
		amount := fs.String("amount", "0", "per unit-hour, at most six decimals")
		multiplier := fs.String("multiplier", "", "HOST_MODEL: the multiplier, e.g. 1.25")
		from := fs.String("from", time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), "when it takes effect (RFC 3339)")
		currency := fs.String("currency", "", "ISO 4217 code (default: the price list's)")
		if _, err := parse(fs, args[1:]); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339, *from)
		if err != nil {
			return usagef("--from: %v", err)
		}
		r, err := apiclient.AddPrice(ctx, c, apiclient.AddPriceInput{Kind: apiclient.PriceKind(strings.ToUpper(*kind)),
			Key: optional(*key), EffectiveFrom: t, Amount: *amount, Multiplier: optional(*multiplier), Currency: optional(*currency)})
		if err != nil {
			return err
		}
		return a.show(r.AddPrice, columns)
	}
	return usagef("prices list | prices add ...")
}
