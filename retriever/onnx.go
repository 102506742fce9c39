package retriever

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/atriumdb/atrium/catalog"
)

// ATR cross-encoder contract (see the package doc and docs/atr-model.md).
const (
	onnxInputIDs    = "input_ids"
	onnxInputMask   = "attention_mask"
	onnxInputTypes  = "token_type_ids" // optional; fed zeros
	onnxInputMarker = "marker_positions"
	onnxOutput      = "logits"

	// ThresholdMarker is the token before the question: its logit is ATR's
	// threshold.
	ThresholdMarker = "[T_th]"
)

// TableMarker is the token before the i-th table of a window (1-based):
// "[T_1]", "[T_2]", ...
func TableMarker(i int) string { return "[T_" + strconv.Itoa(i) + "]" }

// ONNXConfig configures NewONNXScorer.
type ONNXConfig struct {
	// ModelPath is the ATR cross-encoder exported to ONNX (required).
	ModelPath string
	// TokenizerPath is its Hugging Face tokenizer.json. Default:
	// tokenizer.json beside the model.
	TokenizerPath string
	// Device is cpu (default), cuda (device 0) or cuda:N.
	Device string
	// DeviceFallback lets the scorer run on the CPU, with a logged warning,
	// when the CUDA execution provider cannot be used; without it that is
	// an error (ErrCUDAUnavailable).
	DeviceFallback bool
	// RuntimeLib is the onnxruntime shared library. Default
	// $ATRIUM_ONNXRUNTIME_LIB, then .deps/onnxruntime/lib/libonnxruntime.so.
	RuntimeLib string
	// MaxTokens bounds one window's sequence, special tokens and markers
	// included. Default 512 (BERT-style encoders).
	MaxTokens int
	// MaxQuestionTokens bounds the question's share of it. Default 64.
	MaxQuestionTokens int
	// BatchSize is the most windows one session run scores: windows of one
	// ScoreWindows call, and of concurrent callers waiting at the same time,
	// share a run. Default 16.
	BatchSize int
	// Threads bounds onnxruntime's intra-op threads on the CPU (0: its
	// default, one per core).
	Threads int
	// Logger; nil discards.
	Logger *slog.Logger
}

// ErrCUDAUnavailable reports that the CUDA execution provider could not be
// used for the device asked for.
var ErrCUDAUnavailable = errors.New("the CUDA execution provider is unavailable")

// ONNXScorer implements Scorer with an ATR cross-encoder run by onnxruntime:
// one sequence "[T_th] question [T_1] t_1 ... [T_n] t_n" per window, one
// logit per marker. It is safe for concurrent use: a single goroutine owns
// the onnxruntime session and scores, in one run, the windows of every
// caller waiting at that moment (up to BatchSize). Callers must call Close.
type ONNXScorer struct {
	log       *slog.Logger
	model     string
	tokPath   string
	tok       *catalog.Tokenizer
	prefix    []int64 // special tokens the tokenizer puts before a sequence
	suffix    []int64 // and after it
	thID      int64
	markerIDs []int64 // markerIDs[i] is the id of TableMarker(i+1)
	padID     int64
	maxTokens int
	maxQ      int
	batch     int
	device    string
	inputs    []string
	sess      *ort.DynamicAdvancedSession

	reqs      chan *onnxRequest
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	cache struct {
		sync.Mutex
		m map[*TableInfo][]int64
	}
}

var _ Scorer = (*ONNXScorer)(nil)

// onnxRequest is one caller's windows, encoded, waiting for the session.
type onnxRequest struct {
	seqs   []encodedWindow
	result chan onnxResult // buffered: the worker never blocks on it
}

type onnxResult struct {
	logits [][]float32
	err    error
}

// encodedWindow is one window's token ids and marker positions (index 0 the
// threshold marker).
type encodedWindow struct {
	ids       []int64
	positions []int64
}

