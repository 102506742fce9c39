// Command abstaingrid replays abstention rules over `atrium eval
// --per-question` files written with abstention off
// (--abstain-floor=-inf --abstain-coverage=0): abstention is all-or-nothing
// and precedes expansion, so each question's chosen set is exact for every
// rule that keeps it and empty otherwise. It grids the absolute-evidence
// rule (Config.AbstainEvidence: coverage < COV and best cosine < COS) on top
// of a fixed floor and coverage and prints the pick by the rule of
// docs/retrieval.md ("Abstention"): the most mean abstention with false
// abstention at most -max-false on every file and answerable F1 and
// complete recall each within -max-drop of the floor and coverage alone.
//
//	go run ./retriever/evaluate/abstaingrid train.pq train_syn.pq
//
// Give it training-derived files only; dev files are for -eval.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/atriumdb/atrium/retriever"
)

type record struct {
	Unanswerable bool     `json:"unanswerable"`
	Kind         string   `json:"kind"`
	Selected     []string `json:"selected"`
	BestLogit    *float64 `json:"best_logit"`
	Coverage     float64  `json:"coverage"`
	BestCosine   float64  `json:"best_cosine"`
	F1           float64  `json:"f1"`
	Complete     bool     `json:"complete"`
}

type rule struct{ floor, cov, evCov, evCos float64 }

type point struct {
	abstain, falseAbs, f1, cr float64
	byKind                    map[string]float64
}

func (r rule) abstains(q record) bool {
	const eps = 1e-9
	return len(q.Selected) == 0 || q.BestLogit == nil || *q.BestLogit < r.floor || q.Coverage < r.cov-eps ||
		(q.Coverage < r.evCov-eps && q.BestCosine < r.evCos-eps)
}

func measure(qs []record, r rule) point {
	var nu, na, ab, fab int
	p := point{byKind: map[string]float64{}}
	kinds := map[string][2]int{}
	for _, q := range qs {
		a := r.abstains(q)
		if q.Unanswerable {
			nu++
			k := kinds[q.Kind]
			k[0]++
			if a {
				ab++
				k[1]++
			}
			kinds[q.Kind] = k
			continue
		}
		na++
		if a {
			fab++
			continue
		}
		p.f1 += q.F1
		if q.Complete {
			p.cr++
		}
	}
	if nu > 0 {
		p.abstain = float64(ab) / float64(nu)
	}
	if na > 0 {
		p.falseAbs, p.f1, p.cr = float64(fab)/float64(na), p.f1/float64(na), p.cr/float64(na)
	}
	for k, v := range kinds {
		p.byKind[k] = float64(v[1]) / float64(v[0])
	}
	return p
}

func load(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open per-question file: %w", err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

func row(name string, p point) string {
	return fmt.Sprintf("%s abstain %.3f false %.3f f1 %.3f cr %.3f offtopic %.3f foreign %.3f",
		name, p.abstain, p.falseAbs, p.f1, p.cr, p.byKind["offtopic"], p.byKind["foreign_db"])
}

func main() {
	floor := flag.Float64("floor", retriever.DefaultAbstainFloor, "logit floor held fixed")
	cov := flag.Float64("coverage", retriever.DefaultAbstainCoverage, "coverage floor held fixed")
	maxFalse := flag.Float64("max-false", 0.02, "most false abstention allowed on each file")
	maxDrop := flag.Float64("max-drop", 0.005, "most F1 or complete-recall drop allowed on each file")
	evalRule := flag.String("eval", "", "COV:COS: only print this rule's figures (for dev files)")
	top := flag.Int("top", 10, "rows of the grid to print")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: abstaingrid [flags] PER_QUESTION_FILE...")
		os.Exit(2)
	}
	sets := make([][]record, flag.NArg())
	for i, p := range flag.Args() {
		qs, err := load(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sets[i] = qs
	}
	base := rule{floor: *floor, cov: *cov, evCov: 0, evCos: math.Inf(-1)}
	off := rule{floor: math.Inf(-1), evCos: math.Inf(-1)}
	if *evalRule != "" {
		var c, v float64
		if _, err := fmt.Sscanf(*evalRule, "%g:%g", &c, &v); err != nil {
			fmt.Fprintf(os.Stderr, "-eval: %q is not COV:COS\n", *evalRule)
			os.Exit(2)
		}
		for i, qs := range sets {
			fmt.Println(row(flag.Arg(i)+" off      ", measure(qs, off)))
			fmt.Println(row(flag.Arg(i)+" floors   ", measure(qs, base)))
			fmt.Println(row(flag.Arg(i)+" +evidence", measure(qs, rule{*floor, *cov, c, v})))
		}
		return
	}
	ref := make([]point, len(sets))
	for i, qs := range sets {
		ref[i] = measure(qs, base)
		fmt.Println(row(flag.Arg(i)+" floors only:", ref[i]))
	}
	type cand struct {
		r    rule
		mean float64
		ps   []point
	}
	var ok []cand
	for ci := 0; ci <= 17; ci++ {
		c := 0.20 + 0.05*float64(ci) // 1.05: cosine alone
		for vi := 0; vi <= 40; vi++ {
			r := rule{*floor, *cov, c, -0.05 + 0.01*float64(vi)}
			cd := cand{r: r}
			good := true
			for i, qs := range sets {
				p := measure(qs, r)
				cd.ps = append(cd.ps, p)
				cd.mean += p.abstain / float64(len(sets))
				good = good && p.falseAbs <= *maxFalse+1e-9 && ref[i].f1-p.f1 <= *maxDrop+1e-9 && ref[i].cr-p.cr <= *maxDrop+1e-9
			}
			if good {
				ok = append(ok, cd)
			}
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].mean > ok[j].mean })
	for k, cd := range ok {
		if k == *top {
			break
		}
		fmt.Printf("coverage < %.2f and cosine < %.2f: mean abstain %.3f\n", cd.r.evCov, cd.r.evCos, cd.mean)
		for i, p := range cd.ps {
			fmt.Println("  " + row(flag.Arg(i), p))
		}
	}
	if len(ok) == 0 {
		fmt.Println("no rule meets the constraints")
	}
}
