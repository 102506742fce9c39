package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/atriumdb/atrium/internal/llm"
)

// OpenAIConfig configures the chat-completions client.
type OpenAIConfig struct {
	// URL is the endpoint: a base ("http://host:8000", ".../v1") or the full
	// ".../chat/completions" URL.
	URL string
	// Model is sent as "model".
	Model string
	// APIKey is sent as a Bearer token when set (ATRIUM_LLM_API_KEY).
	APIKey string
	// Timeout bounds one generation including retries. Default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a 429, 5xx or connection failure is
	// retried. Default 3.
	MaxRetries int
	// Temperature is sent as "temperature". Default 0.
	Temperature float64
	// MaxTokens caps the reply; 0 sends none.
	MaxTokens int
}

// String describes the configuration without the API key.
func (c OpenAIConfig) String() string {
	key := ""
	if c.APIKey != "" {
		key = " api_key=xxxxx"
	}
	return fmt.Sprintf("openai url=%s model=%s timeout=%s retries=%d%s", c.URL, c.Model, c.Timeout, c.MaxRetries, key)
}

// OpenAIOptions are the client's injected dependencies.
type OpenAIOptions struct {
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Sleep waits between retries; tests replace it. Default: a timer that
	// honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI is a Generator for any OpenAI-compatible /v1/chat/completions
// endpoint (OpenAI, vLLM, llama.cpp server, Ollama, LiteLLM...). Safe for
// concurrent use.
type OpenAI struct {
	cfg OpenAIConfig
	c   *llm.Client
}

// LLMError is a failed generation. Timeout says the deadline passed.
type LLMError struct {
	// Status is the last HTTP status (0: no response).
	Status  int
	Timeout bool
	Msg     string
	Err     error
}

func (e *LLMError) Error() string {
	s := "LLM request failed: " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *LLMError) Unwrap() error { return e.Err }

// NewOpenAI returns a client for cfg.
func NewOpenAI(cfg OpenAIConfig, opts OpenAIOptions) (*OpenAI, error) {
	if cfg.URL == "" {
		return nil, errors.New("openai: no endpoint URL")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	c, err := llm.New(llm.Config{URL: cfg.URL, APIKey: cfg.APIKey, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		HTTPClient: opts.HTTPClient, Logger: opts.Logger, Sleep: opts.Sleep})
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return &OpenAI{cfg: cfg, c: c}, nil
}

// Endpoint is the chat-completions URL requests go to.
func (o *OpenAI) Endpoint() string { return o.c.Endpoint() }

// Generate implements Generator: POST the messages, retrying 429, 5xx and
// connection failures with exponential back-off (Retry-After honoured), all
// within cfg.Timeout.
func (o *OpenAI) Generate(ctx context.Context, msgs []Message) (*Generation, error) {
	lm := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		lm[i] = llm.Message{Role: m.Role, Content: m.Content}
	}
	r, err := o.c.Complete(ctx, llm.Request{Model: o.cfg.Model, Messages: lm, Temperature: o.cfg.Temperature, MaxTokens: o.cfg.MaxTokens})
	if err != nil {
		return nil, llmError(err)
	}
	return &Generation{
		Text:     r.Text,
		Usage:    Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens, TotalTokens: r.Usage.TotalTokens},
		Attempts: r.Attempts,
	}, nil
}

// llmError maps the transport's typed errors onto LLMError, whose Timeout
// and Msg the pipeline turns into SQLSTATEs and client messages. A
// cancelled request stays context.Canceled.
func llmError(err error) error {
	var (
		te *llm.TimeoutError
		se *llm.StatusError
		ue *llm.UnreachableError
		re *llm.ResponseError
	)
	switch {
	case errors.As(err, &te):
		return &LLMError{Timeout: true, Status: te.Status, Msg: "no answer in time", Err: context.DeadlineExceeded}
	case errors.As(err, &se):
		msg := fmt.Sprintf("endpoint answered HTTP %d", se.Status)
		if se.Message != "" {
			msg += ": " + clip(se.Message, 200)
		}
		return &LLMError{Status: se.Status, Msg: msg}
	case errors.As(err, &ue):
		return &LLMError{Msg: "endpoint unreachable", Err: ue.Err}
	case errors.As(err, &re):
		return &LLMError{Status: re.Status, Msg: re.Msg, Err: re.Err}
	case errors.Is(err, context.Canceled):
		return err
	}
	return &LLMError{Msg: "request", Err: err}
}