// NewONNXScorer loads the model and tokenizer, checks both against the
// contract and starts the scoring goroutine. Errors name the file at fault.
func NewONNXScorer(cfg ONNXConfig) (*ONNXScorer, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ModelPath == "" {
		return nil, errors.New("ATR onnx scorer: no model file given (--atr-model)")
	}
	if _, err := os.Stat(cfg.ModelPath); err != nil {
		return nil, fmt.Errorf("ATR onnx scorer: model file: %w", err)
	}
	cuda, deviceID, err := ParseATRDevice(cfg.Device)
	if err != nil {
		return nil, err
	}
	s := &ONNXScorer{log: log, model: cfg.ModelPath, maxTokens: cfg.MaxTokens, maxQ: cfg.MaxQuestionTokens, batch: cfg.BatchSize}
	if s.maxTokens <= 0 {
		s.maxTokens = 512
	}
	if s.maxQ <= 0 {
		s.maxQ = 64
	}
	if s.batch <= 0 {
		s.batch = 16
	}
	s.tokPath = cfg.TokenizerPath
	if s.tokPath == "" {
		s.tokPath = filepath.Join(filepath.Dir(cfg.ModelPath), "tokenizer.json")
	}
	if err := s.loadTokenizer(); err != nil {
		return nil, err
	}
	lib, err := catalog.ONNXRuntimeLib(cfg.RuntimeLib)
	if err != nil {
		return nil, fmt.Errorf("ATR onnx scorer: %w", err)
	}
	// The environment is process-wide in the C library; the catalog's
	// reference count shares it with an onnx embedder in the same process.
	if err := catalog.AcquireONNXRuntime(lib); err != nil {
		return nil, fmt.Errorf("ATR onnx scorer: %w", err)
	}
	if err := s.open(cfg, cuda, deviceID); err != nil {
		catalog.ReleaseONNXRuntime()
		return nil, err
	}
	s.cache.m = map[*TableInfo][]int64{}
	s.reqs = make(chan *onnxRequest)
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go s.serve()
	log.Info("ATR onnx scorer loaded", "model", cfg.ModelPath, "tokenizer", s.tokPath, "device", s.device, "max_tables", len(s.markerIDs))
	return s, nil
}

// ParseATRDevice parses --atr-device: cpu (or empty), cuda, or cuda:N.
func ParseATRDevice(dev string) (cuda bool, id int, err error) {
	d := strings.ToLower(strings.TrimSpace(dev))
	switch {
	case d == "" || d == "cpu":
		return false, 0, nil
	case d == "cuda":
		return true, 0, nil
	case strings.HasPrefix(d, "cuda:"):
		n, err := strconv.Atoi(d[len("cuda:"):])
		if err != nil || n < 0 {
			return false, 0, fmt.Errorf("ATR device %q: want cpu, cuda or cuda:N", dev)
		}
		return true, n, nil
	}
	return false, 0, fmt.Errorf("ATR device %q: want cpu, cuda or cuda:N", dev)
}

// loadTokenizer reads the tokenizer and finds the marker tokens, which must
// each encode to a single (special, added) token.
func (s *ONNXScorer) loadTokenizer() error {
	tok, err := catalog.LoadTokenizer(s.tokPath)
	if err != nil {
		return fmt.Errorf("ATR onnx scorer: %w", err)
	}
	s.tok, s.padID = tok, tok.PadID
	empty := tok.Encode("", 0)
	single := func(marker string) (int64, []int64, []int64, bool) {
		ids := tok.Encode(marker, 0)
		if len(ids) != len(empty)+1 {
			return 0, nil, nil, false
		}
		p := 0
		for p < len(empty) && ids[p] == empty[p] {
			p++
		}
		if !slices.Equal(ids[p+1:], empty[p:]) {
			return 0, nil, nil, false
		}
		return ids[p], empty[:p], empty[p:], true
	}
	var ok bool
	if s.thID, s.prefix, s.suffix, ok = single(ThresholdMarker); !ok {
		return fmt.Errorf("ATR onnx scorer: tokenizer %s: %s is not a single special token; the ATR contract needs it and [T_1], [T_2], ... as added special tokens", s.tokPath, ThresholdMarker)
	}
	for i := 1; i <= 1024; i++ {
		id, _, _, ok := single(TableMarker(i))
		if !ok {
			break
		}
		s.markerIDs = append(s.markerIDs, id)
	}
	if len(s.markerIDs) == 0 {
		return fmt.Errorf("ATR onnx scorer: tokenizer %s: %s is not a single special token; the ATR contract needs [T_1], [T_2], ... as added special tokens", s.tokPath, TableMarker(1))
	}
	return nil
}

