package fieldtype

// InvoiceLine is one line of a final invoice: what one resource (or group) cost in the
// invoice's month. Amounts are millionths of the invoice's currency, exact; Quantity is
// unit-seconds (vCPU-less: a VM, an address or a load balancer counts one unit, a volume its
// GiB).
type InvoiceLine struct {
	Key         string `json:"key"`
	ResourceID  int    `json:"resourceID"`
	Kind        string `json:"kind"`
	Seconds     int64  `json:"seconds"`
	UnitSeconds int64  `json:"unitSeconds"`
	AmountMicro int64  `json:"amountMicro"`
}

// InvoiceAdjustment corrects an earlier final invoice: what rating the ledger for Period
// (YYYY-MM) says now minus what was billed for it (the invoice and the adjustments before
// this one), in millionths of the currency; negative is a credit.
type InvoiceAdjustment struct {
	Period      string `json:"period"`
	AmountMicro int64  `json:"amountMicro"`
	Reason      string `json:"reason"`
}
