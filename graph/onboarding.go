package graph

// int64Ptr widens an optional GraphQL Int to the int64 of a field such as memoryCapacityMB.
func int64Ptr(v *int) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}
