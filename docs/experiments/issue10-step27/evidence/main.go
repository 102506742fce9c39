// Command evidence is step 27 of docs/retrieval.md: it replays the
// absolute-evidence abstention rule (--abstain-evidence EC:ECOS) on
// issue10-step23/score.sh's per-question files (the folds' held-out
// questions and their unanswerable sets, abstention off), pooled over the
// folds, and prints the point of most mean abstention whose held-out false
// abstention is at most the bound in both wordings, without the rule and
// with it.
//
//	go run ./docs/experiments/issue10-step27/evidence DIR [K...]
//
// COSINE=word reads the word-vector cosine (best_word_cosine, step 78's
// --abstain-evidence word:EC:ECOS) instead of the embedder's, over ECOS
// up to 0.80. With FLOORS=F:C:EC:ECOS it prints instead that point's
// false abstention and abstention per wording, with and without the rule
// (a directory of renamed sets has answerable questions only).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
)

type rec struct {
	Unanswerable bool     `json:"unanswerable"`
	Selected     []string `json:"selected"`
	BestLogit    float64  `json:"best_logit"`
	Coverage     float64  `json:"coverage"`
	BestCosine   float64  `json:"best_cosine"`
	BestWordCos  float64  `json:"best_word_cosine"`
}

type set struct{ ans, un []rec }

func load(dir, w string, ks []int) (set, error) {
	var s set
	for _, k := range ks {
		f, err := os.Open(fmt.Sprintf("%s/%s_%d.jsonl", dir, w, k))
		if err != nil {
			return s, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r rec
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return s, err
			}
			if r.Unanswerable {
				s.un = append(s.un, r)
			} else {
				s.ans = append(s.ans, r)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// wordCosine makes rate read best_word_cosine (COSINE=word).
var wordCosine = os.Getenv("COSINE") == "word"

func rate(qs []rec, F, C, EC, ECOS float64) float64 {
	n := 0
	for _, q := range qs {
		cos := q.BestCosine
		if wordCosine {
			cos = q.BestWordCos
		}
		if len(q.Selected) == 0 || q.BestLogit < F || q.Coverage < C || (q.Coverage < EC && cos < ECOS) {
			n++
		}
	}
	return float64(n) / float64(len(qs))
}

func main() {
	dir := os.Args[1]
	ks := []int{0, 1, 2, 3, 4, 5, 6}
	if len(os.Args) > 2 {
		ks = nil
		for _, a := range os.Args[2:] {
			k, _ := strconv.Atoi(a)
			ks = append(ks, k)
		}
	}
	var sets [2]set
	for i, w := range []string{"sp", "syn"} {
		s, err := load(dir, w, ks)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sets[i] = s
	}
	if p := os.Getenv("FLOORS"); p != "" {
		var F, C, EC, ECOS float64
		if _, err := fmt.Sscanf(p, "%g:%g:%g:%g", &F, &C, &EC, &ECOS); err != nil {
			fmt.Fprintln(os.Stderr, "FLOORS:", err)
			os.Exit(2)
		}
		for i, w := range []string{"sp", "syn"} {
			s := sets[i]
			fmt.Printf("%-3s answerable %d false %.4f (rule off %.4f)", w, len(s.ans), rate(s.ans, F, C, EC, ECOS), rate(s.ans, F, C, 0, 0))
			if len(s.un) > 0 {
				fmt.Printf(" | unanswerable %d abstain %.4f (rule off %.4f)", len(s.un), rate(s.un, F, C, EC, ECOS), rate(s.un, F, C, 0, 0))
			}
			fmt.Println()
		}
		return
	}
	floors := []float64{math.Inf(-1)}
	for x := -48; x <= 0; x++ {
		floors = append(floors, float64(x)/8)
	}
	covs := []float64{0, 0.1, 0.125, 0.15, 0.175, 0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.28, 0.3, 0.34}
	ecs := []float64{0}
	for i := 0; i < 7; i++ {
		ecs = append(ecs, 0.2+0.05*float64(i))
	}
	for _, bound := range []float64{0.02, 0.025, 0.03} {
		type pt struct{ m, F, C, EC, ECOS, ab0, ab1, fa0, fa1 float64 }
		best := map[bool]*pt{}
		for _, F := range floors {
			for _, C := range covs {
				for _, EC := range ecs {
					coss := []float64{0}
					if EC > 0 {
						coss = nil
						top := 30
						if wordCosine {
							top = 40
						}
						for i := 1; i <= top; i++ {
							coss = append(coss, 0.02*float64(i))
						}
					}
					for _, ECOS := range coss {
						fa0 := rate(sets[0].ans, F, C, EC, ECOS)
						if fa0 > bound {
							continue
						}
						fa1 := rate(sets[1].ans, F, C, EC, ECOS)
						if fa1 > bound {
							continue
						}
						ab0, ab1 := rate(sets[0].un, F, C, EC, ECOS), rate(sets[1].un, F, C, EC, ECOS)
						ev := EC > 0
						if b := best[ev]; b == nil || (ab0+ab1)/2 > b.m {
							best[ev] = &pt{(ab0 + ab1) / 2, F, C, EC, ECOS, ab0, ab1, fa0, fa1}
						}
					}
				}
			}
		}
		for _, ev := range []bool{false, true} {
			b := best[ev]
			name := map[bool]string{false: "without", true: "evidence"}[ev]
			if b == nil {
				fmt.Printf("%-8s false <= %.3f: no point\n", name, bound)
				continue
			}
			fmt.Printf("%-8s false <= %.3f: floor %6.3f cov %.3f evidence %.2f:%.2f | abstain %.3f / %.3f mean %.3f | false %.3f / %.3f\n",
				name, bound, b.F, b.C, b.EC, b.ECOS, b.ab0, b.ab1, b.m, b.fa0, b.fa1)
		}
	}
}
