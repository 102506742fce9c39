package retriever

import "context"

// Turn is a session's previous question, given with a follow-up so that
// retrieval keeps its tables as candidates.
type Turn struct {
	Question string
	// SQL is the SQL that answered it ("" when none ran).
	SQL string
	// Tables are the schema-qualified tables it used, best first.
	Tables []string
}

// Ask is one question with the context it is asked in.
type Ask struct {
	Question string
	// Previous, when set, is the session's previous turn and the question
	// continues it: its tables are kept as candidates with evidence of
	// their own. The caller decides what is a follow-up.
	Previous *Turn
}

// ExampleHit is a curated example (atrium.examples) whose question is
// close to the one asked.
type ExampleHit struct {
	ID       int64
	Question string
	SQL      string
	// Tables are the schema-qualified tables the example's SQL reads.
	Tables []string
	// Similarity of the example's question to the asked one, in [0, 1].
	Similarity float64
	// Exact is true when the two questions are equal after normalisation
	// (case, blanks, trailing punctuation): the example's SQL may be
	// reused without the LLM.
	Exact bool
}

// GlossaryHit is a reviewed glossary term (atrium.glossary) the question
// names.
type GlossaryHit struct {
	ID          int64
	Term        string
	Definition  string
	SQLFragment string
	// Tables are the schema-qualified tables the term is about.
	Tables []string
}

// RetrieveAsk is Retrieve with the question's context: the session's
// previous turn, and (from the catalog) the examples and glossary terms
// that bear on it, reported in Result.Examples and Result.Glossary.
func (r *Retriever) RetrieveAsk(ctx context.Context, a Ask) (*Result, error) {
	res, err := r.retrieve(ctx, a.Question, nil)
	if err != nil {
		return nil, err
	}
	res.Previous = a.Previous
	return res, nil
}
