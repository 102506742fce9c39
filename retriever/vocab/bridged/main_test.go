package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

func TestReport(t *testing.T) {
	qs := []mine.Question{
		{DBID: "concert_singer", Original: "How many singers do we have?", Question: "How many vocalists do we have?"},
		{DBID: "cre_doc_template_mgt", Original: "How many templates do we have?", Question: "How many layouts do we have?"},
	}
	var b bytes.Buffer
	report(&b, vocab.Default(), "dev", qs, 0)
	if got := strings.Fields(b.String()); len(got) != 4 || got[1] != "2" || got[2] != "0.500" {
		t.Errorf("report = %q, want 2 substitutions, half bridged (vocalist → singer)", b.String())
	}
	b.Reset()
	report(&b, vocab.Default(), "dev", qs, 5)
	if !strings.Contains(b.String(), "layout → template") || strings.Contains(b.String(), "vocalist") {
		t.Errorf("unbridged list = %q", b.String())
	}
}
