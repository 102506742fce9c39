// Package llm is Atrium's one client for OpenAI-compatible
// /v1/chat/completions endpoints (OpenAI, vLLM, llama.cpp server, Ollama,
// LiteLLM...). The catalog's table narration, MURRE's question rewriting and
// the SQL generator all speak to the model through it, so timeouts, bounded
// retries and error classification behave the same everywhere.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Usage is the token usage an endpoint reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Request is one chat completion.
type Request struct {
	// Model is sent as "model".
	Model    string
	Messages []Message
	// Temperature is sent as "temperature" (0 is sent too: deterministic).
	Temperature float64
	// MaxTokens caps the reply; 0 sends none.
	MaxTokens int
}

// Response is the first choice of a completion.
type Response struct {
	// Text is the first choice's message content.
	Text         string
	FinishReason string
	// Usage is zero when the endpoint reports none.
	Usage Usage
	// Attempts is how many HTTP requests it took (retries included).
	Attempts int
}

// Config configures a Client.
type Config struct {
	// URL is a base ("http://host:8000", ".../v1") or the full
	// ".../chat/completions" URL.
	URL string
	// APIKey is sent as a Bearer token when set.
	APIKey string
	// Timeout bounds one Complete call, retries included; 0 leaves only the
	// caller's context.
	Timeout time.Duration
	// MaxRetries is how many times a 429, a 5xx or a connection failure is
	// retried; 0 means no retry.
	MaxRetries int
	// HTTPClient replaces a plain &http.Client{}.
	HTTPClient *http.Client
	// Logger receives a warning per retry; nil discards.
	Logger *slog.Logger
	// Sleep waits between retries; tests replace it. Default: a timer that
	// honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client posts chat completions. Safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
}

// ChatURL resolves a configured URL to the chat-completions endpoint:
// "http://h" and "http://h/v1" both become "http://h/v1/chat/completions";
// a URL already ending in /chat/completions is kept.
func ChatURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("llm: no endpoint URL")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("llm: endpoint %q is not an http(s) URL", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
	case strings.HasSuffix(p, "/v1"):
		p += "/chat/completions"
	default:
		p += "/v1/chat/completions"
	}
	u.Path = p
	return u.String(), nil
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	ep, err := ChatURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	return &Client{cfg: cfg, endpoint: ep}, nil
}

// Endpoint is the chat-completions URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

// StatusError is a non-2xx reply.
type StatusError struct {
	URL    string
	Status int
	// Body is the reply's first 512 bytes.
	Body string
	// Message is the reply's OpenAI-style error.message, when it has one.
	Message string
	// RetryAfter is the reply's Retry-After, capped at one minute.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.URL, e.Status, e.Body)
}

// UnreachableError is a request that got no HTTP reply (refused, reset,
// DNS...).
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("POST %s: %v", e.URL, e.Err) }

// Unwrap returns the transport's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// ResponseError is a reply that could not be read or is not a usable
// chat completion.
type ResponseError struct {
	URL    string
	Status int
	// Msg says what is wrong: "read response", "response is not
	// chat-completions JSON" or "response has no choices".
	Msg string
	Err error
}

func (e *ResponseError) Error() string {
	s := e.URL + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ResponseError) Unwrap() error { return e.Err }

// TimeoutError is a call whose deadline (Config.Timeout or the caller's)
// passed before an answer came. It matches context.DeadlineExceeded with
// errors.Is.
type TimeoutError struct {
	URL string
	// Status is the last HTTP status seen (0: none).
	Status int
	// Last is the last attempt's error.
	Last error
}

func (e *TimeoutError) Error() string {
	s := "POST " + e.URL + ": no answer in time"
	if e.Last != nil && !errors.Is(e.Last, context.DeadlineExceeded) {
		s += " (last: " + e.Last.Error() + ")"
	}
	return s
}

// Unwrap returns context.DeadlineExceeded and the last attempt's error.
func (e *TimeoutError) Unwrap() []error {
	if e.Last == nil {
		return []error{context.DeadlineExceeded}
	}
	return []error{context.DeadlineExceeded, e.Last}
}

// StatusOf is the HTTP status an error of this package carries (0: none).
func StatusOf(err error) int {
	var se *StatusError
	var re *ResponseError
	var te *TimeoutError
	switch {
	case errors.As(err, &se):
		return se.Status
	case errors.As(err, &re):
		return re.Status
	case errors.As(err, &te):
		return te.Status
	}
	return 0
}

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Stream      bool      `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Complete posts req, retrying 429, 5xx and connection failures up to
// MaxRetries times with jittered exponential back-off (Retry-After
// honoured), all within Timeout. Errors are *StatusError,
// *UnreachableError, *ResponseError or *TimeoutError; a cancelled ctx
// returns ctx.Err().
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	body, err := json.Marshal(chatRequest{Model: req.Model, Messages: req.Messages, Temperature: req.Temperature, MaxTokens: req.MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		r, err := c.once(ctx, body)
		if err == nil {
			r.Attempts = attempt
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, c.ctxErr(ctx, err)
		}
		status := StatusOf(err)
		var ue *UnreachableError
		retryable := errors.As(err, &ue) || status == http.StatusTooManyRequests || status >= 500
		if !retryable || attempt > c.cfg.MaxRetries {
			return nil, err
		}
		var wait time.Duration
		if se := (*StatusError)(nil); errors.As(err, &se) {
			wait = se.RetryAfter
		}
		if wait <= 0 {
			// Full jitter keeps many sessions from retrying in step.
			wait = backoff/2 + rand.N(backoff/2+1)
			backoff *= 2
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, err
		}
		c.cfg.Logger.Warn("LLM request failed; retrying", "attempt", attempt, "status", status, "wait", wait, "err", err)
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return nil, c.ctxErr(ctx, err)
		}
	}
}

func (c *Client) ctxErr(ctx context.Context, last error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{URL: c.endpoint, Status: StatusOf(last), Last: last}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return last
}

func (c *Client) once(ctx context.Context, body []byte) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, &UnreachableError{URL: c.endpoint, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, &ResponseError{URL: c.endpoint, Status: resp.StatusCode, Msg: "read response", Err: err}
	}
	var cr chatResponse
	jsonErr := json.Unmarshal(raw, &cr)
	if resp.StatusCode/100 != 2 {
		se := &StatusError{URL: c.endpoint, Status: resp.StatusCode, Body: strings.TrimSpace(string(raw[:min(len(raw), 512)])),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		if jsonErr == nil && cr.Error != nil {
			se.Message = cr.Error.Message
		}
		return nil, se
	}
	if jsonErr != nil {
		return nil, &ResponseError{URL: c.endpoint, Status: resp.StatusCode, Msg: "response is not chat-completions JSON", Err: jsonErr}
	}
	if len(cr.Choices) == 0 {
		return nil, &ResponseError{URL: c.endpoint, Status: resp.StatusCode, Msg: "response has no choices"}
	}
	r := &Response{Text: cr.Choices[0].Message.Content, FinishReason: cr.Choices[0].FinishReason}
	if cr.Usage != nil {
		r.Usage = *cr.Usage
	}
	return r, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date. It
// caps the wait at one minute; the overall timeout still applies.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), time.Minute)
}
