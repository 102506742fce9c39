package catalog

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// TerminalProgress returns a SyncOptions.Progress function that redraws one
// status line on w (a terminal): phase, done/total, rate and ETA. It draws
// at most every 200 ms and ends the line when a phase completes.
func TerminalProgress(w io.Writer) func(Progress) {
	var mu sync.Mutex
	var last time.Time
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		finished := p.Done >= p.Total
		if !finished && time.Since(last) < 200*time.Millisecond {
			return
		}
		last = time.Now()
		pct := 100.0
		if p.Total > 0 {
			pct = 100 * float64(p.Done) / float64(p.Total)
		}
		eta := "-"
		if p.ETA > 0 {
			eta = p.ETA.Round(time.Second).String()
		}
		fmt.Fprintf(w, "\r\033[K%-8s %d/%d (%.0f%%) %.0f/s ETA %s", p.Phase, p.Done, p.Total, pct, p.Rate, eta)
		if finished {
			fmt.Fprintln(w)
		}
	}
}