// open checks the model's inputs and outputs and creates the session on the
// device asked for.
func (s *ONNXScorer) open(cfg ONNXConfig, cuda bool, deviceID int) error {
	ins, outs, err := ort.GetInputOutputInfo(cfg.ModelPath)
	if err != nil {
		return fmt.Errorf("ATR onnx scorer: read model %s: %w", cfg.ModelPath, err)
	}
	have := map[string]ort.InputOutputInfo{}
	for _, in := range ins {
		have[in.Name] = in
	}
	for _, name := range []string{onnxInputIDs, onnxInputMask, onnxInputMarker, onnxInputTypes} {
		in, ok := have[name]
		if !ok {
			continue
		}
		if in.OrtValueType != ort.ONNXTypeTensor || in.DataType != ort.TensorElementDataTypeInt64 || len(in.Dimensions) != 2 {
			return fmt.Errorf("ATR onnx scorer: model %s: input %s is %s; want an int64 tensor [batch, n]", cfg.ModelPath, name, in.String())
		}
		s.inputs = append(s.inputs, name)
	}
	if _, ok := have[onnxInputTypes]; (ok && len(ins) != 4) || (!ok && len(ins) != 3) || len(s.inputs) != len(ins) {
		return fmt.Errorf("ATR onnx scorer: model %s has inputs %v; want input_ids, attention_mask, marker_positions (int64) and optionally token_type_ids", cfg.ModelPath, ioNames(ins))
	}
	found := false
	for _, o := range outs {
		if o.Name != onnxOutput {
			continue
		}
		found = true
		if o.OrtValueType != ort.ONNXTypeTensor || o.DataType != ort.TensorElementDataTypeFloat || len(o.Dimensions) != 2 {
			return fmt.Errorf("ATR onnx scorer: model %s: output logits is %s; want a float32 tensor [batch, markers]", cfg.ModelPath, o.String())
		}
	}
	if !found {
		return fmt.Errorf("ATR onnx scorer: model %s has outputs %v; want logits", cfg.ModelPath, ioNames(outs))
	}

	s.device = "cpu"
	if cuda {
		sess, err := s.newSession(cfg, true, deviceID)
		if err == nil {
			s.sess, s.device = sess, "cuda:"+strconv.Itoa(deviceID)
			return nil
		}
		if !cfg.DeviceFallback {
			return fmt.Errorf("ATR onnx scorer: device cuda:%d: %w: %v (use --atr-device cpu, or --atr-device-fallback to run on the CPU)", deviceID, ErrCUDAUnavailable, err)
		}
		s.log.Warn("ATR onnx scorer: CUDA unavailable, running on the CPU", "device", "cuda:"+strconv.Itoa(deviceID), "reason", err)
	}
	sess, err := s.newSession(cfg, false, 0)
	if err != nil {
		return fmt.Errorf("ATR onnx scorer: load model %s: %w", cfg.ModelPath, err)
	}
	s.sess = sess
	return nil
}

func (s *ONNXScorer) newSession(cfg ONNXConfig, cuda bool, deviceID int) (*ort.DynamicAdvancedSession, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	defer opts.Destroy()
	if cfg.Threads > 0 {
		if err := opts.SetIntraOpNumThreads(cfg.Threads); err != nil {
			return nil, fmt.Errorf("session options: %w", err)
		}
	}
	if cuda {
		co, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return nil, err
		}
		defer co.Destroy()
		if err := co.Update(map[string]string{"device_id": strconv.Itoa(deviceID)}); err != nil {
			return nil, err
		}
		if err := opts.AppendExecutionProviderCUDA(co); err != nil {
			return nil, err
		}
	}
	sess, err := ort.NewDynamicAdvancedSession(cfg.ModelPath, s.inputs, []string{onnxOutput}, opts)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

func ioNames(infos []ort.InputOutputInfo) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Name
	}
	return out
}

// Device is where the model runs: cpu or cuda:N.
func (s *ONNXScorer) Device() string { return s.device }

