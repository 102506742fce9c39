package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/atriumdb/atrium/internal/llm"
)

// Describer writes a table's purpose and column descriptions. The sync calls
// it only for tables whose fingerprint changed and caches the answer in the
// catalog. Implementations must be safe for concurrent use.
type Describer interface {
	Describe(ctx context.Context, req DescribeRequest) (Description, error)
}

// LLMConfig configures the OpenAI-compatible chat model that narrates
// tables (NewLLMDescriber).
type LLMConfig struct {
	// URL is the base URL, e.g. http://127.0.0.1:8000/v1 (required).
	URL string
	// Model is the model name sent with every request (required).
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout bounds one call (default 60s); a table whose call times out
	// is written without descriptions and retried on the next sync.
	Timeout time.Duration
	// Concurrency is how many calls run at once (default 4).
	Concurrency int
	// MaxTokens caps the reply (default 1024).
	MaxTokens int
	// HTTPClient replaces http.DefaultClient.
	HTTPClient *http.Client
}

// LLMDescriber is the Describer backed by an OpenAI-compatible
// /v1/chat/completions endpoint. One call describes a whole table: its
// purpose and every column (up to 200), so calls are batched per table.
type LLMDescriber struct {
	c           *llm.Client
	model       string
	maxTokens   int
	concurrency int
}

// NewLLMDescriber returns a describer for cfg.
func NewLLMDescriber(cfg LLMConfig) (*LLMDescriber, error) {
	if cfg.URL == "" || cfg.Model == "" {
		return nil, errors.New("catalog: the LLM needs a URL and a model")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	// No retries: a table whose call fails is written without descriptions
	// and described again on the next sync.
	c, err := llm.New(llm.Config{URL: cfg.URL, APIKey: cfg.APIKey, Timeout: cfg.Timeout, HTTPClient: cfg.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("catalog: the LLM: %w", err)
	}
	d := &LLMDescriber{
		c:           c,
		model:       cfg.Model,
		maxTokens:   cfg.MaxTokens,
		concurrency: cfg.Concurrency,
	}
	if d.maxTokens <= 0 {
		d.maxTokens = 1024
	}
	if d.concurrency <= 0 {
		d.concurrency = 4
	}
	return d, nil
}

// Concurrency is how many Describe calls the sync may run at once.
func (d *LLMDescriber) Concurrency() int { return d.concurrency }

const describeSystemPrompt = `You document database tables for people who search for them in plain English.
Given a table's schema and a few sample rows, reply with JSON only, no prose, in the form
{"purpose": "...", "columns": {"<column name>": "<description>", ...}}.
purpose: two or three sentences on what one row represents, the key entities and attributes, and what questions the table answers.
columns: for every column, one short sentence saying what it holds, expanding abbreviations; if you are unsure, say only what the name and values show.`

// Describe implements Describer.
func (d *LLMDescriber) Describe(ctx context.Context, req DescribeRequest) (Description, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Table: %s.%s (%s)\n", req.Schema, req.Table, strings.ReplaceAll(req.Kind, "_", " "))
	if req.Comment != "" {
		fmt.Fprintf(&sb, "Comment: %s\n", req.Comment)
	}
	sb.WriteString("Columns:\n")
	for _, c := range req.Columns {
		fmt.Fprintf(&sb, "- %s (%s", c.Name, c.Type)
		if c.PrimaryKey {
			sb.WriteString(", primary key")
		}
		sb.WriteString(")")
		if c.Comment != "" {
			fmt.Fprintf(&sb, ": %s", c.Comment)
		}
		sb.WriteByte('\n')
	}
	if len(req.Rows) > 0 {
		sb.WriteString("Sample rows:\n")
		for _, r := range req.Rows {
			sb.WriteString(r)
			sb.WriteByte('\n')
		}
	}
	resp, err := d.c.Complete(ctx, llm.Request{Model: d.model, MaxTokens: d.maxTokens, Messages: []llm.Message{
		{Role: "system", Content: describeSystemPrompt},
		{Role: "user", Content: sb.String()},
	}})
	if err != nil {
		return Description{}, fmt.Errorf("catalog: describe %s.%s: %w", req.Schema, req.Table, err)
	}
	desc, err := parseDescription(resp.Text)
	if err != nil {
		return Description{}, fmt.Errorf("catalog: describe %s.%s: %w", req.Schema, req.Table, err)
	}
	return desc, nil
}

// parseDescription reads the JSON object out of a reply that may wrap it in
// a code fence or a sentence.
func parseDescription(content string) (Description, error) {
	start := strings.IndexByte(content, '{')
	end := strings.LastIndexByte(content, '}')
	if start < 0 || end < start {
		return Description{}, fmt.Errorf("reply has no JSON object: %q", truncateRunes(content, 200))
	}
	var raw struct {
		Purpose string            `json:"purpose"`
		Columns map[string]string `json:"columns"`
	}
	if err := json.Unmarshal([]byte(content[start:end+1]), &raw); err != nil {
		return Description{}, fmt.Errorf("reply is not the expected JSON: %w", err)
	}
	return Description{Purpose: strings.TrimSpace(raw.Purpose), Columns: raw.Columns}, nil
}
