// Package metering is VirtFlow's reservation ledger, its rating and its invoices.
//
// A resource is billed for the time it stays reserved (seed 001): from the moment it is
// created until it is deleted, whether it runs or is stopped. The ledger
// (ReservationInterval rows) records each reservation as intervals, second-exact: every
// change of what a resource reserves — a VM placed, resized or moved to another host
// model, a volume, an address or a load balancer created or deleted — closes the resource's
// open interval and opens the next one at the same second, in the same transaction as the
// change itself (OpenVMs, ReopenVMs, Open, Close; one call per change, OpenVMs a single
// INSERT … SELECT so a create costs one statement more). A rolled-back change leaves no
// trace in the ledger; a committed one is visible to the next usage query. The database
// keeps at most one open interval per resource (a unique partial index) and refuses an
// interval that ends before it starts (a check constraint); changes of one resource are
// serialized by the row locks of the reservation paths, so the intervals tile the
// resource's lifetime without gap or overlap.
//
// Rating (rate.go) prices the intervals with the effective-dated price list (Price rows):
// per flavor (or per vCPU, shared or dedicated, and per GiB of memory when the flavor has no
// price of its own), a host-model multiplier, an IO-class price, per GiB of volume, per
// address and per load balancer, and the machine's own price for whole-machine flavors
// (Exclusivity). A price that changes inside an interval splits it at that instant. All
// money is integer millionths of the currency and every product is exact (math/big): a
// line's amount is rounded once, half up, to the millionth.
//
// Invoices (invoice.go) are per tenant and calendar month (UTC): DRAFT, computed when read,
// while the month runs and during the grace period after it; FINAL once Finalize wrote it,
// after which it never changes (an ent hook refuses every update and delete). When the
// ledger or the price list later says something else about a final month (a late event, a
// price correction) the difference is an adjustment on the next invoice.
package metering
