package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/atriumdb/atrium/internal/llm"
)

// openAIClient is the minimal OpenAI-compatible HTTP client the embedder
// needs: /embeddings with a bearer key and a per-request timeout (chat
// completions go through internal/llm). It is safe for concurrent use.
type openAIClient struct {
	base    string // without trailing slash, ending in /v1 or not
	apiKey  string
	timeout time.Duration
	hc      *http.Client
}

func newOpenAIClient(base, apiKey string, timeout time.Duration, hc *http.Client) *openAIClient {
	if hc == nil {
		hc = http.DefaultClient
	}
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	return &openAIClient{base: strings.TrimRight(base, "/"), apiKey: apiKey, timeout: timeout, hc: hc}
}

// endpoint accepts both "http://h/v1" and "http://h" as base.
func (c *openAIClient) endpoint(p string) string {
	if strings.HasSuffix(c.base, "/v1") {
		return c.base + p
	}
	return c.base + "/v1" + p
}

// HTTPStatusError is a non-2xx reply from an OpenAI-compatible endpoint,
// /embeddings or /chat/completions alike.
type HTTPStatusError = llm.StatusError

func (c *openAIClient) post(ctx context.Context, p string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	url := c.endpoint(p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &HTTPStatusError{URL: url, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(out); err != nil {
		return fmt.Errorf("decode reply of %s: %w", url, err)
	}
	return nil
}

// OpenAIEmbedder calls an OpenAI-compatible /v1/embeddings endpoint.
type OpenAIEmbedder struct {
	c     *openAIClient
	model string
	dim   int
	batch int
}

// NewOpenAIEmbedder builds the openai embedder from cfg (URL and Model are
// required). When cfg.Dimension is 0 the dimension is learnt from one probe
// request, so the constructor needs the endpoint up.
func NewOpenAIEmbedder(cfg EmbedderConfig) (*OpenAIEmbedder, error) {
	if cfg.URL == "" || cfg.Model == "" {
		return nil, errors.New("catalog: openai embedder needs a URL and a model")
	}
	e := &OpenAIEmbedder{
		c:     newOpenAIClient(cfg.URL, cfg.APIKey, cfg.Timeout, cfg.HTTPClient),
		model: cfg.Model,
		dim:   cfg.Dimension,
		batch: cfg.BatchSize,
	}
	if e.batch <= 0 {
		e.batch = 128
	}
	if e.dim <= 0 {
		ctx, cancel := context.WithTimeout(context.Background(), e.c.timeout)
		defer cancel()
		v, err := e.call(ctx, []string{"dimension probe"}, 0)
		if err != nil {
			return nil, fmt.Errorf("catalog: openai embedder: probe dimension: %w", err)
		}
		e.dim = len(v[0])
	}
	return e, nil
}

// Name implements Embedder.
func (e *OpenAIEmbedder) Name() string { return "openai:" + e.model }

// Dimension implements Embedder.
func (e *OpenAIEmbedder) Dimension() int { return e.dim }

// Embed implements Embedder, in requests of at most BatchSize texts.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		vs, err := e.call(ctx, texts[start:end], e.dim)
		if err != nil {
			return nil, fmt.Errorf("catalog: openai embeddings: %w", err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *OpenAIEmbedder) call(ctx context.Context, texts []string, dim int) ([][]float32, error) {
	req := map[string]any{"model": e.model, "input": texts, "encoding_format": "float"}
	if dim > 0 {
		req["dimensions"] = dim
	}
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := e.c.post(ctx, "/embeddings", req, &resp); err != nil {
		return nil, err
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("asked for %d embeddings, got %d", len(texts), len(resp.Data))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("reply has bad or repeated index %d", d.Index)
		}
		if dim > 0 && len(d.Embedding) != dim {
			return nil, fmt.Errorf("reply vector has dimension %d, want %d", len(d.Embedding), dim)
		}
		v := d.Embedding
		normalize(v)
		out[d.Index] = v
	}
	return out, nil
}
