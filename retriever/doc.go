// Package retriever chooses the tables a natural-language question needs
// from the Atrium catalog, and how they join.
//
// Pipeline (Retriever.Retrieve):
//
//  1. Hybrid candidates (PNEUMA). One SQL round trip (candidateSQL): the n·k
//     best tables by ts_rank_cd over the weighted tsvector (OR-query of the
//     question's words), the n·k nearest by cosine over the HNSW index, and
//     value-index entries sharing a word with the question; both scores are
//     computed for every table of the union, min-max normalised, value
//     evidence folded into the lexical score, and s = α·s_lex + (1−α)·s_sem
//     ranks the C candidates. Table metadata and the join graph are cached
//     per catalog version (the candidate query returns the version, so a
//     change is noticed without an extra query).
//  2. ATR (Kim et al.), Algorithm 1 exactly (adaptiveRetrieve): windows of W
//     from the lowest-ranked upwards, top R retained and merged with the
//     next W−R, threshold rank finalised once it falls below R, tables that
//     outrank it returned. Scoring goes through Scorer. The built-in
//     LiteModel is a one-hidden-layer network over per-(question, table)
//     features (windowFeatures) plus a threshold logit from question and
//     window features and the window's logits, trained with ATR's
//     L = 0.8·L1 + 0.03·L2 + 0.13·L_RC and Appendix B's recipe; see
//     train.go for the data, the leave-one-out value method and why
//     training and inference share one feature path.
//  3. Expansion (REAR, CORE-T): refinement to the join-connected group of
//     the best table, joinable candidates the scorer rates relevant
//     (Δk′ ≤ 3), bridge tables along shortest join paths (greedy Steiner
//     tree), restoration of dropped candidates with compatibility ≥ τ_comp;
//     join paths rendered "schema.a.x = schema.b.y".
//  4. Optional MURRE multi-hop with removal (Config.Multihop, needs a
//     Rewriter: an LLM behind an OpenAI-compatible endpoint).
//
// Errors a client can provoke carry SQLSTATEs: QuestionError (22023 empty,
// 54000 too long), CatalogError (55000, catalog not built). Handler serves
// `RETRIEVE <question>` through the proxy.
//
// ONNX scorer contract (ONNXScorer, --atr-scorer onnx; docs/atr-model.md
// says how to export a model to it). One sequence per window:
//
//	[T_th] question [T_1] t_1 ... [T_n] t_n
//
// tokenised with the model's Hugging Face tokenizer.json (WordPiece or BPE,
// catalog.Tokenizer), whose post-processor adds its special tokens around
// the whole ([CLS] ... [SEP] for BERT). t_i is TableText: the database
// (schema), table and column names, "schema.table (col, col, ...)". [T_th],
// [T_1], [T_2], ... must be added special tokens (one id each); the largest
// i bounds the ATR window. Over MaxTokens (default 512) the question is cut
// to MaxQuestionTokens (64) and the tables share the rest. Inputs:
// input_ids and attention_mask, int64 [B, L], right-padded with the
// tokenizer's pad id and mask 0; marker_positions, int64 [B, M], the
// position of [T_th] then of [T_1] ... [T_n] in each row, M = the largest
// n+1 of the batch, shorter rows repeating the [T_th] position (those
// logits are ignored); optionally token_type_ids, int64 [B, L], all zero.
// Output: logits, float32 [B, M], one logit per marker: index 0 is the
// threshold, index i the i-th table. B is the number of windows batched
// into one run.
package retriever
