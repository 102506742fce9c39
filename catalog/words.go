package catalog

// truncateRunes cuts s to at most n runes, never inside a UTF-8 sequence.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
