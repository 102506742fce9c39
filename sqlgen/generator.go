package sqlgen

import "context"

// Generator turns a prompt into SQL text. Implementations are safe for
// concurrent use. OpenAI is the implementation for chat-completions
// endpoints.
type Generator interface {
	Generate(ctx context.Context, msgs []Message) (*Generation, error)
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Generation is the generator's answer.
type Generation struct {
	// Text is the reply as the model wrote it (the SQL is extracted from it).
	Text string
	// Usage is the token usage the endpoint reported (zero when it reports
	// none).
	Usage Usage
	// Attempts is how many HTTP requests it took (retries included).
	Attempts int
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}
