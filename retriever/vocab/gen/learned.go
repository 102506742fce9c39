package main

import (
	"fmt"
	"strings"
)

// checkAligned verifies that Spider-Syn's training questions are Spider's,
// in the same order: the learned pairs assume spider_question is the
// original of question.
func checkAligned(spider []spiderQuestion, syn []synQuestion) error {
	if len(spider) != len(syn) {
		return fmt.Errorf("spider has %d training questions, spider-syn %d", len(spider), len(syn))
	}
	for i := range spider {
		if spider[i].DBID != syn[i].DBID || strings.Join(words(spider[i].Question), " ") != strings.Join(words(syn[i].Original), " ") {
			return fmt.Errorf("training question %d differs: %q / %q", i, spider[i].Question, syn[i].Original)
		}
	}
	return nil
}