// MaxWindow is the largest window the tokenizer has table markers for.
func (s *ONNXScorer) MaxWindow() int { return len(s.markerIDs) }

// Score implements Scorer.
func (s *ONNXScorer) Score(ctx context.Context, q *Query, window []*Candidate) ([]float64, float64, error) {
	logits, thr, err := s.ScoreWindows(ctx, q, [][]*Candidate{window})
	if err != nil {
		return nil, 0, err
	}
	return logits[0], thr[0], nil
}

// ScoreWindows scores several windows of one question; they share session
// runs (BatchSize windows per run).
func (s *ONNXScorer) ScoreWindows(ctx context.Context, q *Query, windows [][]*Candidate) ([][]float64, []float64, error) {
	req := &onnxRequest{seqs: make([]encodedWindow, len(windows)), result: make(chan onnxResult, 1)}
	qIDs := s.body(" " + q.Text + " ")
	for i, w := range windows {
		if len(w) > len(s.markerIDs) {
			return nil, nil, fmt.Errorf("ATR onnx scorer: a window of %d tables, but tokenizer %s has markers up to %s (lower --atr-window)", len(w), s.tokPath, TableMarker(len(s.markerIDs)))
		}
		req.seqs[i] = s.encode(qIDs, w)
	}
	select {
	case s.reqs <- req:
	case <-s.stop:
		return nil, nil, errScorerClosed
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	var res onnxResult
	select {
	case res = <-req.result:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if res.err != nil {
		return nil, nil, res.err
	}
	logits := make([][]float64, len(windows))
	thr := make([]float64, len(windows))
	for i, row := range res.logits {
		thr[i] = float64(row[0])
		logits[i] = make([]float64, len(windows[i]))
		for j := range logits[i] {
			logits[i][j] = float64(row[j+1])
		}
	}
	return logits, thr, nil
}

var errScorerClosed = errors.New("ATR onnx scorer is closed")

// body returns text's token ids without the special tokens around them.
func (s *ONNXScorer) body(text string) []int64 {
	ids := s.tok.Encode(text, 0)
	if len(ids) < len(s.prefix)+len(s.suffix) {
		return nil
	}
	return ids[len(s.prefix) : len(ids)-len(s.suffix)]
}

// TableText is t_i of the ATR sequence: the database (schema), table and
// column names, "schema.table (col, col, ...)".
func TableText(t *TableInfo) string {
	var b strings.Builder
	b.WriteString(t.Schema)
	b.WriteByte('.')
	b.WriteString(t.Name)
	b.WriteString(" (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
	}
	b.WriteByte(')')
	return b.String()
}

// onnxCachedTables bounds the scorer's token cache; past it the cache is
// dropped and refilled.
const onnxCachedTables = 100_000

// tableIDs returns t_i's tokens, cached per table (a catalog snapshot's
// TableInfo values live as long as the snapshot).
func (s *ONNXScorer) tableIDs(t *TableInfo) []int64 {
	s.cache.Lock()
	ids, ok := s.cache.m[t]
	s.cache.Unlock()
	if ok {
		return ids
	}
	ids = s.body(" " + TableText(t) + " ")
	s.cache.Lock()
	if len(s.cache.m) >= onnxCachedTables {
		s.cache.m = map[*TableInfo][]int64{}
	}
	s.cache.m[t] = ids
	s.cache.Unlock()
	return ids
}

// encode builds one window's sequence: prefix [T_th] q [T_1] t_1 ... [T_n]
// t_n suffix, the text between markers encoded as the tokenizer encodes it
// inside the whole string (special tokens split the text, so the pieces are
// tokenised independently). When it is longer than MaxTokens, the question
// is cut to MaxQuestionTokens and the tables share what is left, each
// keeping its leading tokens (schema and table name first).
func (s *ONNXScorer) encode(q []int64, window []*Candidate) encodedWindow {
	tabs := make([][]int64, len(window))
	total := len(q)
	for i, c := range window {
		tabs[i] = s.tableIDs(c.Table)
		total += len(tabs[i])
	}
	fixed := len(s.prefix) + len(s.suffix) + 1 + len(window)
	if fixed+total > s.maxTokens {
		if len(q) > s.maxQ {
			q = q[:s.maxQ]
		}
		alloc := fairShares(tabs, max(s.maxTokens-fixed-len(q), 0))
		for i := range tabs {
			tabs[i] = tabs[i][:alloc[i]]
		}
	}
	ew := encodedWindow{positions: make([]int64, 0, len(window)+1)}
	ids := make([]int64, 0, s.maxTokens)
	ids = append(ids, s.prefix...)
	ew.positions = append(ew.positions, int64(len(ids)))
	ids = append(ids, s.thID)
	ids = append(ids, q...)
	for i := range window {
		ew.positions = append(ew.positions, int64(len(ids)))
		ids = append(ids, s.markerIDs[i])
		ids = append(ids, tabs[i]...)
	}
	ew.ids = append(ids, s.suffix...)
	return ew
}

// fairShares splits budget tokens among the lists: short lists keep all of
// theirs, the long ones share the rest equally (water filling).
func fairShares(lists [][]int64, budget int) []int {
	alloc := make([]int, len(lists))
	order := make([]int, len(lists))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(lists[a]) - len(lists[b]) })
	left := len(lists)
	for _, i := range order {
		share := budget / left
		alloc[i] = min(len(lists[i]), share)
		budget -= alloc[i]
		left--
	}
	return alloc
}

