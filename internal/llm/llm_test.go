package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeChat is a test double of an OpenAI-compatible chat-completions
// endpoint: it answers each request with the next scripted reply (the last
// repeats) and records what it was sent.
type fakeChat struct {
	srv *httptest.Server

	mu      sync.Mutex
	replies []reply
	reqs    []recorded
}

type reply struct {
	status     int
	body       string
	retryAfter string
	block      bool // wait until the client gives up
}

type recorded struct {
	path, auth, contentType string
	body                    map[string]any
}

func newFakeChat(t *testing.T, replies ...reply) *fakeChat {
	t.Helper()
	f := &fakeChat{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{path: r.URL.Path, auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type"), body: body})
		rp := f.replies[min(len(f.reqs), len(f.replies))-1]
		f.mu.Unlock()
		if rp.block {
			<-r.Context().Done()
			return
		}
		if rp.retryAfter != "" {
			w.Header().Set("Retry-After", rp.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		_, _ = w.Write([]byte(rp.body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeChat) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

const okBody = `{"choices":[{"message":{"role":"assistant","content":"SELECT 1"},"finish_reason":"stop"}],
	"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`

func noSleep(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(_ context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return nil
	}
}

func TestChatURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":                       "http://h:8000/v1/chat/completions",
		"http://h:8000/":                      "http://h:8000/v1/chat/completions",
		"https://api.example.com/v1":          "https://api.example.com/v1/chat/completions",
		"https://api.example.com/v1/":         "https://api.example.com/v1/chat/completions",
		"http://h/openai/v1/chat/completions": "http://h/openai/v1/chat/completions",
	} {
		got, err := ChatURL(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "h:8000", "ftp://h/x", "http://"} {
		_, err := ChatURL(bad)
		require.Error(t, err, bad)
		_, err = New(Config{URL: bad})
		require.Error(t, err, bad)
	}
}

func TestComplete(t *testing.T) {
	f := newFakeChat(t, reply{status: 200, body: okBody})
	c, err := New(Config{URL: f.srv.URL + "/v1", APIKey: "sk-test"})
	require.NoError(t, err)
	r, err := c.Complete(context.Background(), Request{Model: "m", MaxTokens: 50, Messages: []Message{
		{Role: "system", Content: "be brief"}, {Role: "user", Content: "q"},
	}})
	require.NoError(t, err)
	require.Equal(t, "SELECT 1", r.Text)
	require.Equal(t, "stop", r.FinishReason)
	require.Equal(t, Usage{PromptTokens: 11, CompletionTokens: 3, TotalTokens: 14}, r.Usage)
	require.Equal(t, 1, r.Attempts)

	reqs := f.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/chat/completions", reqs[0].path)
	require.Equal(t, "Bearer sk-test", reqs[0].auth)
	require.Equal(t, "application/json", reqs[0].contentType)
	require.Equal(t, "m", reqs[0].body["model"])
	require.Equal(t, float64(0), reqs[0].body["temperature"])
	require.Equal(t, float64(50), reqs[0].body["max_tokens"])
	require.Equal(t, false, reqs[0].body["stream"])
	require.Len(t, reqs[0].body["messages"], 2)

	// No key, no header; no MaxTokens, no max_tokens.
	c, err = New(Config{URL: f.srv.URL})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}})
	require.NoError(t, err)
	reqs = f.requests()
	require.Empty(t, reqs[1].auth)
	require.NotContains(t, reqs[1].body, "max_tokens")
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	f := newFakeChat(t,
		reply{status: 503, body: `{"error":{"message":"overloaded"}}`},
		reply{status: 429, body: `{"error":{"message":"slow down"}}`, retryAfter: "7"},
		reply{status: 200, body: okBody},
	)
	var waits []time.Duration
	c, err := New(Config{URL: f.srv.URL, MaxRetries: 3, Sleep: noSleep(&waits)})
	require.NoError(t, err)
	r, err := c.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}})
	require.NoError(t, err)
	require.Equal(t, 3, r.Attempts)
	require.Len(t, waits, 2)
	require.Positive(t, waits[0])
	require.Equal(t, 7*time.Second, waits[1], "Retry-After is honoured")
}

