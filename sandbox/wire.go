package sandbox

// The JSON shapes of the spec are package intakeservice's, the contract's one
// Go definition, which the app's client shares. What the sandbox adds is how it fills
// them: nullable fields are nil pointers, and slices are never nil so they
// encode as [].

func strPtr(s string) *string { return &s }

// optStr maps "" to null: the engine's "not known yet".
func optStr(s string) *string { return opt[string](s) }

// opt maps "" to null, for a nullable field of a string type.
func opt[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
