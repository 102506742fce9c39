package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ONNXEmbedder runs a sentence-embedding model (an ONNX file exported from a
// Hugging Face model: inputs input_ids, attention_mask and optionally
// token_type_ids; output last_hidden_state, or an already pooled
// sentence_embedding) with onnxruntime. Token vectors are mean-pooled over
// the attention mask and L2-normalised. It is safe for concurrent use; runs
// are serialised because one session already uses every core. Callers must
// call Close.
type ONNXEmbedder struct {
	name      string
	tok       *Tokenizer
	sess      *ort.DynamicAdvancedSession
	inputs    []string
	output    string
	pooled    bool // the output is already one vector per text
	dim       int
	maxTokens int
	batch     int
	mu        sync.Mutex
	closed    bool
}

// The onnxruntime environment is process-wide in the C library, so its
// lifetime is reference-counted for every user in the process (the
// embedder here, the retriever's ONNX scorer) through AcquireONNXRuntime
// and ReleaseONNXRuntime.
var ortEnv struct {
	sync.Mutex
	refs  int
	owned bool // this package initialised it and so destroys it
	lib   string
}

// AcquireONNXRuntime loads onnxruntime from lib and initialises its
// environment, or takes another reference when it is already up (also when
// someone outside this package initialised it, in which case it is never
// destroyed here). Every successful call needs one ReleaseONNXRuntime.
func AcquireONNXRuntime(lib string) error {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.refs > 0 {
		ortEnv.refs++
		return nil
	}
	if ort.IsInitialized() {
		ortEnv.refs, ortEnv.owned, ortEnv.lib = 1, false, lib
		return nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("catalog: load onnxruntime from %s: %w", lib, err)
	}
	ortEnv.refs, ortEnv.owned, ortEnv.lib = 1, true, lib
	return nil
}

// ReleaseONNXRuntime drops a reference taken by AcquireONNXRuntime and
// destroys the environment with the last one.
func ReleaseONNXRuntime() {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.refs == 0 {
		return
	}
	ortEnv.refs--
	if ortEnv.refs == 0 && ortEnv.owned {
		_ = ort.DestroyEnvironment()
	}
}

// ONNXRuntimeLib resolves the onnxruntime shared library: the configured
// path, then $ATRIUM_ONNXRUNTIME_LIB, then .deps/onnxruntime/lib under the
// working directory.
func ONNXRuntimeLib(configured string) (string, error) {
	cands := []string{configured, os.Getenv("ATRIUM_ONNXRUNTIME_LIB")}
	for _, base := range []string{"libonnxruntime.so", "libonnxruntime.so.1"} {
		cands = append(cands, filepath.Join(".deps", "onnxruntime", "lib", base))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			return c, nil
		} else if c == configured {
			return "", fmt.Errorf("catalog: onnxruntime library %s: %w", c, err)
		}
	}
	return "", errors.New("catalog: onnxruntime library not found: pass --onnxruntime-lib or set ATRIUM_ONNXRUNTIME_LIB (make deps puts it in .deps/onnxruntime/lib)")
}

// NewONNXEmbedder loads cfg.ModelPath and its tokenizer
// (cfg.TokenizerPath, default tokenizer.json beside the model).
func NewONNXEmbedder(cfg EmbedderConfig) (*ONNXEmbedder, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ModelPath == "" {
		return nil, errors.New("catalog: the onnx embedder needs a model file (--onnx-model)")
	}
	if _, err := os.Stat(cfg.ModelPath); err != nil {
		return nil, fmt.Errorf("catalog: onnx model: %w", err)
	}
	tokPath := cfg.TokenizerPath
	if tokPath == "" {
		tokPath = filepath.Join(filepath.Dir(cfg.ModelPath), "tokenizer.json")
	}
	tok, err := LoadTokenizer(tokPath)
	if err != nil {
		return nil, err
	}
	lib, err := ONNXRuntimeLib(cfg.RuntimeLib)
	if err != nil {
		return nil, err
	}
	if err := AcquireONNXRuntime(lib); err != nil {
		return nil, err
	}
	e := &ONNXEmbedder{tok: tok, maxTokens: cfg.MaxTokens, batch: cfg.BatchSize}
	if e.maxTokens <= 0 {
		e.maxTokens = 256
	}
	if e.batch <= 0 {
		e.batch = 32
	}
	if err := e.open(cfg, log); err != nil {
		ReleaseONNXRuntime()
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(cfg.ModelPath), filepath.Ext(cfg.ModelPath))
	if base == "model" {
		// model.onnx in a model directory: the directory names the model.
		base = filepath.Base(filepath.Dir(cfg.ModelPath))
	}
	e.name = "onnx:" + base
	return e, nil
}

