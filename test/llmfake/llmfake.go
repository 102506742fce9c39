// Package llmfake is a TEST DOUBLE: a fake OpenAI-compatible chat-completions
// server for tests and benchmarks. It does not generate anything; it answers
// from scripted rules that match the question in the prompt (and the repair
// round), so tests can make "the LLM" return good SQL, DDL, two statements,
// garbage, errors or nothing in time. It is never used outside test code.
package llmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Rule is one scripted answer. The first rule that matches a request answers it.
type Rule struct {
	// Question matches when the prompt's question contains it (case
	// insensitive); empty matches every question.
	Question string
	// Attempt, when non-zero, matches only that round: 1 is the first
	// request, 2 the first repair, and so on.
	Attempt int
	// ErrorContains, when set, matches only repair requests whose reported
	// error contains it.
	ErrorContains string

	// SQL is answered inside a ```sql fence.
	SQL string
	// Raw is answered as the message content, as is (when SQL is empty).
	Raw string
	// Status, when set, is the HTTP status answered instead (with an
	// OpenAI-style error body), and RetryAfter its Retry-After header.
	Status     int
	RetryAfter string
	// Times limits how many requests the rule answers (0: unlimited); a rule
	// used up no longer matches.
	Times int
	// Delay is waited before answering (cut short when the client goes away).
	Delay time.Duration
}

// Request is a request the server received.
type Request struct {
	Model    string
	Messages []Message
	// Question is the text after "Question: " in the first user message.
	Question string
	// Attempt is the number of user messages: 1 for a first request, 2+ for
	// repairs.
	Attempt int
	// LastError is the last user message of a repair request.
	LastError string
	// Authorization is the request's Authorization header.
	Authorization string
}

// Message is a chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Server is the fake endpoint. Safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu struct {
		sync.Mutex
		rules     []Rule
		used      []int
		requests  []Request
		cancelled int
	}
}

// Start starts a server answering with rules. Callers must call Close.
func Start(rules ...Rule) *Server {
	s := &Server{}
	s.SetRules(rules...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL (".../v1" is appended by clients).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server and waits for requests in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetRules replaces the rules.
func (s *Server) SetRules(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.rules = append([]Rule(nil), rules...)
	s.mu.used = make([]int, len(rules))
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.mu.requests...)
}

// Calls is how many requests the server received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.requests)
}

// Cancelled is how many requests the client abandoned (its request context
// ended) while the server was waiting out a rule's Delay.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.cancelled
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body struct {
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Model: body.Model, Messages: body.Messages, Authorization: r.Header.Get("Authorization")}
	for _, m := range body.Messages {
		if m.Role != "user" {
			continue
		}
		req.Attempt++
		if req.Attempt == 1 {
			if _, q, ok := strings.Cut(m.Content, "Question: "); ok {
				q, _, _ = strings.Cut(q, "\n")
				req.Question = q
			}
		} else {
			req.LastError = m.Content
		}
	}

	s.mu.Lock()
	s.mu.requests = append(s.mu.requests, req)
	var rule *Rule
	for i := range s.mu.rules {
		ru := &s.mu.rules[i]
		if ru.Question != "" && !strings.Contains(strings.ToLower(req.Question), strings.ToLower(ru.Question)) {
			continue
		}
		if ru.Attempt != 0 && ru.Attempt != req.Attempt {
			continue
		}
		if ru.ErrorContains != "" && !strings.Contains(req.LastError, ru.ErrorContains) {
			continue
		}
		if ru.Times > 0 && s.mu.used[i] >= ru.Times {
			continue
		}
		s.mu.used[i]++
		cp := *ru
		rule = &cp
		break
	}
	s.mu.Unlock()

	if rule == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"llmfake: no rule for question %q (attempt %d)"}}`, req.Question, req.Attempt)
		return
	}
	if rule.Delay > 0 {
		t := time.NewTimer(rule.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.mu.Lock()
			s.mu.cancelled++
			s.mu.Unlock()
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rule.Status != 0 && rule.Status != http.StatusOK {
		if rule.RetryAfter != "" {
			w.Header().Set("Retry-After", rule.RetryAfter)
		}
		w.WriteHeader(rule.Status)
		fmt.Fprintf(w, `{"error":{"message":"llmfake: scripted HTTP %d"}}`, rule.Status)
		return
	}
	content := rule.Raw
	if rule.SQL != "" {
		content = "```sql\n" + rule.SQL + "\n```"
	}
	prompt := 0
	for _, m := range body.Messages {
		prompt += len(m.Content) / 4
	}
	resp := map[string]any{
		"id":      "llmfake",
		"object":  "chat.completion",
		"model":   body.Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": len(content) / 4, "total_tokens": prompt + len(content)/4},
	}
	_ = json.NewEncoder(w).Encode(resp)
}
