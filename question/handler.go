package question

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// Config holds the question layer's settings.
type Config struct {
	// NL configures generation, validation, execution and caching of nl
	// and nl-sql questions (see sqlgen.Config for the defaults).
	NL sqlgen.Config
	// Feedback configures /* nl-feedback: ... */ (see FeedbackConfig).
	Feedback FeedbackConfig
}

// Options are the question layer's dependencies.
type Options struct {
	// Retriever chooses tables; required.
	Retriever Retriever
	// Generator is the LLM; nil means none is configured, and nl questions
	// fail with SQLSTATE 55000 naming the (readable) tables retrieval found.
	Generator sqlgen.Generator
	// Cache is the result cache; nil caches nothing. When it is also a
	// CacheDeleter (*resultcache.Cache is), feedback that marks an answer
	// wrong evicts it.
	Cache sqlgen.ResultCache
	// Feedback records /* nl-feedback: ... */ (FeedbackDB over the catalog
	// database); nil refuses feedback with SQLSTATE 55000.
	Feedback FeedbackStore
	// Versions is the catalog version; nil disables caching.
	Versions sqlgen.VersionSource
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Registerer receives the pipeline's metrics; nil registers nothing.
	Registerer prometheus.Registerer

	// OnQuestion, when set, receives one record per finished question of
	// every form (RETRIEVE, nl, nl-sql), with its retrieval and LLM calls:
	// the one source of the query log and of the retrieval and LLM
	// metrics (see sqlgen.Tracer). It must not block.
	OnQuestion func(ctx context.Context, r sqlgen.QuestionRecord)
}

// Handler is the proxy.Handler for every question form. Safe for
// concurrent use.
type Handler struct {
	ret Retriever
	nl  *sqlgen.Pipeline
	log *slog.Logger
	// turns is each session's last question, for feedback and follow-ups.
	turns *sessions
	fb    feedback
}

var (
	_ proxy.Handler      = (*Handler)(nil)
	_ proxy.SessionEnder = (*Handler)(nil)
)

// New returns the question layer. It is the one constructor atrium serve,
// the end-to-end tests and the NL benchmark use.
func New(cfg Config, opts Options) (*Handler, error) {
	if opts.Retriever == nil {
		return nil, errors.New("question: a Retriever is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{ret: opts.Retriever, log: opts.Logger, turns: newSessions()}
	h.fb = feedback{cfg: cfg.Feedback.withDefaults(), store: opts.Feedback}
	if d, ok := opts.Cache.(CacheDeleter); ok {
		h.fb.cache = d
	}
	onQuestion := func(ctx context.Context, r sqlgen.QuestionRecord) {
		// Every finished question becomes its session's last turn, answered
		// or not: feedback judges what the user just saw.
		h.turns.set(r.Session.ID, turnFromRecord(r))
		if opts.OnQuestion != nil {
			opts.OnQuestion(ctx, r)
		}
	}
	p, err := sqlgen.New(cfg.NL, sqlgen.Options{
		Retriever: nlRetriever{h}, Generator: opts.Generator, Cache: opts.Cache, Versions: opts.Versions,
		Logger: opts.Logger, Registerer: opts.Registerer, OnQuestion: onQuestion,
	})
	if err != nil {
		return nil, fmt.Errorf("question: %w", err)
	}
	h.nl = p
	return h, nil
}

// NLConfig returns the nl pipeline's effective configuration.
func (h *Handler) NLConfig() sqlgen.Config { return h.nl.Config() }

// SessionEnded implements proxy.SessionEnder: the session's last turn is
// dropped.
func (h *Handler) SessionEnded(id uint64) { h.turns.forget(id) }

// LastTurn returns the session's last finished question, if any.
func (h *Handler) LastTurn(id uint64) (Turn, bool) { return h.turns.get(id) }

// Intercept implements proxy.Handler. Anything that is not a question is
// left to others after a scan of leading comments and one keyword;
// DISCARD ALL and RESET ALL are left to the server too, and also clear the
// session's last turn.
func (h *Handler) Intercept(_ context.Context, info proxy.SessionInfo, sql string) (proxy.Statement, error) {
	q, ok := Parse(sql)
	if !ok {
		if resetsSession(sql) {
			h.turns.forget(info.ID)
		}
		return nil, nil
	}
	if q.More != "" {
		e := &proxy.Error{
			Code:    "0A000",
			Message: "a question must be the only statement in its query string",
			Hint:    "Send each statement as a query of its own.",
		}
		if q.Form == Retrieve {
			e.Message = "RETRIEVE must be the only statement in its query string"
			e.Hint = "Send each statement as a query of its own, or quote the question ('...') to keep a semicolon in it."
		}
		return nil, e
	}
	switch q.Form {
	case Retrieve:
		if q.Text == "" {
			return nil, toProxyError(retriever.ErrEmptyQuestion)
		}
		return &retrieveStatement{h: h, info: info, question: q.Text, previous: h.previous(info.ID, q)}, nil
	case NLSQL:
		return h.nl.StatementAsk(info, sqlgen.Ask{Question: q.Text, Previous: h.previous(info.ID, q)}, true), nil
	case Feedback:
		v, text, err := ParseVerdict(q.Text)
		if err != nil {
			return nil, err
		}
		return &feedbackStatement{h: h, info: info, verdict: v, text: text}, nil
	default:
		return h.nl.StatementAsk(info, sqlgen.Ask{Question: q.Text, Previous: h.previous(info.ID, q)}, false), nil
	}
}

// previous returns the turn q follows up in the session, or nil (see
// FollowUp). nl-new forgets the session's last turn: the question starts
// a new conversation.
func (h *Handler) previous(session uint64, q Question) *sqlgen.Turn {
	if q.Fresh {
		h.turns.forget(session)
		return nil
	}
	t, have := h.turns.conversation(session)
	p := continues(q.Text, t, have)
	if p == nil {
		return nil
	}
	return &sqlgen.Turn{Question: p.Question, SQL: p.SQL, Tables: append([]string(nil), p.Tables...), RequestID: p.RequestID}
}
