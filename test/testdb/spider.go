package testdb

import (
	"os"
	"path/filepath"
	"testing"
)

// SpiderDir is the Spider benchmark directory tests read: $ATRIUM_SPIDER_DIR,
// else shared/bench/spider beside the repository (the directory above the
// one holding go.mod, found from the test's working directory, so it does
// not depend on the calling package's depth). The test is skipped when file
// (e.g. "tables.json") is not there.
func SpiderDir(t testing.TB, file string) string {
	t.Helper()
	dir := os.Getenv("ATRIUM_SPIDER_DIR")
	if dir == "" {
		root, err := os.Getwd()
		if err != nil {
			t.Skipf("Spider benchmark: %v", err)
		}
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			up := filepath.Dir(root)
			if up == root {
				t.Skip("Spider benchmark: no go.mod above the test's directory (set ATRIUM_SPIDER_DIR)")
			}
			root = up
		}
		dir = filepath.Join(filepath.Dir(root), "shared", "bench", "spider")
	}
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		t.Skipf("Spider benchmark not found at %s (set ATRIUM_SPIDER_DIR)", dir)
	}
	return dir
}