func (e *ONNXEmbedder) open(cfg EmbedderConfig, log *slog.Logger) error {
	ins, outs, err := ort.GetInputOutputInfo(cfg.ModelPath)
	if err != nil {
		return fmt.Errorf("catalog: read onnx model %s: %w", cfg.ModelPath, err)
	}
	have := map[string]bool{}
	for _, in := range ins {
		have[in.Name] = true
	}
	for _, want := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		if have[want] {
			e.inputs = append(e.inputs, want)
		}
	}
	if !have["input_ids"] || len(e.inputs) != len(ins) {
		return fmt.Errorf("catalog: onnx model %s: inputs %v; want input_ids, attention_mask and optionally token_type_ids", cfg.ModelPath, names(ins))
	}
	for _, o := range outs {
		if o.Name == "sentence_embedding" {
			e.output, e.pooled = o.Name, true
			e.dim = int(o.Dimensions[len(o.Dimensions)-1])
		}
	}
	if e.output == "" {
		for _, o := range outs {
			if o.Name == "last_hidden_state" || e.output == "" {
				e.output = o.Name
				e.dim = int(o.Dimensions[len(o.Dimensions)-1])
			}
		}
	}
	if e.output == "" {
		return fmt.Errorf("catalog: onnx model %s has no outputs", cfg.ModelPath)
	}

	opts, err := ort.NewSessionOptions()
	if err != nil {
		return fmt.Errorf("catalog: onnx session options: %w", err)
	}
	defer opts.Destroy()
	if strings.EqualFold(cfg.Device, "cuda") {
		if reason := appendCUDA(opts); reason != nil {
			log.Warn("CUDA execution provider unavailable; the onnx embedder runs on the CPU", "reason", reason)
		} else {
			log.Info("the onnx embedder runs on CUDA")
		}
	}
	e.sess, err = ort.NewDynamicAdvancedSession(cfg.ModelPath, e.inputs, []string{e.output}, opts)
	if err != nil {
		return fmt.Errorf("catalog: load onnx model %s: %w", cfg.ModelPath, err)
	}
	if e.dim <= 0 {
		// Symbolic hidden size: learn it from one run.
		v, err := e.run([][]int64{e.tok.Encode("probe", e.maxTokens)})
		if err != nil {
			e.sess.Destroy()
			return err
		}
		e.dim = len(v[0])
	}
	return nil
}

func appendCUDA(opts *ort.SessionOptions) error {
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer cuda.Destroy()
	return opts.AppendExecutionProviderCUDA(cuda)
}

func names(infos []ort.InputOutputInfo) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Name
	}
	return out
}

// Name implements Embedder: "onnx:" and the model's name.
func (e *ONNXEmbedder) Name() string { return e.name }

// Dimension implements Embedder.
func (e *ONNXEmbedder) Dimension() int { return e.dim }

// Tokenizer returns the embedder's tokenizer.
func (e *ONNXEmbedder) Tokenizer() *Tokenizer { return e.tok }

// Embed implements Embedder.
func (e *ONNXEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+e.batch, len(texts))
		ids := make([][]int64, end-start)
		for i, t := range texts[start:end] {
			ids[i] = e.tok.Encode(t, e.maxTokens)
		}
		vs, err := e.run(ids)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// run pads a batch, runs the model and pools.
func (e *ONNXEmbedder) run(ids [][]int64) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("catalog: onnx embedder is closed")
	}
	b := len(ids)
	seq := 1
	for _, x := range ids {
		seq = max(seq, len(x))
	}
	inputIDs := make([]int64, b*seq)
	mask := make([]int64, b*seq)
	types := make([]int64, b*seq)
	for i, x := range ids {
		for j := 0; j < seq; j++ {
			if j < len(x) {
				inputIDs[i*seq+j] = x[j]
				mask[i*seq+j] = 1
			} else {
				inputIDs[i*seq+j] = e.tok.PadID
			}
		}
	}
	shape := ort.NewShape(int64(b), int64(seq))
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, name := range e.inputs {
		data := map[string][]int64{"input_ids": inputIDs, "attention_mask": mask, "token_type_ids": types}[name]
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, fmt.Errorf("catalog: onnx input %s: %w", name, err)
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := e.sess.Run(inputs, outputs); err != nil {
		return nil, fmt.Errorf("catalog: onnx run: %w", err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("catalog: onnx output %s is not float32", e.output)
	}
	data, oshape := t.GetData(), t.GetShape()
	res := make([][]float32, b)
	switch {
	case e.pooled && len(oshape) == 2:
		h := int(oshape[1])
		for i := range res {
			v := make([]float32, h)
			copy(v, data[i*h:(i+1)*h])
			normalize(v)
			res[i] = v
		}
	case len(oshape) == 3:
		h := int(oshape[2])
		for i := range res {
			v := make([]float32, h)
			n := 0
			for j := 0; j < seq; j++ {
				if mask[i*seq+j] == 0 {
					continue
				}
				n++
				row := data[(i*seq+j)*h : (i*seq+j+1)*h]
				for k := range v {
					v[k] += row[k]
				}
			}
			if n > 0 {
				for k := range v {
					v[k] /= float32(n)
				}
			}
			normalize(v)
			res[i] = v
		}
	default:
		return nil, fmt.Errorf("catalog: onnx output %s has shape %v; want [batch, seq, hidden] or [batch, hidden]", e.output, oshape)
	}
	return res, nil
}

// Close frees the model; the embedder cannot be used afterwards.
func (e *ONNXEmbedder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.sess.Destroy()
	ReleaseONNXRuntime()
	return err
}
