package ent

// IsNode makes a price list entry a Noder although entgql does not generate it (the API
// shows it as PriceEntry, package metering): the audit log names the subject of a mutation
// by its Noder result, and addPrice's result is a Price. Hand-written; entc leaves it alone.
func (*Price) IsNode() {}