// serve owns the session: it takes one request, adds every request already
// waiting (up to BatchSize windows), and answers them from one run.
func (s *ONNXScorer) serve() {
	defer close(s.done)
	for {
		var first *onnxRequest
		select {
		case first = <-s.reqs:
		case <-s.stop:
			return
		}
		batch := []*onnxRequest{first}
		n := len(first.seqs)
	gather:
		for n < s.batch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
				n += len(r.seqs)
			default:
				break gather
			}
		}
		var seqs []encodedWindow
		for _, r := range batch {
			seqs = append(seqs, r.seqs...)
		}
		var all [][]float32
		var err error
		for start := 0; start < len(seqs) && err == nil; start += s.batch {
			var part [][]float32
			part, err = s.run(seqs[start:min(start+s.batch, len(seqs))])
			all = append(all, part...)
		}
		off := 0
		for _, r := range batch {
			if err != nil {
				r.result <- onnxResult{err: err}
				continue
			}
			r.result <- onnxResult{logits: all[off : off+len(r.seqs)]}
			off += len(r.seqs)
		}
	}
}

// run pads a batch of windows to one shape and runs the model once.
func (s *ONNXScorer) run(seqs []encodedWindow) ([][]float32, error) {
	b, l, m := len(seqs), 1, 1
	for _, sq := range seqs {
		l = max(l, len(sq.ids))
		m = max(m, len(sq.positions))
	}
	ids := make([]int64, b*l)
	mask := make([]int64, b*l)
	pos := make([]int64, b*m)
	for i, sq := range seqs {
		for j := 0; j < l; j++ {
			if j < len(sq.ids) {
				ids[i*l+j], mask[i*l+j] = sq.ids[j], 1
			} else {
				ids[i*l+j] = s.padID
			}
		}
		for j := 0; j < m; j++ {
			// Rows with fewer markers repeat the threshold marker's
			// position; those logits are ignored.
			p := sq.positions[0]
			if j < len(sq.positions) {
				p = sq.positions[j]
			}
			pos[i*m+j] = p
		}
	}
	data := map[string][]int64{onnxInputIDs: ids, onnxInputMask: mask, onnxInputMarker: pos, onnxInputTypes: make([]int64, b*l)}
	shapes := map[string]ort.Shape{onnxInputIDs: ort.NewShape(int64(b), int64(l)), onnxInputMask: ort.NewShape(int64(b), int64(l)),
		onnxInputMarker: ort.NewShape(int64(b), int64(m)), onnxInputTypes: ort.NewShape(int64(b), int64(l))}
	inputs := make([]ort.Value, 0, len(s.inputs))
	defer func() {
		for _, v := range inputs {
			_ = v.Destroy()
		}
	}()
	for _, name := range s.inputs {
		t, err := ort.NewTensor(shapes[name], data[name])
		if err != nil {
			return nil, fmt.Errorf("ATR onnx scorer: input %s: %w", name, err)
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := s.sess.Run(inputs, outputs); err != nil {
		return nil, fmt.Errorf("ATR onnx scorer: run model %s: %w", s.model, err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("ATR onnx scorer: model %s: output logits is not float32", s.model)
	}
	if sh := t.GetShape(); len(sh) != 2 || sh[0] != int64(b) || sh[1] != int64(m) {
		return nil, fmt.Errorf("ATR onnx scorer: model %s: logits have shape %v for inputs [%d, %d] with %d markers; want [%d, %d]", s.model, sh, b, l, m, b, m)
	}
	flat := t.GetData()
	out := make([][]float32, b)
	for i := range out {
		out[i] = append([]float32(nil), flat[i*m:i*m+len(seqs[i].positions)]...)
	}
	return out, nil
}

// Close stops the scoring goroutine and frees the session. Calls to Score
// after Close fail.
func (s *ONNXScorer) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		err = s.sess.Destroy()
		catalog.ReleaseONNXRuntime()
	})
	return err
}