func TestRetriesAreBounded(t *testing.T) {
	f := newFakeChat(t, reply{status: 500, body: `{"error":{"message":"boom"}}`})
	var waits []time.Duration
	c, err := New(Config{URL: f.srv.URL, MaxRetries: 2, Sleep: noSleep(&waits)})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 500, se.Status)
	require.Equal(t, "boom", se.Message)
	require.Contains(t, se.Body, "boom")
	require.Contains(t, err.Error(), "HTTP 500")
	require.Equal(t, 500, StatusOf(err))
	require.Len(t, f.requests(), 3)
	// Back-off grows between attempts (jitter keeps each in [b/2, b]).
	require.Len(t, waits, 2)
	require.LessOrEqual(t, waits[0], 250*time.Millisecond)
	require.GreaterOrEqual(t, waits[1], 250*time.Millisecond)
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	f := newFakeChat(t, reply{status: 401, body: `{"error":{"message":"bad key"}}`})
	var waits []time.Duration
	c, err := New(Config{URL: f.srv.URL, MaxRetries: 3, Sleep: noSleep(&waits)})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 401, se.Status)
	require.Equal(t, "bad key", se.Message)
	require.Len(t, f.requests(), 1)
	require.Empty(t, waits)
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	var waits []time.Duration
	c, err := New(Config{URL: "http://" + addr, MaxRetries: 2, Sleep: noSleep(&waits)})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, "http://"+addr+"/v1/chat/completions", ue.URL)
	require.Len(t, waits, 2, "connection failures are retried")
	require.Zero(t, StatusOf(err))
}

func TestTimeout(t *testing.T) {
	f := newFakeChat(t, reply{block: true})
	c, err := New(Config{URL: f.srv.URL, Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "no answer in time")

	// The caller's deadline counts as a timeout too.
	c, err = New(Config{URL: f.srv.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Complete(ctx, Request{Model: "m"})
	require.ErrorAs(t, err, &te)
}

func TestTimeoutKeepsLastStatus(t *testing.T) {
	f := newFakeChat(t, reply{status: 503, body: `{}`})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := New(Config{URL: f.srv.URL, MaxRetries: 5, Sleep: func(context.Context, time.Duration) error {
		cancel()
		return context.DeadlineExceeded
	}})
	require.NoError(t, err)
	_, err = c.Complete(ctx, Request{Model: "m"})
	// cancel() makes ctx.Err() Canceled: a cancelled call is not a timeout.
	require.ErrorIs(t, err, context.Canceled)
	var te *TimeoutError
	require.False(t, errors.As(err, &te))

	// A deadline that passes while waiting to retry keeps the last status.
	c, err = New(Config{URL: f.srv.URL, MaxRetries: 5, Timeout: time.Second, Sleep: func(ctx context.Context, _ time.Duration) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	require.ErrorAs(t, err, &te)
	require.Equal(t, 503, te.Status)
	require.Equal(t, 503, StatusOf(err))
	require.Len(t, f.requests(), 2)

	// A wait that would outlast the deadline is not started: the last
	// reply is the answer.
	f2 := newFakeChat(t, reply{status: 429, body: `{}`, retryAfter: "30"})
	var waits []time.Duration
	c, err = New(Config{URL: f2.srv.URL, MaxRetries: 5, Timeout: 10 * time.Second, Sleep: noSleep(&waits)})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{Model: "m"})
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 429, se.Status)
	require.Equal(t, 30*time.Second, se.RetryAfter)
	require.Empty(t, waits)
	require.Len(t, f2.requests(), 1)
}

func TestCancelled(t *testing.T) {
	f := newFakeChat(t, reply{block: true})
	c, err := New(Config{URL: f.srv.URL, MaxRetries: 3})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = c.Complete(ctx, Request{Model: "m"})
	require.ErrorIs(t, err, context.Canceled)
	var te *TimeoutError
	require.False(t, errors.As(err, &te))
	require.Len(t, f.requests(), 1)
}

func TestBadResponses(t *testing.T) {
	for body, msg := range map[string]string{
		`not json`:        "response is not chat-completions JSON",
		`{"choices":[]}`:  "response has no choices",
		`{"object":"x"} `: "response has no choices",
	} {
		f := newFakeChat(t, reply{status: 200, body: body})
		c, err := New(Config{URL: f.srv.URL, MaxRetries: 3})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), Request{Model: "m"})
		var re *ResponseError
		require.ErrorAs(t, err, &re, body)
		require.Equal(t, msg, re.Msg)
		require.Equal(t, 200, re.Status)
		require.Len(t, f.requests(), 1, "a malformed 200 is not retried")
	}
}

func TestRetryAfterHeader(t *testing.T) {
	require.Zero(t, retryAfter(""))
	require.Zero(t, retryAfter("soon"))
	require.Zero(t, retryAfter("-3"))
	require.Equal(t, 2*time.Second, retryAfter(" 2 "))
	require.Equal(t, time.Minute, retryAfter("3600"), "capped")
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	require.Zero(t, retryAfter(past))
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	require.Equal(t, time.Minute, retryAfter(future))
}
