package catalog_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/atriumdb/atrium/catalog"
)

// fakeOpenAI is a TEST DOUBLE of an OpenAI-compatible server: /v1/embeddings
// answers with builtin-embedder vectors and /v1/chat/completions with a
// description built from the table in the prompt. Hooks inject faults.
type fakeOpenAI struct {
	srv         *httptest.Server
	embedCalls  atomic.Int64
	chatCalls   atomic.Int64
	failEmbedAt int64 // embeddings call number (1-based) from which to fail with 500; 0 never
	chatHook    func(prompt string) (status int, block bool)
	// chatReply, when set and ok, answers a chat call with content as the
	// assistant's message (e.g. a glossary proposal) instead of the
	// description built from the prompt.
	chatReply func(prompt string) (content string, ok bool)
	release   chan struct{}
	mu        sync.Mutex
	prompts   []string
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{release: make(chan struct{})}
	emb := catalog.NewBuiltinEmbedder(32)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		n := f.embedCalls.Add(1)
		if f.failEmbedAt > 0 && n >= f.failEmbedAt {
			http.Error(w, `{"error":"overloaded"}`, http.StatusInternalServerError)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		vs, _ := emb.Embed(r.Context(), req.Input)
		for i, v := range vs {
			out.Data = append(out.Data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.chatCalls.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		prompt := req.Messages[len(req.Messages)-1].Content
		f.mu.Lock()
		f.prompts = append(f.prompts, prompt)
		f.mu.Unlock()
		if f.chatHook != nil {
			status, block := f.chatHook(prompt)
			if block {
				select {
				case <-r.Context().Done():
				case <-f.release:
				}
				return
			}
			if status != 0 {
				http.Error(w, "fault", status)
				return
			}
		}
		if f.chatReply != nil {
			if content, ok := f.chatReply(prompt); ok {
				_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
					"role": "assistant", "content": content}}}})
				return
			}
		}
		// Describe every column listed as "- name (type".
		cols := map[string]string{}
		for _, line := range strings.Split(prompt, "\n") {
			if strings.HasPrefix(line, "- ") {
				name, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), " (")
				cols[name] = "narrated " + name
			}
		}
		first := strings.SplitN(prompt, "\n", 2)[0]
		content, _ := json.Marshal(map[string]any{"purpose": "Purpose of " + strings.TrimPrefix(first, "Table: "), "columns": cols})
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"role": "assistant", "content": "```json\n" + string(content) + "\n```"}}}})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(f.release)
		f.srv.Close()
	})
	return f
}

func (f *fakeOpenAI) url() string { return f.srv.URL + "/v1" }

var _ = context.Background