// Scorer kinds for ScorerConfig.Kind (--atr-scorer).
const (
	ScorerLite = "lite"
	ScorerONNX = "onnx"
)

// ScorerConfig selects ATR's scorer: the flags --atr-scorer, --atr-model,
// --atr-tokenizer, --atr-device and --atr-device-fallback.
type ScorerConfig struct {
	// Kind is lite (default, the built-in model) or onnx.
	Kind string
	// LiteWeights is a lite weights file written by atrium train-atr, used
	// instead of the built-in weights; empty: the built-in ones.
	LiteWeights string
	// ONNX configures the onnx scorer.
	ONNX ONNXConfig
}

// NewScorer builds the scorer cfg names. close frees it (the onnx scorer's
// session) and must be called once the retriever using it is done; it is
// never nil. Errors are start-up errors: a missing or broken model, a
// tokenizer without the ATR markers, CUDA unavailable without fallback.
func NewScorer(cfg ScorerConfig) (s Scorer, close func() error, err error) {
	switch strings.ToLower(cfg.Kind) {
	case "", ScorerLite:
		load := DefaultLiteModel
		if cfg.LiteWeights != "" {
			load = func() (*LiteModel, error) { return LoadLiteModel(cfg.LiteWeights) }
		}
		m, err := load()
		if err != nil {
			return nil, nil, err
		}
		return m, func() error { return nil }, nil
	case ScorerONNX:
		o, err := NewONNXScorer(cfg.ONNX)
		if err != nil {
			return nil, nil, err
		}
		return o, o.Close, nil
	}
	return nil, nil, fmt.Errorf("ATR scorer %q: want lite or onnx", cfg.Kind)
}

// TrainedEmbedder names the embedder a lite scorer's semantic features were
// learned on ("" for other scorers and for weights that do not say). A
// catalog embedded otherwise still works, with scores the scorer was not
// trained for.
func TrainedEmbedder(s Scorer) string {
	if m, ok := s.(*LiteModel); ok && m != nil {
		return m.Training.Embedder
	}
	return ""
}

// ScorerFitsEmbedder reports whether s was trained or measured with the
// embedder named emb, or says nothing about it (other scorers, weights
// without a training embedder): false means its quality with emb is
// unknown, and likely below what was measured for it.
func ScorerFitsEmbedder(s Scorer, emb string) bool {
	m, ok := s.(*LiteModel)
	if !ok || m == nil || m.Training.Embedder == "" || m.Training.Embedder == emb {
		return true
	}
	return slices.Contains(m.Training.MeasuredWith, emb)
}

// CheckWindow reports whether s can score windows of w tables (the onnx
// scorer's tokenizer has a bounded number of table markers).
func CheckWindow(s Scorer, w int) error {
	if o, ok := s.(*ONNXScorer); ok && w > o.MaxWindow() {
		return fmt.Errorf("ATR window %d is larger than the %d table markers of tokenizer %s: lower --atr-window", w, o.MaxWindow(), o.tokPath)
	}
	return nil
}
