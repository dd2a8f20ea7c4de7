package engine

// SetMaxCombined sets how many rules a combined query carries, until the
// returned function restores it. Tests using it must not run in parallel.
func SetMaxCombined(n int) (restore func()) {
	old := maxCombined
	maxCombined = n
	return func() { maxCombined = old }
}

// ClipLines is clipLines, for the PagedReloadFailed description's bound.
var ClipLines = clipLines
