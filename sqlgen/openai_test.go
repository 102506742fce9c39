package sqlgen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

func TestOpenAIEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":                       "http://h:8000/v1/chat/completions",
		"http://h:8000/":                      "http://h:8000/v1/chat/completions",
		"https://api.example.com/v1":          "https://api.example.com/v1/chat/completions",
		"http://h/openai/v1/chat/completions": "http://h/openai/v1/chat/completions",
	} {
		o, err := NewOpenAI(OpenAIConfig{URL: in}, OpenAIOptions{})
		require.NoError(t, err)
		require.Equal(t, want, o.Endpoint())
	}
	for _, bad := range []string{"", "h:8000", "ftp://h/x"} {
		_, err := NewOpenAI(OpenAIConfig{URL: bad}, OpenAIOptions{})
		require.Error(t, err, bad)
	}
	require.NotContains(t, OpenAIConfig{URL: "http://h", APIKey: "sk-secret"}.String(), "sk-secret")
}

func TestOpenAIRetries(t *testing.T) {
	llm := llmfake.Start(
		llmfake.Rule{Status: 503, Times: 1},
		llmfake.Rule{Status: 429, RetryAfter: "7", Times: 1},
		llmfake.Rule{SQL: "SELECT 1"},
	)
	defer llm.Close()
	var waits []time.Duration
	o, err := NewOpenAI(OpenAIConfig{URL: llm.URL() + "/v1", Model: "m", APIKey: "sk-test", MaxRetries: 3},
		OpenAIOptions{Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	require.NoError(t, err)
	g, err := o.Generate(context.Background(), []Message{{Role: "user", Content: "Question: q"}})
	require.NoError(t, err)
	require.Equal(t, "```sql\nSELECT 1\n```", g.Text)
	require.Equal(t, 3, g.Attempts)
	require.Positive(t, g.Usage.PromptTokens)
	require.Len(t, waits, 2)
	require.Equal(t, 7*time.Second, waits[1], "Retry-After is honoured")
	reqs := llm.Requests()
	require.Equal(t, "Bearer sk-test", reqs[0].Authorization)
	require.Equal(t, "m", reqs[0].Model)

	// A 4xx other than 429 is not retried.
	llm.SetRules(llmfake.Rule{Status: 401})
	_, err = o.Generate(context.Background(), []Message{{Role: "user", Content: "Question: q"}})
	var le *LLMError
	require.True(t, errors.As(err, &le))
	require.Equal(t, 401, le.Status)
	require.Len(t, llm.Requests(), 4)

	// Retries are bounded.
	llm.SetRules(llmfake.Rule{Status: 500})
	_, err = o.Generate(context.Background(), []Message{{Role: "user", Content: "Question: q"}})
	require.ErrorAs(t, err, &le)
	require.Len(t, llm.Requests(), 8)
}
